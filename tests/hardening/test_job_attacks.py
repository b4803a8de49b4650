"""Background jobs and process substitution under attack: every bomb ends on the execution's
one budget with an error naming the limit, never a hung or exhausted host."""
import time

import pytest

from scripted_kernel import ScriptedTool
from scripted_kernel.base.limits import ExecutionLimits
from scripted_kernel.tools.bash_tool import BashTool


def _tool(**limits):
    return ScriptedTool.builder("t").limits(ExecutionLimits(**limits)).build()


@pytest.mark.parametrize("script", [
    "f(){ f & f & }; f",                       # the classic fork bomb, as jobs
    "f(){ (f &); f; }; f",
    "echo $(f(){ f & }; f)",
    "f(){ cat <(f) <(f); }; f",                # a process substitution bomb
    "f(){ echo x > >(f); }; f",
    "f(){ source <(echo f); }; f",
])
def test_recursive_jobs_and_substitutions_end_at_a_depth_limit(script):
    start = time.monotonic()
    r = _tool(timeout_seconds=10).execute(script)
    assert r.exit_code == 1 and ("max_subshell_depth" in r.stderr or "max_function_depth" in r.stderr), r.stderr
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr
    assert time.monotonic() - start < 10


@pytest.mark.parametrize("script,limit", [
    ("for ((i=0;;i++)); do : & done", "timeout"),
    ("while :; do sleep 1 & done", "timeout"),
    ("for ((i=0;;i++)); do echo $i > >(cat); done", "timeout"),
])
def test_endless_job_loops_end_on_the_budget(script, limit):
    # a command count no machine reaches in 2 s: the process substitution loop reached the
    # default million in ~3.2 s, a race with the clock on a faster machine
    start = time.monotonic()
    r = _tool(timeout_seconds=2, max_commands=1_000_000_000).execute(script)
    assert r.exit_code == 124 and "timed out" in r.stderr, r.stderr
    assert time.monotonic() - start < 8


def test_thousands_of_jobs_run_within_the_command_budget():
    """At most MAX_PENDING jobs wait (the oldest runs when one more starts); their commands
    count against max_commands like any other."""
    r = _tool().execute("for i in $(seq 5000); do echo $i & done | tail -1; wait")
    assert (r.stdout, r.exit_code) == ("5000\n", 0), r.stderr
    r = _tool(max_commands=2000).execute("for i in $(seq 5000); do echo $i & done; wait")
    assert r.exit_code == 1 and "max_commands" in r.stderr, r.stderr


def test_jobs_share_the_output_limit():
    r = _tool(max_output_bytes=10_000).execute("for i in $(seq 100); do printf '%0500d\\n' 1 & done; wait")
    assert "max_output_bytes" in r.stderr and len(r.stdout) <= 10_000


def test_a_huge_substitution_ends_at_the_memory_bound():
    r = _tool(max_memory_bytes=32 * 1024 * 1024, timeout_seconds=20).execute(
        "cat <(while :; do printf '%01000000d' 0; done) | wc -c")
    assert r.exit_code in (1, 124) and ("max_memory_bytes" in r.stderr or "timed out" in r.stderr), r.stderr


def test_wait_and_kill_on_nothing():
    r = _tool().execute("wait; echo $?; wait -n; echo $?; wait 1; echo $?; jobs; kill %1; echo $?; "
                        "kill 1; echo $?; fg; echo $?")
    assert r.stdout == "0\n127\n127\n1\n1\n1\n", r.stderr
    assert "Traceback" not in r.stderr


def test_a_job_cannot_change_the_shell_that_started_it():
    r = _tool().execute("x=1; { x=2; f() { echo hijacked; }; cd /; } & wait; echo $x; f 2>/dev/null || echo no-f")
    assert r.stdout == "1\nno-f\n", r.stderr


def test_a_snapshot_is_not_changed_by_the_parent_afterwards():
    r = _tool().execute("a=(1 2); declare -A m=([k]=v); g=old; { echo ${a[@]} ${m[k]} $g; } & "
                        "a[5]=x; m[k]=changed; g=new; unset a; wait")
    assert r.stdout == "1 2 v old\n", r.stderr


def test_jobs_of_a_kept_shell_end_with_the_call():
    tool = BashTool()
    r = tool.execute("sleep 0 & echo $!")
    assert r.exit_code == 0
    r = tool.execute("jobs; wait %1; echo $?")
    assert r.stdout == "127\n"


def _kept_shells():
    """Every front-end that keeps one shell across calls, with a 2 s clock."""
    limits = ExecutionLimits(timeout_seconds=2)
    yield "BashTool", BashTool.builder().limits(limits).build()
    yield "session", ScriptedTool.builder("t").limits(limits).build().session()


@pytest.mark.parametrize("front", ["BashTool", "session"])
@pytest.mark.parametrize("script,error", [
    ("for i in $(seq 200); do sleep 10 & done; wait", "timeout"),
    ("f(){ f & f & }; f", "limit:max_subshell_depth"),
    ("for i in 1 2 3; do x=$(printf '%*s' 9000000 x)$(printf '%*s' 9000000 x) & done; wait",
     "limit:max_string_length"),
])
def test_a_stopped_call_leaves_no_job_to_the_next(front, script, error):
    # the jobs a stopped call could not run held its spent budget: each later call ran them
    # and failed with the first call's error (63 calls in a row after the sleep loop)
    shell = dict(_kept_shells())[front]
    r = shell.execute(script)
    assert r.error == error, (r.error, r.stderr[-300:])
    for _ in range(3):
        after = shell.execute("echo next; jobs; echo $?")
        assert (after.stdout, after.stderr, after.exit_code, after.error) == ("next\n0\n", "", 0, None)


def test_a_stopped_call_leaves_no_pending_output_to_the_next():
    # output bound reached by jobs: the next call starts with its own, empty output
    shell = BashTool.builder().limits(ExecutionLimits(max_output_bytes=10_000, timeout_seconds=5)).build()
    r = shell.execute("for i in $(seq 100); do printf '%2000s' x & done; wait")
    assert r.error == "limit:max_output_bytes"
    after = shell.execute("echo fine")
    assert (after.stdout, after.exit_code, after.error) == ("fine\n", 0, None)


def test_a_substitution_kept_open_by_exec_ends_with_its_call():
    # it ran at the end of the call that opened it; its descriptor is closed there, so a
    # later write is a bad descriptor as it is in bash once the reader is gone, not text lost
    shell = BashTool()
    r = shell.execute('exec 3> >(while read l; do echo "got $l"; done); echo one >&3')
    assert (r.stdout, r.exit_code) == ("got one\n", 0)
    r = shell.execute("echo two >&3; echo status=$?")
    assert r.stdout == "status=1\n" and r.stderr == "bash: line 1: 3: Bad file descriptor\n"
