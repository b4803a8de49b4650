"""Clients of the `mcp` 1.x SDK are still served: a 1.x client, in a virtual environment of its
own (CI makes it: .ci/run sets SCRIPTED_TEST_MCP1_PYTHON to its interpreter; without it these
tests are skipped), talks to our server over stdio and over streamable HTTP: lists the tools,
calls the script tool, reads the structured result, keeps a `--bash` session by its
Mcp-Session-Id, and is asked for approval by elicitation."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp.server.mcpserver")      # the server: mcp 2.x
from services import Service  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
ECOMMERCE = f"{ROOT / 'examples' / 'ecommerce.py'}:api"
V1_PYTHON = os.environ.get("SCRIPTED_TEST_MCP1_PYTHON", "")

pytestmark = pytest.mark.skipif(not (V1_PYTHON and Path(V1_PYTHON).exists()),
                                reason="no mcp 1.x environment (SCRIPTED_TEST_MCP1_PYTHON; .ci/run makes one)")

CLIENT = r'''
import asyncio, json, sys
import mcp
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamablehttp_client

target, tool, scripts = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])


async def elicit(context, params):
    return types.ElicitResult(action="accept", content={"decision": "deny"})


async def session_of(read, write):
    async with ClientSession(read, write, elicitation_callback=elicit) as session:
        init = await session.initialize()
        tools = (await session.list_tools()).tools
        results = []
        for script in scripts:
            r = await session.call_tool(tool, {"commands": script})
            results.append({"isError": r.isError, "structured": r.structuredContent})
        return {"version": init.protocolVersion, "tools": [t.name for t in tools], "results": results}


async def main():
    if target.startswith("http"):
        async with streamablehttp_client(target) as (read, write, _):
            return await session_of(read, write)
    command = json.loads(target)
    params = StdioServerParameters(command=command[0], args=command[1:], env=dict(__import__("os").environ))
    async with stdio_client(params) as (read, write):
        return await session_of(read, write)

print(json.dumps({"sdk": __import__("importlib.metadata").metadata.version("mcp"), **asyncio.run(main())}))
'''


def v1_client(target: str, tool: str, scripts: list) -> dict:
    p = subprocess.run([V1_PYTHON, "-c", CLIENT, target, tool, json.dumps(scripts)], capture_output=True, text=True,
                       timeout=180, env={**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH", "")})
    assert p.returncode == 0, p.stderr[-3000:]
    answer = json.loads(p.stdout.strip().splitlines()[-1])
    assert answer["sdk"].startswith("1.")
    return answer


def test_a_1x_client_over_stdio():
    server = json.dumps([sys.executable, "-m", "scripted_kernel", "mcp", "--tools", ECOMMERCE])
    answer = v1_client(server, "ecommerce", ["get_user --id 1 | jq -r .name", "get_user --id x"])
    assert answer["version"] >= "2025-06-18" and answer["tools"] == ["ecommerce"]
    ok, failed = answer["results"]
    assert ok["isError"] is False and ok["structured"]["stdout"] == "Alice\n"
    assert ok["structured"]["trace"][0]["name"] == "get_user"
    assert failed["isError"] is True and failed["structured"]["exit_code"] == 2


def test_a_1x_client_keeps_a_bash_session_over_http_and_is_asked_for_approval():
    bash = Service("--bash")
    gated = Service("--tools", ECOMMERCE, "--approve")
    try:
        answer = v1_client(f"{bash.url}/mcp", "bash", ["cd /tmp; echo kept > f; n=1", "cat f; echo $n; pwd"])
        assert answer["tools"] == ["bash", "bash_session_open", "bash_session_close"]
        assert answer["results"][1]["structured"]["stdout"] == "kept\n1\n/tmp\n"
        asked = v1_client(f"{gated.url}/mcp", "ecommerce", ["get_user --id 1; echo status=$?"])
        assert asked["results"][0]["structured"]["stdout"] == "status=126\n"
        assert "get_user: denied: the user declined" in asked["results"][0]["structured"]["stderr"]
    finally:
        bash.stop()
        gated.stop()
