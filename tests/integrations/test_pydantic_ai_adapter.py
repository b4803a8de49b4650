"""PydanticAI, for real and offline: Agent.run_sync with a FunctionModel that calls our tool
and answers with what it returned."""
import asyncio

import pytest

pytest.importorskip("pydantic_ai")

from pydantic import BaseModel, field_validator  # noqa: E402
from pydantic_ai import Agent, DeferredToolRequests, ModelRetry, RunContext, Tool, ToolReturn  # noqa: E402
from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart  # noqa: E402
from pydantic_ai.models.function import AgentInfo, FunctionModel  # noqa: E402
from pydantic_ai.usage import RequestUsage  # noqa: E402

from scripted_kernel import BashTool, Deny, DiscoveryMode, ScriptingToolSet  # noqa: E402
from scripted_kernel.integrations.pydantic_ai import (as_pydantic_ai_tool, as_pydantic_ai_tools,  # noqa: E402
                                                      decided, from_pydantic_ai_tools)
from user_api import API, REFUND_SCRIPT, deny_refunds, pause_refunds, refunds  # noqa: E402


def scripted_model(*calls, seen=None):
    """A FunctionModel that makes each (tool, script) call in turn, then answers with the
    last tool return; `seen` collects the tool definitions the model was given."""
    def respond(messages, info: AgentInfo) -> ModelResponse:
        if seen is not None:
            seen[:] = info.function_tools
        returns = [p for m in messages if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, ToolReturnPart)]
        if len(returns) < len(calls):
            name, script = calls[len(returns)]
            return ModelResponse(parts=[ToolCallPart(name, {"commands": script}, tool_call_id=f"call_{len(returns)}")])
        return ModelResponse(parts=[TextPart(f"The tool said: {returns[-1].content}")])
    return FunctionModel(respond)


def tool_returns(result) -> list:
    return [p for m in result.all_messages() if isinstance(m, ModelRequest) for p in m.parts
            if isinstance(p, ToolReturnPart)]




def test_an_agent_calls_the_tool_and_reads_its_output():
    seen = []
    model = scripted_model(("api", "for i in 1 2; do get_user_async --id $i | jq -r .name; done | sort"), seen=seen)
    result = Agent(model, tools=[as_pydantic_ai_tool(API)]).run_sync("Who are the users?")
    assert result.output == "The tool said: Ada\nBob\n"
    (definition,) = seen
    assert (definition.name, definition.description, definition.parameters_json_schema) == \
        ("api", API.system_prompt(), API.input_schema())


def test_a_failed_script_is_a_failed_tool_return_and_the_agent_goes_on():
    model = scripted_model(("api", "get_user --id x"), ("api", "get_user --id 1 | jq -r .name"))
    result = Agent(model, tools=[as_pydantic_ai_tool(API)]).run_sync("Who is user 1?")
    failed, succeeded = tool_returns(result)
    assert failed.outcome == "failed"
    assert failed.content == "[stderr]\nget_user: --id: expected integer, got 'x'\n[exit code 2]"
    assert succeeded.outcome == "success" and result.output == "The tool said: Bob\n"


def test_failures_use_no_retries():
    scripts = [("api", f"exit {n}") for n in range(1, 5)]         # more failures than max_retries
    result = Agent(scripted_model(*scripts), tools=[as_pydantic_ai_tool(API)]).run_sync("go")
    assert [p.outcome for p in tool_returns(result)] == ["failed"] * 4
    assert result.output == "The tool said: [exit code 4]"


def test_a_bash_tool_keeps_its_shell_between_calls():
    model = scripted_model(("bash", "cd /tmp; x=7; echo $x > n"), ("bash", "echo $(pwd) $x $(cat n)"))
    result = Agent(model, tools=[as_pydantic_ai_tool(BashTool())]).run_sync("go")
    assert result.output == "The tool said: /tmp 7 7\n"


def test_a_toolset_with_discovery_gives_both_tools():
    toolset = ScriptingToolSet(API, DiscoveryMode.WITH_DISCOVERY)
    with pytest.raises(ValueError, match="use as_pydantic_ai_tools"):
        as_pydantic_ai_tool(toolset)
    model = scripted_model(("api_discover", "help --list"), ("api", "get_user --id 2 | jq -r .name"))
    result = Agent(model, tools=as_pydantic_ai_tools(toolset)).run_sync("go")
    assert tool_returns(result)[0].content.startswith("get_user") and result.output == "The tool said: Ada\n"


# ---------------------------------------------------------------- the run's record, a paused run

def test_the_tool_return_carries_the_runs_call_log_as_its_metadata():
    model = scripted_model(("api", "for i in 1 2; do get_user --id $i | jq -r .name; done"))
    (returned,) = tool_returns(Agent(model, tools=[as_pydantic_ai_tool(API)]).run_sync("go"))
    assert (returned.content, returned.outcome) == ("Bob\nAda\n", "success")
    assert (returned.metadata["status"], returned.metadata["exit_code"]) == ("completed", 0)
    assert [(e["name"], e["params"], e["status"]) for e in returned.metadata["trace"]] == [
        ("get_user", {"id": 1}, "done"), ("get_user", {"id": 2}, "done")]


def test_a_failed_return_lists_what_ran_before_the_failure():
    api, _ = refunds(lambda call: None)
    model = scripted_model(("api", "get_order --id 7 >/dev/null && refund --amount oops"))
    (failed,) = tool_returns(Agent(model, tools=[as_pydantic_ai_tool(api)]).run_sync("go"))
    assert failed.outcome == "failed" and failed.tool_call_id == "call_0"
    assert failed.content == "[stderr]\nrefund: --amount: expected number, got 'oops'\n[exit code 2]"
    assert [(e["name"], e["status"]) for e in failed.metadata["trace"]] == [("get_order", "done"),
                                                                           ("refund", "not started")]


def refund_agent(hook):
    api, calls = refunds(hook)
    return Agent(scripted_model(("api", REFUND_SCRIPT)), tools=[as_pydantic_ai_tool(api)],
                 output_type=[str, DeferredToolRequests]), calls


@pytest.mark.parametrize("decision, at_once", [("allow", lambda call: None), (Deny("not today"), deny_refunds)],
                         ids=["allow", "deny"])
def test_a_paused_run_is_a_deferred_call_that_the_hosts_decision_resumes(decision, at_once):
    agent, calls = refund_agent(pause_refunds)
    paused = agent.run_sync("Refund order 7")
    requests = paused.output
    assert isinstance(requests, DeferredToolRequests) and [c.tool_call_id for c in requests.approvals] == ["call_0"]
    record = requests.metadata["call_0"]
    assert (record["status"], record["pending"]["params"], calls) == ("paused", {"amount": 12.5}, [["get_order", 7]])
    resumed = agent.run_sync(message_history=paused.all_messages(),
                             deferred_tool_results=decided(requests, {"call_0": decision}))
    immediate_agent, immediate_calls = refund_agent(at_once)
    immediate = immediate_agent.run_sync("Refund order 7")
    (returned,), (expected,) = tool_returns(resumed), tool_returns(immediate)
    assert (returned.content, returned.outcome) == (expected.content, expected.outcome) == (expected.content, "success")
    assert resumed.output == immediate.output and calls == immediate_calls     # get_order not called again
    assert returned.metadata["status"] == "completed"


def test_a_forged_continuation_is_a_failed_return_and_nothing_runs():
    agent, calls = refund_agent(pause_refunds)
    paused = agent.run_sync("Refund order 7")
    calls.clear()
    record = paused.output.metadata["call_0"]
    record["continuation"] = record["continuation"][:-8] + "AAAAAAAA"
    resumed = agent.run_sync(message_history=paused.all_messages(),
                             deferred_tool_results=decided(paused.output, {"call_0": "allow"}))
    (refused,) = tool_returns(resumed)
    assert refused.outcome == "failed" and refused.content.startswith("[stderr]\napi: cannot resume: ")
    assert calls == []


def test_an_approval_without_the_paused_record_runs_the_script_afresh():
    """A host that requires approval of every call (ApprovalRequiredToolset) approves a call
    that never ran: the tool runs the script, it does not look for a continuation."""
    from pydantic_ai import DeferredToolResults
    from pydantic_ai.toolsets import FunctionToolset
    toolset = FunctionToolset([as_pydantic_ai_tool(API)]).approval_required()
    agent = Agent(scripted_model(("api", "get_user --id 1 | jq -r .name")), toolsets=[toolset],
                  output_type=[str, DeferredToolRequests])
    asked = agent.run_sync("go")
    assert isinstance(asked.output, DeferredToolRequests) and asked.output.metadata == {}
    done = agent.run_sync(message_history=asked.all_messages(),
                          deferred_tool_results=DeferredToolResults(approvals={"call_0": True}))
    assert done.output == "The tool said: Bob\n"


# ---------------------------------------------------------------- PydanticAI tools as commands

class City(BaseModel):
    name: str

    @field_validator("name")
    @classmethod
    def known(cls, value: str) -> str:
        if value == "Atlantis":
            raise ValueError("no such city")
        return value.title()


def forecast(city: City, days: int = 1) -> dict:
    """The weather of a city.

    Args:
        city: The city.
        days: How many days ahead.
    """
    if days > 5:
        raise ModelRetry("at most 5 days ahead")
    return {"city": city, "days": days, "sky": "clear"}


async def station(name: str) -> ToolReturn:
    """A weather station."""
    await asyncio.sleep(0)
    return ToolReturn(return_value=f"station {name}\n", metadata={"not": "printed"})


WEATHER = from_pydantic_ai_tools([forecast, Tool(station)], name="weather", description="Weather").build()


def test_pydantic_ai_tools_become_commands_with_their_parameters_as_flags():
    assert WEATHER.short_description == "Weather"
    r = WEATHER.execute("""forecast --city '{"name": "paris"}' --days 2 | jq -c .""")
    assert (r.stdout, r.stderr, r.exit_code) == ('{"city":{"name":"Paris"},"days":2,"sky":"clear"}\n', "", 0)
    assert "--days <integer>" in WEATHER.execute("help forecast").stdout
    assert WEATHER.execute("forecast --city '{}'").stderr == "forecast: --city: 'name' is a required property\n"


def test_validation_and_tool_errors_fail_the_command_on_one_line():
    r = WEATHER.execute("""forecast --city '{"name": "Atlantis"}'""")
    assert (r.stderr, r.exit_code) == ("forecast: --city.name: Value error, no such city\n", 1)
    r = WEATHER.execute("""forecast --city '{"name": "Oslo"}' --days 9 || echo fallback""")
    assert (r.stdout, r.stderr) == ("fallback\n", "forecast: at most 5 days ahead\n")


@pytest.mark.parametrize("run_async", [False, True])
def test_an_async_tool_returning_tool_return_prints_its_return_value(run_async):
    script = "station --name north"
    r = asyncio.run(WEATHER.execute_async(script)) if run_async else WEATHER.execute(script)
    assert (r.stdout, r.exit_code) == ("station north\n", 0)


def test_a_tool_taking_a_run_context_is_refused():
    def needs_context(ctx: RunContext[None], x: int) -> int:
        return x
    with pytest.raises(ValueError, match="'needs_context' takes a RunContext"):
        from_pydantic_ai_tools([needs_context])


def test_pydantic_ai_tools_through_a_script_tool_back_to_an_agent():
    script = "for c in oslo rome; do forecast --city \"{\\\"name\\\": \\\"$c\\\"}\" | jq -r .city.name; done"
    result = Agent(scripted_model(("weather", script)), tools=[as_pydantic_ai_tool(WEATHER)]).run_sync("go")
    assert result.output == "The tool said: Oslo\nRome\n"


def deep(levels: int):
    value: list = []
    for _ in range(levels):
        value = [value]
    return value


USAGE = '[stderr]\napi: arguments must be {"commands": "<bash script>"}\n[exit code 2]'


def one_call_model(args):
    """Calls `api` once with `args` (JSON text or a dict, as models' providers give them), then
    answers with what came back. It states its usage, so that FunctionModel does not estimate
    it by serialising the arguments (which fails on deep ones, before any tool runs)."""
    def respond(messages, info: AgentInfo) -> ModelResponse:
        parts = [p for m in messages if isinstance(m, ModelRequest) for p in m.parts
                 if isinstance(p, ToolReturnPart)]
        usage = RequestUsage(input_tokens=1, output_tokens=1)
        if not parts:
            return ModelResponse(parts=[ToolCallPart("api", args, tool_call_id="c0")], usage=usage)
        return ModelResponse(parts=[TextPart("done")], usage=usage)
    return FunctionModel(respond)


@pytest.mark.parametrize("args", ["[1, 2]", "5", '"get_user --id 1"', "null", '{"commands": 5}', [1], 5,
                                  {"commands": deep(200_000)}, {"x": deep(200_000)}, {"commands": ["ls"]}],
                         ids=["list", "number", "string", "null", "number script", "a list", "a number",
                              "deep", "deep, no script", "list script"])
def test_hostile_arguments_are_a_failed_tool_return(args):
    """Tool.from_schema validates nothing: a list or a number reached the tool as `**args`, a
    TypeError out of the agent run."""
    result = Agent(one_call_model(args), tools=[as_pydantic_ai_tool(API)]).run_sync("go")
    (failed,) = tool_returns(result)
    assert (failed.outcome, failed.content) == ("failed", USAGE)


def test_json_text_too_deep_is_pydantic_ais_own_retry_not_an_exception():
    """pydantic-core parses JSON text with a depth limit of its own: the model is asked to
    retry, as for any arguments that are not JSON."""
    result = Agent(one_call_model('{"commands": ' + "[" * 200_000 + "]" * 200_000 + "}"),
                   tools=[as_pydantic_ai_tool(API)]).run_sync("go")
    (retry,) = tool_returns(result)
    assert retry.outcome == "retried" and "recursion limit" in str(retry.content) and result.output == "done"


def test_other_keys_beside_the_script_are_dropped_however_deep():
    args = {"commands": "get_user --id 1 | jq -r .name", "extra": deep(200_000)}
    result = Agent(one_call_model(args), tools=[as_pydantic_ai_tool(API)]).run_sync("go")
    (returned,) = tool_returns(result)
    assert (returned.outcome, returned.content) == ("success", "Bob\n")
