"""The MCP server as an HTTP service, in real processes started the way the README says:
`python -m scripted_kernel mcp --http ...`. Both protocol eras (the `mcp` 2.x client at
2026-07-28 and with the 2025 handshake, raw 2025-era requests), token, size limit, health
check, stateless requests answered by any process, a BashTool's files per session, one log
line per call, and a refusal to serve beyond loopback without a token. Readiness is polled;
nothing asserts a duration."""
import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import jsonschema
import pytest

pytest.importorskip("mcp.server.mcpserver")      # mcp 2.x
pytest.importorskip("uvicorn")
from support import free_port  # noqa: E402
from services import Service, structured  # noqa: E402

import scripted_kernel  # noqa: E402
from scripted_kernel.tools.mcp_service import ServiceConfig  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
ECOMMERCE = f"{ROOT / 'examples' / 'ecommerce.py'}:api"
TOKEN = "test-token-7f3a"


def call(commands: str, request_id: int = 1, tool: str = "ecommerce") -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
            "params": {"name": tool, "arguments": {"commands": commands}}}


@pytest.fixture(scope="module")
def server():
    s = Service("--tools", ECOMMERCE, "--max-request-bytes", "4096", token=TOKEN)
    yield s
    s.stop()


def run(coroutine):
    return asyncio.run(asyncio.wait_for(coroutine, 120))


def test_the_token_is_required_and_checked(server):
    assert server.post(call("echo hi"), token="")[0] == 401
    assert server.post(call("echo hi"), token="wrong")[0] == 401
    status, _, answer = server.post(call("get_user --id 1 | jq -r .name"))
    assert status == 200
    assert structured(answer["result"]["structuredContent"]) == {"stdout": "Alice\n", "stderr": "", "exit_code": 0}
    assert server.health()["status"] == "ok"                  # the health check needs no token


def test_the_2026_client_lists_calls_and_gets_results_in_the_declared_shape(server):
    async def session():
        async with server.client() as client:
            listed = await client.list_tools()
            ok = await client.call_tool("ecommerce", {"commands": "get_user --id 2 | jq -r .name"})
            failed = await client.call_tool("ecommerce", {"commands": "get_user --id 1 >/dev/null; exit 3"})
            return client.protocol_version, listed, ok, failed
    version, listed, ok, failed = run(session())
    assert version == "2026-07-28"
    assert [t.name for t in listed.tools] == ["ecommerce"] and listed.ttl_ms == 300_000
    schema = listed.tools[0].output_schema
    for result in (ok, failed):
        jsonschema.validate(result.structured_content, schema)
    assert (ok.is_error, structured(ok)) == (False, {"stdout": "Bob\n", "stderr": "", "exit_code": 0})
    assert failed.is_error and failed.structured_content["exit_code"] == 3
    assert [e["name"] for e in failed.structured_content["trace"]] == ["get_user"]


def test_the_server_names_this_package_and_version(server):
    status, _, answer = server.initialize()
    assert status == 200
    assert answer["result"]["serverInfo"] == {"name": "ecommerce", "version": scripted_kernel.__version__}


def test_bodies_over_the_limit_are_refused(server):
    status, _, answer = server.post(None, body=json.dumps(call("echo " + "x" * 5000)).encode())
    assert status == 413 and "4096" in answer["error"]


def test_any_process_answers_a_stateless_client():
    """Two servers stand for two workers behind a load balancer: one client's requests,
    with the same headers and no session, alternate between them and all succeed."""
    first, second = Service("--tools", ECOMMERCE, token=TOKEN), Service("--tools", ECOMMERCE, token=TOKEN)
    try:
        assert first.health()["pid"] != second.health()["pid"]
        answers = [(first, second)[i % 2].post(call(f"list_orders --user_id 1 | jq length; echo {i}", i))
                   for i in range(6)]
        assert [(status, a["result"]["structuredContent"]["stdout"]) for status, _, a in answers] == \
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


def worker_pids(parent: int) -> list:
    """uvicorn's spawned workers among a process's children (not the resource tracker)."""
    children = Path(f"/proc/{parent}/task/{parent}/children").read_text().split()
    return [c for c in children if b"spawn_main" in Path(f"/proc/{c}/cmdline").read_bytes()]


def test_workers_option_starts_that_many_worker_processes():
    s = Service("--tools", ECOMMERCE, "--workers", "2", token=TOKEN)
    try:
        deadline = time.monotonic() + 120
        workers = []
        while time.monotonic() < deadline and len(workers) < 2:
            workers = worker_pids(s.proc.pid)
            time.sleep(0.1)
        assert len(workers) == 2
        assert s.post(call("echo ok"))[2]["result"]["structuredContent"]["stdout"] == "ok\n"
    finally:
        s.stop()


def test_a_bash_tool_keeps_files_per_2025_session():
    s = Service("--bash")

    async def session_writes(text):
        async with s.client(mode="legacy") as client:
            await client.call_tool("bash", {"commands": f"echo {text} > /tmp/mine; cd /tmp"})
            result = await client.call_tool("bash", {"commands": "cat mine; ls /tmp"})
            return result.structured_content["stdout"]

    async def both():
        return await asyncio.gather(session_writes("one"), session_writes("two"))
    try:
        assert run(both()) == ["one\nmine\n", "two\nmine\n"]
    finally:
        s.stop()


def test_a_new_2025_session_takes_the_place_of_the_least_recently_used_idle_one():
    """At --max-sessions, a new session drops the one used longest ago (its next call starts
    afresh, saying so), rather than locking new clients out."""
    s = Service("--bash", "--max-sessions", "1")

    async def two_sessions():
        async with s.client(mode="legacy") as first:
            kept = await first.call_tool("bash", {"commands": "echo first > /tmp/f; cat /tmp/f"})
            async with s.client(mode="legacy") as second:
                taken = await second.call_tool("bash", {"commands": "echo second"})
            again = await first.call_tool("bash", {"commands": "cat /tmp/f; echo $?"})
            return kept, taken, again
    try:
        kept, taken, again = run(two_sessions())
    finally:
        s.stop()
    assert structured(kept)["stdout"] == "first\n" and structured(taken)["stdout"] == "second\n"
    assert again.structured_content["stdout"] == "1\n"
    assert again.structured_content["stderr"].startswith(
        "bash: note: this session was dropped to make room for another (the least recently used of 1, "
        "max_sessions); this session's shell and files were reset\n")


def test_refuses_to_serve_beyond_loopback_without_a_token():
    p = subprocess.run([sys.executable, "-m", "scripted_kernel", "mcp", "--http", "--host", "0.0.0.0",
                        "--port", str(free_port())], capture_output=True, text=True,
                       timeout=120, env={k: v for k, v in os.environ.items() if k != "SCRIPTED_MCP_TOKEN"})
    assert p.returncode == 2
    assert p.stderr.strip() == ("scripted_kernel mcp: serving on 0.0.0.0 needs a bearer token (--token or "
                                "SCRIPTED_MCP_TOKEN); without one only a loopback address is allowed")
    with pytest.raises(ValueError):
        ServiceConfig(host="10.1.2.3").check()
    ServiceConfig(host="::1").check()
    ServiceConfig(host="10.1.2.3", token="t").check()


def test_configuration_round_trips_through_the_environment():
    config = ServiceConfig(tools=ECOMMERCE, discovery=True, token="t", host="0.0.0.0", max_request_bytes=10,
                           max_sessions=3, max_sessions_bytes=1 << 26, session_idle_seconds=2.5,
                           session_ttl_seconds=60.0, task_after_seconds=1.5, body_timeout_seconds=3.0)
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


def test_shutdown_lets_a_running_call_finish(tmp_path):
    """SIGTERM while a call runs: the service stops accepting connections, the call still
    completes with its whole answer, and the process exits cleanly."""
    (tmp_path / "gated.py").write_text(GATED_TOOLS)
    s = Service("--tools", f"{tmp_path / 'gated.py'}:api", token=TOKEN, env={"SCRIPTED_TEST_GATE": str(tmp_path)})
    answers = []
    caller = threading.Thread(target=lambda: answers.append(s.post(
        call("started; wait_release; echo finished", tool="gated"))))
    try:
        caller.start()
        wait_for(lambda: (tmp_path / "started").exists())
        s.proc.send_signal(signal.SIGTERM)
        wait_for(lambda: not accepts(s.port))                  # shutting down: no new connections
        assert s.proc.poll() is None                           # ... but still running the call
        (tmp_path / "release").touch()
        caller.join(60)
        status, _, answer = answers[0]
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
