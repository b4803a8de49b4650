"""MCP results of failing scripts, and approval of each tool call by the client's user: an
elicitation request on a 2025-era connection, an `input_required` result on a 2026-07-28 one
(the paused run's continuation sealed in `requestState` by the SDK, resumed on the retry).
In-process here, with the `mcp` 2.x client; test_mcp_approval_http.py has two real workers."""
import asyncio

import pytest

pytest.importorskip("mcp.server.mcpserver")      # mcp 2.x
from mcp import Client, types  # noqa: E402

from scripted_kernel import BashTool, ScriptedTool, tool  # noqa: E402
from scripted_kernel.tools.mcp_server import build_server  # noqa: E402


@tool
def get_user(id: int) -> dict:
    """Fetch a user by id."""
    return {"id": id, "name": f"user{id}"}


DELETED = []


@tool
def delete_user(id: int) -> str:
    """Delete a user."""
    DELETED.append(id)
    return f"deleted {id}\n"


def _api():
    return ScriptedTool.builder("api").function(get_user).function(delete_user).build()


def run(server, scripts, answers=None, mode="legacy"):
    """Call the script tool once per script; `answers` is the user's reply per question
    (None: a client without elicitation). Returns (results, the messages asked)."""
    asked = []

    async def on_elicit(context, params):
        asked.append(params.message)
        decision = answers.pop(0)
        if decision in ("decline", "cancel"):
            return types.ElicitResult(action=decision)
        return types.ElicitResult(action="accept", content={"decision": decision})

    async def main():
        async with Client(server, mode=mode, elicitation_callback=on_elicit if answers is not None else None) as c:
            return [await c.call_tool("api", {"commands": script}) for script in scripts]
    return asyncio.run(asyncio.wait_for(main(), 120)), asked


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_a_failing_script_is_an_error_result_with_its_output(mode):
    (ok, failed), _ = run(build_server(_api()), ["get_user --id 1 | jq -r .name", "echo partial; get_user --id x"],
                          mode=mode)
    assert ok.is_error is False and ok.structured_content["stdout"] == "user1\n"
    assert failed.is_error is True
    assert failed.structured_content["stdout"] == "partial\n" and failed.structured_content["exit_code"] == 2
    assert "get_user: --id" in failed.structured_content["stderr"]
    assert '"exit_code": 2' in failed.content[0].text


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_each_call_is_put_to_the_user_allow_deny_and_allow_all(mode):
    """The same questions and outcomes in both eras: asked by elicitation (2025), or answered
    as input_required and retried with the answer (2026-07-28, the client's own loop)."""
    server = build_server(_api(), approve=True)
    script = "get_user --id 1 | jq -r .name; delete_user --id 1; echo status=$?; get_user --id 2 | jq -r .name"
    DELETED.clear()
    answers = ["allow", "deny", "allow_all"] + (["decline"] if mode == "legacy" else ["allow_all", "decline"])
    (first, second), asked = run(server, [script, script], answers, mode)
    assert first.structured_content["stdout"] == "user1\nstatus=126\nuser2\n"    # set +e: the script went on
    assert "delete_user: denied: the user declined" in first.structured_content["stderr"]
    assert asked[0].startswith("The script wants to run `get_user --id 1`")
    assert "delete_user" in asked[1] and "get_user --id 2" in asked[2]
    if mode == "legacy":
        # "allow all" holds for the connection: the second run asks only about delete_user
        assert len(asked) == 4 and "delete_user" in asked[3]
    else:
        # a 2026-07-28 call is complete in itself: "allow all" holds for the rest of its run
        assert len(asked) == 5 and "get_user --id 1" in asked[3] and "delete_user" in asked[4]
    assert second.structured_content["stdout"] == "user1\nstatus=126\nuser2\n"
    assert DELETED == []                  # each callback ran only once allowed, and delete never


def test_a_2026_call_resumes_only_with_the_state_the_server_sealed():
    """The input_required round by hand: requestState is opaque (sealed), a retry with it
    altered is refused with the SDK's frozen error, and the untouched one resumes the run, in
    a new server built with the same key (another worker)."""
    from mcp.shared.exceptions import MCPError
    from scripted_kernel.tools.mcp_server import ServerOptions
    key = b"k" * 32
    DELETED.clear()

    async def main():
        async with Client(build_server(_api(), options=ServerOptions(approve=True, key=key))) as c:
            first = await c.session.call_tool("api", {"commands": "delete_user --id 7"}, allow_input_required=True)
        assert isinstance(first, types.InputRequiredResult)
        (ask, question), = first.input_requests.items()
        assert "delete_user --id 7" in question.params.message
        assert "continuation" not in first.request_state          # sealed: nothing readable
        answer = {ask: types.ElicitResult(action="accept", content={"decision": "allow"})}
        async with Client(build_server(_api(), options=ServerOptions(approve=True, key=key))) as other:
            tampered = first.request_state[:-2] + ("A" if first.request_state[-2] != "A" else "B") + \
                first.request_state[-1]
            with pytest.raises(MCPError) as refused:
                await other.session.call_tool("api", {"commands": "delete_user --id 7"}, input_responses=answer,
                                              request_state=tampered, allow_input_required=True)
            assert refused.value.error.message == "Invalid or expired requestState"
            with pytest.raises(MCPError):                         # bound to the call's arguments too
                await other.session.call_tool("api", {"commands": "delete_user --id 8"}, input_responses=answer,
                                              request_state=first.request_state, allow_input_required=True)
            assert DELETED == []
            return await other.session.call_tool("api", {"commands": "delete_user --id 7"}, input_responses=answer,
                                                 request_state=first.request_state, allow_input_required=True)
    done = asyncio.run(asyncio.wait_for(main(), 120))
    assert done.structured_content["stdout"] == "deleted 7\n" and DELETED == [7]


def test_a_client_that_cannot_be_asked_is_refused_every_call():
    (result,), asked = run(build_server(_api(), approve=True), ["get_user --id 1; echo $?"], None)
    assert result.structured_content["stdout"] == "126\n" and asked == []
    assert "cannot be asked (no elicitation support)" in result.structured_content["stderr"]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_bash_tool_sessions_ask_too(mode):
    def make():
        return BashTool.builder().builtin("deploy", lambda args, stdin: f"deploying {args[0]}\n").build()
    server = build_server(make(), session_tools=make, approve=True)

    async def main():
        async def on_elicit(context, params):
            return types.ElicitResult(action="accept", content={"decision": "deny"})
        async with Client(server, mode=mode, elicitation_callback=on_elicit) as client:
            return await client.call_tool("bash", {"commands": "deploy web; echo $?"})
    result = asyncio.run(asyncio.wait_for(main(), 120))
    assert result.structured_content["stdout"] == "126\n" and result.is_error is False


REFUNDS = '''
import os
from scripted_kernel import ScriptedTool, tool

LEDGER = os.environ["SCRIPTED_TEST_LEDGER"]


@tool()
def refund(order: int) -> str:
    """Refund an order (written to the ledger)."""
    with open(LEDGER, "a") as f:
        f.write(f"{order} by {os.getpid()}\\n")
    return f"refunded {order}"


api = ScriptedTool.builder("shop").function(refund).build()
'''


def test_an_approval_round_trip_served_by_two_workers(tmp_path):
    """A 2026-07-28 call paused for approval on one worker and retried with the answer on
    another: the second resumes it from the sealed requestState (they share the key), and the
    refund is made once, by the worker that got the answer."""
    from services import Service
    (tmp_path / "shop.py").write_text(REFUNDS)
    ledger = tmp_path / "ledger"
    env = {"SCRIPTED_TEST_LEDGER": str(ledger), "SCRIPTED_MCP_SESSION_KEY": "shared by the workers"}
    a = Service("--tools", f"{tmp_path / 'shop.py'}:api", "--approve", env=env, token="t")
    b = Service("--tools", f"{tmp_path / 'shop.py'}:api", "--approve", env=env, token="t")
    script = "echo start; refund --order 42; echo end"

    async def scenario():
        async with a.client() as on_a, b.client() as on_b:
            asked = await on_a.session.call_tool("shop", {"commands": script}, allow_input_required=True)
            assert isinstance(asked, types.InputRequiredResult) and not ledger.exists()
            (key, question), = asked.input_requests.items()
            answer = {key: types.ElicitResult(action="accept", content={"decision": "allow"})}
            done = await on_b.session.call_tool("shop", {"commands": script}, input_responses=answer,
                                                request_state=asked.request_state, allow_input_required=True)
            return question, done
    try:
        question, done = asyncio.run(asyncio.wait_for(scenario(), 120))
        pids = a.health()["pid"], b.health()["pid"]
    finally:
        a.stop()
        b.stop()
    assert "`refund --order 42`" in question.params.message
    assert done.structured_content["stdout"] == "start\nrefunded 42end\n"
    assert ledger.read_text() == f"42 by {pids[1]}\n"
