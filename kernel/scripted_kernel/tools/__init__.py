"""The tool layer: Python callables registered as commands of a scripted tool."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..base.exports import lazy_exports

_HOMES = {
    "BashTool": ".bash_tool", "BashToolBuilder": ".bash_tool",
    "REGISTRY": ".definitions", "ToolArgs": ".definitions", "ToolDef": ".definitions", "tool": ".definitions",
    "Deny": ".hooks", "Pause": ".hooks", "ToolCall": ".hooks", "ToolCallResult": ".hooks",
    "ContinuationError": ".journal",
    "ScriptedTool": ".scripted_tool", "ScriptedToolBuilder": ".scripted_tool", "ToolResponse": ".scripted_tool",
    "ToolStatus": ".scripted_tool", "TraceEntry": ".scripted_tool",
    "DiscoveryMode": ".toolset", "DiscoverTool": ".toolset", "ScriptingToolSet": ".toolset",
}
__all__ = sorted(_HOMES)
__getattr__, __dir__ = lazy_exports(__name__, _HOMES)

if TYPE_CHECKING:        # (for type checkers; `X as X`: exported)
    from .bash_tool import BashTool as BashTool, BashToolBuilder as BashToolBuilder
    from .definitions import REGISTRY as REGISTRY, ToolArgs as ToolArgs, ToolDef as ToolDef, tool as tool
    from .hooks import Deny as Deny, Pause as Pause, ToolCall as ToolCall, ToolCallResult as ToolCallResult
    from .journal import ContinuationError as ContinuationError
    from .scripted_tool import (
        ScriptedTool as ScriptedTool, ScriptedToolBuilder as ScriptedToolBuilder,
        ToolResponse as ToolResponse, ToolStatus as ToolStatus, TraceEntry as TraceEntry)
    from .toolset import (
        DiscoveryMode as DiscoveryMode, DiscoverTool as DiscoverTool, ScriptingToolSet as ScriptingToolSet)
