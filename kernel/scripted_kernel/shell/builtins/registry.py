"""The table of builtins, filled by `@builtin` as each builtin module is imported."""
from __future__ import annotations

from typing import Callable

BUILTINS: dict[str, Callable] = {}


def builtin(*names: str):
    def register(fn):
        for name in names:
            BUILTINS[name] = fn
        return fn
    return register
