"""GNU-style option parsing shared by the text commands, and their common failures."""
from __future__ import annotations

from typing import Optional

from ..fs import access
from ..base.errors import QUOTED_CHARS, bounded, shown  # noqa: F401  (the commands' own names for them)


class UsageError(Exception):
    """A bad option or operand: the command prints the message (bounded: see QUOTED_CHARS)
    and exits with `status`."""

    def __init__(self, message: str, status: int = 1):
        message = bounded(message)
        super().__init__(message)
        self.message = message
        self.status = status


class Options:
    """Parsed options: `flags` (letters and long names seen, in order) and `values`."""

    def __init__(self):
        self.flags: list[str] = []
        self.values: dict[str, list[str]] = {}

    def has(self, name: str) -> bool:
        return name in self.flags

    def get(self, name: str, default=None):
        vals = self.values.get(name)
        return vals[-1] if vals else default

    def all(self, name: str) -> list[str]:
        return self.values.get(name, [])


def bad_usage(cmd: str, problem: str, status: int = 1) -> UsageError:
    """GNU's two-line complaint about a command line."""
    return UsageError(f"{cmd}: {problem}\nTry '{cmd} --help' for more information.", status)


def parse(cmd: str, argv: list, short_flags: str = "", short_values: str = "",
          long_flags: Optional[dict] = None, long_values: Optional[dict] = None,
          status: int = 1, numeric_short: Optional[str] = None) -> tuple[Options, list[str]]:
    """Parse argv[1:] like getopt_long with permutation: options may follow operands.

    short_flags: letters without argument; short_values: letters taking one;
    long_flags / long_values: map a long name to the short letter (or to itself);
    numeric_short: a letter that `-5` abbreviates (head -5 is head -n 5)."""
    args = argv[1:]
    for a in args:
        if a and a[0] == "-" and a != "-":
            break
    else:
        return Options(), args        # most command lines: operands only (`tr a-z A-Z`)
    long_flags = long_flags or {}
    long_values = long_values or {}
    opts = Options()
    operands: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        i += 1
        if a == "--":
            operands.extend(args[i:])
            break
        if a.startswith("--") and len(a) > 2:
            name, eq, value = a[2:].partition("=")
            matches = [n for n in list(long_flags) + list(long_values) if n.startswith(name)]
            exact = [n for n in matches if n == name]
            if exact:
                matches = exact
            if not matches:
                raise bad_usage(cmd, f"unrecognized option '{a}'", status)
            if len(set(matches)) > 1:
                raise bad_usage(cmd, f"option '{a}' is ambiguous", status)
            full = matches[0]
            if full in long_values:
                if not eq:
                    if i >= len(args):
                        raise bad_usage(cmd, f"option '--{full}' requires an argument", status)
                    value = args[i]
                    i += 1
                key = long_values[full]
                opts.values.setdefault(key, []).append(value)
                opts.flags.append(key)
            else:
                if eq:
                    raise bad_usage(cmd, f"option '--{full}' doesn't allow an argument", status)
                opts.flags.append(long_flags[full])
            continue
        if a.startswith("-") and len(a) > 1:
            if numeric_short and (a[1:].isascii() and a[1:].isdigit()):
                opts.values.setdefault(numeric_short, []).append(a[1:])
                opts.flags.append(numeric_short)
                continue
            j = 1
            while j < len(a):
                c = a[j]
                if c in short_values:
                    value = a[j + 1:]
                    if not value:
                        if i >= len(args):
                            raise bad_usage(cmd, f"option requires an argument -- '{c}'", status)
                        value = args[i]
                        i += 1
                    opts.values.setdefault(c, []).append(value)
                    opts.flags.append(c)
                    break
                if c in short_flags:
                    opts.flags.append(c)
                    j += 1
                    continue
                raise bad_usage(cmd, f"invalid option -- '{c}'", status)
            continue
        operands.append(a)
    return opts, operands


def integer(text: str, complaint: str, status: int = 1) -> int:
    """A numeric option's value; anything else is `complaint` (GNU's wording) with the value."""
    try:
        return int(text)
    except ValueError:
        raise UsageError(complaint.format(text), status) from None


class Inputs:
    """The file operands of a text command (`-` or none: standard input), read through the
    filesystem layer. A file that cannot be read is reported in the command's own wording
    (`message`, with {cmd}, {name}, {reason}) and `status` becomes `fail_status`."""

    def __init__(self, ctx, cmd: str, operands: list, fail_status: int = 1,
                 message: str = "{cmd}: {name}: {reason}"):
        self.ctx = ctx
        self.cmd = cmd
        self.operands = operands or ["-"]
        self.fail_status = fail_status
        self.message = message
        self.status = 0

    def __iter__(self):
        """(name, text) of each operand that could be read."""
        for name, text in access.read_operands(self.ctx, self.operands, self._report):
            if text is not None:
                yield name, text

    def _report(self, name: str, reason: str):
        self.status = self.fail_status
        self.ctx.err(self.message.format(cmd=self.cmd, name=shown(name), reason=reason) + "\n")

    def text(self) -> str:
        """All operands' contents, one after the other."""
        return "".join(text for _, text in self)


def read_input(ctx, cmd: str, operands: list, fail_status: int = 1) -> tuple[str, int]:
    """(the operands' contents joined, 0 or `fail_status` if one could not be read)."""
    inputs = Inputs(ctx, cmd, operands, fail_status)
    text = inputs.text()
    return text, inputs.status


def split_lines(text: str, sep: str = "\n") -> list[str]:
    """Lines without their terminators; a missing final newline still ends a line."""
    if not text:
        return []
    lines = text.split(sep)
    if lines[-1] == "":
        lines.pop()
    return lines
