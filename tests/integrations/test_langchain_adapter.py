"""LangChain, for real and offline: a chat model (LangChain's BaseChatModel, answering from a
script instead of a network) calls our tool through LangChain's tool-calling round trip."""
import asyncio

import pytest

pytest.importorskip("langchain_core")

from langchain_core.language_models.chat_models import BaseChatModel  # noqa: E402
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage  # noqa: E402
from langchain_core.outputs import ChatGeneration, ChatResult  # noqa: E402
from langchain_core.tools import StructuredTool, ToolException  # noqa: E402
from langchain_core.tools import tool as langchain_tool  # noqa: E402
from langchain_core.utils.function_calling import convert_to_openai_tool  # noqa: E402
from pydantic import BaseModel, field_validator  # noqa: E402

from scripted_kernel import BashTool, Deny, DiscoveryMode, ScriptingToolSet  # noqa: E402
from scripted_kernel.integrations.langchain import (as_langchain_tool, as_langchain_tools,  # noqa: E402
                                                    from_langchain_tools, resume_tool_message)
from user_api import API, REFUND_SCRIPT, deny_refunds, pause_refunds, refunds  # noqa: E402


class ScriptedChatModel(BaseChatModel):
    """Calls a tool with each script in turn, then answers with what the last call returned."""
    calls: list                 # (tool name, script)
    bound: list = []            # the tool specs the model was given

    @property
    def _llm_type(self) -> str:
        return "scripted-fake"

    def bind_tools(self, tools, **kwargs):
        return self.model_copy(update={"bound": [convert_to_openai_tool(t) for t in tools]})

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        done = sum(isinstance(m, ToolMessage) for m in messages)
        if done < len(self.calls):
            name, script = self.calls[done]
            reply = AIMessage(content="", tool_calls=[
                {"name": name, "args": {"commands": script}, "id": f"call_{done}", "type": "tool_call"}])
        else:
            reply = AIMessage(content=f"The tool said: {messages[-1].content}")
        return ChatResult(generations=[ChatGeneration(message=reply)])


def run_agent(model, tools, question="Who are the users?"):
    """LangChain's tool-calling loop: the model's tool calls are invoked, their ToolMessages
    sent back, until the model answers."""
    by_name = {t.name: t for t in tools}
    model = model.bind_tools(tools)
    messages = [HumanMessage(question)]
    for _ in range(5):
        reply = model.invoke(messages)
        messages.append(reply)
        if not reply.tool_calls:
            return messages
        messages += [by_name[call["name"]].invoke(call) for call in reply.tool_calls]
    raise AssertionError("the agent did not finish")


async def run_agent_async(model, tools, question="Who are the users?"):
    by_name = {t.name: t for t in tools}
    model = model.bind_tools(tools)
    messages = [HumanMessage(question)]
    for _ in range(5):
        reply = await model.ainvoke(messages)
        messages.append(reply)
        if not reply.tool_calls:
            return messages
        messages += [await by_name[call["name"]].ainvoke(call) for call in reply.tool_calls]
    raise AssertionError("the agent did not finish")


NAMES = "for i in 1 2; do get_user --id $i | jq -r .name; done | sort"


def test_an_agent_calls_the_tool_and_reads_its_output():
    adapted = as_langchain_tool(API)
    assert isinstance(adapted, StructuredTool)
    model = ScriptedChatModel(calls=[("api", NAMES)])
    messages = run_agent(model, [adapted])
    assert [m.type for m in messages] == ["human", "ai", "tool", "ai"]
    assert (messages[2].content, messages[2].status) == ("Ada\nBob\n", "success")
    assert messages[-1].content == "The tool said: Ada\nBob\n"


def test_the_model_is_given_the_name_the_system_prompt_and_the_commands_schema():
    spec = convert_to_openai_tool(as_langchain_tool(API))["function"]
    # (LangChain strips the description's final newline)
    assert spec == {"name": "api", "description": API.system_prompt().strip(), "parameters": API.input_schema()}


def test_the_async_path_runs_async_callbacks_on_the_agents_loop():
    script = "get_user_async --id 2 | jq -r .name"
    messages = asyncio.run(run_agent_async(ScriptedChatModel(calls=[("api", script)]), [as_langchain_tool(API)]))
    assert messages[2].content == "Ada\n"


def test_a_failed_script_is_an_error_tool_message_and_the_agent_goes_on():
    model = ScriptedChatModel(calls=[("api", "get_user --id x"), ("api", "get_user --id 1 | jq -r .name")])
    messages = run_agent(model, [as_langchain_tool(API)])
    assert messages[2].status == "error"
    assert messages[2].content == "[stderr]\nget_user: --id: expected integer, got 'x'\n[exit code 2]"
    assert messages[4].status == "success" and messages[-1].content == "The tool said: Bob\n"


def test_arguments_that_are_not_a_script_are_an_error_the_model_reads():
    message = as_langchain_tool(API).invoke({"type": "tool_call", "name": "api", "id": "c1", "args": {"script": 1}})
    assert message.status == "error" and 'arguments must be {"commands": "<bash script>"}' in message.content


def test_a_bash_tool_keeps_its_shell_and_files_between_calls():
    bash = BashTool()
    model = ScriptedChatModel(calls=[("bash", "cd /tmp && x=42 && echo $x > f.txt"),
                                     ("bash", "pwd; cat f.txt; echo $x")])
    messages = run_agent(model, [as_langchain_tool(bash)])
    assert messages[2].content == "(no output)" and messages[4].content == "/tmp\n42\n42\n"
    assert as_langchain_tool(bash).description == bash.system_prompt().strip()


def test_a_toolset_with_discovery_gives_both_tools():
    toolset = ScriptingToolSet(API, DiscoveryMode.WITH_DISCOVERY)
    with pytest.raises(ValueError, match="use as_langchain_tools"):
        as_langchain_tool(toolset)
    tools = as_langchain_tools(toolset)
    model = ScriptedChatModel(calls=[("api_discover", "help get_user"), ("api", "get_user --id 1 | jq -r .name")])
    messages = run_agent(model, tools)
    assert "--id" in messages[2].content and messages[4].content == "Bob\n"
    assert [t.name for t in tools] == ["api", "api_discover"] and "api_discover" in tools[0].description


# ---------------------------------------------------------------- the run's record, a paused run

def test_the_tool_message_carries_the_runs_call_log_as_its_artifact():
    messages = run_agent(ScriptedChatModel(calls=[("api", NAMES)]), [as_langchain_tool(API)])
    artifact = messages[2].artifact
    assert (artifact["status"], artifact["exit_code"], artifact["error"]) == ("completed", 0, None)
    assert [(e["name"], e["params"], e["status"]) for e in artifact["trace"]] == [
        ("get_user", {"id": 1}, "done"), ("get_user", {"id": 2}, "done")]


def test_a_failed_scripts_message_lists_what_ran_before_the_failure_sync_and_async():
    api, _ = refunds(lambda call: None)
    script = "get_order --id 7 >/dev/null && refund --amount oops"
    model = ScriptedChatModel(calls=[("api", script)])
    for messages in (run_agent(model, [as_langchain_tool(api)]),
                     asyncio.run(run_agent_async(model, [as_langchain_tool(api)]))):
        failed = messages[2]
        assert failed.status == "error" and failed.content.endswith("[exit code 2]")
        assert [(e["name"], e["status"]) for e in failed.artifact["trace"]] == [("get_order", "done"),
                                                                                ("refund", "not started")]


def run_refund(hook):
    api, calls = refunds(hook)
    return api, calls, run_agent(ScriptedChatModel(calls=[("api", REFUND_SCRIPT)]), [as_langchain_tool(api)])[2]


@pytest.mark.parametrize("decision, at_once", [("allow", lambda call: None), (Deny("not today"), deny_refunds)],
                         ids=["allow", "deny"])
def test_a_paused_run_resumed_later_gives_the_message_of_an_immediate_decision(decision, at_once):
    api, calls, paused = run_refund(pause_refunds)
    assert paused.status == "error" and paused.content.endswith("[exit code 148]")
    assert (paused.artifact["status"], paused.artifact["pending"]["params"]) == ("paused", {"amount": 12.5})
    assert calls == [["get_order", 7]]
    resumed = resume_tool_message(api, paused, decision)
    _, immediate_calls, immediate = run_refund(at_once)
    assert (resumed.content, resumed.status, resumed.tool_call_id) == (immediate.content, "success", "call_0")
    assert calls == immediate_calls           # get_order answered from the continuation, not called again
    # the resumed record's log is the whole run's, the paused call under its decision included
    assert [e["name"] for e in paused.artifact["trace"]] == ["get_order"]
    assert [(e["name"], e["status"]) for e in resumed.artifact["trace"]] == \
        [(e["name"], e["status"]) for e in immediate.artifact["trace"]]


def test_a_forged_continuation_is_refused_and_nothing_runs():
    api, calls, paused = run_refund(pause_refunds)
    calls.clear()
    forged = paused.model_copy(update={"artifact": {**paused.artifact,
                                                    "continuation": paused.artifact["continuation"][:-8] + "AAAAAAAA"}})
    refused = resume_tool_message(api, forged)
    assert refused.status == "error" and calls == []
    assert refused.content.startswith("[stderr]\napi: cannot resume: ") and refused.content.endswith("[exit code 2]")


# ---------------------------------------------------------------- LangChain tools as commands

class Address(BaseModel):
    city: str
    zip: str = ""

    @field_validator("zip")
    @classmethod
    def digits(cls, value: str) -> str:
        if value and not value.isdigit():
            raise ValueError("digits only")
        return value


@langchain_tool
def find_people(city: str, limit: int = 2) -> list:
    """Find people living in a city."""
    return [{"name": n, "city": city} for n in ["Ada", "Bob", "Cy"][:limit]]


@langchain_tool
def label(address: Address) -> Address:
    """Normalise an address."""
    return Address(city=address.city.upper(), zip=address.zip)


async def _score(name: str) -> int:
    await asyncio.sleep(0)
    return len(name)

score = StructuredTool.from_function(coroutine=_score, name="score", description="Score a name.")


def _flaky(what: str) -> str:
    raise ToolException(f"{what} is down")

flaky = StructuredTool.from_function(func=_flaky, name="flaky", description="Always fails.", handle_tool_error=True)

RESEARCH = from_langchain_tools([find_people, label, score, flaky], name="research",
                                description="People search").build()


def test_langchain_tools_become_commands_with_their_args_as_flags():
    assert RESEARCH.name == "research" and RESEARCH.short_description == "People search"
    r = RESEARCH.execute("find_people --city Paris --limit 3 | jq -r '.[].name' | paste -sd,")
    assert (r.stdout, r.stderr, r.exit_code) == ("Ada,Bob,Cy\n", "", 0)
    assert "--city <string>" in RESEARCH.execute("help find_people").stdout
    r = RESEARCH.execute("find_people --city Paris --limit many")
    assert (r.stderr, r.exit_code) == ("find_people: --limit: expected integer, got 'many'\n", 2)
    assert RESEARCH.execute("find_people --cty Paris").exit_code == 2        # an unknown flag


def test_a_pydantic_argument_is_a_json_flag_and_a_pydantic_result_is_json():
    r = RESEARCH.execute("""label --address '{"city": "paris"}' | jq -c .""")
    assert (r.stdout, r.exit_code) == ('{"city":"PARIS","zip":""}\n', 0)


def test_a_validator_of_the_args_schema_fails_the_command_on_one_line():
    r = RESEARCH.execute("""label --address '{"city": "paris", "zip": "7500x"}'""")
    assert (r.stderr, r.exit_code) == ("label: --address.zip: Value error, digits only\n", 1)


@pytest.mark.parametrize("run_async", [False, True])
def test_an_async_langchain_tool_runs_under_execute_and_execute_async(run_async):
    script = "for n in Ada Robert; do score --name $n; done"
    r = asyncio.run(RESEARCH.execute_async(script)) if run_async else RESEARCH.execute(script)
    assert (r.stdout, r.exit_code) == ("3\n6\n", 0)


def test_a_tool_error_fails_the_command_even_when_the_tool_handles_it_as_text():
    r = RESEARCH.execute("flaky --what db || echo recovered")
    assert (r.stdout, r.stderr, r.exit_code) == ("recovered\n", "flaky: db is down\n", 0)
    assert flaky.invoke({"what": "db"}) == "db is down"      # the tool itself is unchanged


def test_langchain_tools_through_a_script_tool_back_to_an_agent():
    script = "find_people --city Oslo | jq -r '.[] | .name' | while read n; do score --name $n; done"
    messages = run_agent(ScriptedChatModel(calls=[("research", script)]), [as_langchain_tool(RESEARCH)])
    assert messages[2].content == "3\n3\n"


def deep(levels: int):
    value: list = []
    for _ in range(levels):
        value = [value]
    return value


USAGE = '[stderr]\napi: arguments must be {"commands": "<bash script>"}\n[exit code 2]'
HOSTILE = {"deep": {"commands": deep(200_000)}, "deep, no script": {"x": deep(200_000)},
           "string": "get_user --id 1", "JSON string": '{"commands": "get_user --id 1"}', "list": [1], "number": 5,
           "null": None, "number script": {"commands": 5}, "list script": {"commands": ["ls"]}}


@pytest.mark.parametrize("kind", HOSTILE)
def test_hostile_arguments_are_an_error_tool_message(kind):
    """LangChain prints a tool's input for its callbacks, recursively, and raises for a string,
    a list or a number where the schema wants an object: the tool's input is reduced first."""
    adapted = as_langchain_tool(API)
    call = {"type": "tool_call", "name": "api", "id": "c1", "args": HOSTILE[kind]}
    for message in (adapted.invoke(call), asyncio.run(adapted.ainvoke(call))):
        assert (message.status, message.content, message.tool_call_id) == ("error", USAGE, "c1")
    assert adapted.invoke(HOSTILE[kind]) == USAGE                  # plain input: the error's text
    assert adapted.run(HOSTILE[kind]) == USAGE
    assert asyncio.run(adapted.arun(HOSTILE[kind])) == USAGE


def test_other_keys_beside_the_script_are_dropped_however_deep():
    args = {"commands": "get_user --id 1 | jq -r .name", "extra": deep(200_000)}
    message = as_langchain_tool(API).invoke({"type": "tool_call", "name": "api", "id": "c1", "args": args})
    assert (message.status, message.content) == ("success", "Bob\n")
