"""scripted_kernel: bash scripts against tools registered in Python."""
from .shell import CancelToken, ExecutionLimits
from .tools import ScriptedTool, ToolResponse

__version__ = "0.1.0"
__all__ = ["CancelToken", "ExecutionLimits", "ScriptedTool", "ToolResponse", "__version__"]
