"""BashTool sessions in a session store, served by any worker: the stores' compare and set and
expiry, and real server processes (a directory store, and a real `redis-server` started on a
free loopback port, skipped if the Debian package is absent) answering one session alternately,
two requests of one session at once, and the MCP client through the store."""
from __future__ import annotations

import asyncio
import json
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest

from scripted_kernel.tools.session_store import (DirectoryStore, MemoryStore, SessionTooLarge, StoreError,
                                                 new_session_id, open_store)

ACCEPT = "application/json, text/event-stream"

pytest.importorskip("mcp")
pytest.importorskip("uvicorn")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---------------------------------------------------------------- the stores

@pytest.fixture(scope="module")
def redis_url():
    server = shutil.which("redis-server")
    if server is None:
        pytest.skip("redis-server is not installed (Debian package redis-server)")
    pytest.importorskip("redis")
    port = free_port()
    proc = subprocess.Popen([server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    import redis
    client = redis.Redis(port=port)
    deadline = time.monotonic() + 30
    while True:
        try:
            client.ping()
            break
        except redis.exceptions.ConnectionError:
            if time.monotonic() > deadline or proc.poll() is not None:
                proc.kill()
                pytest.skip("redis-server did not start")
            time.sleep(0.1)
    yield f"redis://127.0.0.1:{port}/0"
    proc.terminate()
    proc.wait(30)


def _stores(tmp_path, redis_url=None, **kw):
    stores = [MemoryStore(**kw), DirectoryStore(str(tmp_path / "sessions"), **kw)]
    if redis_url:
        stores.append(open_store(redis_url, **kw))
    return stores


@pytest.mark.parametrize("kind", ["memory", "directory", "redis"])
def test_compare_and_set_expiry_and_size(kind, tmp_path, request):
    url = request.getfixturevalue("redis_url") if kind == "redis" else None
    store = {s.__class__.__name__: s for s in _stores(tmp_path, url, idle_seconds=2, max_bytes=1000)}[
        {"memory": "MemoryStore", "directory": "DirectoryStore", "redis": "RedisStore"}[kind]]
    sid = new_session_id()
    assert store.load(sid) is None and not store.exists(sid)
    store.create(sid)
    assert store.exists(sid) and store.load(sid) == (0, None)
    assert store.save(sid, 0, b"one")
    assert not store.save(sid, 0, b"two")          # a second save from version 0 loses
    assert store.load(sid) == (1, b"one")
    with pytest.raises(SessionTooLarge):
        store.save(sid, 1, bytes(1001))
    store.delete(sid)
    assert store.load(sid) is None
    store.create(sid)
    time.sleep(3.2)
    assert store.load(sid) is None                  # idle past idle_seconds: expired
    assert store.load("../../etc/passwd") is None


def test_store_urls(tmp_path):
    assert isinstance(open_store("memory://"), MemoryStore)
    assert isinstance(open_store(f"file://{tmp_path}/s"), DirectoryStore)
    with pytest.raises(StoreError):
        open_store("ftp://x")
    with pytest.raises(StoreError):
        open_store("file://host/path")


# ---------------------------------------------------------------- real workers

class Worker:
    """`python -m scripted_kernel mcp --http --bash --session-store URL` on its own port."""

    def __init__(self, store: str, env: dict | None = None):
        import os
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen([sys.executable, "-m", "scripted_kernel", "mcp", "--http", "--bash",
                                      "--port", str(self.port), "--session-store", store],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                     env={**os.environ, **(env or {})})
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and self.proc.poll() is None:
            try:
                urllib.request.urlopen(f"{self.url}/healthz", timeout=10).close()
                return
            except OSError:
                time.sleep(0.2)
        self.stop()
        pytest.fail(f"the MCP service did not start: {self.proc.stderr.read()[-2000:]}")

    def post(self, payload, sid: str | None = None, method: str = "POST"):
        headers = {"Content-Type": "application/json", "Accept": ACCEPT, "MCP-Protocol-Version": "2025-06-18"}
        if sid:
            headers["Mcp-Session-Id"] = sid
        data = json.dumps(payload).encode() if payload is not None else None
        request = urllib.request.Request(f"{self.url}/mcp", data=data, headers=headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=120) as r:
                body = r.read()
                return r.status, r.headers.get("mcp-session-id"), json.loads(body) if body else None
        except urllib.error.HTTPError as e:
            return e.code, None, e.read()

    def open_session(self) -> str:
        status, sid, _ = self.post({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                                    "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                               "clientInfo": {"name": "test", "version": "1"}}})
        assert status == 200 and sid
        self.post({"jsonrpc": "2.0", "method": "notifications/initialized"}, sid)
        return sid

    def run(self, sid: str, commands: str, request_id: int = 1) -> dict:
        status, _, answer = self.post({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                                       "params": {"name": "bash", "arguments": {"commands": commands}}}, sid)
        assert status == 200, answer
        return answer["result"]["structuredContent"]

    def stop(self) -> str:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.stderr.read()


@pytest.fixture(params=["file", "redis"])
def store_url(request, tmp_path):
    if request.param == "redis":
        return request.getfixturevalue("redis_url")
    return f"file://{tmp_path}/sessions"


def test_two_workers_serve_one_session_alternately(store_url):
    a, b = Worker(store_url), Worker(store_url)
    try:
        sid = a.open_session()
        assert a.run(sid, "echo one > /tmp/log; n=1; f() { echo \"f$n\"; }; cd /tmp")["exit_code"] == 0
        for turn in range(2, 7):
            worker = (a, b)[turn % 2]
            out = worker.run(sid, f"echo {turn} >> log; n=$((n+1)); f; pwd", turn)
            assert out["stdout"] == f"f{turn}\n/tmp\n", out
        assert b.run(sid, "cat /tmp/log | tr '\\n' ' '")["stdout"] == "one 2 3 4 5 6 "
        # an id no worker issued, and the end of a session
        assert a.post({"jsonrpc": "2.0", "id": 9, "method": "tools/list"}, new_session_id())[0] == 404
        assert b.post(None, sid, method="DELETE")[0] == 200
        assert a.post({"jsonrpc": "2.0", "id": 9, "method": "tools/list"}, sid)[0] == 404
        # another session on the same store is its own
        other = b.open_session()
        assert a.run(other, "cat /tmp/log 2>&1; echo ${n-unset}")["stdout"].endswith("unset\n")
    finally:
        a.stop()
        b.stop()


def test_two_requests_of_one_session_at_once(store_url):
    a, b = Worker(store_url), Worker(store_url)
    try:
        sid = a.open_session()
        a.run(sid, "n=0")
        script = "sleep 0.5; n=$((n+1)); echo $n >> /tmp/log"
        with ThreadPoolExecutor(4) as pool:
            results = list(pool.map(lambda w: w.run(sid, script), [a, b, a, b]))
        kept = [r for r in results if r["exit_code"] == 0]
        refused = [r for r in results if r["exit_code"] != 0]
        assert all("changed it at the same time" in r["stderr"] for r in refused)
        final = a.run(sid, "echo $n; cat /tmp/log | tr '\\n' ' '")["stdout"]
        # every call kept was applied once, in some order, on top of the one before
        n = len(kept)
        assert final == f"{n}\n" + "".join(f"{i} " for i in range(1, n + 1))
        assert n >= 2
    finally:
        a.stop()
        b.stop()


def test_the_mcp_client_through_a_store(tmp_path):
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    w = Worker(f"file://{tmp_path}/s", env={"SCRIPTED_MCP_SESSION_KEY": "k"})

    async def session():
        async with streamable_http_client(f"{w.url}/mcp") as (read, write, _):
            async with ClientSession(read, write) as s:
                await s.initialize()
                await s.call_tool("bash", {"commands": "echo kept > /tmp/f; x=7"})
                result = await s.call_tool("bash", {"commands": "cat /tmp/f; echo $x"})
                return result.structuredContent["stdout"]
    try:
        assert asyncio.run(asyncio.wait_for(session(), 120)) == "kept\n7\n"
        assert not list((tmp_path / "s").glob("*.snap"))      # the client ended its session
        # the stored snapshots are signed: one changed on disk is refused, not run
        w.run(w.open_session(), "echo hi > /tmp/f")
        snap = next((tmp_path / "s").glob("*.snap"))
        data = bytearray(snap.read_bytes())
        data[-1] ^= 1
        snap.write_bytes(bytes(data))
        sid = snap.name[:-5]
        answer = w.run(sid, "echo hi")
        assert answer["exit_code"] == 1 and "cannot be restored" in answer["stderr"]
    finally:
        w.stop()
