"""The sessions an MCP `--bash` server keeps in its memory: how many, how much they keep
together, idle expiry, the least recently used idle session making room for a new one, and
their own executor (one session's slow calls never delay another's). The pool is driven
directly; test_mcp_http.py starts a real server."""
import asyncio
import threading
import time

import pytest

pytest.importorskip("mcp.server.mcpserver")      # mcp 2.x
from scripted_kernel import ExecutionLimits  # noqa: E402
from scripted_kernel.tools import BashTool  # noqa: E402
from scripted_kernel.tools.mcp import SessionLimits, SessionPool, SessionRefused, kept_bytes  # noqa: E402

MIB = 1 << 20
DROPPED = ("bash: note: this session was dropped to make room for another (the least recently used of {n}, "
           "max_sessions); this session's shell and files were reset\n")


def small_tool():
    return BashTool(limits=ExecutionLimits(max_shell_state_bytes=MIB, timeout_seconds=5))


def pool(**limits) -> SessionPool:
    return SessionPool(small_tool, SessionLimits(**limits))


def run(coroutine):
    return asyncio.run(asyncio.wait_for(coroutine, 120))


def test_a_new_session_takes_the_place_of_the_least_recently_used_idle_one():
    async def scenario():
        sessions = pool(max_sessions=2)
        assert (await sessions.execute("a", "x=a")).exit_code == 0
        assert (await sessions.execute("b", "x=b")).exit_code == 0
        assert (await sessions.execute("a", "echo $x")).stdout == "a\n"      # a is now the more recent
        assert (await sessions.execute("c", "echo new")).stdout == "new\n"   # b made room
        assert list(sessions.sessions) == ["a", "c"]
        again = await sessions.execute("b", "echo \"[$x]\"")
        assert (again.stdout, again.stderr) == ("[]\n", DROPPED.format(n=2))
        assert (await sessions.execute("b", "echo later")).stderr == ""
    run(scenario())


def test_a_thousand_abandoned_sessions_do_not_lock_a_new_one_out():
    async def scenario():
        sessions = pool(max_sessions=16)
        for k in range(1000):
            await sessions.execute(f"abandoned{k}", "true")
        assert len(sessions.sessions) == 16
        assert (await sessions.execute("newcomer", "echo welcome")).stdout == "welcome\n"
    run(scenario())


def test_a_session_is_refused_only_when_every_session_is_running_a_call():
    release = threading.Event()

    def holding_tool():
        return BashTool(limits=ExecutionLimits(timeout_seconds=60),
                        builtins={"hold": lambda args, stdin: "done\n" if release.wait(60) else "deadline\n"})

    async def scenario():
        sessions = SessionPool(holding_tool, SessionLimits(max_sessions=2))
        busy = [asyncio.create_task(sessions.execute(key, "hold")) for key in ("a", "b")]
        while sum(s.busy for s in sessions.sessions.values()) < 2:
            await asyncio.sleep(0.01)
        with pytest.raises(SessionRefused) as refused:
            await sessions.execute("c", "echo hi")
        release.set()
        assert [r.stdout for r in await asyncio.gather(*busy)] == ["done\n", "done\n"]
        assert (await sessions.execute("c", "echo hi")).stdout == "hi\n"
        return str(refused.value)
    assert run(scenario()) == ("too many sessions: all 2 are running a call (max_sessions 2); "
                               "try again when one ends")


def test_an_unused_session_costs_nothing_until_its_first_call():
    made = []

    def counted():
        made.append(1)
        return small_tool()

    async def scenario():
        sessions = SessionPool(counted, SessionLimits())
        sessions.close("never-used")
        assert made == [] and not sessions.sessions
        await sessions.execute("used", "true")
        assert made == [1]
    run(scenario())


def test_the_sessions_files_together_stay_within_max_bytes():
    async def scenario():
        sessions = pool(max_bytes=24 * MIB)
        r = await sessions.execute("a", "printf '%10000000s' > /tmp/big1; "
                                        "printf '%10000000s' > /tmp/big2 && echo written")
        assert r.stdout == "written\n", r.stderr
        # b may write only what a leaves (24 MiB - 19.1), less a shell state's reserve (1 MiB)
        r = await sessions.execute("b", "printf '%10000000s' > /tmp/big && echo written")
        assert r.stdout == "" and "No space left on device" in r.stderr
        r = await sessions.execute("b", "printf '%3500000s' > /tmp/small && echo written")
        assert r.stdout == "written\n", r.stderr
        total = sum(kept_bytes(s.tool) for s in sessions.sessions.values())
        assert total <= 24 * MIB
        # a third needs room for a shell's state and a little files: the least recently used
        # idle session (a) is dropped for it
        assert (await sessions.execute("c", "echo hi")).stdout == "hi\n"
        assert list(sessions.sessions) == ["b", "c"]
        assert sum(kept_bytes(s.tool) for s in sessions.sessions.values()) <= 24 * MIB
    run(scenario())


def test_an_idle_session_expires_and_its_next_call_starts_afresh():
    async def scenario():
        sessions = pool(max_sessions=1, idle_seconds=0.2)
        assert (await sessions.execute("old", "x=1; echo > /tmp/f")).exit_code == 0
        limit = time.monotonic() + 30
        while sessions.sessions and time.monotonic() < limit:     # the sweeper drops it
            await asyncio.sleep(0.05)
        assert not sessions.sessions
        assert (await sessions.execute("new", "echo taken")).stdout == "taken\n"
        await asyncio.sleep(0.3)
        r = await sessions.execute("old", "echo \"[$x]\"; ls /tmp")
        assert r.stdout == "[]\n" and r.stderr.startswith("bash: note: this session was idle for more than 0.2 s")
        assert (await sessions.execute("old", "echo again")).stderr == ""
    run(scenario())


def test_a_session_shell_has_the_state_budget():
    async def scenario():
        sessions = pool()
        await sessions.execute("k", "keep=1")
        r = await sessions.execute("k", "x=$(printf '%2000000s')")
        assert r.error == "limit:max_shell_state_bytes"
        assert (await sessions.execute("k", "echo $keep ${#x}")).stdout == "1 0\n"
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

        async def call(name, script):
            response = await sessions.execute(name, script)
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
        await asyncio.gather(*[sessions.execute("k", "n=$((n + 1))") for _ in range(20)])
        assert (await sessions.execute("k", "echo $n")).stdout == "20\n"
    run(scenario())
