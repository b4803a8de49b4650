"""scripted_kernel: bash scripts against tools registered in Python."""
from .shell import CancelToken, ExecutionLimits
from .fs import MemoryFs, NoFs
from .tools import (BashTool, Deny, DiscoveryMode, ScriptedTool, ScriptingToolSet, ToolArgs, ToolCall,
                    ToolCallResult, ToolDef, ToolResponse, ToolStatus, tool)

__version__ = "0.1.0"
__all__ = ["BashTool", "Deny", "MemoryFs", "NoFs", "CancelToken", "DiscoveryMode", "ScriptingToolSet",
           "ExecutionLimits", "ScriptedTool", "ToolArgs", "ToolCall", "ToolCallResult", "ToolDef", "ToolResponse",
           "ToolStatus", "__version__", "tool"]
