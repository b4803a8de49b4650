"""Host code that misbehaves, reached from a script: BashTool builtins contained as ScriptedTool
callbacks are, threads that hung callbacks leave behind bounded, no exception out of execute().

Hung builtins wait on an Event that each test sets at its end, so no test depends on how long
anything takes; time bounds are generous (deadline + a few seconds)."""
import asyncio
import json
import subprocess
import sys
import threading
import time

import pytest

from scripted_kernel import BashTool, ExecutionLimits, ScriptedTool, ToolDef
from scripted_kernel.base.limits import CancelToken
from scripted_kernel.tools import containment

LEAK = "postgres://admin:pa55w0rd@10.0.0.5/prod password=hunter2 token=ghp_abcdefghijklmnopqrstuvwxyz0123"


@pytest.fixture
def release():
    event = threading.Event()
    yield event
    event.set()


def _hanging_bash(release, timeout, **builtins) -> BashTool:
    def hang(args, stdin):
        release.wait(60)
        return "late\n"
    builder = BashTool.builder().limits(ExecutionLimits(timeout_seconds=timeout)).builtin("hang", hang)
    for name, fn in builtins.items():
        builder.builtin(name, fn)
    return builder.build()


# ---------------------------------------------------------------- what reaches the script

def test_a_builtins_error_is_sanitised_like_a_callbacks():
    def leaky(args, stdin):
        raise RuntimeError(LEAK)
    r = BashTool.builder().builtin("cb", leaky).build().execute("cb; echo status=$?")
    assert r.stdout == "status=1\n"
    assert r.stderr == "cb: postgres://<redacted>@<ip>/prod password=<redacted> token=<redacted>\n"
    raw = BashTool.builder().builtin("cb", leaky).sanitize_errors(False).build()
    assert "hunter2" in raw.execute("cb").stderr


def _raise(error):
    def builtin(args, stdin):
        raise error
    return builtin


class _Unprintable:
    def __str__(self):
        raise RuntimeError("no text")


MISBEHAVING = {
    "system_exit": (_raise(SystemExit(3)), "exited with status 3"),
    "keyboard_interrupt": (_raise(KeyboardInterrupt()), "KeyboardInterrupt"),
    "generator_exit": (_raise(GeneratorExit()), "GeneratorExit"),
    "returns_an_exception": (lambda a, s: ValueError("bad value"), "bad value"),
    "tuple_of_four": (lambda a, s: ("a", "b", 0, 1), "cannot print the result: a tuple of 4 values"),
    "tuple_of_one": (lambda a, s: ("a",), "cannot print the result: a tuple of 1 values"),
    "status_not_a_number": (lambda a, s: ("out", "bad"), "cannot print the result: the status is a str"),
    "unprintable": (lambda a, s: _Unprintable(), "cannot print the result: a value of type _Unprintable has no "
                                                 "JSON form"),
    "circular": (lambda a, s: (lambda d: d.setdefault("d", d))({}), "cannot print the result: nested more than "
                                                                     "500 levels deep (a cycle?)"),
}


@pytest.mark.parametrize("name", sorted(MISBEHAVING))
def test_a_misbehaving_builtin_is_a_failing_command(name):
    fn, message = MISBEHAVING[name]
    bash = BashTool.builder().builtin("bad", fn).build()
    r = bash.execute("v=kept; bad; echo status=$?")
    assert r.stdout == "status=1\n" and r.exit_code == 0
    assert r.stderr.startswith("bad: ") and message in r.stderr and "internal" not in r.stderr
    assert bash.execute("echo $v").stdout == "kept\n"


def test_builtin_results_of_every_shape():
    bash = (BashTool.builder().builtin("text", lambda a, s: "t\n").builtin("pair", lambda a, s: ("o\n", 3))
            .builtin("triple", lambda a, s: ("o\n", "e\n", 300)).builtin("data", lambda a, s: {"n": [1]})
            .builtin("raw", lambda a, s: b"\xffz\n").builtin("none", lambda a, s: None).build())
    r = bash.execute("text; pair; echo $?; triple; echo $?; data; raw | wc -c; none; echo $?")
    assert r.stdout == 't\no\n3\no\n44\n{"n": [1]}\n3\n0\n' and r.stderr == "e\n"
    assert [(e.name, e.kind, e.exit_code) for e in r.trace][:3] == [
        ("text", "builtin", 0), ("pair", "builtin", 3), ("triple", "builtin", 44)]


def test_an_async_builtin_is_awaited():
    async def later(args, stdin):
        await asyncio.sleep(0)
        return f"got {args}\n"
    bash = BashTool.builder().builtin("later", later).build()
    assert bash.execute("later a b").stdout == "got ['a', 'b']\n"
    assert asyncio.run(bash.execute_async("later c")).stdout == "got ['c']\n"


# ---------------------------------------------------------------- hung builtins

def test_a_hung_builtin_is_left_at_the_deadline_with_its_shell(release):
    bash = _hanging_bash(release, 0.5, quiet=lambda args, stdin: release.wait(60) and None)
    bash.execute("kept=1; cd /tmp; echo file > /tmp/f")
    started = time.monotonic()
    r = bash.execute("echo before; quiet; echo after > /tmp/after")     # prints nothing when back
    assert time.monotonic() - started < 0.5 + 5
    assert (r.exit_code, r.error, r.stdout) == (124, "timeout", "before\n")
    assert "tool 'quiet' did not return and was left running" in r.stderr
    # the next call neither waits nor shares the shell the hung builtin is still running in:
    # it gets a new shell over the same files
    started = time.monotonic()
    r = bash.execute('echo "[$kept]"; pwd; cat /tmp/f')
    # (the hung builtin waits 60 s: a generous bound still shows the call did not wait for it)
    assert r.stdout == "[]\n/home/user\nfile\n" and time.monotonic() - started < 10
    release.set()
    _until(lambda: containment.ABANDONED.count == 0)         # the left script went on, or not
    assert bash.execute("test -e /tmp/after; echo $?").stdout == "1\n"


def test_a_builtin_reached_without_its_name_in_the_script_is_left_too(release):
    bash = _hanging_bash(release, 0.5)
    started = time.monotonic()
    r = bash.execute("n=ha; ${n}ng; echo never")
    assert r.exit_code == 124 and r.stdout == "" and time.monotonic() - started < 0.5 + 5
    assert bash.execute("echo next").stdout == "next\n"


def test_a_call_waiting_for_a_busy_shell_stops_at_its_own_deadline_or_cancel(release):
    """Ordered by latches: the waiting calls start once the holder is inside `hang` (it holds
    the shell until the test ends), and the cancel comes with a deadline far off, so that
    only the cancel can end that wait."""
    entered = threading.Event()

    def hold(args, stdin):
        entered.set()
        release.wait(60)
        return "late\n"
    bash = _hanging_bash(release, 300, hold=hold)
    holder = threading.Thread(target=bash.execute, args=("hold",))
    holder.start()
    try:
        assert entered.wait(60)
        quick = BashTool.builder().filesystem(bash.filesystem).build()     # another shell: not waiting
        assert quick.execute("echo free").stdout == "free\n"
        bash.limits = ExecutionLimits(timeout_seconds=0.3)
        started = time.monotonic()
        r = bash.execute("echo never")
        assert (r.exit_code, r.error, r.stdout) == (124, "timeout", "")
        assert "waiting for the shell" in r.stderr and time.monotonic() - started < 0.3 + 5
        bash.limits = ExecutionLimits(timeout_seconds=300)
        cancel = CancelToken()
        threading.Timer(0.1, cancel.cancel).start()
        r = bash.execute("echo never", cancel=cancel)
        assert (r.exit_code, r.error) == (130, "cancelled") and "waiting for the shell" in r.stderr
    finally:
        release.set()
        holder.join()


def test_a_builtin_calling_its_own_tool_gets_an_error_not_a_deadlock():
    tools = {}

    def again(args, stdin):
        r = tools["a"].execute("echo inner")
        return r.stdout, r.stderr, r.exit_code

    def through_b(args, stdin):              # a -> b -> a: refused as well
        r = tools["b"].execute("back")
        return r.stdout, r.stderr, r.exit_code

    def back(args, stdin):
        r = tools["a"].execute("echo inner")
        return r.stdout, r.stderr, r.exit_code
    limits = ExecutionLimits(timeout_seconds=30)
    tools["a"] = BashTool.builder().limits(limits).builtin("again", again).builtin("via_b", through_b).build()
    tools["b"] = BashTool.builder().limits(limits).builtin("back", back).build()
    started = time.monotonic()
    for script in ("again; echo $?", "via_b; echo $?", "timeout 10 again; echo $?"):
        r = tools["a"].execute(script)
        assert r.stdout == "1\n", (script, r)
        assert "a builtin of this tool called its execute()" in r.stderr
    assert time.monotonic() - started < 10
    assert tools["a"].execute("echo fine").stdout == "fine\n"


def test_busy_bash_tools_do_not_delay_other_tools_async_calls(release):
    """More hung calls than asyncio's default executor has threads (6 on two cores)."""
    entered = threading.Semaphore(0)

    def hold(args, stdin):
        entered.release()
        release.wait(60)
        return "late\n"
    hung_tools = [_hanging_bash(release, 300, hold=hold) for _ in range(8)]
    others = [BashTool() for _ in range(8)]

    async def main():
        hung = [asyncio.ensure_future(t.execute_async("hold")) for t in hung_tools]
        limit = time.monotonic() + 60
        for _ in hung:                  # every hung call holds its thread before the quick ones
            while not entered.acquire(blocking=False):
                assert time.monotonic() < limit, "the hung calls never started"
                await asyncio.sleep(0.01)
        quick = await asyncio.wait_for(        # (far from the hung calls' 300 s deadline)
            asyncio.gather(*(t.execute_async(f"echo {i}") for i, t in enumerate(others))), 60)
        assert [r.stdout for r in quick] == [f"{i}\n" for i in range(8)]
        assert not any(h.done() for h in hung)
        release.set()
        assert [r.stdout for r in await asyncio.gather(*hung)] == ["late\n"] * 8
    asyncio.run(main())


def test_a_cancelled_async_call_leaves_its_shell_behind(release):
    bash = _hanging_bash(release, 300)

    async def main():
        bash.execute("kept=1")
        call = asyncio.ensure_future(bash.execute_async("hang"))
        await asyncio.sleep(0.2)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        r = await asyncio.wait_for(bash.execute_async('echo "[$kept]"'), 5)
        assert r.stdout == "[]\n"
    asyncio.run(main())


def test_a_scripted_tool_session_left_running_starts_a_new_shell(release):
    tool = (ScriptedTool.builder("t").limits(ExecutionLimits(timeout_seconds=0.3))
            .tool(ToolDef("hang", "hangs"), lambda a: release.wait(60)).build())
    session = tool.session()
    session.execute("kept=1")
    assert session.execute("hang").exit_code == 124
    assert session.execute('echo "[$kept]"').stdout == "[]\n"


# ---------------------------------------------------------------- nothing escapes execute()

class _NoIdleRunner(list):
    """An idle list that hands out no runner. A runner that parks meanwhile (the thread of the
    call before, which parks itself after its caller has its answer) goes to the real list:
    an empty list in its place could receive it, and the next call would have a runner."""

    def __init__(self, real: list):
        super().__init__()
        self.real = real

    def append(self, runner):
        self.real.append(runner)


def test_no_exception_escapes_execute(monkeypatch):
    def exits(stream, text):
        raise SystemExit(4)
    tool = ScriptedTool.builder("t").tool(ToolDef("ok", "fine"), lambda a: "ok\n").build()
    for script in ("echo inline", "ok"):
        r = tool.execute(script, on_output=exits)
        assert r.exit_code == 1 and r.error == "internal", (script, r)

    def no_thread(self):
        raise RuntimeError("can't start new thread")
    monkeypatch.setattr(containment.RUNNERS, "_idle", _NoIdleRunner(containment.RUNNERS._idle))
    monkeypatch.setattr(threading.Thread, "start", no_thread)
    r = tool.execute("ok")
    assert (r.exit_code, r.error) == (1, "limit:threads") and "cannot start a thread" in r.stderr
    r = tool.execute("n=o; ${n}k; echo status=$?")          # inline; the callback's own thread
    assert (r.exit_code, r.error) == (1, "limit:threads"), r
    r = BashTool.builder().builtin("b", lambda a, s: "b").build().execute("b")
    assert (r.exit_code, r.error) == (1, "limit:threads")
    assert asyncio.run(tool.execute_async("ok")).error == "limit:threads"


def _until(condition):
    for _ in range(200):
        if condition():
            return
        time.sleep(0.05)


def test_past_the_abandoned_thread_limit_calls_fail_fast_with_a_named_error(release, monkeypatch):
    _until(lambda: containment.ABANDONED.count == 0)          # earlier tests' released threads
    monkeypatch.setattr(containment, "MAX_ABANDONED_THREADS", 4)
    bash = _hanging_bash(release, 0.2)
    tool = (ScriptedTool.builder("t").limits(ExecutionLimits(timeout_seconds=0.2))
            .tool(ToolDef("hang", "hangs"), lambda a: release.wait(60)).tool(ToolDef("ok", "fine"), lambda a: "ok\n")
            .build())
    for _ in range(2):
        assert bash.execute("hang").exit_code == 124
        assert tool.execute("hang").exit_code == 124
    started = time.monotonic()
    for r in (tool.execute("ok"), bash.execute("hang"), tool.execute("timeout 1 ok"),
              asyncio.run(tool.execute_async("ok"))):
        assert (r.exit_code, r.error) == (1, "limit:max_abandoned_threads"), r
        assert "still running after their callers stopped waiting" in r.stderr
    assert time.monotonic() - started < 10          # refused at once, not after the 60 s hang
    assert tool.execute("echo no tool named").stdout == "no tool named\n"
    release.set()
    _until(lambda: containment.ABANDONED.count < containment.MAX_ABANDONED_THREADS)
    assert tool.execute("ok").stdout == "ok\n"


# In a child process: the address-space limit of the report (ulimit -v 3000000), 31 hung
# callbacks, then 48 concurrent callers; then hung callbacks up to the abandoned limit.
UNDER_ULIMIT = """
import json, resource, threading
resource.setrlimit(resource.RLIMIT_AS, (3_000_000 * 1024, 3_000_000 * 1024))
from scripted_kernel import ExecutionLimits, ScriptedTool, ToolDef
from scripted_kernel.tools import containment
release = threading.Event()
tool = (ScriptedTool.builder("t").limits(ExecutionLimits(timeout_seconds=0.2))
        .tool(ToolDef("hang", "h"), lambda a: release.wait(600)).tool(ToolDef("ok", "o"), lambda a: "ok\\n").build())
threading.stack_size(256 << 10)          # the test's own callers
def concurrently(script, n):
    results = []
    def call():
        try:
            r = tool.execute(script)
            results.append(r.stdout if r.exit_code == 0 else f"{r.exit_code} {r.error}")
        except BaseException as e:
            results.append(f"raised {type(e).__name__}: {e}")
    threads = [threading.Thread(target=call) for _ in range(n)]
    for t in threads: t.start()
    for t in threads: t.join()
    return sorted(set(results))
report = {"hung": [], "abandoned": 0}
for batch in (16, 15):
    report["hung"] += concurrently("hang", batch)
report["after_31"] = concurrently("ok", 48)
while containment.ABANDONED.count < containment.MAX_ABANDONED_THREADS:
    report["hung"] += concurrently("hang", 16)
report["abandoned"] = containment.ABANDONED.count
report["past_the_limit"] = concurrently("ok", 48)
report["no_tool"] = concurrently("echo fine", 8)
print(json.dumps(report))
"""


def test_hung_callbacks_under_an_address_space_limit_leave_calls_working():
    child = subprocess.run([sys.executable, "-c", UNDER_ULIMIT], capture_output=True, text=True, timeout=120)
    assert child.returncode == 0, child.stderr[-2000:]
    report = json.loads(child.stdout)
    assert set(report["hung"]) <= {"124 timeout", "1 limit:max_abandoned_threads"}, report
    assert report["after_31"] == ["ok\n"], report
    assert report["abandoned"] >= containment.MAX_ABANDONED_THREADS
    assert report["past_the_limit"] == ["1 limit:max_abandoned_threads"], report
    assert report["no_tool"] == ["fine\n"], report


# In a child process, so that a stack overflow fails this test rather than ending the run:
# the deepest scripts on a runner thread (the script names a tool) with its stack.
DEEP_ON_A_RUNNER = """
import json
from scripted_kernel import ExecutionLimits, MemoryFs, ScriptedTool, ToolDef
tool = (ScriptedTool.builder("t").limits(ExecutionLimits(timeout_seconds=60)).filesystem(MemoryFs())
        .tool(ToolDef("t", "t"), lambda a: "")
        .tool(ToolDef("deep", "d"), lambda a: json.loads("[" * 19000 + "]" * 19000))
        .build())
scripts = [
    "t; f(){ f; }; f",
    "t; f(){ x=$(f); }; f",
    "t; " + "$(" * 50000,
    "t; " + "${x:-" * 50000,
    "t; echo 'source /tmp/s' > /tmp/s; source /tmp/s",
    "t; e='eval $e'; eval $e",
    "t; echo '" + "[" * 10000 + "]" * 10000 + "' | jq -c . | wc -c",
    "deep | wc -c",
]
print(json.dumps([[r.exit_code, r.error, r.stdout] for r in map(tool.execute, scripts)]))
"""


def test_the_deepest_scripts_fit_a_runner_threads_stack():
    child = subprocess.run([sys.executable, "-c", DEEP_ON_A_RUNNER], capture_output=True, text=True, timeout=300)
    assert child.returncode == 0, child.stderr[-2000:]
    assert json.loads(child.stdout) == [
        [1, "limit:max_function_depth", ""], [1, "limit:max_subshell_depth", ""],
        [2, None, ""], [2, None, ""], [1, "limit:recursion", ""], [1, "limit:recursion", ""],
        [0, None, "20001\n"], [0, None, "38001\n"]]
