"""scripted_kernel: bash scripts against tools registered in Python."""
from .shell import CancelToken, ExecutionLimits
from .tools import ScriptedTool, ToolArgs, ToolDef, ToolResponse, ToolStatus, tool

__version__ = "0.1.0"
__all__ = ["CancelToken", "ExecutionLimits", "ScriptedTool", "ToolArgs", "ToolDef", "ToolResponse",
           "ToolStatus", "__version__", "tool"]
