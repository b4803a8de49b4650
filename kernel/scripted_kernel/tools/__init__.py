"""The tool layer: Python callables registered as commands of a scripted tool."""
from .scripted_tool import ScriptedTool, ScriptedToolBuilder, ToolResponse

__all__ = ["ScriptedTool", "ScriptedToolBuilder", "ToolResponse"]
