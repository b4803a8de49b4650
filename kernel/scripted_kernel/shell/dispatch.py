"""Finding what a command name means, in bash's order, in one place.

A simple command's name is looked up as: a shell function, a builtin, a registered command
(text commands, file commands, tools; a script file earlier on $PATH shadows one), a script
file in the filesystem (by path, or on $PATH), and failing all of these `command not found`
with the nearest known name. Registered commands are called with a `CommandContext`, never the
shell. Programs started by other programs (`xargs`, `find -exec`, `env CMD`, `command NAME`)
skip shell functions, as exec does.
"""
from __future__ import annotations

from typing import Callable, Optional

from ..fs import access
from .builtins.files import find_program, run_path, shadowing_program
from .context import CommandContext
from .runtime import InputStream
from .variables import TempScope
from .state import EXPORT, Var

NOT_FOUND = 127
NOT_ALLOWED = 126


def dispatch(sh, name: str, argv: list) -> int:
    """Run `argv` (argv[0] == name) as bash runs a simple command's name."""
    func = sh.functions.get(name)
    if func is not None:
        return sh.run_function(func, argv)
    builtin = sh.builtins.get(name)
    if builtin is not None:
        return builtin(sh, argv)
    command = sh.commands.get(name)
    if command is not None:
        return call_command(sh, name, command, argv)
    return command_not_found(sh, name, argv)


def call_command(sh, name: str, command: Callable, argv: list) -> int:
    """A registered command, unless a script file of that name comes first on $PATH."""
    if sh.fs.enabled:
        program = shadowing_program(sh, name)
        if program is not None:
            return run_path(sh, program, argv)
    return command(CommandContext(sh, run_program), argv)


def run_as_program(sh, name: str, argv: list) -> Optional[int]:
    """`argv` as a program (no shell function): None when there is none of that name."""
    builtin = sh.builtins.get(name)
    if builtin is not None:
        return builtin(sh, argv)
    command = sh.commands.get(name)
    if command is not None:
        return call_command(sh, name, command, argv)
    found = find_program(sh, name)
    return None if found is None else run_path(sh, found, argv)


def run_program(sh, argv: list, stdin: Optional[str], env: Optional[dict],
                caller_stdin: InputStream) -> Optional[int]:
    """CommandContext.run: argv[0] as a program, with `stdin` (None: the caller's) and `env`
    (None: the shell's exported variables) for its standard input and environment."""
    saved_stdin = sh.stdin
    sh.stdin = caller_stdin if stdin is None else InputStream(stdin)
    if env is not None:
        sh.scopes.append(_environment_scope(sh, env))
    try:
        return run_as_program(sh, argv[0], argv)
    finally:
        if env is not None:
            sh.scopes.pop()
        sh.stdin = saved_stdin


def _environment_scope(sh, env: dict) -> TempScope:
    """A temporary scope in which exactly `env` is exported."""
    scope = TempScope()
    for name in sh.exported_env():
        if name not in env:
            scope[name] = Var(None, 0)
    for name, value in env.items():
        scope[name] = Var(value, EXPORT)
    return scope


def command_not_found(sh, name: str, argv: Optional[list] = None) -> int:
    """A name that is no function, builtin or command: a script file to run if the filesystem
    has one (by path, or on $PATH), else `command not found` (127)."""
    if sh.fs.enabled:
        found = name if "/" in name else find_program(sh, name)
        if found is not None:
            return run_path(sh, found, argv or [name])
    elif "/" in name:
        sh.error(f"{name}: {access.PROGRAMS_DISABLED}")
        return NOT_ALLOWED
    hint = suggest(name, list(sh.commands) + list(sh.builtins) + list(sh.functions))
    sh.error(f"{name}: command not found" + (f" (did you mean '{hint}'?)" if hint else ""))
    return NOT_FOUND


def suggest(name: str, candidates: list) -> Optional[str]:
    """The known name nearest to a mistyped one, if one is near enough."""
    import difflib          # (here: a suggestion is for a mistake, most runs make none)
    matches = difflib.get_close_matches(name, candidates, n=1, cutoff=0.75)
    return matches[0] if matches else None
