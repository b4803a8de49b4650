"""The OpenAI Agents SDK, for real and offline: Runner.run with a Model of our own that calls
the tool, then answers with the tool's output."""
import asyncio
import json

import pytest

pytest.importorskip("agents")

from agents import Agent, FunctionTool, RunConfig, Runner  # noqa: E402
from agents.items import ModelResponse  # noqa: E402
from agents.models.interface import Model  # noqa: E402
from agents.usage import Usage  # noqa: E402
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText  # noqa: E402

from scripted_kernel import BashTool, DiscoveryMode, ScriptedTool, ScriptingToolSet, tool  # noqa: E402
from scripted_kernel.integrations.openai_agents import as_function_tool, as_function_tools  # noqa: E402
from user_api import REFUND_SCRIPT, pause_refunds, refunds  # noqa: E402


class Raw:
    """Arguments a model wrote as they are, not {"commands": script}."""

    def __init__(self, text: str):
        self.text = text


class ScriptedModel(Model):
    """Makes each (tool, script or Raw arguments) call in turn, then answers with the last
    function output."""

    def __init__(self, *calls):
        self.calls = calls
        self.outputs: list = []        # the function outputs the model was sent
        self.tools: list = []          # the tools it was offered

    async def get_response(self, system_instructions, input, model_settings, tools, output_schema, handoffs,
                           tracing, **kwargs) -> ModelResponse:
        self.tools = tools
        items = input if isinstance(input, list) else []
        self.outputs = [item["output"] for item in items if _field(item, "type") == "function_call_output"]
        done = len(self.outputs)
        if done < len(self.calls):
            name, script = self.calls[done]
            arguments = script.text if isinstance(script, Raw) else json.dumps({"commands": script})
            item = ResponseFunctionToolCall(type="function_call", call_id=f"call_{done}", name=name,
                                            arguments=arguments, status="completed")
        else:
            item = ResponseOutputMessage(id="msg", type="message", role="assistant", status="completed", content=[
                ResponseOutputText(type="output_text", text=f"The tool said: {self.outputs[-1]}", annotations=[])])
        return ModelResponse(output=[item], usage=Usage(), response_id=None)

    def stream_response(self, *args, **kwargs):
        raise NotImplementedError


def _field(item, name):
    return item.get(name) if isinstance(item, dict) else getattr(item, name, None)


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-used")
    monkeypatch.setenv("OPENAI_AGENTS_DISABLE_TRACING", "1")


def run(model, tools):
    agent = Agent(name="analyst", instructions="Use the tool.", model=model, tools=tools)
    return asyncio.run(Runner.run(agent, "Who are the users?", run_config=RunConfig(tracing_disabled=True)))


@tool(register=False)
async def get_user(id: int) -> dict:
    """Fetch a user by id."""
    await asyncio.sleep(0)
    return {"id": id, "name": ["Ada", "Bob"][id % 2]}


API = ScriptedTool.builder("api").short_description("User API").function(get_user).build()


def test_an_agent_run_calls_the_tool_and_reads_its_output():
    model = ScriptedModel(("api", "for i in 1 2; do get_user --id $i | jq -r .name; done | sort"))
    adapted = as_function_tool(API)
    result = run(model, [adapted])
    assert result.final_output == "The tool said: Ada\nBob\n"
    (offered,) = model.tools
    assert isinstance(offered, FunctionTool)
    assert (offered.name, offered.description, offered.strict_json_schema) == ("api", API.system_prompt(), True)
    assert offered.params_json_schema == {**API.input_schema(), "additionalProperties": False}


def test_a_failed_script_is_told_by_the_text_and_the_agent_goes_on():
    model = ScriptedModel(("api", "get_user --id x"), ("api", "get_user --id 1 | jq -r .name"))
    result = run(model, [as_function_tool(API)])
    assert model.outputs == ["[stderr]\nget_user: --id: expected integer, got 'x'\n[exit code 2]", "Bob\n"]
    assert result.final_output == "The tool said: Bob\n"


def test_arguments_that_are_not_json_are_answered_with_the_usage():
    adapted = as_function_tool(API)
    text = asyncio.run(adapted.on_invoke_tool(None, "get_user --id 1"))
    assert text == '[stderr]\napi: arguments must be {"commands": "<bash script>"}\n[exit code 2]'


def test_a_bash_tool_keeps_its_shell_between_calls():
    model = ScriptedModel(("bash", "mkdir -p w && cd w && echo hi > a"), ("bash", "pwd; cat a"))
    result = run(model, [as_function_tool(BashTool())])
    assert model.outputs[0] == "(no output)" and result.final_output == "The tool said: /home/user/w\nhi\n"


def test_a_toolset_with_discovery_gives_both_tools():
    toolset = ScriptingToolSet(API, DiscoveryMode.WITH_DISCOVERY)
    with pytest.raises(ValueError, match="use as_function_tools"):
        as_function_tool(toolset)
    model = ScriptedModel(("api_discover", "help get_user"), ("api", "get_user --id 2 | jq -r .name"))
    result = run(model, as_function_tools(toolset))
    assert "--id" in model.outputs[0] and result.final_output == "The tool said: Ada\n"


def test_on_response_gets_each_runs_call_log_on_success_and_on_failure():
    api, _ = refunds(lambda call: None)
    responses: list = []
    model = ScriptedModel(("api", "get_order --id 7 | jq .total"), ("api", "get_order --id 7 >/dev/null; refund"))
    run(model, [as_function_tool(api, on_response=responses.append)])
    assert model.outputs == ["12.5\n", "[stderr]\nrefund: missing required flag --amount (number)\n[exit code 2]"]
    assert [[(e.name, e.status) for e in r.trace] for r in responses] == [
        [("get_order", "done")], [("get_order", "done"), ("refund", "not started")]]


def test_a_paused_run_reaches_on_response_with_its_continuation_and_resumes_as_an_immediate_approval():
    api, calls = refunds(pause_refunds)
    responses: list = []
    model = ScriptedModel(("api", REFUND_SCRIPT))
    run(model, [as_function_tool(api, on_response=responses.append)])
    (paused,) = responses
    assert model.outputs[0].endswith("[exit code 148]") and paused.status == "paused"
    assert (paused.pending.name, calls) == ("refund", [["get_order", 7]])
    resumed = api.resume(paused.continuation, "allow")
    approved, approved_calls = refunds(lambda call: None)
    immediate = approved.execute(REFUND_SCRIPT)
    assert (resumed.stdout, resumed.stderr, resumed.exit_code) == (immediate.stdout, immediate.stderr, 0)
    assert calls == approved_calls


USAGE = '[stderr]\napi: arguments must be {"commands": "<bash script>"}\n[exit code 2]'
TOO_DEEP = "[stderr]\napi: arguments nested too deeply: more than 32 levels\n[exit code 2]"


HOSTILE = {
    "deep": ("[" * 200 + "]" * 200, TOO_DEEP),
    "deep object beside the script": ('{"commands": "ls", "more": ' + '{"a": ' * 200 + "1" + "}" * 201, TOO_DEEP),
    "huge": ('{"commands": "' + "x" * (6 * 1024 * 1024 + 1024) + '"}',
             f"[stderr]\napi: arguments too large: more than {6 * 1024 * 1024 + 1024} characters\n[exit code 2]"),
    "list": ("[1, 2]", USAGE), "number": ("5", USAGE), "string": ('"get_user --id 1"', USAGE),
    "null": ("null", USAGE), "empty": ("", USAGE), "number script": ('{"commands": 5}', USAGE),
    "list script": ('{"commands": ["get_user"]}', USAGE), "not JSON": ("{'commands': 'ls'}", USAGE),
}


@pytest.mark.parametrize("kind", HOSTILE)
def test_hostile_arguments_are_told_as_a_failed_call_and_the_agent_goes_on(kind):
    """Through the SDK's own run loop. (It parses the arguments itself, for the call's identity,
    before the tool sees them, recursively; openai-agents 0.24 lets RecursionError out of that
    parse near Python's recursion limit, openai/openai-agents-python#4772, which depends on the
    process: deeper arguments are tested on the tool itself below.)"""
    arguments, told = HOSTILE[kind]
    model = ScriptedModel(("api", Raw(arguments)), ("api", "get_user --id 1 | jq -r .name"))
    result = run(model, [as_function_tool(API)])
    assert model.outputs == [told, "Bob\n"] and result.final_output == "The tool said: Bob\n"


@pytest.mark.parametrize("arguments", ["[" * 200_000 + "]" * 200_000, '{"commands": "ls", "x": ' + "[" * 200_000,
                                       '{"a": ' * 200_000 + "1" + "}" * 200_000],
                         ids=["lists", "unclosed", "objects"])
def test_arguments_200000_levels_deep_are_told_without_a_recursion_error(arguments):
    text = asyncio.run(as_function_tool(API).on_invoke_tool(None, arguments))
    assert text == TOO_DEEP
