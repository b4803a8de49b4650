"""The table of commands, filled by the `@command` decorator as each module is imported.

A command module defines `def name(ctx, argv) -> int` under `@command(...)`; the decorator
gives every command the same edges: `--help` prints its usage as GNU tools print theirs,
`--version` its version, and a `UsageError` raised anywhere inside becomes its message on
stderr and its status. Commands that need files (`needs_files=True`) are left out of logic mode.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Callable, Union

from ..shell.context import CommandContext
from ._options import UsageError

CommandFn = Callable[[CommandContext, list], int]

COMMANDS: dict[str, CommandFn] = {}
FILE_COMMANDS: set[str] = set()        # absent in logic mode (no filesystem)
USAGE: dict[str, "Usage"] = {}


@dataclass(frozen=True, slots=True)
class Usage:
    """What `NAME --help` prints: a synopsis, a summary line, and option lines."""
    synopsis: str
    summary: str
    options: tuple = ()

    def text(self, name: str) -> str:
        lines = [f"Usage: {name} {self.synopsis}".rstrip(), self.summary, ""]
        lines += [f"  {line}" for line in self.options]
        lines.append("  --help     display this help and exit")
        lines.append("  --version  output version information and exit")
        return "\n".join(lines) + "\n"


def command(*names: str, usage: Union[Usage, dict, None] = None, needs_files: bool = False,
            own_version: bool = False):
    """Register the decorated `fn(ctx, argv)` under `names`. `usage`: one Usage, or a dict of
    them by name. `own_version`: the command answers --version itself (jq, curl)."""
    answered = ("--help",) if own_version else ("--help", "--version")
    def register(fn: CommandFn) -> CommandFn:
        @functools.wraps(fn)
        def run(ctx: CommandContext, argv: list) -> int:
            if len(argv) == 2 and argv[1] in answered:
                return _help_or_version(ctx, argv)
            try:
                return fn(ctx, argv)
            except UsageError as e:
                if e.message:
                    ctx.err(e.message + "\n")
                return e.status
        for name in names:
            COMMANDS[name] = run
            if usage is not None:
                USAGE[name] = usage[name] if isinstance(usage, dict) else usage
            if needs_files:
                FILE_COMMANDS.add(name)
        return run
    return register


def _help_or_version(ctx: CommandContext, argv: list) -> int:
    name = argv[0].rsplit("/", 1)[-1]
    if argv[1] == "--version":
        ctx.out(f"{name} (scripted_kernel)\n")
        return 0
    usage = USAGE.get(name)
    ctx.out(usage.text(name) if usage is not None else f"Usage: {name} [OPTION]... [FILE]...\n")
    return 0


__all__ = ["COMMANDS", "FILE_COMMANDS", "USAGE", "Usage", "UsageError", "command"]
