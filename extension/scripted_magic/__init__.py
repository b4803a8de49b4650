"""IPython extension: `%load_ext scripted_magic`, then `%%scripted` cells and `%scripted` lines.

Define tools with `@tool` in Python cells; run bash scripts against them in `%%scripted` cells.
"""
from .magics import ScriptError, ScriptResult, run_script


def load_ipython_extension(ipython):
    from .magics import load
    load(ipython)


__all__ = ["ScriptError", "ScriptResult", "load_ipython_extension", "run_script"]
