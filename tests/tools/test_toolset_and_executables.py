"""Sessions, executions, timeouts, discovery modes, self-describing executables, context."""
import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from scripted_kernel import DiscoveryMode, ExecutionLimits, ScriptedTool, ScriptingToolSet, ToolDef

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_session_keeps_variables_and_functions_fresh_execute_does_not():
    t = ScriptedTool("t")
    s = t.session()
    s.execute("count=1; bump() { count=$((count + 1)); }")
    assert s.execute("bump; bump; echo $count").stdout == "3\n"
    assert t.execute('echo "${count:-none}"').stdout == "none\n"


def test_execution_is_validated_and_single_use():
    t = ScriptedTool("t")
    e = t.execution({"commands": "echo once"})
    assert e.run().stdout == "once\n"
    with pytest.raises(RuntimeError):
        e.run()
    with pytest.raises(ValueError):
        t.execution({"script": "echo"})


def _held(release: threading.Event):
    """A tool callback that returns only once the test releases it (or after 60 s): a call it
    ends on time was cut by the clock, however slow the machine."""
    def slow(args):
        release.wait(60)
        return "late\n"
    return slow


def test_timeout_stops_a_slow_sync_tool_with_124_and_the_script_goes_on():
    release = threading.Event()
    t = ScriptedTool.builder("t").tool(ToolDef("slow", "waits"), _held(release)).build()
    try:
        start = time.monotonic()
        r = t.execute("timeout 0.2 slow; echo status=$?; timeout 5 echo quick")
        assert r.stdout == "status=124\nquick\n" and time.monotonic() - start < 20
    finally:
        release.set()


def test_wall_clock_stops_a_hung_sync_tool():
    from scripted_kernel import ExecutionLimits
    release = threading.Event()
    t = (ScriptedTool.builder("t").tool(ToolDef("slow", "waits"), _held(release))
         .limits(ExecutionLimits(timeout_seconds=0.3)).build())
    try:
        start = time.monotonic()
        r = t.execute("echo before; slow; echo never")
        assert r.stdout == "before\n" and r.exit_code == 124 and r.error == "timeout"
        assert time.monotonic() - start < 20
    finally:
        release.set()


def test_timeout_usage_errors():
    t = ScriptedTool("t")
    assert t.execute("timeout").exit_code == 125
    assert t.execute("timeout abc echo x").exit_code == 125


def test_discovery_modes():
    t = (ScriptedTool.builder("api").tool(ToolDef("get_user", "Fetch a user", {
        "type": "object", "properties": {"id": {"type": "integer"}}}), lambda a: "{}").build())
    full = ScriptingToolSet(t, DiscoveryMode.ALL)
    assert [x.name for x in full.tools()] == ["api"] and "`get_user [--id <integer>]`" in full.system_prompt()
    lean = ScriptingToolSet(t, DiscoveryMode.WITH_DISCOVERY)
    script_tool, discover_tool = lean.tools()
    assert discover_tool.name == "api_discover"
    assert "--id" not in lean.system_prompt() and "api_discover" in lean.system_prompt()
    assert t.compact is False and "`get_user [--id <integer>]`" in t.system_prompt()   # not changed
    assert script_tool.execute("get_user --id 1").stdout == "{}"


def test_discover_tool_is_a_whole_tool_for_one_help_or_discover_command():
    t = (ScriptedTool.builder("api").tool(ToolDef("get_user", "Fetch a user", {
        "type": "object", "properties": {"id": {"type": "integer"}}}), lambda a: "{}").build())
    discover_tool = ScriptingToolSet(t, DiscoveryMode.WITH_DISCOVERY).tools()[1]
    assert discover_tool.input_schema()["required"] == ["commands"]
    assert discover_tool.output_schema() == t.output_schema()
    assert discover_tool.version == t.version and discover_tool.description() in discover_tool.help()
    assert discover_tool.system_prompt().startswith("# api_discover\n")
    assert "--id <integer>" in discover_tool.execute({"commands": "help get_user"}).stdout
    refused = discover_tool.execute({"commands": "get_user --id 1"})
    assert refused.exit_code == 2 and "only `help` and `discover`" in refused.stderr
    for script in ("help; get_user --id 1", "help | cat", "help $(get_user --id 1)", "help\nget_user"):
        r = discover_tool.execute({"commands": script})
        assert (r.exit_code, r.stdout) == (2, ""), script


def test_toolset_builder():
    toolset = (ScriptingToolSet.builder("api").short_description("An API").with_discovery()
               .tool_fn(ToolDef.new("ping", "Answers").with_schema({"type": "object"}), lambda a: "pong\n")
               .build())
    script_tool, discover_tool = toolset.tools()
    assert script_tool.short_description == "An API" and script_tool.compact
    assert script_tool.execute("ping").stdout == "pong\n" and discover_tool.name == "api_discover"
    assert ScriptingToolSet.builder("b").build().tools()[0].name == "b"


def test_seed_aliases():
    limits = ExecutionLimits().max_commands(3).timeout_seconds(5)
    assert (limits.max_commands, limits.timeout_seconds) == (3, 5.0)
    t = ScriptedTool.builder("api").limits(limits).async_tool_fn(
        ToolDef.new("twice", "Doubles").with_schema({"type": "object", "properties": {
            "n": {"type": "integer"}, "x": {"type": "number"}}}),
        _twice).build()
    assert t.execute("twice --n 4 --x 0.5").stdout == "8 1.0\n"
    assert t.execute("echo 1; echo 2; echo 3; echo 4").error == "limit:max_commands"
    execution = t.execution({"commands": "twice --n 1"})
    assert execution.execute().stdout == "2 0.0\n"
    with pytest.raises(RuntimeError):
        execution.run()


async def _twice(args):
    return f"{args.param_i64('n') * 2} {(args.param_f64('x') or 0.0) * 2}\n"


def test_last_execution_trace_is_taken_once():
    t = (ScriptedTool.builder("api").tool(ToolDef("ping", "Answers"), lambda a: "pong\n").build())
    assert t.take_last_execution_trace() is None
    t.execute("ping; ping")
    assert [e.name for e in t.take_last_execution_trace()] == ["ping", "ping"]
    assert t.take_last_execution_trace() is None and t.last_trace == []


def test_llm_tool_specs():
    t = ScriptedTool.builder("api").short_description("An API").build()
    openai = t.to_openai_tool()
    assert openai["type"] == "function" and openai["function"]["name"] == "api"
    assert openai["function"]["parameters"]["required"] == ["commands"]
    anthropic = t.to_anthropic_tool()
    assert anthropic["name"] == "api" and anthropic["input_schema"]["required"] == ["commands"]


def test_self_describing_executables_in_stub_mode():
    t = ScriptedTool.builder("x").executables(str(EXAMPLES / "tools"), stub=True).build()
    r = t.execute("""weather --city Oslo | jq -r '"\\(.city) \\(.temp_c)"'; printf 'a b\\n' | word_count""")
    assert r.stdout == 'Oslo 21\n{"lines": 1, "words": 2, "bytes": 4}\n', r.stderr
    assert t.execute("weather").stderr == "weather: missing required flag --city (string)\n"


def test_executables_fail_cleanly_without_stub_and_broken_ones_are_skipped(tmp_path):
    good = tmp_path / "echo_tool"
    good.write_text('#!/bin/sh\nif [ "$1" = --describe ]; then echo \'{"name": "echo_tool", '
                    '"description": "echoes", "parameters": {}}\'; exit 0; fi\necho "args=$1"\n')
    broken = tmp_path / "broken"
    broken.write_text("#!/bin/sh\necho not json\n")
    not_executable = tmp_path / "plain"
    not_executable.write_text("#!/bin/sh\necho hi\n")
    good.chmod(0o755)
    broken.chmod(0o755)
    with pytest.warns(UserWarning, match="broken"):
        t = ScriptedTool.builder("x").executables(str(tmp_path)).build()
    assert list(t.tools) == ["echo_tool"]
    assert t.execute("echo_tool --n 1").stdout == 'args={"n": "1"}\n'
    assert t.execute("broken; plain").exit_code == 127          # default-deny
    w = ScriptedTool.builder("x").executables(str(EXAMPLES / "tools")).build()
    r = w.execute("weather --city Oslo")
    assert r.exit_code == 1 and r.stderr == "weather: weather: no backend configured; run with stub mode\n"


def test_context_modules_are_appended_in_name_order(tmp_path):
    (tmp_path / "b.md").write_text("Second block")
    (tmp_path / "a.md").write_text("First block")
    prompt = ScriptedTool.builder("x").context_dir(str(tmp_path)).build().system_prompt()
    assert prompt.index("First block") < prompt.index("Second block")
    assert "---\n\nFirst block" in prompt


def test_cli_prompt_catalog_and_run_with_tools():
    def cli(*args):
        return subprocess.run([sys.executable, "-m", "scripted_kernel", *args], capture_output=True,
                              text=True, timeout=60)
    p = cli("prompt", "--tools", f"{EXAMPLES / 'ecommerce.py'}:api")
    assert p.returncode == 0 and "- `get_user`: " in p.stdout
    p = cli("run", "--tools", f"{EXAMPLES / 'ecommerce.py'}:api", "-c", "get_user --id 1 | jq -r .name")
    assert p.stdout == "Alice\n"
    p = cli("catalog", str(EXAMPLES / "tools"))
    assert [t["name"] for t in json.loads(p.stdout)] == ["weather", "word_count"]
