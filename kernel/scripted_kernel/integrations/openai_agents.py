"""The OpenAI Agents SDK (openai-agents): a ScriptedTool, BashTool or ScriptingToolSet as a
FunctionTool.

    agent = Agent(name="analyst", instructions="...", tools=[as_function_tool(api, on_response=keep)])

A function's output is the text the model reads, and the SDK keeps nothing beside it, so the
run itself (the ToolResponse: its tool-call log in `trace`, its status, exit code and error)
goes to the optional `on_response(response)` callback, on success and on failure. Nor can a
call be deferred once it runs (the SDK's needs_approval asks before): a run a before_tool hook
paused is answered at once (the model reads the output so far and `[exit code 148]`), and
`on_response` receives it with status "paused", the pending call and the continuation, which
the host resumes once it has decided (`tool.resume(response.continuation, decision)`).
"""
from __future__ import annotations

from typing import Callable, Optional

from . import require, script_entries, script_entry, text_for_model
from ..tools.scripted_tool import ToolResponse

require("agents", "openai-agents", "The OpenAI Agents SDK (openai-agents)")
from agents import FunctionTool  # noqa: E402


OnResponse = Optional[Callable[[ToolResponse], None]]


def as_function_tool(tool, on_response: OnResponse = None) -> FunctionTool:
    """The tool as a FunctionTool: its name, the system prompt as description, the
    `{"commands": ...}` schema (strict). The SDK has no error flag for a function's output, so
    a failed script is told by the text alone (it ends with `[exit code N]`). `on_response`,
    when given, is called with each call's ToolResponse before the model gets its text."""
    return _function_tool(script_entry(tool, "as_function_tools"), on_response)


def as_function_tools(tool, on_response: OnResponse = None) -> list:
    """Every tool `tool` offers: with DiscoveryMode.WITH_DISCOVERY, also `<name>_discover`."""
    return [_function_tool(entry, on_response) for entry in script_entries(tool)]


def _function_tool(entry, on_response: OnResponse) -> FunctionTool:
    async def invoke(context, arguments: str) -> str:
        # JSON text as the model wrote it: read with bounds on its size and nesting
        response = await entry.run_async(arguments if isinstance(arguments, str) else None)
        if on_response is not None:
            on_response(response)
        return text_for_model(response)
    return FunctionTool(name=entry.name, description=entry.description, params_json_schema=entry.input_schema,
                        on_invoke_tool=invoke, strict_json_schema=True)
