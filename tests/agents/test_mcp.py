"""MCP both ways, with real processes: our server spawned over stdio and queried by the `mcp`
2.x client in both protocol eras (2026-07-28, and the 2025 handshake), and tools imported from
a test MCP server written with the same package."""
import asyncio
import json
import os
import shlex
import sys
from pathlib import Path

import jsonschema
import pytest

pytest.importorskip("mcp.server.mcpserver")     # mcp 2.x
from mcp import Client, StdioServerParameters  # noqa: E402

from scripted_kernel import ScriptedTool  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
TEST_SERVER = Path(__file__).with_name("mcp_test_server.py")
ECOMMERCE = f"{ROOT / 'examples' / 'ecommerce.py'}:api"


def server_process(*args) -> StdioServerParameters:
    """`python -m scripted_kernel mcp ARGS`, in this environment (the SDK passes a child only a
    few variables by default; the tests' PYTHONPATH must reach it)."""
    return StdioServerParameters(command=sys.executable, args=["-m", "scripted_kernel", "mcp", *args],
                                 env=dict(os.environ))


def run_stdio(args, steps, mode="auto", errlog=None):
    async def main():
        async with Client(server_process(*args), mode=mode) as client:
            return client.protocol_version, await steps(client)
    return asyncio.run(asyncio.wait_for(main(), 120))


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_serving_a_scripted_tool_over_stdio(mode):
    async def steps(client):
        listed = await client.list_tools()
        ok = await client.call_tool("ecommerce", {"commands": (
            "name=$(get_user --id 1 | jq -r .name); "
            "n=$(list_orders --user_id 1 | jq length); echo \"$name $n\"")})
        failed = await client.call_tool("ecommerce", {"commands": "echo partial; get_user --id x"})
        return listed, ok, failed
    version, (listed, ok, failed) = run_stdio(["--tools", ECOMMERCE], steps, mode)
    assert version == ("2026-07-28" if mode == "auto" else "2025-11-25")
    assert [t.name for t in listed.tools] == ["ecommerce"]
    tool = listed.tools[0]
    assert "  Usage: `get_user --id <integer>`" in tool.description
    assert set(tool.input_schema["properties"]) == {"commands", "idempotency_key"}
    if mode == "auto":                     # the cache hints are 2026-07-28's
        assert (listed.ttl_ms, listed.cache_scope) == (300_000, "private")
    for result in (ok, failed):
        jsonschema.validate(result.structured_content, tool.output_schema)
    assert ok.is_error is False
    assert {k: ok.structured_content[k] for k in ("stdout", "stderr", "exit_code", "error")} == {
        "stdout": "Alice 2\n", "stderr": "", "exit_code": 0, "error": None}
    assert [(e["name"], e["argv"], e["params"], e["status"]) for e in ok.structured_content["trace"]] == [
        ("get_user", ["get_user", "--id", "1"], {"id": 1}, "done"),
        ("list_orders", ["list_orders", "--user_id", "1"], {"user_id": 1}, "done")]
    assert failed.is_error is True
    assert failed.structured_content["stdout"] == "partial\n" and failed.structured_content["exit_code"] == 2
    assert failed.structured_content["trace"][0]["status"] == "not started"
    assert json.loads(failed.content[0].text)["exit_code"] == 2


def test_serving_with_discovery_adds_the_discover_tool():
    async def steps(client):
        tools = (await client.list_tools()).tools
        looked_up = await client.call_tool("ecommerce_discover", {"commands": "help get_user"})
        return tools, looked_up
    _, (tools, looked_up) = run_stdio(["--tools", ECOMMERCE, "--discovery"], steps)
    assert [t.name for t in tools] == ["ecommerce", "ecommerce_discover"]
    assert "- `get_user`: " in tools[0].description and "Usage:" not in tools[0].description
    assert "Usage: get_user --id <integer>" in looked_up.structured_content["stdout"]


PRINTING_TOOLS = '''
import logging
from scripted_kernel import ScriptedTool, tool


@tool()
def chatty() -> str:
    """Prints to the process's stdout and logs, as careless callbacks do."""
    print("stray text on stdout")
    logging.getLogger("scripted_kernel.mcp").warning("a log line")
    return "answer"


api = ScriptedTool.builder("chatty").function(chatty).build()
'''


def test_nothing_but_the_protocol_reaches_stdout(tmp_path):
    """A callback that prints, and the server's own log lines, go to stderr: stdout carries
    only the protocol's messages."""
    (tmp_path / "chatty.py").write_text(PRINTING_TOOLS)
    errors = tmp_path / "stderr"

    async def steps(client):
        return await client.call_tool("chatty", {"commands": "chatty; chatty"})
    params = server_process("--tools", f"{tmp_path / 'chatty.py'}:api")

    async def main():
        with open(errors, "w") as err:
            from mcp.client.stdio import stdio_client
            async with Client(stdio_client(params, errlog=err)) as client:
                return await steps(client)
    result = asyncio.run(asyncio.wait_for(main(), 120))
    assert result.structured_content["stdout"] == "answeranswer"
    logged = errors.read_text()
    assert logged.count("stray text on stdout") == 2 and logged.count("a log line") == 2
    assert json.loads(logged.strip().splitlines()[-1])["event"] == "call"


def test_importing_tools_from_an_mcp_server_and_orchestrating_them():
    t = ScriptedTool.builder("imported").mcp_server(command=[sys.executable, str(TEST_SERVER)]).build()
    assert sorted(t.tools) == ["broken", "price", "stock"]
    assert t.tools["price"].tool_def.input_schema["properties"]["quantity"]["type"] == "integer"
    r = t.execute("""for sku in widget gizmo; do
  units=$(stock --sku $sku | jq .units)
  total=$(price --sku $sku --quantity "$units" | jq .total)
  echo "$sku $units $total"
done
broken --reason testing || echo "recovered: $?" """)
    # the server writes its totals as floats (10.0); jq 1.7+ prints a number as it was written
    assert r.stdout == "widget 4 10.0\ngizmo 9 90.0\nrecovered: 1\n", r.stderr
    assert "broken: " in r.stderr and "cannot do it: testing" in r.stderr


def test_a_structured_result_logs_a_huge_parameter_of_markup_as_the_start_of_its_text():
    """The MCP result's tool-call log is bounded as the framework adapters' records are
    (tools/call_log.py): it says which calls ran, not a second copy of their data."""
    import time

    from scripted_kernel.tools.call_log import MAX_LOGGED_CALL_CHARS
    from scripted_kernel.tools.mcp_results import OUTPUT_SCHEMA
    from scripted_kernel.tools.mcp_server import script_result
    markup = '<img src=x onerror="alert(1)">'
    from scripted_kernel import ToolDef
    schema = {"type": "object", "properties": {"text": {"type": "string"}}}
    tool = ScriptedTool.builder("api").tool(ToolDef("notify", "Notify", schema), lambda args: "ok\n").build()
    response = tool.execute(f"""notify --text "$(printf '{markup}%.0s' $(seq 20000))" """)
    structured = script_result("api", time.perf_counter(), response).structured_content
    jsonschema.validate(structured, OUTPUT_SCHEMA)
    (entry,) = structured["trace"]
    assert entry["status"] == "done" and entry["argv"][:2] == ["notify", "--text"]
    assert entry["argv"][2].startswith(markup * 10) and entry["argv"][2].endswith(f"({20000 * len(markup)} characters)")
    assert len(json.dumps(entry)) < MAX_LOGGED_CALL_CHARS + 1024


def test_a_result_text_is_the_indented_json_a_client_has_always_read():
    """script_result writes its text without json.dumps(indent=2) (whose encoder is a cycle of
    closures per call): the same text, for every kind of character a script may print."""
    import time

    from scripted_kernel.tools.mcp_server import script_result
    printed = 'quote " backslash \\ tab \t nl \n nul \x00 del \x7f é ☃ 😀 \u2028 ' + "".join(map(chr, range(32)))
    tool = ScriptedTool.builder("api").build()
    for script in (f"printf %s {shlex.quote(printed)}; printf %s {shlex.quote(printed)} >&2; exit 3",
                   "printf '\\xff\\xfe'", "true"):
        response = tool.execute(script)
        result = script_result("api", time.perf_counter(), response)
        fields = {"stdout": response.stdout, "stderr": response.stderr, "exit_code": response.exit_code}
        assert result.content[0].text == json.dumps(
            {k: result.structured_content[k] for k in fields}, indent=2), script
