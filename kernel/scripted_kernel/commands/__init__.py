"""Commands a script can run besides the shell builtins: text commands reading stdin.

Each command is one module exposing `NAMES` and `run(sh, argv) -> status`; it reads `sh.stdin`,
writes through `sh.out` / `sh.err`, and may read the script's exported variables with
`sh.exported_env()`. `COMMANDS` maps every name to its function.
"""
from __future__ import annotations

import importlib
import pkgutil
from typing import Callable

COMMANDS: dict[str, Callable] = {}
FILE_COMMANDS: set[str] = set()     # commands of modules with NEEDS_FILES: absent in logic mode


def _load():
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        for name in getattr(module, "NAMES", ()):
            COMMANDS[name] = module.run
            if getattr(module, "NEEDS_FILES", False):
                FILE_COMMANDS.add(name)


_load()
