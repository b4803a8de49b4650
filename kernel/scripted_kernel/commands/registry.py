"""The table of commands: every name is known when the package is imported, every module is
imported when a script first runs one of its commands.

A command module defines `def name(ctx, argv) -> int` under `@command("name", ...)`; the decorator
gives every command the same edges: `--help` prints its usage (given beside the command) as GNU
tools print theirs, `--version` its version, and a `UsageError` raised anywhere inside becomes its
message on stderr and its status. Commands that need files (`needs_files=True`) are left out of
logic mode.

The names come from reading the decorators in the package's sources (index()), not from
importing them: the decorator's names, `needs_files` and `python` are literals for that reason.
Until its module is imported a command's entry in COMMANDS is a stand-in that imports it.
"""
from __future__ import annotations

import functools
import importlib
import os
import re
import sys
from dataclasses import dataclass
from typing import Callable, Optional, Union

from ..shell.context import CommandContext
from ._options import UsageError

CommandFn = Callable[[CommandContext, list], int]

COMMANDS: dict[str, CommandFn] = {}
FILE_COMMANDS: set[str] = set()        # absent in logic mode (no filesystem)
_USAGES: dict[str, "Usage"] = {}
_LOADED: dict[str, CommandFn] = {}     # the registered functions of the modules imported so far
_HOME: dict[str, str] = {}             # command name -> the module that registers it


@dataclass(frozen=True, slots=True)
class Usage:
    """What `NAME --help` prints: a synopsis, a summary line, and option lines."""
    synopsis: str
    summary: str
    options: tuple = ()

    def __post_init__(self):
        if isinstance(self.options, str):        # ("one line") without its comma
            raise TypeError("Usage options are a tuple of lines, not one string")

    def text(self, name: str) -> str:
        lines = [f"Usage: {name} {self.synopsis}".rstrip(), self.summary, ""]
        lines += [f"  {line}" for line in self.options]
        lines.append("  --help     display this help and exit")
        lines.append("  --version  output version information and exit")
        return "\n".join(lines) + "\n"


def command(*names: str, usage: Union[Usage, dict, None] = None, needs_files: bool = False,
            own_version: bool = False, python: tuple = ()):
    """Register the decorated `fn(ctx, argv)` under `names`. `usage`: one Usage, or a dict of
    them by name. `own_version`: the command answers --version itself (jq, curl). `python`: the
    oldest Python version the command works on; before it, the command is not there."""
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
        if sys.version_info < python:
            return run
        for name in names:
            _LOADED[name] = COMMANDS[name] = run
            own = usage.get(name) if isinstance(usage, dict) else usage
            if own is not None:
                _USAGES[name] = own
            if needs_files:
                FILE_COMMANDS.add(name)
        return run
    return register


def implementation(name: str) -> CommandFn:
    """The registered function of command `name`, its module imported if it was not yet."""
    fn = _LOADED.get(name)
    if fn is None:
        importlib.import_module(_HOME[name])
        fn = _LOADED[name]
    return fn


def usage_of(name: str) -> Optional[Usage]:
    """What `name --help` prints, None for a command without its own usage."""
    if name in _HOME:
        implementation(name)
    return _USAGES.get(name)


def usage_text(name: str) -> str:
    """`name --help`'s text."""
    usage = usage_of(name)
    return usage.text(name) if usage is not None else f"Usage: {name} [OPTION]... [FILE]...\n"


def _stand_in(name: str) -> CommandFn:
    loaded: Optional[CommandFn] = None

    def run(ctx: CommandContext, argv: list) -> int:
        nonlocal loaded                 # (resolved once: a tool's table keeps the stand-in)
        if loaded is None:
            loaded = implementation(name)
        return loaded(ctx, argv)
    run.__name__ = run.__qualname__ = name
    return run


# ---------------------------------------------------------------- the index

_DECORATOR = b"@command("


def index() -> None:
    """Fill COMMANDS with a stand-in for every command the package's sources register (no
    module imported), and FILE_COMMANDS with those that need files."""
    package = os.path.dirname(__file__)
    for path in _sources(package):
        with open(path, "rb") as f:
            source = f.read()
        if _DECORATOR not in source:
            continue
        module = __package__ + "." + path[len(package) + 1:-3].replace(os.sep, ".")
        module = module.removesuffix(".__init__")
        for names, needs_files, python in _decorations(source, path):
            if sys.version_info < python:
                continue
            for name in names:
                _HOME[name] = module
                COMMANDS.setdefault(name, _stand_in(name))
                if needs_files:
                    FILE_COMMANDS.add(name)


def _sources(folder: str):
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        if entry.is_dir():
            if not entry.name.startswith(("_", ".")):
                yield from _sources(entry.path)
        elif entry.name.endswith(".py") and entry.name != "registry.py":
            yield entry.path


def _decorations(source: bytes, path: str):
    """(names, needs_files, python) of each `@command(...)` in a module's source. Read with
    regular expressions, not ast: every import of the package reads them."""
    at = source.find(_DECORATOR)
    while at >= 0:
        line_start = source.rfind(b"\n", 0, at) + 1
        if source[line_start:at].strip():            # in prose, not a decorator
            at = source.find(_DECORATOR, at + 1)
            continue
        names: list[str] = []
        needs_files = False
        python: tuple[int, ...] = ()
        for argument in _arguments(source, at + 1):
            keyword = _KEYWORD.match(argument)
            if keyword is None:                       # a positional argument: a name
                literal = _NAME_LITERAL.fullmatch(argument)
                if literal is None:
                    raise _not_literal(path)
                names.append((literal.group(1) or literal.group(2) or b"").decode())
                continue
            value = argument[keyword.end():].strip()
            if keyword.group(1) == b"needs_files":
                if value not in (b"True", b"False"):
                    raise _not_literal(path)
                needs_files = value == b"True"
            elif keyword.group(1) == b"python":
                if not _VERSION.fullmatch(value):
                    raise _not_literal(path)
                python = tuple(int(part) for part in _DIGITS.findall(value))
        yield names, needs_files, python
        at = source.find(_DECORATOR, at + 1)


def _not_literal(path: str) -> ValueError:
    return ValueError(f"{path}: @command's names, needs_files and python must be literals")


def _arguments(source: bytes, start: int) -> list:
    """The top-level arguments of the call `command(...)` at `start`, as the text of each,
    read to the parenthesis closing it (strings skipped over: a comma or a bracket inside one
    is not the call's). The regular expression finds the brackets, commas and strings: a loop
    over the bytes in Python took a third of the index's time, which every import pays."""
    arguments, depth, begin = [], 0, start
    for m in _BRACKET_OR_STRING.finditer(source, start):
        c = source[m.start():m.start() + 1]
        if c in b"([{":
            depth += 1
            if depth == 1:
                begin = m.end()
        elif c in b")]}":
            depth -= 1
            if depth == 0:
                arguments.append(source[begin:m.start()].strip())
                return [argument for argument in arguments if argument]
        elif c == b"," and depth == 1:
            arguments.append(source[begin:m.start()].strip())
            begin = m.end()
    raise ValueError("@command( is not closed")


_NAME_LITERAL = re.compile(rb'"([^"\\]*)"|\'([^\'\\]*)\'')
_KEYWORD = re.compile(rb"([A-Za-z_][A-Za-z0-9_]*)\s*=(?!=)")
_VERSION = re.compile(rb"\(\s*[0-9]+\s*(?:,\s*[0-9]+\s*)*,?\s*\)")
_DIGITS = re.compile(rb"[0-9]+")
_BRACKET_OR_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|[][(){},]', re.S)


def _help_or_version(ctx: CommandContext, argv: list) -> int:
    name = argv[0].rsplit("/", 1)[-1]
    if argv[1] == "--version":
        ctx.out(f"{name} (scripted_kernel)\n")
        return 0
    ctx.out(usage_text(name))
    return 0


__all__ = ["COMMANDS", "FILE_COMMANDS", "Usage", "UsageError", "command", "implementation", "index", "usage_of",
           "usage_text"]
