"""PydanticAI (pydantic-ai-slim): a ScriptedTool, BashTool or ScriptingToolSet as a
pydantic_ai.Tool, and PydanticAI tools (or plain functions) as the commands of a ScriptedTool.

    agent = Agent(model, tools=[as_pydantic_ai_tool(api)])
    tool = from_pydantic_ai_tools([get_weather], name="weather").build()
"""
from __future__ import annotations

from . import (inline_refs, one_line_validation_errors, plain_value, require, script_arguments, script_entries,
               script_entry, text_for_model)
from ..tools.definitions import ToolArgs, ToolDef
from ..tools.scripted_tool import ScriptedTool, ScriptedToolBuilder, ToolResponse

require("pydantic_ai", "pydantic-ai", "PydanticAI (pydantic-ai-slim)")
from pydantic_ai import Tool, ToolReturn  # noqa: E402
from pydantic_ai.exceptions import ToolFailed  # noqa: E402
from pydantic_core import SchemaValidator, core_schema  # noqa: E402

# A tool call's arguments as the tool reads them (integrations.script_arguments). Tool.from_schema
# validates nothing, so a list or a number reached `run(**args)` as a TypeError out of the agent
# run. JSON text is parsed by pydantic-core, whose depth limit makes too deep a text a retry.
_ARGUMENTS = SchemaValidator(core_schema.no_info_plain_validator_function(script_arguments))


def as_pydantic_ai_tool(tool) -> Tool:
    """The tool as a pydantic_ai.Tool for `Agent(tools=[...])`: its name, the system prompt as
    description, the `{"commands": ...}` schema. A failed script is a failed tool return
    (ToolFailed: the model sees it as an error, and no retry is used up)."""
    return _pydantic_ai_tool(script_entry(tool, "as_pydantic_ai_tools"))


def as_pydantic_ai_tools(tool) -> list:
    """Every tool `tool` offers: with DiscoveryMode.WITH_DISCOVERY, also `<name>_discover`."""
    return [_pydantic_ai_tool(entry) for entry in script_entries(tool)]


def _pydantic_ai_tool(entry) -> Tool:
    async def run(**args) -> str:
        return _content(await entry.run_async(args))
    tool = Tool.from_schema(run, name=entry.name, description=entry.description, json_schema=entry.input_schema)
    tool.function_schema.validator = _ARGUMENTS
    return tool


def _content(response: ToolResponse) -> str:
    text = text_for_model(response)
    if response.exit_code:
        raise ToolFailed(text)
    return text


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

