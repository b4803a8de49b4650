"""What every framework adapter shares: the text the model reads, the tools a ScriptedTool or
toolset offers, schemas with references, and the frameworks staying out of the core import."""
import importlib
import importlib.util
import json
import re
import reprlib
import subprocess
import sys
from pathlib import Path

import pytest

from scripted_kernel import BashTool, DiscoveryMode, ExecutionLimits, ScriptedTool, ScriptingToolSet, ToolResponse, tool
from scripted_kernel.integrations import (MAX_ARGUMENTS_DEPTH, BadArguments, inline_refs,
                                          json_arguments, resume, run_record, script_arguments, script_entries,
                                          script_entry, text_for_model)
from scripted_kernel.tools.call_log import MAX_LOGGED_CALL_CHARS
from scripted_kernel.tools.hooks import ToolCall
from scripted_kernel.tools.scripted_tool import TraceEntry
from user_api import REFUND_SCRIPT, pause_refunds, refunds


@tool(register=False)
def get_user(id: int) -> dict:
    """Fetch a user by id."""
    return {"id": id, "name": ["Ada", "Bob"][id % 2]}


API = ScriptedTool.builder("api").short_description("User API").function(get_user).build()


@pytest.mark.parametrize("stdout, stderr, status, text", [
    ("Ada\n", "", 0, "Ada\n"),
    ("", "", 0, "(no output)"),
    ("partial", "", 0, "partial"),
    ("Ada\n", "warning: slow\n", 0, "Ada\n[stderr]\nwarning: slow\n"),
    ("", "get_user: --id: expected integer, got 'x'\n", 2,
     "[stderr]\nget_user: --id: expected integer, got 'x'\n[exit code 2]"),
    ("half", "", 1, "half\n[exit code 1]"),
    ("bad \udcff byte\n", "", 0, "bad \ufffd byte\n"),
])
def test_the_model_reads_stdout_then_stderr_then_a_failing_exit_code(stdout, stderr, status, text):
    assert text_for_model(ToolResponse(stdout, stderr, status)) == text


def test_a_real_failure_reads_as_bash_would_show_it():
    entry = script_entry(API, "plural")
    assert text_for_model(entry.run({"commands": "get_user --id 1 | jq -r .name; nosuch"})) == \
        "Bob\n[stderr]\nbash: line 1: nosuch: command not found\n[exit code 127]"


def deep(levels: int, leaf=None):
    """A list nested `levels` deep, built without recursion."""
    value = [] if leaf is None else leaf
    for _ in range(levels):
        value = [value]
    return value


DEEP_TEXT = "[" * 200_000 + "]" * 200_000


@pytest.mark.parametrize("args", [
    {}, {"commands": 5}, {"script": "ls"}, None, "get_user --id 1", [1], 5, "5", '"ls"', "[]", "",
    {"commands": deep(200_000)}, {"commands": ["ls"]}, {"commands": None}, '{"commands": 5}'], ids=reprlib.repr)
def test_arguments_other_than_a_script_are_refused_like_a_usage_error(args):
    response = script_entry(API, "plural").run(args)
    assert (response.exit_code, response.stderr) == (2, 'api: arguments must be {"commands": "<bash script>"}\n')


SMALL = ScriptedTool.builder("api").limits(ExecutionLimits(max_script_bytes=1024)).function(get_user).build()
TOO_DEEP = f"nested too deeply: more than {MAX_ARGUMENTS_DEPTH} levels"


@pytest.mark.parametrize("tool, text, problem", [
    (API, DEEP_TEXT, TOO_DEEP),
    (API, '{"commands": "ls", "x": ' + DEEP_TEXT + "}", TOO_DEEP),
    (API, "{" * 100_000, TOO_DEEP),
    (SMALL, DEEP_TEXT, f"too large: more than {6 * 1024 + 1024} characters"),
    (SMALL, json.dumps({"commands": "x" * 8000}), f"too large: more than {6 * 1024 + 1024} characters"),
], ids=["deep", "deep beside the script", "unclosed", "deep and large", "large"])
def test_json_arguments_too_deep_or_too_large_are_refused_naming_the_problem(tool, text, problem):
    """The size bound follows the script limit (every byte of a script escaped, 6 characters)."""
    for entry in script_entries(ScriptingToolSet(tool, DiscoveryMode.WITH_DISCOVERY)):
        response = entry.run(text)
        assert (response.stdout, response.stderr, response.exit_code) == ("", f"{entry.name}: arguments {problem}\n", 2)


def test_json_arguments_at_the_bounds_run_their_script():
    script = "printf '%s\\n' '[[[{{{\"' ; get_user --id 1 | jq -r .name"
    text = json.dumps({"commands": script, "note": deep(MAX_ARGUMENTS_DEPTH - 2)})
    response = script_entry(API, "plural").run(text)
    assert (response.stdout, response.exit_code) == ('[[[{{{"\nBob\n', 0)
    at_the_limit = "echo " + "\x01" * 1019                             # 1024 bytes, 6 characters each
    response = script_entry(SMALL, "plural").run(json.dumps({"commands": at_the_limit}))
    assert (response.stdout, response.exit_code) == ("\x01" * 1019 + "\n", 0)


def test_json_arguments_count_brackets_outside_strings_only():
    at_most = "[" * MAX_ARGUMENTS_DEPTH + "]" * MAX_ARGUMENTS_DEPTH
    assert json_arguments(at_most, 10_000) == deep(MAX_ARGUMENTS_DEPTH - 1)
    with pytest.raises(BadArguments):
        json_arguments("[" + at_most + "]", 10_000)
    in_strings = json.dumps({"commands": "[" * 10_000 + '\\"{' * 1000, "x": ["\\", "]]]", "\"[["]})
    assert json_arguments(in_strings, 100_000) == json.loads(in_strings)
    for not_json in ('{"commands": "unclosed', '"\\', "nope", "{'commands': 'ls'}", "[1,]"):
        assert json_arguments(not_json, 100) is None


def test_script_arguments_keep_only_the_script():
    assert script_arguments({"commands": "ls", "x": deep(200_000)}) == {"commands": "ls"}
    for other in (None, 5, "ls", [{"commands": "ls"}], {"commands": 5}, {"commands": deep(10)}):
        assert script_arguments(other) == {}


def test_a_scripted_tool_offers_one_tool_described_by_its_system_prompt():
    (entry,) = script_entries(API)
    assert (entry.name, entry.description, entry.input_schema) == ("api", API.system_prompt(), API.input_schema())
    bash = BashTool()
    assert script_entry(bash, "plural").description == bash.system_prompt()


def test_a_toolset_with_discovery_offers_its_discover_tool_too():
    toolset = ScriptingToolSet(API, DiscoveryMode.WITH_DISCOVERY)
    entries = script_entries(toolset)
    assert [e.name for e in entries] == ["api", "api_discover"]
    assert entries[0].description == toolset.system_prompt() and "api_discover" in entries[0].description
    assert entries[1].run({"commands": "help --list"}).stdout.startswith("get_user")
    with pytest.raises(ValueError, match=r"2 tools \(api, api_discover\): use as_x_tools\(...\)"):
        script_entry(toolset, "as_x_tools")
    assert script_entry(ScriptingToolSet(API), "as_x_tools").description == API.system_prompt()


def test_only_scripted_tools_and_toolsets_are_adapted():
    with pytest.raises(TypeError, match="expected a ScriptedTool, BashTool or ScriptingToolSet, not function"):
        script_entries(get_user.fn)


def test_references_are_written_out_and_a_recursive_one_stays():
    schema = {"type": "object", "$defs": {
        "City": {"type": "object", "properties": {"name": {"type": "string"}}},
        "Tree": {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}}}},
        "properties": {"city": {"$ref": "#/$defs/City", "description": "where"},
                       "tree": {"$ref": "#/$defs/Tree"}, "odd": {"$ref": "#/$defs/Missing"}}}
    inlined = inline_refs(schema)
    assert inlined["properties"]["city"] == {"type": "object", "properties": {"name": {"type": "string"}},
                                             "description": "where"}
    assert inlined["properties"]["tree"] == schema["$defs"]["Tree"]      # written out once, then a $ref
    assert inlined["properties"]["odd"] == {"$ref": "#/$defs/Missing"}
    assert inlined["$defs"] == schema["$defs"]


FRAMEWORKS = ["langchain_core", "pydantic_ai", "agents", "openai"]


def test_importing_the_package_imports_no_framework():
    code = ("import sys, scripted_kernel, scripted_kernel.tools, scripted_kernel.integrations\n"
            f"print(sorted(m for m in {FRAMEWORKS!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out == "[]\n"


@pytest.mark.parametrize("adapter, framework, extra", [
    ("langchain", "langchain_core", "langchain"),
    ("pydantic_ai", "pydantic_ai", "pydantic-ai"),
    ("openai_agents", "agents", "openai-agents"),
])
def test_a_missing_framework_names_the_extra_to_install(adapter, framework, extra):
    code = (f"import sys; sys.modules[{framework!r}] = None\n"       # as if it were not installed
            f"try:\n    import scripted_kernel.integrations.{adapter}\n"
            "except ImportError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.endswith(f"is not installed: pip install 'scripted-kernel[{extra}]'\n")


README = Path(__file__).resolve().parents[2] / "README.md"


def test_the_readme_examples_parse_and_import_what_the_adapters_define():
    section = README.read_text().split("**Agent frameworks.**", 1)[1].split("\n## ", 1)[0]
    blocks = [b for b in re.findall(r"```python\n(.*?)```", section, re.S) if "scripted_kernel.integrations" in b]
    assert len(blocks) == 3            # one for each framework
    for code in blocks:
        compile(code, "README.md", "exec")
        for module, names in re.findall(r"^from (scripted_kernel\.integrations\.\w+) import (.+)$", code, re.M):
            adapter = importlib.import_module(module) if _framework_present(module) else None
            for name in names.split(", "):
                assert adapter is None or callable(getattr(adapter, name)), (module, name)


def _framework_present(module: str) -> bool:
    framework = {"langchain": "langchain_core", "pydantic_ai": "pydantic_ai", "openai_agents": "agents"}
    return importlib.util.find_spec(framework[module.rsplit(".", 1)[1]]) is not None


# ---------------------------------------------------------------- the run's record

def test_the_record_of_a_failed_run_lists_what_ran_before_the_failure():
    api, calls = refunds(lambda call: None)
    record = run_record(api.execute("get_order --id 7 >/dev/null; refund --amount x; notify --text hi; exit 3"))
    assert (record["status"], record["exit_code"], record["error"]) == ("completed", 3, None)
    assert [(e["name"], e["status"], e["exit_code"], e["params"]) for e in record["trace"]] == [
        ("get_order", "done", 0, {"id": 7}), ("refund", "not started", 2, None), ("notify", "done", 0, {"text": "hi"})]
    assert record["trace"][0]["argv"] == ["get_order", "--id", "7"] and record["trace"][0]["duration_ms"] >= 0
    assert "continuation" not in record and calls == [["get_order", 7], ["notify", 2]]
    json.dumps(record)                          # JSON data, for a message history or a store


def test_the_record_of_a_paused_run_holds_the_pending_call_and_a_continuation_that_resumes_it():
    api, calls = refunds(pause_refunds)
    record = run_record(api.execute(REFUND_SCRIPT))
    assert (record["status"], record["exit_code"], record["error"]) == ("paused", 148, "paused")
    assert record["pending"] == {"name": "refund", "kind": "tool", "argv": ["refund", "--amount", "12.5"],
                                 "params": {"amount": 12.5}}
    assert [e["name"] for e in record["trace"]] == ["get_order"]
    resumed = resume(api, record)
    assert (resumed.exit_code, resumed.status) == (0, "completed")
    assert resumed.stdout == 'order total 12.5\n{"refunded": 12.5}\nsent\nend\n'
    assert calls == [["get_order", 7], ["refund", 12.5], ["notify", 13]]


@pytest.mark.parametrize("forge, problem", [
    (lambda c: c[:-8] + "AAAAAAAA", "continuation signature does not match"),
    (lambda c: c[:40], "not a continuation"),
    (lambda c: "not base64!", "the continuation is not base64 text"),
    (lambda c: None, "not a paused run's record (no continuation)"),
], ids=["tampered", "truncated", "not base64", "missing"])
def test_a_forged_continuation_is_refused_in_one_line_and_nothing_runs(forge, problem):
    api, calls = refunds(pause_refunds)
    record = run_record(api.execute(REFUND_SCRIPT))
    calls.clear()
    refused = resume(api, {**record, "continuation": forge(record["continuation"])})
    assert (refused.stdout, refused.exit_code) == ("", 2) and calls == []
    assert refused.stderr.startswith(f"api: cannot resume: {problem}") and refused.stderr.count("\n") == 1


def test_a_record_from_another_tool_is_refused():
    api, _ = refunds(pause_refunds)
    other, calls = refunds(pause_refunds)
    other.name = "other"
    refused = resume(other, run_record(api.execute(REFUND_SCRIPT)))
    assert refused.exit_code == 2 and "cannot resume: continuation of tool 'api'" in refused.stderr and calls == []


MARKUP = '<img src=x onerror="alert(1)">'


def test_a_huge_parameter_of_markup_is_logged_as_the_start_of_its_text():
    api, calls = refunds(lambda call: None)
    script = f"""notify --text "$(printf '{MARKUP}%.0s' $(seq 20000))" """
    record = run_record(api.execute(script))
    (entry,) = record["trace"]
    assert calls == [["notify", 20000 * len(MARKUP)]] and entry["status"] == "done"
    for logged in (entry["argv"][2], entry["params"]["text"]):      # the markup as text, its start
        assert logged.startswith(MARKUP * 10) and logged.endswith(f"... ({20000 * len(MARKUP)} characters)")
    assert entry["argv"][:2] == ["notify", "--text"]
    assert len(json.dumps(entry)) < MAX_LOGGED_CALL_CHARS + 1024


@pytest.mark.parametrize("params", [
    {"text": "x" * 10_000_000},
    {"items": list(range(1_000_000))},
    {"map": {f"k{i}": i for i in range(100_000)}},
    {"deep": deep(5000, 1)},
    {"big": 10 ** 5000, "nan": float("nan"), "odd": object(), "bytes": b"\xff" * 10_000, "lone": "\udcff"},
], ids=["text", "list", "object", "deep", "odd values"])
def test_every_kind_of_parameter_is_logged_as_json_within_the_calls_share(params):
    response = ToolResponse("", "", 0, trace=[TraceEntry("t", "tool", ["t"], params, 0, 1.0)],
                            pending=ToolCall("t", params, ["t"]), continuation=b"\x00\xff")
    record = run_record(response)
    text = json.dumps(record, allow_nan=False).encode("utf-8")       # valid JSON, valid UTF-8
    assert len(text) < 2 * (MAX_LOGGED_CALL_CHARS + 1024)
