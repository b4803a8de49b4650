"""scripted_kernel: bash scripts against tools registered in Python."""
from .base.limits import CancelToken, ExecutionLimits
from .fs import MemoryFs, NoFs
from .tools import (BashTool, ContinuationError, Deny, DiscoveryMode, Pause, ScriptedTool, ScriptingToolSet,
                    ToolArgs, ToolCall, ToolCallResult, ToolDef, ToolResponse, ToolStatus, tool)

__version__ = "0.1.0"
__all__ = ["BashTool", "CancelToken", "ContinuationError", "Deny", "DiscoveryMode", "ExecutionLimits", "MemoryFs",
           "NoFs", "Pause", "ScriptedTool", "ScriptingToolSet", "ToolArgs", "ToolCall", "ToolCallResult", "ToolDef",
           "ToolResponse", "ToolStatus", "__version__", "tool"]
