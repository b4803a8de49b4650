"""LangChain (langchain-core): a ScriptedTool, BashTool or ScriptingToolSet as a LangChain
tool, and LangChain tools as the commands of a ScriptedTool.

    agent = create_agent(model, tools=[as_langchain_tool(api)])
    tool = from_langchain_tools([search, calculator], name="research").build()

The tool's ToolMessage carries, beside the text the model reads, the run's record as its
artifact (`response_format="content_and_artifact"`; `integrations.run_record`): status, exit
code, error and the tool-call log, on success and on failure. LangChain has no way to defer a
call, so a run a before_tool hook paused is answered at once (the model reads the output so
far and `[exit code 148]`), and its artifact holds status "paused", the pending call and the
continuation: the host decides later and `resume_tool_message` gives the ToolMessage of the
resumed run, for the same tool call.
"""
from __future__ import annotations

from . import (one_line_validation_errors, plain_value, require, resume, run_record, script_arguments, script_entries,
               script_entry, text_for_model)
from ..tools.definitions import ToolArgs, ToolDef
from ..tools.scripted_tool import ScriptedTool, ScriptedToolBuilder, ToolResponse

require("langchain_core", "langchain", "LangChain (langchain-core)")
from langchain_core.messages import ToolMessage  # noqa: E402
from langchain_core.tools import BaseTool, StructuredTool  # noqa: E402
from langchain_core.utils.function_calling import convert_to_openai_tool  # noqa: E402


def as_langchain_tool(tool) -> StructuredTool:
    """The tool as a LangChain StructuredTool: its name, the system prompt as description, the
    `{"commands": ...}` schema, sync (`invoke`) and async (`ainvoke`). Invoked with a tool
    call, it answers a ToolMessage: the text the model reads (`integrations.text_for_model`),
    the run's record as artifact, status "error" when the script failed (or paused)."""
    return _structured_tool(script_entry(tool, "as_langchain_tools"))


def as_langchain_tools(tool) -> list:
    """Every tool `tool` offers: with DiscoveryMode.WITH_DISCOVERY, also `<name>_discover`."""
    return [_structured_tool(entry) for entry in script_entries(tool)]


def resume_tool_message(tool, paused: ToolMessage, decision="allow", key=None) -> ToolMessage:
    """The ToolMessage of a paused run (its artifact's status is "paused") once the host has
    decided: the paused call allowed (`"allow"`), refused (`Deny(reason)`) or made with new
    parameters (a dict); for the same tool call, with the resumed run's record as artifact
    (its log lists the calls made since the run resumed; those before are in the paused
    message's). The run goes on from where it stopped (`ScriptedTool.resume`), and a damaged
    or forged continuation is a failed run that ran nothing. Synchronous: from async code,
    run it in a thread."""
    return _tool_message(resume(tool, paused.artifact, decision, key), paused.tool_call_id, paused.name)


def _tool_message(response: ToolResponse, tool_call_id: str, name) -> ToolMessage:
    return ToolMessage(text_for_model(response), artifact=run_record(response), tool_call_id=tool_call_id,
                       name=name, status="error" if response.exit_code else "success")


def _structured_tool(entry) -> StructuredTool:
    def run(**args) -> tuple:
        return _content_and_artifact(entry.run(args))

    async def arun(**args) -> tuple:
        return _content_and_artifact(await entry.run_async(args))
    return _ScriptTool.from_function(func=run, coroutine=arun, name=entry.name, description=entry.description,
                                     args_schema=entry.input_schema, response_format="content_and_artifact")


class _ScriptTool(StructuredTool):
    """A StructuredTool whose input is reduced to {"commands": script} (or {}, answered with the
    usage line as a tool error) before LangChain handles it: LangChain prints a tool's input
    for its callbacks, recursively (200,000 levels of lists raised RecursionError), and raises
    for a string, a list or a number where the JSON schema wants an object."""

    def invoke(self, input, config=None, **kwargs):
        return super().invoke(_screened(input), config, **kwargs)

    async def ainvoke(self, input, config=None, **kwargs):
        return await super().ainvoke(_screened(input), config, **kwargs)

    def run(self, tool_input, *args, **kwargs):
        return _marked(super().run(script_arguments(tool_input), *args, **kwargs))

    async def arun(self, tool_input, *args, **kwargs):
        return _marked(await super().arun(script_arguments(tool_input), *args, **kwargs))


def _marked(output):
    """A failed script's ToolMessage with status "error". LangChain sets that status only for a
    ToolException, and then drops the artifact, so the message is marked once it is made."""
    if isinstance(output, ToolMessage) and isinstance(output.artifact, dict) and output.artifact.get("exit_code"):
        output.status = "error"
    return output


def _screened(input):
    """A tool call (a dict of type "tool_call", as LangChain tells one) with its arguments
    reduced, or the arguments reduced."""
    if isinstance(input, dict) and input.get("type") == "tool_call":
        return {**input, "args": script_arguments(input.get("args"))}
    return script_arguments(input)


def _content_and_artifact(response: ToolResponse) -> tuple:
    return text_for_model(response), run_record(response)


def from_langchain_tools(tools, name: str = "tools", description: str = "") -> ScriptedToolBuilder:
    """A ScriptedTool builder with each LangChain tool as a command: its args schema becomes
    the command's flags, its return value the command's output (JSON for data). Any error,
    a ToolException included, fails the command (status 1, `TOOL: message` on stderr), whatever
    the tool's handle_tool_error says: a script checks the status, not the text."""
    builder = ScriptedTool.builder(name)
    if description:
        builder.short_description(description)
    for lc_tool in tools:
        builder.tool(_tool_def(lc_tool), _callback(lc_tool))
    return builder


def _tool_def(lc_tool: BaseTool) -> ToolDef:
    schema = convert_to_openai_tool(lc_tool)["function"].get("parameters") or {"type": "object", "properties": {}}
    return ToolDef(lc_tool.name, lc_tool.description or "", schema)


def _callback(lc_tool: BaseTool):
    """Calls the tool with errors raised (not turned into text); async when the tool has an
    async implementation of its own (so `execute_async` runs it on the caller's loop)."""
    raising = lc_tool.model_copy(update={"handle_tool_error": False, "handle_validation_error": False})
    if _has_own_async(lc_tool):
        async def call_async(args: ToolArgs):
            with one_line_validation_errors():
                return plain_value(await raising.ainvoke(args.params))
        return call_async

    def call(args: ToolArgs):
        with one_line_validation_errors():
            return plain_value(raising.invoke(args.params))
    return call


def _has_own_async(lc_tool: BaseTool) -> bool:
    if hasattr(lc_tool, "coroutine"):            # StructuredTool, Tool: a function and/or a coroutine
        return lc_tool.coroutine is not None
    return type(lc_tool)._arun is not BaseTool._arun
