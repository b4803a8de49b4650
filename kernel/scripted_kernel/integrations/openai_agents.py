"""The OpenAI Agents SDK (openai-agents): a ScriptedTool, BashTool or ScriptingToolSet as a
FunctionTool.

    agent = Agent(name="analyst", instructions="...", tools=[as_function_tool(api)])
"""
from __future__ import annotations

from . import require, script_entries, script_entry, text_for_model

require("agents", "openai-agents", "The OpenAI Agents SDK (openai-agents)")
from agents import FunctionTool  # noqa: E402


def as_function_tool(tool) -> FunctionTool:
    """The tool as a FunctionTool: its name, the system prompt as description, the
    `{"commands": ...}` schema (strict). The SDK has no error flag for a function's output, so
    a failed script is told by the text alone (it ends with `[exit code N]`)."""
    return _function_tool(script_entry(tool, "as_function_tools"))


def as_function_tools(tool) -> list:
    """Every tool `tool` offers: with DiscoveryMode.WITH_DISCOVERY, also `<name>_discover`."""
    return [_function_tool(entry) for entry in script_entries(tool)]


def _function_tool(entry) -> FunctionTool:
    async def invoke(context, arguments: str) -> str:
        # JSON text as the model wrote it: read with bounds on its size and nesting
        return text_for_model(await entry.run_async(arguments if isinstance(arguments, str) else None))
    return FunctionTool(name=entry.name, description=entry.description, params_json_schema=entry.input_schema,
                        on_invoke_tool=invoke, strict_json_schema=True)
