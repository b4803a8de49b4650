"""MCP both ways, with real processes: our server spawned and queried by the `mcp` client, and
tools imported from a test MCP server written with the same package."""
import asyncio
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp")
from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

from scripted_kernel import ScriptedTool  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
TEST_SERVER = Path(__file__).with_name("mcp_test_server.py")


async def _session_run(args, steps):
    params = StdioServerParameters(command=sys.executable, args=["-m", "scripted_kernel", "mcp", *args])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            return await steps(session)


def test_serving_a_scripted_tool_over_stdio():
    async def steps(session):
        tools = (await session.list_tools()).tools
        result = await session.call_tool("ecommerce", {"commands": (
            "name=$(get_user --id 1 | jq -r .name); "
            "n=$(list_orders --user_id 1 | jq length); echo \"$name has $n orders\"")})
        return tools, result
    tools, result = asyncio.run(asyncio.wait_for(
        _session_run(["--tools", f"{ROOT / 'examples' / 'ecommerce.py'}:api"], steps), 60))
    assert [t.name for t in tools] == ["ecommerce"]
    assert "  Usage: `get_user --id <integer>`" in tools[0].description
    assert set(tools[0].inputSchema["properties"]) == {"commands"}
    assert result.structuredContent == {"stdout": "Alice has 2 orders\n", "stderr": "", "exit_code": 0}


def test_serving_with_discovery_adds_the_discover_tool():
    async def steps(session):
        tools = (await session.list_tools()).tools
        looked_up = await session.call_tool("ecommerce_discover", {"commands": "help get_user"})
        return tools, looked_up
    tools, looked_up = asyncio.run(asyncio.wait_for(
        _session_run(["--tools", f"{ROOT / 'examples' / 'ecommerce.py'}:api", "--discovery"], steps), 60))
    assert [t.name for t in tools] == ["ecommerce", "ecommerce_discover"]
    assert "- `get_user`: " in tools[0].description and "Usage:" not in tools[0].description
    assert "Usage: get_user --id <integer>" in looked_up.structuredContent["stdout"]


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
