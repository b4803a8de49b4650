"""The sessions of an MCP `--bash` server: how many, how much they keep together, idle expiry,
and their own executor (one session's slow calls never delay another's). The pool is driven
directly with stand-in session objects; test_mcp_http.py starts a real server."""
import asyncio
import threading
import time

import pytest

pytest.importorskip("mcp")
from scripted_kernel import ExecutionLimits  # noqa: E402
from scripted_kernel.tools import BashTool  # noqa: E402
from scripted_kernel.tools.mcp import SessionLimits, SessionPool, SessionRefused, kept_bytes  # noqa: E402

MIB = 1 << 20


class McpSession:
    """Stands for an MCP ServerSession: a key the pool holds weakly."""


def small_tool():
    return BashTool(limits=ExecutionLimits(max_shell_state_bytes=MIB, timeout_seconds=5))


def pool(**limits) -> SessionPool:
    return SessionPool(small_tool, SessionLimits(**limits))


def run(coroutine):
    return asyncio.run(asyncio.wait_for(coroutine, 120))


def test_sessions_beyond_max_sessions_are_refused_with_a_clear_error():
    async def scenario():
        sessions = pool(max_sessions=2)
        keys = [McpSession() for _ in range(3)]
        for key in keys[:2]:
            assert (await sessions.execute(key, "echo hi")).stdout == "hi\n"
        with pytest.raises(SessionRefused) as refused:
            await sessions.execute(keys[2], "echo hi")
        assert "too many sessions: 2 are open (max_sessions 2)" in str(refused.value)
        assert (await sessions.execute(keys[0], "echo still")).stdout == "still\n"
        del keys[0]                           # a session that ends frees its place
        assert (await sessions.execute(keys[-1], "echo now")).stdout == "now\n"
    run(scenario())


def test_the_sessions_files_together_stay_within_max_bytes():
    async def scenario():
        sessions = pool(max_bytes=24 * MIB)
        a, b = McpSession(), McpSession()
        r = await sessions.execute(a, "printf '%10000000s' > /tmp/big1; "
                                      "printf '%10000000s' > /tmp/big2 && echo written")
        assert r.stdout == "written\n", r.stderr
        # b may write only what a leaves (24 MiB - 19.1), less a shell state's reserve (1 MiB)
        r = await sessions.execute(b, "printf '%10000000s' > /tmp/big && echo written")
        assert r.stdout == "" and "No space left on device" in r.stderr
        r = await sessions.execute(b, "printf '%3500000s' > /tmp/small && echo written")
        assert r.stdout == "written\n", r.stderr
        total = sum(kept_bytes(s.tool) for s in sessions.sessions.values())
        assert total <= 24 * MIB
        # a third cannot even be opened: no room for a shell's state and a little files
        with pytest.raises(SessionRefused) as refused:
            await sessions.execute(McpSession(), "echo hi")
        assert "memory budget is spent" in str(refused.value) and "max_sessions_bytes" in str(refused.value)
        # once a frees some files, b has the room again
        assert (await sessions.execute(a, "rm /tmp/big1")).exit_code == 0
        r = await sessions.execute(b, "printf '%10000000s' > /tmp/big && echo written")
        assert r.stdout == "written\n", r.stderr
    run(scenario())


def test_an_idle_session_expires_and_its_next_call_starts_afresh():
    async def scenario():
        sessions = pool(max_sessions=1, idle_seconds=0.2)
        old, new = McpSession(), McpSession()
        assert (await sessions.execute(old, "x=1; echo > /tmp/f")).exit_code == 0
        limit = time.monotonic() + 30
        while sessions.sessions and time.monotonic() < limit:     # the sweeper drops it
            await asyncio.sleep(0.05)
        assert not sessions.sessions
        assert (await sessions.execute(new, "echo taken")).stdout == "taken\n"
        await asyncio.sleep(0.3)
        r = await sessions.execute(old, "echo \"[$x]\"; ls /tmp")
        assert r.stdout == "[]\n" and r.stderr.startswith("bash: note: this session was idle")
        assert (await sessions.execute(old, "echo again")).stderr == ""
    run(scenario())


def test_a_session_shell_has_the_state_budget():
    async def scenario():
        sessions = pool()
        key = McpSession()
        await sessions.execute(key, "keep=1")
        r = await sessions.execute(key, "x=$(printf '%2000000s')")
        assert r.error == "limit:max_shell_state_bytes"
        assert (await sessions.execute(key, "echo $keep ${#x}")).stdout == "1 0\n"
    run(scenario())


def test_six_busy_sessions_do_not_delay_a_seventh():
    """asyncio's default executor has min(32, cores + 4) workers: six busy sessions on two
    cores made a seventh wait for one of them to end. Ordered, not timed: each busy call holds
    its worker in a builtin that returns only once the quick call has ended, so the quick call
    can end at all only if it has a worker of its own (without one, the busy calls end first,
    at their deadline)."""
    quick_ended = threading.Event()

    def hold(args, stdin):
        return "released\n" if quick_ended.wait(60) else "deadline\n"

    def holding_tool():
        return BashTool(limits=ExecutionLimits(max_shell_state_bytes=MIB, timeout_seconds=60),
                        builtins={"hold": hold})

    async def scenario():
        sessions = SessionPool(holding_tool, SessionLimits(max_sessions=8))
        finished = []
        keys = []                       # the pool holds its keys weakly

        async def call(name, script):
            keys.append(McpSession())
            response = await sessions.execute(keys[-1], script)
            finished.append(name)
            return response
        busy = [asyncio.create_task(call(f"busy{k}", "hold")) for k in range(6)]
        while sum(s.busy for s in sessions.sessions.values()) < 6:
            await asyncio.sleep(0.01)
        assert (await call("quick", "echo hi")).stdout == "hi\n"
        assert finished == ["quick"]
        quick_ended.set()
        assert [r.stdout for r in await asyncio.gather(*busy)] == ["released\n"] * 6
    run(scenario())


def test_calls_of_one_session_take_turns():
    async def scenario():
        sessions = pool()
        key = McpSession()
        await asyncio.gather(*[sessions.execute(key, "n=$((n + 1))") for _ in range(20)])
        assert (await sessions.execute(key, "echo $n")).stdout == "20\n"
    run(scenario())
