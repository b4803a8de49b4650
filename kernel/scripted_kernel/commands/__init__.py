"""Commands a script can run besides the shell builtins: text commands, file commands.

Each command is a function `fn(ctx, argv) -> status` registered with `@command(...)`
(`registry.py`): it sees the script through a `CommandContext` (shell/context.py) — standard
streams, files, exported variables, budget — and never the interpreter. Importing this package
imports every module in it, so that each registers its commands.
"""
from __future__ import annotations

import importlib
import pkgutil

from .registry import COMMANDS, FILE_COMMANDS, USAGE, command


def _load():
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("_") and info.name != "registry":
            importlib.import_module(f"{__name__}.{info.name}")


_load()

__all__ = ["COMMANDS", "FILE_COMMANDS", "USAGE", "command"]
