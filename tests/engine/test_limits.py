"""ExecutionLimits and cancellation: each stops the script with an error naming the limit,
and the output produced before it is kept."""
import threading
import time

import pytest

from scripted_kernel import ExecutionLimits, ScriptedTool
from scripted_kernel import CancelToken


def tool_with(**limits):
    return ScriptedTool.builder("limited").limits(ExecutionLimits(**limits)).build()


def test_max_commands_keeps_output_so_far():
    r = tool_with(max_commands=50).execute("echo start; while :; do :; done")
    assert r.stdout == "start\n"
    assert r.exit_code != 0 and r.error == "limit:max_commands"
    assert "max_commands" in r.stderr


@pytest.mark.parametrize("unit", ["case a in b) c;; esac; ", "f() { :; }; ", "((1)); ", "[[ a ]]; "])
def test_compound_commands_that_run_no_simple_command_are_counted(unit):
    """A case that matches nothing and a function definition are commands too: a script of
    nothing else goes through the budget (command count, clock, cancel flag), as one of
    `(( ))` or `[[ ]]` does."""
    r = tool_with(max_commands=50).execute("echo start\n" + unit * 100 + "\necho never")
    assert (r.stdout, r.error) == ("start\n", "limit:max_commands"), r.stderr


def test_max_loop_iterations():
    r = tool_with(max_loop_iterations=100).execute("i=0; while true; do ((i++)); done")
    assert r.error == "limit:max_loop_iterations" and "max_loop_iterations" in r.stderr
    r = tool_with(max_loop_iterations=100).execute("for ((i=0;;i++)); do :; done")
    assert r.error == "limit:max_loop_iterations"


def test_function_depth():
    r = tool_with(max_function_depth=30).execute("f() { f; }; echo go; f")
    assert r.stdout == "go\n" and r.error == "limit:max_function_depth"
    assert "maximum function nesting level exceeded" in r.stderr


def test_default_recursion_is_stopped_cleanly():
    r = ScriptedTool.builder("t").build().execute("f() { f; }; f")
    assert r.error == "limit:max_function_depth" and "Traceback" not in r.stderr


def test_output_limit_cuts_and_says_so():
    r = tool_with(max_output_bytes=1000).execute("while :; do echo 0123456789; done")
    assert r.stdout_truncated and r.error == "limit:max_output_bytes"
    assert len(r.stdout) <= 1000 and r.stdout.startswith("0123456789\n")


def test_string_length_limit():
    r = tool_with(max_string_length=10_000).execute("s=x; while :; do s=$s$s; done")
    assert r.error == "limit:max_string_length" and "max_string_length" in r.stderr


def test_brace_expansion_beyond_the_limit_is_an_error_not_literal_text():
    r = tool_with(max_brace_expansion=1000).execute("echo {1..99999999}")
    assert r.error == "limit:max_brace_expansion" and r.stdout == ""
    r = tool_with(max_brace_expansion=1000).execute("echo {1..100}{1..100}")
    assert r.error == "limit:max_brace_expansion"


def test_wall_clock_timeout_keeps_output():
    start = time.monotonic()
    r = tool_with(timeout_seconds=0.3).execute("echo first; while :; do :; done")
    assert time.monotonic() - start < 3
    assert r.stdout == "first\n" and r.exit_code == 124 and r.error == "timeout"


def test_cancel_from_another_thread():
    """Cancelled by another thread once the script has printed (an event, not a timer: a
    loaded machine cannot make the cancel arrive before the first output)."""
    token = CancelToken()
    cancelling = []

    def on_output(stream, text):
        if not cancelling:
            cancelling.append(threading.Thread(target=token.cancel))
            cancelling[0].start()

    # (limits the loop cannot reach: at the defaults it ends by itself in about a second, and on
    # a loaded machine that could come before the cancelling thread runs)
    endless = tool_with(max_commands=10**9, max_loop_iterations=10**9, timeout_seconds=3600)
    r = endless.execute("echo a; while :; do :; done", cancel=token, on_output=on_output)
    assert r.stdout == "a\n" and r.error == "cancelled" and r.exit_code == 130


def test_script_size_limit():
    r = tool_with(max_script_bytes=100).execute("echo " + "x" * 200)
    assert r.exit_code == 2 and "max_script_bytes" in r.stderr


def test_streaming_callback_sees_output_as_it_is_produced():
    chunks = []
    ScriptedTool.builder("t").build().execute("echo a; echo b >&2; echo c",
                                               on_output=lambda s, t: chunks.append((s, t)))
    assert chunks == [("stdout", "a\n"), ("stderr", "b\n"), ("stdout", "c\n")]


def test_the_string_limit_outside_an_execution_is_the_default_number():
    from scripted_kernel.base.limits import string_limit
    assert string_limit() == ExecutionLimits().max_string_length
