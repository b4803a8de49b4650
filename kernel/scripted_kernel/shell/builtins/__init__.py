"""Shell builtins: commands that read or change the interpreter's own state.

Each builtin is `fn(sh, argv) -> status`, registered with `@builtin(name, ...)`
(`registry.py`). Builtins are part of the language: unlike the commands under
`scripted_kernel.commands`, they receive the shell itself. Importing this package imports
every builtin module, so that each registers its builtins.
"""
from __future__ import annotations

from typing import Callable

from . import core, files, jobs, options, printf, read, test, timeout, variables  # noqa: F401  (they register)
from .registry import BUILTINS


def load() -> dict[str, Callable]:
    return BUILTINS
