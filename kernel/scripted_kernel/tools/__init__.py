"""The tool layer: Python callables registered as commands of a scripted tool."""
from .bash_tool import BashTool, BashToolBuilder
from .definitions import REGISTRY, ToolArgs, ToolDef, tool
from .hooks import Deny, Pause, ToolCall, ToolCallResult
from .journal import ContinuationError
from .scripted_tool import ScriptedTool, ScriptedToolBuilder, ToolResponse, ToolStatus, TraceEntry
from .toolset import DiscoveryMode, DiscoverTool, ScriptingToolSet

__all__ = ["BashTool", "BashToolBuilder", "ContinuationError", "Deny", "DiscoverTool", "DiscoveryMode", "Pause",
           "REGISTRY", "ScriptingToolSet", "ScriptedTool", "ScriptedToolBuilder", "ToolArgs", "ToolCall",
           "ToolCallResult", "ToolDef", "ToolResponse", "ToolStatus", "TraceEntry", "tool"]
