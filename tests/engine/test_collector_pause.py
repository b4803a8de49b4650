"""A call pauses Python's cyclic collector (Budget.pause_collector), briefly, and always gives
it back: at its end however it ends, after COLLECTOR_PAUSE_SECONDS while it still runs, once
it has made COLLECTOR_PAUSE_OBJECTS new objects, and never when the host had turned it off.

The tools below read the collector's state from inside a call, where the pause is."""
from __future__ import annotations

import gc
import threading

import pytest

from scripted_kernel import ExecutionLimits, ScriptedTool, ToolDef
from scripted_kernel.base import limits
from scripted_kernel.shell.interpreter import SCRIPT_CACHE

NO_ARGS = {"type": "object", "properties": {}}


def collector_state(_args) -> str:
    return "on\n" if gc.isenabled() else "off\n"


def wait_for_collector(_args) -> str:
    """'on' as soon as the collector is back; 'off' if it is still paused after a minute."""
    done = threading.Event()
    for _ in range(6000):
        if gc.isenabled():
            return "on\n"
        done.wait(0.01)
    return "off\n"


def make_cyclic_garbage(_args) -> str:
    for _ in range(150_000):
        loop: list = []
        loop.append(loop)
    return ""


def fail(_args) -> str:
    raise RuntimeError("the tool failed")


def tool(**limits_given) -> ScriptedTool:
    builder = ScriptedTool.builder("gc").limits(ExecutionLimits(**limits_given))
    for name, fn in (("collector_state", collector_state), ("wait_for_collector", wait_for_collector),
                     ("make_cyclic_garbage", make_cyclic_garbage), ("fail", fail)):
        builder = builder.tool(ToolDef(name, name, NO_ARGS), fn)
    return builder.build()


@pytest.fixture(autouse=True)
def collector_on():
    gc.enable()
    yield
    assert gc.isenabled(), "a call left the collector off"
    gc.enable()


def test_a_call_runs_with_the_collector_paused_and_gives_it_back(monkeypatch):
    monkeypatch.setattr(limits, "COLLECTOR_PAUSE_SECONDS", 3600.0)   # (however slow the machine)
    result = tool().execute("collector_state")
    assert result.stdout == "off\n"
    assert gc.isenabled()


@pytest.mark.parametrize("script, given, error", [
    ("exit 3", {}, None),
    ("fail; exit 1", {}, None),
    ("if then", {}, None),
    ("while :; do :; done", {"max_commands": 500}, "limit:max_commands"),
    ("f() { f; }; f", {}, "limit:max_function_depth"),
    ("sleep 30", {"timeout_seconds": 0.2}, "timeout"),
])
def test_the_collector_comes_back_however_a_call_ends(script, given, error):
    result = tool(**given).execute(script)
    assert result.error == error
    assert gc.isenabled()


def test_a_host_that_turned_the_collector_off_keeps_it_off():
    gc.disable()
    try:
        assert tool().execute("collector_state").stdout == "off\n"
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_long_call_gets_the_collector_back_while_it_runs():
    # the watchdog ends the pause after COLLECTOR_PAUSE_SECONDS, whatever the call is doing:
    # here, a tool's callback that never returns to the shell (that there is a pause at all,
    # the test above shows)
    assert tool().execute("wait_for_collector").stdout == "on\n"


def test_many_new_objects_end_the_pause(monkeypatch):
    monkeypatch.setattr(limits, "COLLECTOR_PAUSE_SECONDS", 3600.0)   # only the count can end it
    result = tool().execute("make_cyclic_garbage; collector_state\n"
                            "for i in {1..200}; do :; done; collector_state")
    assert result.stdout == "off\non\n"


def test_a_host_turns_the_pause_off_with_a_pause_of_zero_seconds(monkeypatch):
    monkeypatch.setattr(limits, "COLLECTOR_PAUSE_SECONDS", 0)
    assert tool().execute("collector_state").stdout == "on\n"


def test_without_a_watchdog_there_is_no_pause(monkeypatch):
    monkeypatch.setattr(limits.WATCHDOG, "failed", True)
    monkeypatch.setattr(limits.WATCHDOG, "thread", None)
    assert tool().execute("collector_state").stdout == "on\n"


def test_calls_on_many_threads_leave_the_collector_on():
    shared = tool()
    outputs: list = []

    def calls():
        for k in range(20):
            outputs.append(shared.execute(f"collector_state >/dev/null; f() {{ echo {k}; }}; f").stdout)
    threads = [threading.Thread(target=calls) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outputs) == sorted(f"{k}\n" for k in range(20) for _ in range(6))
    assert gc.isenabled()


def test_a_big_script_cached_in_a_call_is_frozen_as_one_cached_outside_a_call():
    """The call's pause is not the host's choice: the cache still moves a big compiled script
    out of the collector's walks (FrozenCode, tests/engine/test_script_cache.py)."""
    text = "# frozen in a call\n" + "\n".join(f"f{k}() {{ echo {k}; }}" for k in range(120)) + "\nf7\n"
    shared = tool()
    assert shared.execute(text).stdout == "7\n"
    assert shared.execute(text).stdout == "7\n"         # seen before: compiled whole and kept
    [compiled] = [entry[0] for key, entry in SCRIPT_CACHE.entries.items() if key[0] == text]
    assert not any(o is compiled.units[0] for o in gc.get_objects())
