"""MCP results of failing scripts, and approval of each tool call by the client's user through
an elicitation request. Run offline with the mcp package's in-memory client and server."""
import asyncio

import pytest

pytest.importorskip("mcp")
from mcp import types  # noqa: E402
from mcp.shared.memory import create_connected_server_and_client_session  # noqa: E402

from scripted_kernel import BashTool, ScriptedTool, tool  # noqa: E402
from scripted_kernel.tools.mcp_server import build_server  # noqa: E402


@tool
def get_user(id: int) -> dict:
    """Fetch a user by id."""
    return {"id": id, "name": f"user{id}"}


@tool
def delete_user(id: int) -> str:
    """Delete a user."""
    return f"deleted {id}\n"


def _api():
    return ScriptedTool.builder("api").function(get_user).function(delete_user).build()


def run(server, script_calls, answers=None):
    """Call the script tool once per script; `answers` is the user's reply per elicitation
    (None: a client without elicitation). Returns (results, the messages asked)."""
    asked = []

    async def on_elicit(context, params):
        asked.append(params.message)
        decision = answers.pop(0)
        if decision in ("decline", "cancel"):
            return types.ElicitResult(action=decision)
        return types.ElicitResult(action="accept", content={"decision": decision})

    async def main():
        async with create_connected_server_and_client_session(
                server, elicitation_callback=on_elicit if answers is not None else None) as client:
            return [await client.call_tool("api", {"commands": script}) for script in script_calls]
    return asyncio.run(main()), asked


def test_a_failing_script_is_an_error_result_with_its_output():
    (ok, failed), _ = run(build_server(_api()), ["get_user --id 1 | jq -r .name", "echo partial; get_user --id x"])
    assert ok.isError is False and ok.structuredContent == {"stdout": "user1\n", "stderr": "", "exit_code": 0}
    assert failed.isError is True
    assert failed.structuredContent["stdout"] == "partial\n" and failed.structuredContent["exit_code"] == 2
    assert "get_user: --id" in failed.structuredContent["stderr"]
    assert '"exit_code": 2' in failed.content[0].text


def test_each_call_is_put_to_the_user_allow_deny_and_allow_all():
    server = build_server(_api(), approve=True)
    script = "get_user --id 1 | jq -r .name; delete_user --id 1; echo status=$?; get_user --id 2 | jq -r .name"
    (first, second), asked = run(server, [script, script], ["allow", "deny", "allow_all", "decline"])
    assert first.structuredContent["stdout"] == "user1\nstatus=126\nuser2\n"    # set +e: the script went on
    assert "delete_user: denied: the user declined" in first.structuredContent["stderr"]
    assert asked[0].startswith("The script wants to run `get_user --id 1`")
    assert "delete_user" in asked[1] and "get_user --id 2" in asked[2]
    # the third answer allowed every get_user of this session: the second run asks only about delete_user
    assert second.structuredContent["stdout"] == "user1\nstatus=126\nuser2\n"
    assert len(asked) == 4 and "delete_user" in asked[3]


def test_a_client_that_cannot_be_asked_is_refused_every_call():
    (result,), asked = run(build_server(_api(), approve=True), ["get_user --id 1; echo $?"], None)
    assert result.structuredContent["stdout"] == "126\n" and asked == []
    assert "cannot be asked (no elicitation support)" in result.structuredContent["stderr"]


def test_bash_tool_sessions_ask_too():
    bash = BashTool.builder().builtin("deploy", lambda args, stdin: f"deploying {args[0]}\n").build()
    server = build_server(bash, session_tools=lambda: BashTool.builder().builtin(
        "deploy", lambda args, stdin: f"deploying {args[0]}\n").build(), approve=True)

    async def main():
        async def on_elicit(context, params):
            return types.ElicitResult(action="accept", content={"decision": "deny"})
        async with create_connected_server_and_client_session(server, elicitation_callback=on_elicit) as client:
            return await client.call_tool("bash", {"commands": "deploy web; echo $?"})
    result = asyncio.run(main())
    assert result.structuredContent["stdout"] == "126\n" and result.isError is False
