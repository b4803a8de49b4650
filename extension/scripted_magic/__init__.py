"""IPython extension: `%load_ext scripted_magic`, then `%%scripted` cells and `%scripted` lines.

Define tools with `@tool` in Python cells; run bash scripts against them in `%%scripted` cells.
"""
from .magics import ScriptError, ScriptResult, run_script


def load_ipython_extension(ipython):
    from .magics import load
    load(ipython)


def session_tools(shell=None):
    """The session's ScriptedTool (what the `tools` variable names when it is free)."""
    from IPython import get_ipython
    from .magics import shell_state
    return shell_state(shell or get_ipython()).tools.current()


__all__ = ["ScriptError", "ScriptResult", "load_ipython_extension", "run_script", "session_tools"]
