"""Exceptions of the shell: syntax errors, fatal errors, limits and control flow.

Control flow (break, continue, return, exit) travels as exceptions because it crosses any number
of compiled closures; none of these ever reaches a caller of `Interpreter.run`.
"""
from __future__ import annotations


class ShellSyntaxError(Exception):
    """A script that does not parse. `line` and `col` are 1-based."""

    def __init__(self, message: str, line: int, col: int, source_line: str = "", eof: bool = False):
        super().__init__(message)
        self.message = message
        self.line = line
        self.col = col
        self.source_line = source_line
        self.eof = eof          # the script ended too early (an interactive front-end may wait)
        # the top-level commands before the error (bash runs them first)
        self.partial: object = None
        self.keeps_status = False   # bash exits with the last status, not 2 ([[ ]] errors)

    def render(self, prefix: str = "bash") -> str:
        """As bash reports it: one line for an unexpected end of the text, else the message
        (with the column) and the line's text."""
        if self.eof:
            return f"{prefix}: line {self.line}: {self.message}\n"
        text = f"{prefix}: line {self.line}: {self.message} (column {self.col})\n"
        if self.source_line:
            text += f"{prefix}: line {self.line}: `{self.source_line}'\n"
        return text


class FatalError(Exception):
    """An error that abandons the rest of the current top-level command (the line being run),
    as bash does for a failed expansion (bad substitution, arithmetic errors in words) or a
    readonly assignment; a subshell ends with status 1. With `exits`, the whole shell exits
    (status 127: an unbound variable under `set -u`, `${x:?message}`)."""

    def __init__(self, message: str, status: int = 1, exits: bool = False):
        super().__init__(message)
        self.message = message
        self.status = status
        self.exits = exits
        self.ends_errexit_shell = True   # False for $((...)) in a word: bash goes on even under set -e


class ReadonlyVariable(FatalError):
    """An assignment to a readonly variable. Fatal as other assignments' errors are, except in
    an arithmetic command (`(( r++ ))`, `for ((...))`, `let`), which bash fails with status 1
    and goes on."""


def unbound(name: str) -> FatalError:
    return FatalError(f"{name}: unbound variable", status=127, exits=True)


class ArithError(Exception):
    """An arithmetic error; the caller decides whether it is fatal (words) or a status 1 (`(( ))`)."""

    def __init__(self, expr: str, message: str, token: str = ""):
        super().__init__(message)
        self.expr = expr
        self.message = message
        self.token = token

    def render(self) -> str:
        return f"{self.expr}: {self.message} (error token is \"{self.token}\")"


class LimitExceeded(Exception):
    """An `ExecutionLimits` bound was hit: the whole execution stops, output so far is kept."""

    def __init__(self, limit: str, message: str):
        super().__init__(message)
        self.limit = limit
        self.message = message


class Cancelled(Exception):
    """The front-end asked the execution to stop (interrupt, timeout)."""

    def __init__(self, message: str = "execution cancelled", status: int = 130):
        super().__init__(message)
        self.message = message
        self.status = status


class BreakLoop(Exception):
    __slots__ = ("levels",)

    def __init__(self, levels: int):
        self.levels = levels


class ContinueLoop(Exception):
    __slots__ = ("levels",)

    def __init__(self, levels: int):
        self.levels = levels


class ReturnSignal(Exception):
    __slots__ = ("status",)

    def __init__(self, status: int):
        self.status = status


class ExitSignal(Exception):
    __slots__ = ("status",)

    def __init__(self, status: int):
        self.status = status


class ErrexitSignal(Exception):
    """`set -e` ends the shell: raised where a command failed outside a tested context."""
    __slots__ = ("status",)

    def __init__(self, status: int):
        self.status = status


# ---------------------------------------------------------------- diagnostics of any size

# What a diagnostic quotes of an operand: PATH_MAX characters. A real tool never meets a longer
# one (exec refuses an argument over 128 KiB, and no path over PATH_MAX exists), but here an
# operand may be as long as a string (64 MiB in a notebook): forty `ln -s` of an 8 MB target,
# each refused, wrote 320 MB of messages that each quoted the whole target.
QUOTED_CHARS = 4096
_REASON_CHARS = 200         # what bounded() keeps of a long line's end: the reason is there


def shown(operand: str) -> str:
    """An operand as a diagnostic quotes it: whole up to QUOTED_CHARS characters, else its
    first QUOTED_CHARS and `...`."""
    return operand if len(operand) <= QUOTED_CHARS else operand[:QUOTED_CHARS] + "..."


def bounded(message: str) -> str:
    """A diagnostic written with its operands in it, bounded as if they had been shown(): a
    line longer than 2 * QUOTED_CHARS keeps its first QUOTED_CHARS characters and its last
    _REASON_CHARS, `...` between."""
    if len(message) <= 2 * QUOTED_CHARS:
        return message
    return "\n".join(line if len(line) <= 2 * QUOTED_CHARS
                     else line[:QUOTED_CHARS] + "..." + line[-_REASON_CHARS:] for line in message.split("\n"))
