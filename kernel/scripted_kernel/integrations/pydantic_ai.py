"""PydanticAI (pydantic-ai-slim): a ScriptedTool, BashTool or ScriptingToolSet as a
pydantic_ai.Tool, and PydanticAI tools (or plain functions) as the commands of a ScriptedTool.

    agent = Agent(model, tools=[as_pydantic_ai_tool(api)])
    tool = from_pydantic_ai_tools([get_weather], name="weather").build()

Each tool return carries the run's record (`integrations.run_record`: status, exit code,
error, tool-call log) as its metadata, on success and on failure; PydanticAI keeps it in the
message history and does not send it to the model. A run a before_tool hook paused is a
deferred tool call (ApprovalRequired, the record as its metadata): the agent run ends with
DeferredToolRequests, which the agent's output_type must allow, and the host's later decision
(`decided`) resumes the script where it stopped when the next agent run is given it:

    result = agent.run_sync("...", output_type=[str, DeferredToolRequests])
    later = agent.run_sync(message_history=result.all_messages(),
                           deferred_tool_results=decided(result.output, {call_id: "allow"}))
"""
from __future__ import annotations

import asyncio

from . import (inline_refs, one_line_validation_errors, plain_value, require, run_record, script_arguments,
               script_entries, script_entry, text_for_model)
from ..tools.definitions import ToolArgs, ToolDef
from ..tools.scripted_tool import ScriptedTool, ScriptedToolBuilder, ToolResponse

require("pydantic_ai", "pydantic-ai", "PydanticAI (pydantic-ai-slim)")
from pydantic_ai import (ApprovalRequired, DeferredToolRequests, DeferredToolResults, RunContext, Tool,  # noqa: E402
                         ToolApproved, ToolReturn)
from pydantic_ai.exceptions import ToolFailedError  # noqa: E402
from pydantic_ai.messages import ToolReturnPart  # noqa: E402
from pydantic_core import SchemaValidator, core_schema  # noqa: E402

# A tool call's arguments as the tool reads them (integrations.script_arguments). Tool.from_schema
# validates nothing, so a list or a number reached `run(**args)` as a TypeError out of the agent
# run. JSON text is parsed by pydantic-core, whose depth limit makes too deep a text a retry.
_ARGUMENTS = SchemaValidator(core_schema.no_info_plain_validator_function(script_arguments))


def as_pydantic_ai_tool(tool) -> Tool:
    """The tool as a pydantic_ai.Tool for `Agent(tools=[...])`: its name, the system prompt as
    description, the `{"commands": ...}` schema. A failed script is a failed tool return
    (outcome "failed", as ToolFailed makes it: the model sees it as an error, and no retry is
    used up); a paused one a deferred call (see the module's description)."""
    return _pydantic_ai_tool(script_entry(tool, "as_pydantic_ai_tools"))


def as_pydantic_ai_tools(tool) -> list:
    """Every tool `tool` offers: with DiscoveryMode.WITH_DISCOVERY, also `<name>_discover`."""
    return [_pydantic_ai_tool(entry) for entry in script_entries(tool)]


def decided(requests: DeferredToolRequests, decisions: dict) -> DeferredToolResults:
    """The DeferredToolResults that resume paused scripts: `decisions` maps each deferred call's
    tool_call_id to "allow", Deny(reason) (the paused call fails with status 126, as a hook's
    refusal, and the script goes on) or new parameters for the paused call (a dict). The call
    is approved, and its record (with the decision) goes back to the tool as its metadata,
    from which the tool resumes the run instead of starting the script again."""
    return DeferredToolResults(approvals={call_id: ToolApproved() for call_id in decisions},
                               metadata={call_id: {**requests.metadata[call_id], "decision": decision}
                                         for call_id, decision in decisions.items()})


def _pydantic_ai_tool(entry) -> Tool:
    async def run(ctx: RunContext, **args):
        record = ctx.tool_call_metadata
        if ctx.tool_call_approved and isinstance(record, dict) and "continuation" in record:
            # a paused run decided by the host (`decided`): it goes on where it stopped
            response = await asyncio.to_thread(entry.resume, record, record.get("decision", "allow"))
        else:
            response = await entry.run_async(args)
        return _tool_return(ctx, response)
    tool = Tool.from_schema(run, name=entry.name, description=entry.description, json_schema=entry.input_schema,
                            takes_ctx=True)
    tool.function_schema.validator = _ARGUMENTS
    return tool


def _tool_return(ctx: RunContext, response: ToolResponse) -> ToolReturn:
    record = run_record(response)
    if response.status == "paused":
        raise ApprovalRequired(metadata=record)
    text = text_for_model(response)
    if response.exit_code:
        # ToolFailed carries a message only; the failed part it becomes is given here with the record
        raise ToolFailedError(ToolReturnPart(ctx.tool_name or "", text, ctx.tool_call_id or "", metadata=record,
                                             outcome="failed"))
    return ToolReturn(return_value=text, metadata=record)


def from_pydantic_ai_tools(tools, name: str = "tools", description: str = "") -> ScriptedToolBuilder:
    """A ScriptedTool builder with each tool (a pydantic_ai.Tool, or a function as
    `Agent(tools=[...])` takes it) as a command: its parameters become flags, its return value
    (a ToolReturn's `return_value`) the command's output, JSON for data. An exception (ModelRetry
    and ToolFailed included) fails the command with its message. A tool that takes a RunContext
    cannot be called outside an agent run and is refused."""
    builder = ScriptedTool.builder(name)
    if description:
        builder.short_description(description)
    for item in tools:
        pydantic_tool = item if isinstance(item, Tool) else Tool(item)
        if pydantic_tool.takes_ctx:
            raise ValueError(f"tool {pydantic_tool.name!r} takes a RunContext, which only an agent run gives")
        definition = pydantic_tool.tool_def
        tool_def = ToolDef(definition.name, definition.description or "",
                           inline_refs(definition.parameters_json_schema))
        builder.async_tool(tool_def, _callback(pydantic_tool))
    return builder


def _callback(pydantic_tool: Tool):
    schema = pydantic_tool.function_schema

    async def call(args: ToolArgs):
        with one_line_validation_errors():
            params = schema.validator.validate_python(args.params)
        # no RunContext outside an agent run (a tool that takes one was refused)
        value = await schema.call(params, None)  # type: ignore[arg-type]
        return plain_value(value.return_value if isinstance(value, ToolReturn) else value)
    return call

