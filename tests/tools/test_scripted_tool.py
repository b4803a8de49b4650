"""The tool layer: registration, flags, validation, results, failures, help/discover, prompts,
traces, status callbacks, async callbacks, and scripts that orchestrate several tools."""
import asyncio
import json
from typing import Literal, Optional

import pytest

from scripted_kernel import ExecutionLimits, ScriptedTool, ToolArgs, ToolDef, ToolStatus, tool

USERS = {1: {"id": 1, "name": "Alice", "tier": "gold"}, 2: {"id": 2, "name": "Bob", "tier": "silver"}}


def get_user(args: ToolArgs):
    uid = args.param_int("id")
    if uid not in USERS:
        raise LookupError(f"user {uid} not found in /srv/data/users.db (token=abcd1234efgh)")
    return USERS[uid]


async def list_orders(args: ToolArgs):
    await asyncio.sleep(0)
    return [{"order": 10 * args.param_int("user_id") + k, "total": 5.0 * k} for k in (1, 2)]


def search(args: ToolArgs):
    return {"query": args.params.get("q"), "filter": args.params.get("filter"), "tags": args.params.get("tags")}


SEARCH_SCHEMA = {
    "type": "object",
    "properties": {
        "q": {"type": "string", "minLength": 1},
        "tags": {"type": "array", "items": {"type": "string"}},
        "filter": {"type": "object", "properties": {"limit": {"type": "integer", "maximum": 100}}},
        "exact": {"type": "boolean"},
    },
    "required": ["q"],
    "additionalProperties": False,
}


@pytest.fixture
def shop():
    return (ScriptedTool.builder("shop").short_description("A small shop")
            .tool(ToolDef("get_user", "Fetch a user by id",
                          {"type": "object", "properties": {"id": {"type": "integer", "description": "user id"}},
                           "required": ["id"]}, tags=["users"], category="customers"), get_user)
            .async_tool(ToolDef("list_orders", "Orders of a user",
                                {"type": "object", "properties": {"user_id": {"type": "integer"}},
                                 "required": ["user_id"]}, category="orders"), list_orders)
            .tool(ToolDef("search", "Search the catalog", SEARCH_SCHEMA, tags=["catalog"]), search)
            .env("REGION", "eu")
            .build())


# ---------------------------------------------------------------- calling tools

def test_single_tool_and_jq_pipeline(shop):
    r = shop.execute("get_user --id 1 | jq -r .name")
    assert (r.stdout, r.exit_code) == ("Alice\n", 0)


def test_multi_step_orchestration_with_variables_and_substitution(shop):
    script = """
    total=0
    for id in 1 2; do
      name=$(get_user --id $id | jq -r .name)
      sum=$(list_orders --user_id $id | jq '[.[].total] | add')
      echo "$name $sum"
    done
    """
    r = shop.execute(script)
    assert r.stdout == "Alice 15\nBob 15\n" and r.exit_code == 0


def test_flag_forms(shop):
    r = shop.execute("""search --q=shoes --tags a --tags b --filter.limit 5 --exact | jq -c .
search --q x --tags '["c","d"]' --filter '{"limit": 1}' | jq -c .
search --json '{"q": "y", "tags": ["e"]}' | jq -c .
search --q z --tags 'e,f' --tags g --filter limit=7 | jq -c .""")
    assert r.stdout.splitlines() == [
        '{"query":"shoes","filter":{"limit":5},"tags":["a","b"]}',
        '{"query":"x","filter":{"limit":1},"tags":["c","d"]}',
        '{"query":"y","filter":null,"tags":["e"]}',
        '{"query":"z","filter":{"limit":7},"tags":["e,f","g"]}',
    ], r.stderr


@pytest.mark.parametrize("script,message", [
    ("get_user", "get_user: missing required flag --id (integer)"),
    ("get_user --id abc", "get_user: --id: expected integer, got 'abc'"),
    ("search --q x --filter.limit 500", "search: --filter.limit: 500 is greater than the maximum of 100"),
    ("search --q ''", "search: --q: '' should be non-empty"),
    ("search --q x --exat", "search: unknown flag --exat (did you mean --exact?)"),
    ("search --q x --limit 3", "search: unknown flag --limit (known flags: --q, --tags, --filter, --exact)"),
    ("get_user 1", "get_user: expected --flag, got '1'"),
])
def test_flag_errors_name_tool_flag_and_reason(shop, script, message):
    r = shop.execute(script)
    assert r.exit_code == 2
    assert r.stderr.startswith(message), r.stderr


def test_unknown_flags_are_kept_when_the_schema_lists_no_flags():
    t = ScriptedTool.builder("t").tool(ToolDef("open", "takes anything"), lambda a: a.params).build()
    r = t.execute("open --id 1 --verbose --format json --dry-run")
    assert json.loads(r.stdout) == {"dry_run": True, "tool": "open", "valid": True,
                                    "params": {"id": "1", "verbose": True, "format": "json"}}


@pytest.mark.parametrize("schema", [
    {"type": "object", "properties": {"id": {"type": "integer"}}},
    {"type": "object", "properties": {"id": {"type": "integer"}}, "additionalProperties": False},
])
def test_a_schema_that_lists_its_flags_refuses_others_with_a_suggestion(schema):
    calls = []
    t = ScriptedTool.builder("t").tool(ToolDef("get_user", "d", schema), calls.append).build()
    r = t.execute("get_user --idd 3")
    assert (r.stderr, r.exit_code, calls) == ("get_user: unknown flag --idd (did you mean --id?)\n", 2, [])


def test_additional_properties_keeps_a_listed_schema_open():
    t = ScriptedTool.builder("t").tool(ToolDef("get", "d", {
        "type": "object", "properties": {"id": {"type": "integer"}}, "additionalProperties": True}),
        lambda a: a.params).build()
    assert json.loads(t.execute("get --id 1 --extra x").stdout) == {"id": 1, "extra": "x"}


def test_decorated_functions_refuse_unknown_flags():
    @tool
    def lookup(sku: str) -> dict:
        """Look a product up."""
        return {"sku": sku}
    t = ScriptedTool("t").add(lookup)
    r = t.execute("lookup --skuu A1")
    assert (r.stderr, r.exit_code) == ("lookup: unknown flag --skuu (did you mean --sku?)\n", 2)


def test_dry_run_reports_validity_without_calling():
    calls = []
    t = ScriptedTool.builder("t").tool(ToolDef("rec", "records", {"type": "object", "properties": {
        "n": {"type": "integer", "minimum": 1}}}), lambda a: calls.append(a)).build()
    bad = t.execute("rec --n 0 --dry-run")
    assert bad.exit_code == 1
    assert json.loads(bad.stdout) == {"dry_run": True, "tool": "rec", "valid": False,
                                      "error": "--n: 0 is less than the minimum of 1"}
    good = t.execute("rec --dry-run --n 3")
    assert (good.stdout, good.exit_code) == ('{"dry_run":true,"params":{"n":3},"tool":"rec","valid":true}\n', 0)
    assert calls == []


@pytest.mark.parametrize("script", ["get_user --help", "get_user --id 1 --help", "get_user --help --id x",
                                    "get_user --dry-run --help", "get_user --nosuch --help"])
def test_help_flag_never_runs_the_tool(script):
    calls = []
    t = ScriptedTool.builder("t").tool(ToolDef("get_user", "Fetch a user", {
        "type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]}), calls.append).build()
    r = t.execute(script)
    assert (r.stdout, r.exit_code, calls) == (
        "get_user - Fetch a user\nUsage: get_user --id <integer>\nFlags:\n  --id <integer>  (required)\n", 0, [])


@pytest.mark.parametrize("flags, message", [
    ("--id 0x10", "--id: expected integer, got '0x10'"),
    ("--id 1.0", "--id: expected integer, got '1.0'"),
    ("--id 1_000", "--id: expected integer, got '1_000'"),
    ("--id 1e3", "--id: expected integer, got '1e3'"),
    ("--ratio inf", "--ratio: expected number, got 'inf'"),
    ("--ratio 1_0", "--ratio: expected number, got '1_0'"),
    ("--verbose maybe", "expected --flag, got 'maybe' (arguments are passed as --flag value)"),
    ("--verbose=maybe", "--verbose: expected boolean (true or false), got 'maybe'"),
])
def test_flag_values_bash_users_would_call_wrong_are_refused(flags, message):
    t = ScriptedTool.builder("t").tool(ToolDef("f", "d", {"type": "object", "properties": {
        "id": {"type": "integer"}, "ratio": {"type": "number"}, "verbose": {"type": "boolean"}}}),
        lambda a: a.params).build()
    r = t.execute(f"f {flags}")
    assert (r.stderr, r.exit_code) == (f"f: {message}\n", 2)


@pytest.mark.parametrize("flags, params", [
    ("--id -7 --ratio .5", {"id": -7, "ratio": 0.5}),
    ("--id +3 --ratio 2", {"id": 3, "ratio": 2}),
    ("--ratio -1.5e2 --verbose", {"ratio": -150.0, "verbose": True}),
    ("--verbose=false --id 0", {"verbose": False, "id": 0}),
    ("--verbose=no", {"verbose": False}),
])
def test_flag_values_coerce_as_the_schema_says(flags, params):
    t = ScriptedTool.builder("t").tool(ToolDef("f", "d", {"type": "object", "properties": {
        "id": {"type": "integer"}, "ratio": {"type": "number"}, "verbose": {"type": "boolean"}}}),
        lambda a: a.params).build()
    assert json.loads(t.execute(f"f {flags}").stdout) == params


def test_results_str_json_and_none():
    t = (ScriptedTool.builder("t")
         .tool(ToolDef("s", "str"), lambda a: "plain")
         .tool(ToolDef("j", "json"), lambda a: {"k": [1, 2]})
         .tool(ToolDef("n", "none"), lambda a: None)
         .tool(ToolDef("i", "int"), lambda a: 42).build())
    r = t.execute("s; echo; j; n; i")
    assert r.stdout == 'plain\n{"k": [1, 2]}\n42\n'


def test_failure_is_status_1_with_sanitised_message_and_fallback(shop):
    r = shop.execute("get_user --id 9 || echo fallback")
    assert r.stdout == "fallback\n"
    assert r.stderr.startswith("get_user: user 9 not found in <path>")
    assert "/srv" not in r.stderr and "abcd1234efgh" not in r.stderr and "Traceback" not in r.stderr


def test_sanitising_can_be_switched_off():
    def boom(args):
        raise RuntimeError("failed at /opt/app/x.py")
    t = ScriptedTool.builder("t").tool(ToolDef("boom", "fails"), boom).sanitize_errors(False).build()
    assert "/opt/app/x.py" in t.execute("boom").stderr


def test_stdin_piping_and_lazy_reading():
    seen = []

    def upper(args):
        return (args.stdin or "").upper()

    def ignore(args):
        seen.append(args.params)
        return "x\n"
    t = ScriptedTool.builder("t").tool(ToolDef("upper", "u"), upper).tool(ToolDef("ignore", "i"), ignore).build()
    assert t.execute("echo hi | upper").stdout == "HI\n"
    r = t.execute("printf 'a\\nb\\n' | while read -r l; do ignore >/dev/null; echo $l; done")
    assert r.stdout == "a\nb\n"


def test_env_vars_visible_to_scripts(shop):
    assert shop.execute('echo "$REGION"').stdout == "eu\n"


def test_repeated_execute_calls_are_independent(shop):
    assert shop.execute("x=1; get_user --id 1 >/dev/null; echo ${x}").stdout == "1\n"
    assert shop.execute('echo "[${x:-}]"').stdout == "[]\n"


# ---------------------------------------------------------------- registration

@pytest.mark.parametrize("name", ["echo", "jq", "help", "discover", "grep", "cd"])
def test_tools_may_not_shadow_builtins_or_commands(name):
    with pytest.raises(ValueError, match="taken"):
        ScriptedTool("t").register(ToolDef(name, "x"), lambda a: "")


def test_duplicate_tool_names_are_refused():
    t = ScriptedTool("t").register(ToolDef("a", "x"), lambda a: "")
    with pytest.raises(ValueError, match="already registered"):
        t.register(ToolDef("a", "y"), lambda a: "")


def test_add_tool_has_bashkits_signature():
    t = ScriptedTool("t")
    t.add_tool("greet", "Greets", lambda params, stdin: f"hello {params['name']}\n",
               {"type": "object", "properties": {"name": {"type": "string"}}})
    assert t.execute("greet --name Ada").stdout == "hello Ada\n"


def test_tool_decorator_derives_the_schema():
    @tool(category="math", tags=["calc"], register=False)
    def scale(value: float, factor: int = 2, mode: Literal["up", "down"] = "up",
              labels: Optional[list[str]] = None) -> dict:
        """Scale a value.

        Args:
            value: The number to scale.
            factor: How much.
        """
        return {"result": value * factor if mode == "up" else value / factor, "labels": labels}
    d = scale.tool_def
    assert d.name == "scale" and d.description == "Scale a value." and d.category == "math"
    props = d.input_schema["properties"]
    assert props["value"] == {"type": "number", "description": "The number to scale."}
    assert props["factor"] == {"type": "integer", "description": "How much.", "default": 2}
    assert props["mode"]["enum"] == ["up", "down"] and props["labels"]["type"] == ["array", "null"]
    assert d.input_schema["required"] == ["value"]
    t = ScriptedTool("calc").add(scale)
    assert json.loads(t.execute("scale --value 1.5 --factor 3 --labels a --labels b").stdout) == \
        {"result": 4.5, "labels": ["a", "b"]}
    assert t.execute("scale --value 1 --mode sideways").exit_code == 2
    assert scale(2.0) == {"result": 4.0, "labels": None}      # still a plain function


# ---------------------------------------------------------------- introspection

def test_help_and_discover_builtins(shop):
    r = shop.execute("help --list | grep ^get_")
    assert r.stdout == "get_user     Fetch a user by id\n"
    r = shop.execute("help get_user")
    assert "Usage: get_user --id <integer>" in r.stdout and "--id <integer>  user id (required)" in r.stdout
    assert json.loads(shop.execute("help search --json").stdout)["input_schema"] == SEARCH_SCHEMA
    assert shop.execute("discover --categories").stdout == "customers (1)\norders (1)\n"
    assert shop.execute("discover --category orders").stdout.startswith("list_orders")
    assert shop.execute("discover --tag catalog").stdout.startswith("search")
    assert [t["name"] for t in json.loads(shop.execute("discover --search fetch --json").stdout)] == ["get_user"]
    assert shop.execute("help nope").exit_code == 1


def test_help_of_a_mistyped_tool_suggests_the_nearest(shop):
    r = shop.execute("help get_usr")
    assert (r.stderr, r.exit_code) == ("help: no tool or builtin named 'get_usr' (did you mean 'get_user'?)\n", 1)
    assert shop.execute("help zzz").stderr == "help: no tool or builtin named 'zzz'\n"


def test_tool_help_flag(shop):
    r = shop.execute("search --help")
    assert r.stdout.startswith("search - Search the catalog\nUsage: search --q <string> [--tags <array of string>]")


def test_prompts_and_schemas(shop):
    prompt = shop.system_prompt()
    assert prompt.startswith('# shop\n\nA small shop\n\nInput: {"commands": "<bash script>"}\n'
                             'Output: {stdout, stderr, exit_code}\n\n## Tips\n\n')
    assert prompt.endswith("## Available tool commands\n\n"
                           "- `get_user`: Fetch a user by id\n  Usage: `get_user --id <integer>`\n"
                           "- `list_orders`: Orders of a user\n  Usage: `list_orders --user_id <integer>`\n"
                           "- `search`: Search the catalog\n"
                           "  Usage: `search --q <string> [--tags <array of string>] [--filter <object>] [--exact]`\n")
    compact = ScriptedTool.builder("c").compact_prompt(True).tool(ToolDef("a", "does a"), lambda x: "").build()
    assert compact.system_prompt().endswith("## Available tool commands\n\n- `a`: does a\n")
    assert "Run `help TOOL` for a tool's flags before you call it" in compact.system_prompt()
    assert "Usage:" not in compact.system_prompt()
    assert "## Tool Commands" in shop.help()
    assert ScriptedTool("plain").short_description == "ScriptedTool: plain"
    assert shop.input_schema()["required"] == ["commands"]
    assert set(shop.output_schema()["properties"]) == {"stdout", "stderr", "exit_code"}
    assert "get_user" in shop.help() and "get_user" in shop.description()


def test_trace_records_each_invocation(shop):
    shop.execute("get_user --id 1 >/dev/null; get_user --id 9 2>/dev/null; help --list >/dev/null")
    kinds = [(e.name, e.kind, e.exit_code) for e in shop.last_trace]
    assert kinds == [("get_user", "tool", 0), ("get_user", "tool", 1), ("help", "help", 0)]
    assert shop.last_trace[0].params == {"id": 1} and shop.last_trace[0].duration_ms >= 0


def test_execute_with_status_reports_phases_and_output(shop):
    events = []
    r = shop.execute_with_status("echo one; get_user --id 2 | jq -r .name", events.append)
    phases = [e.phase for e in events]
    assert phases[:3] == ["validate", "parse", "execute"] and phases[-1] == "complete"
    assert [(e.stream, e.output) for e in events if e.phase == "output"] == [("stdout", "one\n"), ("stdout", "Bob\n")]
    assert [e.percent_complete for e in events if e.phase != "output"] == [0, 10, 20, 100]
    assert (events[-1].message, r.exit_code) == ("exit status 0", 0)
    assert ToolStatus.stderr("x") == ToolStatus("output", output="x", stream="stderr")


def test_execute_accepts_the_tool_contract_dict(shop):
    assert shop.execute({"commands": "get_user --id 2 | jq -r .tier"}).stdout == "silver\n"


# ---------------------------------------------------------------- async

def test_async_callbacks_from_plain_execute(shop):
    assert shop.execute("list_orders --user_id 3 | jq length").stdout == "2\n"


def test_execute_async_runs_callbacks_on_the_callers_loop(shop):
    loops = []

    async def where(args):
        loops.append(asyncio.get_running_loop())
        return "ok\n"
    t = ScriptedTool.builder("t").async_tool(ToolDef("where", "w"), where).build()

    async def main():
        r = await t.execute_async("where; where")
        return r, asyncio.get_running_loop()
    r, loop = asyncio.run(main())
    assert r.stdout == "ok\nok\n" and loops == [loop, loop]


def test_execute_inside_a_running_loop_does_not_deadlock(shop):
    async def main():
        return shop.execute("list_orders --user_id 1 | jq -c '[.[].order]'")
    assert asyncio.run(main()).stdout == "[11,12]\n"


def test_slow_async_tool_is_stopped_by_the_wall_clock():
    async def slow(args):
        await asyncio.sleep(5)
        return "late"
    t = (ScriptedTool.builder("t").async_tool(ToolDef("slow", "s"), slow)
         .limits(ExecutionLimits(timeout_seconds=0.3)).build())
    r = t.execute("echo before; slow; echo never")
    assert r.stdout == "before\n" and r.exit_code == 124 and r.error == "timeout"
