"""Tools named by configuration: `MODULE:OBJECT` or `path/to/file.py:OBJECT` specs, folders of
self-describing executables, and the `--fs` option. Shared by the command line, the MCP
service and the Jupyter kernel."""
from __future__ import annotations

import importlib
import importlib.util
import os
import sys

from ..fs import MemoryFs
from .executables import scan
from .scripted_tool import ScriptedTool


class ToolSpecError(ValueError):
    """A spec that names no ScriptedTool (the message says which and why)."""


def load_tools(spec: str) -> ScriptedTool:
    """MODULE:OBJECT or path/to/file.py:OBJECT → the ScriptedTool it names."""
    module_name, _, attr = spec.rpartition(":")
    if not module_name or not attr:
        raise ToolSpecError(f"scripted_kernel: --tools expects MODULE:OBJECT, got {spec!r}")
    try:
        module = _import(module_name)
    except (ImportError, OSError) as e:
        raise ToolSpecError(f"scripted_kernel: cannot load {module_name}: {e}") from None
    obj = getattr(module, attr, None)
    if not isinstance(obj, ScriptedTool):
        raise ToolSpecError(f"scripted_kernel: {spec} is not a ScriptedTool")
    return obj


def _import(module_name: str):
    """A module by name, or by the path of its file."""
    if not (module_name.endswith(".py") or os.sep in module_name):
        return importlib.import_module(module_name)
    name = "scripted_tools_" + os.path.splitext(os.path.basename(module_name))[0]
    loader = importlib.util.spec_from_file_location(name, module_name)
    if loader is None or loader.loader is None:
        raise ImportError(f"no Python module at {module_name}")
    module = importlib.util.module_from_spec(loader)
    # in sys.modules while it runs, as an import puts it: type hints that name the module's
    # own classes (TypedDicts, dataclasses) resolve through it
    sys.modules[name] = module
    try:
        loader.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def add_executables(tool: ScriptedTool, folder: str) -> ScriptedTool:
    """Register the self-describing executables of `folder` that `tool` has no tool for yet."""
    for tool_def, callback in scan(folder):
        if tool_def.name not in tool.tools:
            tool.register(tool_def, callback, False)
    return tool


def apply_filesystem(tool: ScriptedTool, mode: str) -> ScriptedTool:
    """--fs scratch: a fresh, empty virtual filesystem for every script; none: logic mode."""
    if mode == "scratch":
        tool.filesystem = MemoryFs
    return tool
