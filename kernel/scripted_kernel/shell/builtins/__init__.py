"""Shell builtins: commands that read or change the interpreter's own state.

Each builtin is `fn(sh, argv) -> status`, registered with `@builtin(name, ...)`. Text commands
that only read stdin and write stdout live in `scripted_kernel.commands` instead.
"""
from __future__ import annotations

from typing import Callable

BUILTINS: dict[str, Callable] = {}


def builtin(*names: str):
    def register(fn):
        for name in names:
            BUILTINS[name] = fn
        return fn
    return register


def load() -> dict[str, Callable]:
    from . import core, files, options, printf, read, test, timeout, variables  # noqa: F401  (they register)
    return BUILTINS
