"""scripted_kernel: bash scripts against tools registered in Python."""
from __future__ import annotations

from typing import TYPE_CHECKING

from .base.exports import lazy_exports

__version__ = "0.1.0"

_HOMES = {
    "CancelToken": ".base.limits", "ExecutionLimits": ".base.limits",
    "MemoryFs": ".fs", "NoFs": ".fs",
    "BashTool": ".tools.bash_tool",
    "ContinuationError": ".tools.journal",
    "Deny": ".tools.hooks", "Pause": ".tools.hooks", "ToolCall": ".tools.hooks", "ToolCallResult": ".tools.hooks",
    "DiscoveryMode": ".tools.toolset", "ScriptingToolSet": ".tools.toolset",
    "ScriptedTool": ".tools.scripted_tool", "ToolResponse": ".tools.scripted_tool",
    "ToolStatus": ".tools.scripted_tool",
    "ToolArgs": ".tools.definitions", "ToolDef": ".tools.definitions", "tool": ".tools.definitions",
}
__all__ = sorted([*_HOMES, "__version__"])
__getattr__, __dir__ = lazy_exports(__name__, _HOMES)

if TYPE_CHECKING:        # (for type checkers; `X as X`: exported)
    from .base.limits import CancelToken as CancelToken, ExecutionLimits as ExecutionLimits
    from .fs import MemoryFs as MemoryFs, NoFs as NoFs
    from .tools.bash_tool import BashTool as BashTool
    from .tools.definitions import ToolArgs as ToolArgs, ToolDef as ToolDef, tool as tool
    from .tools.hooks import Deny as Deny, Pause as Pause, ToolCall as ToolCall, ToolCallResult as ToolCallResult
    from .tools.journal import ContinuationError as ContinuationError
    from .tools.scripted_tool import (
        ScriptedTool as ScriptedTool, ToolResponse as ToolResponse, ToolStatus as ToolStatus)
    from .tools.toolset import DiscoveryMode as DiscoveryMode, ScriptingToolSet as ScriptingToolSet
