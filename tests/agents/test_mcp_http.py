"""The MCP server as an HTTP service, in real processes started the way the README says:
`python -m scripted_kernel mcp --http ...`. Token, size limit, health check, stateless requests
answered by any process, a BashTool's files per session, one log line per call, and a refusal
to serve beyond loopback without a token. Readiness is polled; nothing asserts a duration."""
import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("mcp")
pytest.importorskip("uvicorn")
from mcp import ClientSession  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

import scripted_kernel  # noqa: E402
from scripted_kernel.tools.mcp_service import ServiceConfig  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
ECOMMERCE = f"{ROOT / 'examples' / 'ecommerce.py'}:api"
TOKEN = "test-token-7f3a"
ACCEPT = "application/json, text/event-stream"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, *args):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen([sys.executable, "-m", "scripted_kernel", "mcp", "--http",
                                      "--port", str(self.port), *args],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and self.proc.poll() is None:
            try:
                self.health()
                return
            except OSError:
                time.sleep(0.2)
        self.stop()
        pytest.fail(f"the MCP service did not start: {self.proc.stderr.read()[-2000:]}")

    def health(self) -> dict:
        with urllib.request.urlopen(f"{self.url}/healthz", timeout=10) as r:
            return json.load(r)

    def post(self, payload, token=TOKEN, body: bytes = b""):
        headers = {"Content-Type": "application/json", "Accept": ACCEPT}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        request = urllib.request.Request(f"{self.url}/mcp", data=body or json.dumps(payload).encode(),
                                         headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=60) as r:
                return r.status, json.loads(r.read() or b"null")
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"null")

    def stop(self) -> str:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.stderr.read()


def call(commands: str, request_id: int = 1) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
            "params": {"name": "ecommerce", "arguments": {"commands": commands}}}


@pytest.fixture(scope="module")
def server():
    s = Server("--tools", ECOMMERCE, "--token", TOKEN, "--max-request-bytes", "4096")
    yield s
    s.stop()


def test_the_token_is_required_and_checked(server):
    assert server.post(call("echo hi"), token="")[0] == 401
    assert server.post(call("echo hi"), token="wrong")[0] == 401
    status, answer = server.post(call("get_user --id 1 | jq -r .name"))
    assert status == 200
    assert answer["result"]["structuredContent"] == {"stdout": "Alice\n", "stderr": "", "exit_code": 0}
    assert server.health()["status"] == "ok"                  # the health check needs no token


def test_the_server_names_this_package_and_version(server):
    status, answer = server.post({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
    assert status == 200
    assert answer["result"]["serverInfo"] == {"name": "ecommerce", "version": scripted_kernel.__version__}


def test_bodies_over_the_limit_are_refused(server):
    status, answer = server.post(None, body=json.dumps(call("echo " + "x" * 5000)).encode())
    assert status == 413 and "4096" in answer["error"]


def test_any_process_answers_a_stateless_client():
    """Two servers stand for two workers behind a load balancer: one client's requests,
    with the same headers and no session, alternate between them and all succeed."""
    first, second = Server("--tools", ECOMMERCE, "--token", TOKEN), Server("--tools", ECOMMERCE, "--token", TOKEN)
    try:
        assert first.health()["pid"] != second.health()["pid"]
        answers = [(first, second)[i % 2].post(call(f"list_orders --user_id 1 | jq length; echo {i}", i))
                   for i in range(6)]
        assert [(status, a["result"]["structuredContent"]["stdout"]) for status, a in answers] == \
            [(200, f"2\n{i}\n") for i in range(6)]
    finally:
        logs = first.stop() + second.stop()
    lines = [json.loads(line) for line in logs.splitlines() if line.startswith("{")]
    starts = [line for line in lines if line["event"] == "start"]
    assert [(s["workers"], s["token_required"], s["url"]) for s in starts] == \
        [(1, True, first.url + "/mcp"), (1, True, second.url + "/mcp")]
    calls = [line for line in lines if line["event"] == "call"]
    assert len(calls) == 6 and {c["tool"] for c in calls} == {"ecommerce"}
    assert {c["exit_code"] for c in calls} == {0} and all(c["bytes_out"] == 4 for c in calls)
    assert "Processing request" not in logs


def test_workers_option_starts_that_many_worker_processes():
    s = Server("--tools", ECOMMERCE, "--workers", "2", "--token", TOKEN)
    try:
        deadline = time.monotonic() + 120
        workers = []
        while time.monotonic() < deadline and len(workers) < 2:
            children = Path(f"/proc/{s.proc.pid}/task/{s.proc.pid}/children").read_text().split()
            workers = [c for c in children           # uvicorn's spawned workers, not the resource tracker
                       if b"spawn_main" in Path(f"/proc/{c}/cmdline").read_bytes()]
            time.sleep(0.2)
        assert len(workers) == 2
        assert s.post(call("echo ok"))[1]["result"]["structuredContent"]["stdout"] == "ok\n"
    finally:
        s.stop()


def test_a_bash_tool_keeps_files_per_session():
    s = Server("--bash")

    async def session_writes(text):
        async with streamable_http_client(f"{s.url}/mcp") as (read, write, _):
            async with ClientSession(read, write) as session:
                await session.initialize()
                name = (await session.list_tools()).tools[0].name
                await session.call_tool(name, {"commands": f"echo {text} > /tmp/mine; cd /tmp"})
                result = await session.call_tool(name, {"commands": "cat mine; ls /tmp"})
                return result.structuredContent["stdout"]

    async def both():
        return await asyncio.gather(session_writes("one"), session_writes("two"))
    try:
        assert asyncio.run(asyncio.wait_for(both(), 120)) == ["one\nmine\n", "two\nmine\n"]
    finally:
        s.stop()


def test_a_bash_session_beyond_max_sessions_is_a_clear_tool_error():
    s = Server("--bash", "--max-sessions", "1")

    async def two_sessions():
        async with streamable_http_client(f"{s.url}/mcp") as (read, write, _):
            async with ClientSession(read, write) as first:
                await first.initialize()
                name = (await first.list_tools()).tools[0].name
                kept = await first.call_tool(name, {"commands": "echo first"})
                async with streamable_http_client(f"{s.url}/mcp") as (read2, write2, _):
                    async with ClientSession(read2, write2) as second:
                        await second.initialize()
                        refused = await second.call_tool(name, {"commands": "echo second"})
                again = await first.call_tool(name, {"commands": "echo again"})
                return kept, refused, again
    try:
        kept, refused, again = asyncio.run(asyncio.wait_for(two_sessions(), 120))
    finally:
        s.stop()
    assert kept.structuredContent["stdout"] == "first\n" and again.structuredContent["stdout"] == "again\n"
    assert refused.isError
    assert "too many sessions: 1 are open (max_sessions 1)" in refused.content[0].text


def test_refuses_to_serve_beyond_loopback_without_a_token():
    p = subprocess.run([sys.executable, "-m", "scripted_kernel", "mcp", "--http", "--host", "0.0.0.0",
                        "--port", str(free_port())], capture_output=True, text=True, timeout=120,
                       env={k: v for k, v in os.environ.items() if k != "SCRIPTED_MCP_TOKEN"})
    assert p.returncode == 2
    assert p.stderr.strip() == ("scripted_kernel mcp: serving on 0.0.0.0 needs a bearer token (--token or "
                                "SCRIPTED_MCP_TOKEN); without one only a loopback address is allowed")
    with pytest.raises(ValueError):
        ServiceConfig(host="10.1.2.3").check()
    ServiceConfig(host="::1").check()
    ServiceConfig(host="10.1.2.3", token="t").check()


def test_configuration_round_trips_through_the_environment():
    config = ServiceConfig(tools=ECOMMERCE, discovery=True, token="t", host="0.0.0.0", max_request_bytes=10,
                           max_sessions=3, max_sessions_bytes=1 << 26, session_idle_seconds=2.5)
    assert ServiceConfig.from_env(config.to_env()) == config


GATED_TOOLS = '''
import os, time
from scripted_kernel import ScriptedTool, tool

GATE = os.environ["SCRIPTED_TEST_GATE"]


@tool()
def started() -> str:
    """Mark that the call is running."""
    open(os.path.join(GATE, "started"), "w").close()
    return "started"


@tool()
def wait_release() -> str:
    """Return once the test releases the call."""
    while not os.path.exists(os.path.join(GATE, "release")):
        time.sleep(0.05)
    return "released"


api = ScriptedTool.builder("gated").function(started).function(wait_release).build()
'''


def test_shutdown_lets_a_running_call_finish(tmp_path, monkeypatch):
    """SIGTERM while a call runs: the service stops accepting connections, the call still
    completes with its whole answer, and the process exits cleanly."""
    (tmp_path / "gated.py").write_text(GATED_TOOLS)
    monkeypatch.setenv("SCRIPTED_TEST_GATE", str(tmp_path))
    s = Server("--tools", f"{tmp_path / 'gated.py'}:api", "--token", TOKEN)
    answers = []
    caller = threading.Thread(target=lambda: answers.append(s.post(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
         "params": {"name": "gated", "arguments": {"commands": "started; wait_release; echo finished"}}})))
    try:
        caller.start()
        wait_for(lambda: (tmp_path / "started").exists())
        s.proc.send_signal(signal.SIGTERM)
        wait_for(lambda: not accepts(s.port))                  # shutting down: no new connections
        assert s.proc.poll() is None                           # ... but still running the call
        (tmp_path / "release").touch()
        caller.join(60)
        status, answer = answers[0]
        assert status == 200
        assert answer["result"]["structuredContent"]["stdout"] == "startedreleasedfinished\n"
        assert s.proc.wait(60) == 0
    finally:
        (tmp_path / "release").touch()
        s.stop()


def wait_for(condition, seconds: float = 120):
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "the condition never held"
        time.sleep(0.05)


def accepts(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
        return True
    except OSError:
        return False


def test_accepted_connections_send_without_delay():
    """The workers' listening socket is one on which asyncio turns Nagle's algorithm off for
    every accepted connection; otherwise each keep-alive response waits for a delayed ACK."""
    from scripted_kernel.tools.mcp_service import _listening_socket
    listener = _listening_socket("127.0.0.1", 0)
    seen = []

    async def main():
        async def accepted(reader, writer):
            seen.append(writer.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()
        server = await asyncio.start_server(accepted, sock=listener)
        async with server:
            _, writer = await asyncio.open_connection(*listener.getsockname()[:2])
            while not seen:
                await asyncio.sleep(0.01)
            writer.close()
    asyncio.run(asyncio.wait_for(main(), 60))
    assert seen and seen[0] != 0
