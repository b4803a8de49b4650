"""Names a package exports from its modules, each module imported when one of its names is
first used (PEP 562): a process pays for what it uses. `from scripted_kernel import
ScriptedTool` loads neither BashTool's files and snapshots nor the tool set; `import
scripted_kernel` alone loads nothing but this."""
from __future__ import annotations

import importlib
import sys
from typing import Callable


def lazy_exports(package: str, homes: dict[str, str]) -> tuple[Callable, Callable]:
    """The package's module-level (__getattr__, __dir__) for `homes`: each exported name and
    the module (relative to the package) that defines it."""
    def __getattr__(name: str):
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home, package), name)
        setattr(sys.modules[package], name, value)       # found directly from now on
        return value

    def __dir__() -> list:
        return sorted({*vars(sys.modules[package]), *homes})
    return __getattr__, __dir__
