"""BashTool sessions in a session store, served by any worker: the stores' compare and set and
expiry, and real server processes (a directory store, and a real `redis-server` started on a
free loopback port, skipped if the Debian package is absent) answering one session alternately,
two requests of one session at once, and the MCP client through the store."""
from __future__ import annotations

import asyncio
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from support import RedisServer
from services import Service, structured

from scripted_kernel.tools.session_store import (DirectoryStore, MemoryStore, SessionTooLarge, StoreError,
                                                 TooManySessions, new_session_id, open_store)

pytest.importorskip("mcp.server.mcpserver")      # mcp 2.x
pytest.importorskip("uvicorn")


# ---------------------------------------------------------------- the stores

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
    assert store.load(sid) is None and not store.exists(sid) and store.sizes(sid) is None
    store.create(sid, b"new", 500)
    assert store.exists(sid) and store.load(sid) == (0, b"new", 500) and store.sizes(sid) == (3, 500, 0)
    assert store.save(sid, 0, b"one", 700)
    assert not store.save(sid, 0, b"two", 900)     # a second save from version 0 loses
    assert store.load(sid) == (1, b"one", 700)
    with pytest.raises(SessionTooLarge):
        store.save(sid, 1, bytes(1001), 1001)
    with pytest.raises(SessionTooLarge):           # a reader's own limit: refused with nothing read
        store.load(sid, max_bytes=2)
    store.delete(sid)
    assert store.load(sid) is None
    store.create(sid, b"new", 500)
    time.sleep(3.2)
    assert store.load(sid) is None                  # idle past idle_seconds: expired
    assert store.load("../../etc/passwd") is None and store.sizes("../x") is None
    with pytest.raises(StoreError):
        store.save("../x", 0, b"x", 1)


@pytest.mark.parametrize("kind", ["memory", "directory", "redis"])
def test_a_store_keeps_at_most_max_sessions(kind, tmp_path, request):
    url = request.getfixturevalue("redis_url") if kind == "redis" else None
    store = {s.__class__.__name__: s for s in _stores(tmp_path / kind, url, idle_seconds=60, max_sessions=2)}[
        {"memory": "MemoryStore", "directory": "DirectoryStore", "redis": "RedisStore"}[kind]]
    if kind == "redis":                       # the module's server is shared: start from no sessions
        store.client.flushdb()
    first, second, third = new_session_id(), new_session_id(), new_session_id()
    store.create(first, b"1", 1)
    store.create(second, b"2", 1)
    with pytest.raises(TooManySessions, match=r"too many sessions: 2 are kept in the session store "
                                              r"\(max_sessions 2\)"):
        store.create(third, b"3", 1)
    assert not store.exists(third)
    store.delete(first)
    store.create(third, b"3", 1)
    assert store.load(third) == (0, b"3", 1)


def test_store_urls(tmp_path):
    assert isinstance(open_store("memory://"), MemoryStore)
    assert isinstance(open_store(f"file://{tmp_path}/s"), DirectoryStore)
    with pytest.raises(StoreError):
        open_store("ftp://x")
    with pytest.raises(StoreError):
        open_store("file://host/path")


# ---------------------------------------------------------------- real workers

def Worker(store: str, env: dict | None = None, args: tuple = ()) -> Service:
    """`python -m scripted_kernel mcp --http --bash --session-store URL` on its own port."""
    return Service("--bash", "--session-store", store, *args, env=env)


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
        assert a.post({"jsonrpc": "2.0", "id": 9, "method": "tools/list"}, sid=new_session_id())[0] == 404
        assert b.post(None, sid=sid, method="DELETE")[0] == 200
        assert a.post({"jsonrpc": "2.0", "id": 9, "method": "tools/list"}, sid=sid)[0] == 404
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
    w = Worker(f"file://{tmp_path}/s", env={"SCRIPTED_MCP_SESSION_KEY": "k"})

    async def session():
        async with w.client(mode="legacy") as client:
            await client.call_tool("bash", {"commands": "echo kept > /tmp/f; x=7"})
            result = await client.call_tool("bash", {"commands": "cat /tmp/f; echo $x"})
            return result.structured_content["stdout"]
    try:
        assert asyncio.run(asyncio.wait_for(session(), 120)) == "kept\n7\n"
        assert not list((tmp_path / "s").glob("*.snap"))      # the client ended its session
        # the stored snapshots are signed: one changed on disk is refused, not run, by a worker
        # that loads it (the worker that saved it keeps the session in memory)
        w.run(w.open_session(), "echo hi > /tmp/f")
        snap = next((tmp_path / "s").glob("*.snap"))
        data = bytearray(snap.read_bytes())
        data[-1] ^= 1
        snap.write_bytes(bytes(data))
        sid = snap.name[:-5]
        other = Worker(f"file://{tmp_path}/s", env={"SCRIPTED_MCP_SESSION_KEY": "k"})
        try:
            answer = other.run(sid, "echo hi")
        finally:
            other.stop()
        assert answer["exit_code"] == 1 and "the stored session was refused: snapshot signature" in answer["stderr"]
        assert w.run(sid, "cat /tmp/f")["stdout"] == "hi\n"
    finally:
        w.stop()


# ---------------------------------------------------------------- limits and failures

@pytest.fixture(params=["file", "redis"])
def own_store_url(request, tmp_path):
    """A store of this test's own: a directory, or a redis-server started for it."""
    if request.param == "file":
        yield f"file://{tmp_path}/sessions"
        return
    server = RedisServer()
    yield server.url
    server.stop()


def test_a_session_past_max_sessions_is_refused_by_the_store(own_store_url):
    w = Worker(own_store_url, args=("--max-sessions", "2"))
    try:
        first, _second = w.open_session(), w.open_session()
        status, sid, answer = w.initialize()
        assert status == 200 and sid is None
        assert answer["error"]["message"] == ("too many sessions: 2 are kept in the session store (max_sessions 2); "
                                              "try again when one ends or idles out")
        assert w.post(None, sid=first, method="DELETE")[0] == 200
        assert w.run(w.open_session(), "echo room again")["stdout"] == "room again\n"
    finally:
        w.stop()


def test_a_stopped_redis_is_one_clear_line_without_its_address():
    server = RedisServer()
    w = Worker(server.url)
    try:
        sid = w.open_session()
        assert w.run(sid, "echo kept > /tmp/f")["exit_code"] == 0
        server.stop()
        answer = w.run(sid, "cat /tmp/f")
        assert {k: answer[k] for k in ("stdout", "stderr", "exit_code", "error")} == {
            "stdout": "", "stderr": "bash: the session store is unavailable; the call did not run\n",
            "exit_code": 1, "error": "store"}
        status, new_sid, refused = w.initialize()
        assert status == 200 and new_sid is None
        assert refused["error"]["message"] == "the session store is unavailable; no session was opened"
        status, _, body = w.post(None, sid=sid, method="DELETE")
        assert status == 503 and body == {
            "error": "the session store is unavailable; the session was not ended"}
    finally:
        log = w.stop()
    # the operator's log says what failed; the client saw neither the address nor the error
    assert '"event": "store_error"' in log and str(server.port) in log
    for shown in (answer["stderr"], refused["error"]["message"]):
        assert str(server.port) not in shown and "127.0.0.1" not in shown and "Error" not in shown


def test_a_store_failing_at_the_save_keeps_the_output_and_says_so():
    import redis

    from scripted_kernel.tools.mcp_sessions import StoredSessions
    server = RedisServer()
    try:
        store = open_store(server.url)
        stored = StoredSessions(store, b"key")
        sid = new_session_id()
        stored.create(sid)
        save = store.save

        def stop_then_save(*args):
            server.stop()                          # the store goes away while the call runs
            return save(*args)
        store.save = stop_then_save
        answer = asyncio.run(stored.execute(sid, "echo ran"))
        assert (answer.stdout, answer.stderr, answer.exit_code, answer.error) == (
            "ran\n", "bash: the session store is unavailable; the call did not save\n", 1, "store")
        # every operation: a StoreError at the store's boundary, redis-py's own error its cause
        for operation in (lambda: store.create(new_session_id(), b"x", 1), lambda: store.exists(sid),
                          lambda: store.sizes(sid), lambda: store.load(sid), lambda: save(sid, 0, b"x", 1),
                          lambda: store.delete(sid)):
            with pytest.raises(StoreError, match=r"\Athe session store is unavailable\Z") as failed:
                operation()
            assert isinstance(failed.value.__cause__, redis.exceptions.RedisError)
    finally:
        server.stop()


# ---------------------------------------------------------------- the memory of loaded sessions

def _peak_rss_during(pid: int, work) -> tuple:
    """(resident bytes before `work`, the peak while it ran) of process `pid` (Linux)."""
    def status(field):
        with open(f"/proc/{pid}/status") as f:
            return next(int(line.split()[1]) * 1024 for line in f if line.startswith(field))
    before = status("VmRSS")
    with open(f"/proc/{pid}/clear_refs", "w") as f:
        f.write("5")                               # the peak (VmHWM) starts again from now
    work()
    return before, status("VmHWM")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_concurrent_calls_on_big_sessions_stay_within_max_sessions_bytes():
    # six sessions of 30 MB each; at most 150 MB for the sessions of the calls in flight, where
    # a call reserves three times its session, or twice with room to grow (94 MB at least): the
    # calls take turns. Without the bound, the six at once took the server 412-443 MB above
    # where it started; with it, 96 MB.
    bound, sessions, mb = 150_000_000, 6, 1_000_000
    server = RedisServer()
    env = {"SCRIPTED_MCP_SESSION_KEY": "k"}
    try:
        maker = Worker(server.url, env=env)
        try:
            sids = [maker.open_session() for _ in range(sessions)]
            for sid in sids:
                made = maker.run(sid, "for i in 1 2; do dd if=/dev/zero of=/tmp/f$i bs=1M count=15 2>/dev/null; "
                                      "echo $i >> /tmp/f$i; done")
                assert made["exit_code"] == 0, made
        finally:
            maker.stop()
        # a worker that starts with the sessions in the store, measured from its start
        w = Worker(server.url, env=env, args=("--max-sessions-bytes", str(bound)))
        try:
            w.run(w.open_session(), "true")
            results: list = []
            with ThreadPoolExecutor(sessions) as pool:
                before, peak = _peak_rss_during(w.proc.pid, lambda: results.extend(
                    pool.map(lambda sid: w.run(sid, "wc -c < /tmp/f2"), sids)))
        finally:
            w.stop()
    finally:
        server.stop()
    # each call ran, or (on a machine too loaded for the turns to come within a call's timeout)
    # was refused for that
    ran = {"stdout": "15728642\n", "stderr": "", "exit_code": 0}
    waited = {"stdout": "", "exit_code": 1, "stderr": f"bash: the memory for sessions of calls in flight ({bound} "
              "bytes, max_sessions_bytes) stayed taken for 30 s; the call did not run: try again\n"}
    results = [structured(r) for r in results]
    assert ran in results and all(result in (ran, waited) for result in results), results
    assert peak - before < bound + 30 * mb, f"{(peak - before) / mb:.0f} MB above the {before / mb:.0f} MB before"


def _stored_sessions_on(store, **kw):
    from scripted_kernel.tools.mcp_sessions import StoredSessions
    return StoredSessions(store, b"key", **kw)


def test_a_session_too_large_for_max_sessions_bytes_is_refused_before_it_loads():
    from scripted_kernel.tools.bash_tool import BashTool
    store = MemoryStore()
    stored = _stored_sessions_on(store, max_bytes=40 << 20)
    sid = new_session_id()
    stored.create(sid)
    # four files of one content: a snapshot of 2 MiB, a session of 8 MiB once loaded
    tool = BashTool()
    for name in "abcd":
        tool.filesystem.add_file(f"/tmp/{name}", bytes(2 << 20))
    kept = tool.kept_bytes()
    data = tool.snapshot(key=stored._signing_key(sid, "", 0, kept))
    store.save(sid, 0, data, kept)
    loads = []
    store.load = lambda *args, **kw: loads.append(args)
    answer = asyncio.run(stored.execute(sid, "echo never"))
    least = 2 * (kept + (16 << 20) + (1 << 20))
    assert answer.stderr == (f"bash: this session ({kept} bytes, {len(data)} stored) needs {least} bytes of memory "
                             f"to run, more than the sessions of all calls in flight may take ({40 << 20}, "
                             "max_sessions_bytes); the call did not run\n")
    assert (answer.exit_code, answer.error, loads) == (1, "limit:max_sessions_bytes", [])
    assert kept > 3 * len(data) > 0


def test_a_call_that_finds_no_room_within_its_timeout_is_refused():
    import threading

    from scripted_kernel.base.limits import ExecutionLimits

    class HeldStore(MemoryStore):
        """Its first load waits until the test lets it go."""
        def __init__(self):
            super().__init__()
            self.loading, self.go = threading.Event(), threading.Event()

        def _load(self, sid, limit):
            if not self.loading.is_set():
                self.loading.set()
                self.go.wait(60)
            return super()._load(sid, limit)

    store = HeldStore()
    # room for one call in flight: each reserves at least 2 x (16 MiB + 1 MiB) and a little
    stored = _stored_sessions_on(store, max_bytes=40 << 20, limits=ExecutionLimits(timeout_seconds=0.3))
    first, second = new_session_id(), new_session_id()
    stored.create(first)
    stored.create(second)

    async def scenario():
        running = asyncio.create_task(stored.execute(first, "echo first"))
        await asyncio.to_thread(store.loading.wait, 60)
        refused = await stored.execute(second, "echo second")
        store.go.set()
        return refused, await running, await stored.execute(second, "echo second")
    refused, ran, after = asyncio.run(scenario())
    assert refused.stderr == (f"bash: the memory for sessions of calls in flight ({40 << 20} bytes, "
                              "max_sessions_bytes) stayed taken for 0.3 s; the call did not run: try again\n")
    assert (refused.exit_code, refused.error) == (1, "limit:max_sessions_bytes")
    assert (ran.stdout, after.stdout) == ("first\n", "second\n")
