"""Commands a script can run besides the shell builtins: text commands, file commands.

Each command is a function `fn(ctx, argv) -> status` registered with `@command(...)`
(`registry.py`): it sees the script through a `CommandContext` (shell/context.py) — standard
streams, files, exported variables, budget — and never the interpreter. Importing this package
reads the names of every command from the sources and imports none of their modules: a
command's module is imported when a script first runs it.
"""
from __future__ import annotations

from .registry import COMMANDS, FILE_COMMANDS, command, implementation, index, usage_of, usage_text

index()

__all__ = ["COMMANDS", "FILE_COMMANDS", "command", "implementation", "usage_of", "usage_text"]
