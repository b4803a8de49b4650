"""expand and unexpand: tabs to spaces and back (GNU coreutils, which counts columns in bytes).

Both share GNU's tab stops (expand-common.c): one size (every N columns), a list of columns,
and a last `/N` (every N after the list) or `+N` (every N after the last stop)."""
from __future__ import annotations

import re

from ._bytes import INTMAX, UINTMAX, bounded_decimal, locale_quote, read_all_bytes
from ._options import UsageError, parse
from .registry import Usage, command
from ..base.limits import Budget

_EXPAND_USAGE = Usage("[OPTION]... [FILE]...", "Convert tabs in each FILE to spaces, writing to "
                      "standard output.", (
    "-i, --initial    do not convert tabs after non blanks",
    "-t, --tabs=N     have tabs N characters apart, not 8",
    "-t, --tabs=LIST  use comma separated list of tab positions"))
_UNEXPAND_USAGE = Usage("[OPTION]... [FILE]...", "Convert blanks in each FILE to tabs, writing "
                        "to standard output.", (
    "-a, --all        convert all blanks, instead of just initial blanks",
    "--first-only     convert only leading sequences of blanks (overrides -a)",
    "-t, --tabs=N     have tabs N characters apart instead of 8 (enables -a)",
    "-t, --tabs=LIST  use comma separated list of tab positions"))


class TabStops:
    """GNU's tab stops and get_next_tab_column."""

    def __init__(self, cmd: str, specs: list):
        self.cmd = cmd
        self.stops: list[int] = []
        self.extend = self.increment = 0
        for spec in specs:
            self._parse(spec)
        self.size = 0
        if not self.stops and not self.extend and not self.increment:
            self.size = 8
        elif len(self.stops) == 1 and not self.extend and not self.increment:
            self.size = self.stops[0]

    def _parse(self, spec: str):
        for item in (i for i in re.split(r"[,\s]+", spec) if i):
            m = re.fullmatch(r"([/+]?)(\d+)", item)
            if not m:
                bad = re.search(r"[^\d/+]", item)
                problem = (f"tab size contains invalid character(s): {locale_quote(item[bad.start():])}"
                           if bad else f"{locale_quote(item[0])} specifier not at start of number: "
                           f"{locale_quote(item[1:])}")
                raise UsageError(f"{self.cmd}: {problem}")
            value = bounded_decimal(m.group(2))
            if value > UINTMAX:
                raise UsageError(f"{self.cmd}: tab stop is too large {locale_quote(m.group(2))}")
            if m.group(1) == "/":
                self.extend = value
            elif m.group(1) == "+":
                self.increment = value
            else:
                if value == 0:
                    raise UsageError(f"{self.cmd}: tab size cannot be 0")
                if self.stops and value <= self.stops[-1]:
                    raise UsageError(f"{self.cmd}: tab sizes must be ascending")
                self.stops.append(value)

    def next(self, column: int, index: list):
        """(the next tab column after `column`, whether there is none); `index` is the list
        position, kept between calls of one line."""
        if self.size:
            return column + self.size - column % self.size, False
        while index[0] < len(self.stops):
            if column < self.stops[index[0]]:
                return self.stops[index[0]], False
            index[0] += 1
        if self.extend:
            return column + self.extend - column % self.extend, False
        if self.increment:
            end = self.stops[-1] if self.stops else 0
            return column + self.increment - (column - end) % self.increment, False
        return 0, True


def _tab_args(argv: list) -> list:
    """-4 and -4,8 are -t 4 and -t 4,8."""
    return [f"-t{a[1:]}" if re.fullmatch(r"-\d[\d,]*", a) else a for a in argv]


@command("expand", usage=_EXPAND_USAGE)
def expand(ctx, argv):
    opts, ops = parse("expand", _tab_args(argv), short_flags="i", short_values="t",
                      long_flags={"initial": "i"}, long_values={"tabs": "t"})
    stops = TabStops("expand", opts.all("t"))
    files, status = read_all_bytes(ctx, "expand", ops)
    data = b"".join(d for _, d in files)
    entire = not opts.has("i")
    _write_lines(ctx, (_expand_line(ctx.budget, line, stops, entire) for line in data.splitlines(keepends=True)))
    return status


def _write_lines(ctx, lines):
    """The converted lines out a MiB at a time (a tab may be millions of blanks), the clock
    read then."""
    pending, size = [], 0
    for line in lines:
        pending.append(line)
        size += len(line)
        if size >= 1 << 20:
            ctx.write_bytes(b"".join(pending))
            pending, size = [], 0
            ctx.budget.check_clock()
    ctx.write_bytes(b"".join(pending))


def _expand_line(budget: Budget, line: bytes, stops: TabStops, entire: bool) -> bytes:
    if b"\t" not in line and b"\b" not in line:
        return line
    out = bytearray()
    column, index, convert = 0, [0], True
    for k, c in enumerate(line):
        if not (k + 1) & 0xFFFF:
            budget.check_clock()
        if convert:
            if c == 9:
                target, last = stops.next(column, index)
                if last:
                    target = column + 1
                budget.check_length(len(out) + target - column, "expand")      # the line so far, too
                out += b" " * (target - column)      # the tab became blanks: still converting
                column = target
                continue
            if c == 8:
                column -= 1 if column else 0
                index[0] -= 1 if index[0] else 0
            else:
                column += 1
            convert = entire or c in (32, 9)
        out.append(c)
    return bytes(out)


@command("unexpand", usage=_UNEXPAND_USAGE)
def unexpand(ctx, argv):
    opts, ops = parse("unexpand", _tab_args(argv), short_flags="a", short_values="t",
                      long_flags={"all": "a", "first-only": "first-only"}, long_values={"tabs": "t"})
    stops = TabStops("unexpand", opts.all("t"))
    if max(stops.stops + [stops.extend, stops.increment]) > INTMAX:
        raise UsageError("unexpand: memory exhausted")     # GNU's buffer of a tab's blanks
    entire = (opts.has("a") or opts.has("t")) and not opts.has("first-only")
    files, status = read_all_bytes(ctx, "unexpand", ops)
    data = b"".join(d for _, d in files)
    _write_lines(ctx, (_unexpand_line(ctx.budget, line, stops, entire) for line in data.splitlines(keepends=True)))
    return status


def _unexpand_line(budget: Budget, line: bytes, stops: TabStops, entire: bool) -> bytes:
    """A port of GNU unexpand's loop for one line (the end of the line flushes what is pending)."""
    out = bytearray()
    convert, column, index = True, 0, [0]
    one_blank_before_stop, prev_blank = False, True
    pending = bytearray()
    for k, c in enumerate(list(line) + [-1]):
        if not (k + 1) & 0xFFFF:
            budget.check_clock()
        if convert:
            blank = c in (32, 9)
            if blank:
                target, last = stops.next(column, index)
                if last:
                    convert = False
                if convert:
                    if c == 9:
                        column = target
                        if pending:
                            pending[0] = 9
                    else:
                        column += 1
                        if not (prev_blank and column == target):
                            if column == target:
                                one_blank_before_stop = True
                            pending.append(c)
                            prev_blank = True
                            continue
                        c = 9
                        if pending:
                            pending[0] = 9
                    pending = pending[:1] if one_blank_before_stop else bytearray()
            elif c == 8:
                column -= 1 if column else 0
                index[0] -= 1 if index[0] else 0
            else:
                column += 1
            if pending:
                if len(pending) > 1 and one_blank_before_stop:
                    pending[0] = 9
                out += pending
                pending = bytearray()
                one_blank_before_stop = False
            prev_blank = blank
            convert = convert and (entire or blank)
        if c < 0:
            break
        out.append(c)
    return bytes(out)
