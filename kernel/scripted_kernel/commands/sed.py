"""sed: the stream editor (POSIX plus the GNU extensions scripts use), on standard input.

Commands that touch files or run processes (`r R w W e`, `s///w`, `s///e`) are refused.
"""
from __future__ import annotations

import re as _re
from dataclasses import dataclass
from typing import Any, Callable, Optional

import regex

from ..fs import FsError, access
from ._options import Inputs, UsageError, parse
from ..base.limits import Budget
from ..base.regexes import RegexError, RegexTimeout, matcher, risky, substitute, translate
from .registry import Usage, command



class SedError(Exception):
    pass


@dataclass(slots=True)
class Address:
    kind: str                 # line, last, regex, step, zero, plus, tilde
    value: Any = None         # a line number or count, or (regex) the compiled pattern
    step: int = 0


@dataclass(slots=True)
class Command:
    name: str
    addr1: Optional[Address] = None
    addr2: Optional[Address] = None
    negate: bool = False
    arg: object = None
    block_end: int = -1       # for '{': the index after its '}'
    in_range: bool = False
    range_end: int = 0        # for numeric/+N second addresses: the last line of the range
    range_spent: bool = False  # ranges from 0 or a line number open only once


@dataclass(slots=True)
class Substitution:
    rx: Any                   # the compiled pattern; None: the last one used
    replace: Callable         # match → its replacement text
    global_: bool
    occurrence: int
    print_: bool
    write_to: str = ""        # s///w FILE


# ---------------------------------------------------------------- parsing

class _ScriptParser:
    def __init__(self, text: str, extended: bool):
        self.text = text
        self.i = 0
        self.extended = extended
        self.commands: list[Command] = []
        self.files: list = []          # (command letter, file name) of r R w W s///w
        self.blocks: list[int] = []

    def error(self, message: str) -> SedError:
        return SedError(f"sed: -e expression #1, char {self.i}: {message}")

    def peek(self) -> str:
        return self.text[self.i] if self.i < len(self.text) else ""

    def skip_space(self, newlines: bool = True):
        while self.i < len(self.text) and (self.text[self.i] in " \t" or
                                           (newlines and self.text[self.i] in "\n;")):
            self.i += 1

    def parse(self) -> list[Command]:
        while True:
            self.skip_space()
            if self.i >= len(self.text):
                break
            if self.peek() == "#":
                end = self.text.find("\n", self.i)
                self.i = len(self.text) if end < 0 else end
                continue
            self.parse_command()
        if self.blocks:
            raise self.error("unmatched `{'")
        return self.commands

    def parse_regex(self, delim: str) -> str:
        out = []
        while True:
            if self.i >= len(self.text):
                raise self.error("unterminated address regex")
            c = self.text[self.i]
            if c == "\\" and self.i + 1 < len(self.text):
                nxt = self.text[self.i + 1]
                if nxt == delim:
                    out.append(delim if delim not in ".*[]^$\\+?(){}|" else "\\" + delim)
                elif nxt == "n":
                    out.append("\n")
                else:
                    out.append(c + nxt)
                self.i += 2
                continue
            if c == "[":                       # a bracket expression may hold the delimiter
                end = self._bracket_end(self.i)
                out.append(self.text[self.i:end])
                self.i = end
                continue
            if c == delim:
                self.i += 1
                return "".join(out)
            out.append(c)
            self.i += 1

    def _bracket_end(self, i: int) -> int:
        j = i + 1
        if j < len(self.text) and self.text[j] == "^":
            j += 1
        if j < len(self.text) and self.text[j] == "]":
            j += 1
        while j < len(self.text):
            if self.text.startswith("[:", j) or self.text.startswith("[=", j) or self.text.startswith("[.", j):
                close = self.text.find(self.text[j + 1] + "]", j + 2)
                if close > 0:
                    j = close + 2
                    continue
            if self.text[j] == "]":
                return j + 1
            if self.text[j] == "\n":
                break
            j += 1
        return i + 1

    def parse_address(self) -> Optional[Address]:
        c = self.peek()
        if (c.isascii() and c.isdigit()):
            m = _re.compile(r"(\d+)(?:~(\d+))?").match(self.text, self.i)
            assert m is not None            # c is a digit
            self.i = m.end()
            if m.group(2) is not None:
                return Address("step", int(m.group(1)), int(m.group(2)))
            n = int(m.group(1))
            return Address("zero" if n == 0 else "line", n)
        if c == "$":
            self.i += 1
            return Address("last")
        if c == "/" or c == "\\":
            if c == "\\":
                self.i += 1
                delim = self.peek()
            else:
                delim = "/"
            self.i += 1
            pattern = self.parse_regex(delim)
            flags = ""
            while self.peek() in ("I", "M"):
                flags += self.peek()
                self.i += 1
            return Address("regex", self.compile(pattern, flags))
        return None

    def compile(self, pattern: str, flags: str):
        if pattern == "":
            return None                         # the last regex used
        return _compile(pattern, self.extended, "I" in flags or "i" in flags,
                        "M" in flags or "m" in flags)

    def parse_command(self):
        cmd = Command("")
        cmd.addr1 = self.parse_address()
        if cmd.addr1 is not None and self.peek() == ",":
            self.i += 1
            self.skip_space(newlines=False)
            if self.peek() in ("+", "~"):
                kind = "plus" if self.peek() == "+" else "tilde"
                self.i += 1
                m = _re.compile(r"\d+").match(self.text, self.i)
                if not m:
                    raise self.error("expected number after + or ~")
                self.i = m.end()
                cmd.addr2 = Address(kind, int(m.group()))
            else:
                cmd.addr2 = self.parse_address()
                if cmd.addr2 is None:
                    raise self.error("unexpected `,'")
        if cmd.addr1 is not None and cmd.addr1.kind == "zero" and (
                cmd.addr2 is None or cmd.addr2.kind != "regex"):
            raise self.error("invalid usage of line address 0")
        self.skip_space(newlines=False)
        while self.peek() == "!":
            cmd.negate = True
            self.i += 1
            self.skip_space(newlines=False)
        name = self.peek()
        if not name:
            raise self.error("missing command")
        self.i += 1
        cmd.name = name
        if name in "qQ" and cmd.addr2 is not None:
            raise self.error("command only uses one address")
        if name == "{":
            self.blocks.append(len(self.commands))
            self.commands.append(cmd)
            return
        if name == "}":
            if cmd.addr1 is not None:
                raise self.error("} doesn't want any addresses")
            if not self.blocks:
                raise self.error("unexpected `}'")
            start = self.blocks.pop()
            self.commands[start].block_end = len(self.commands)
            self.end_of_command()
            return
        if name in "aic":
            cmd.arg = self.parse_text()
        elif name in ":btT":
            self.skip_space(newlines=False)
            m = _re.compile(r"[^;\n}]*" if name != ":" else r"[^;\n]*").match(self.text, self.i)
            assert m is not None            # it matches the empty string
            label = m.group().strip()
            self.i = m.end()
            if name == ":" and not label:
                raise self.error('":" lacks a label')
            cmd.arg = label
            if name != ":":
                self.end_of_command()
        elif name == "s":
            cmd.arg = self.parse_substitution()
        elif name == "y":
            cmd.arg = self.parse_transliteration()
        elif name in "qQlL":
            self.skip_space(newlines=False)
            m = _re.compile(r"\d*").match(self.text, self.i)
            assert m is not None            # it matches the empty string
            self.i = m.end()
            cmd.arg = int(m.group()) if m.group() else None
            self.end_of_command()
        elif name in "=dDgGhHnNpPxz":
            self.end_of_command()
        elif name in "rRwW":
            cmd.arg = self.parse_filename(name)
        elif name == "e":
            raise SedError(f"sed: -e expression #1, char {self.i}: `e' runs commands, which are disabled")
        else:
            raise self.error(f"unknown command: `{name}'")
        self.commands.append(cmd)

    def end_of_command(self):
        self.skip_space(newlines=False)
        c = self.peek()
        if c in ("", "\n", ";"):
            if c:
                self.i += 1
            return
        if c == "}" or c == "#":
            return
        raise self.error("extra characters after command")

    def parse_text(self) -> str:
        """a/i/c text: `a\\` + newline + lines, or GNU's one-line `a text`."""
        t = self.text
        if t.startswith("\\", self.i):
            self.i += 1
            if t.startswith("\n", self.i):
                self.i += 1
        else:
            self.skip_space(newlines=False)
        out = []
        while self.i < len(t):
            c = t[self.i]
            if c == "\\" and self.i + 1 < len(t):
                out.append(t[self.i + 1])
                self.i += 2
                continue
            if c == "\n":
                self.i += 1
                break
            out.append(c)
            self.i += 1
        return "".join(out)

    def parse_substitution(self) -> Substitution:
        delim = self.peek()
        if not delim or delim in "\n\\":
            raise self.error("unterminated `s' command")
        self.i += 1
        pattern = self.parse_regex(delim)
        replacement = self.parse_replacement(delim)
        global_, occurrence, print_, flags = False, 1, False, ""
        while self.i < len(self.text):
            c = self.text[self.i]
            if c == "g":
                global_ = True
            elif c == "p":
                print_ = True
            elif (c.isascii() and c.isdigit()):
                m = _re.compile(r"\d+").match(self.text, self.i)
                assert m is not None        # c is a digit
                occurrence = int(m.group())
                if occurrence == 0:
                    raise self.error("number option to `s' command may not be zero")
                self.i = m.end()
                continue
            elif c in "iImM":
                flags += c
            elif c == "e":
                raise SedError(f"sed: -e expression #1, char {self.i + 1}: the `e' flag of `s' runs "
                               f"commands, which are disabled")
            elif c == "w":
                self.i += 1
                write_to = self.parse_filename("w")
                return Substitution(self.compile(pattern, flags), _replacer(replacement), global_,
                                    occurrence, print_, write_to)
            else:
                break
            self.i += 1
        self.end_of_command()
        return Substitution(self.compile(pattern, flags), _replacer(replacement), global_, occurrence, print_)

    def parse_filename(self, name: str) -> str:
        """The file of r, R, w, W and s///w: the rest of the line."""
        self.skip_space(newlines=False)
        end = self.text.find("\n", self.i)
        end = len(self.text) if end < 0 else end
        filename = self.text[self.i:end]
        self.i = min(end + 1, len(self.text))
        if not filename:
            raise self.error("missing filename in r/R/w/W commands")
        self.files.append((name, filename))
        return filename

    def parse_replacement(self, delim: str) -> list:
        """Pieces: str, int (group), or a case marker ('L','U','E','l','u')."""
        pieces: list = []
        lit: list = []
        t = self.text
        while True:
            if self.i >= len(t):
                raise self.error("unterminated `s' command")
            c = t[self.i]
            if c == delim:
                self.i += 1
                break
            if c == "\\" and self.i + 1 < len(t):
                nxt = t[self.i + 1]
                self.i += 2
                if (nxt.isascii() and nxt.isdigit()):
                    _flush(lit, pieces)
                    pieces.append(int(nxt))
                elif nxt in "LUElu":
                    _flush(lit, pieces)
                    pieces.append(("case", nxt))
                elif nxt == "n":
                    lit.append("\n")
                elif nxt == "t":
                    lit.append("\t")
                elif nxt == "&":
                    lit.append("&")
                else:
                    lit.append(nxt)
                continue
            if c == "&":
                _flush(lit, pieces)
                pieces.append(0)
                self.i += 1
                continue
            lit.append(c)
            self.i += 1
        _flush(lit, pieces)
        return pieces

    def parse_transliteration(self) -> dict:
        delim = self.peek()
        self.i += 1
        source = self._y_part(delim)
        target = self._y_part(delim)
        if len(source) != len(target):
            raise self.error("strings for `y' command are different lengths")
        self.end_of_command()
        return dict(zip(source, target))

    def _y_part(self, delim: str) -> str:
        out = []
        t = self.text
        while True:
            if self.i >= len(t):
                raise self.error("unterminated `y' command")
            c = t[self.i]
            if c == "\\" and self.i + 1 < len(t):
                nxt = t[self.i + 1]
                out.append({"n": "\n", "t": "\t", "\\": "\\"}.get(nxt, nxt))
                self.i += 2
                continue
            if c == delim:
                self.i += 1
                return "".join(out)
            out.append(c)
            self.i += 1


def _flush(lit: list, pieces: list):
    if lit:
        pieces.append("".join(lit))
        lit.clear()


def _compile(pattern: str, extended: bool, ignore_case: bool, multiline: bool):
    try:
        rx = translate(pattern, extended)
    except RegexError as e:
        raise SedError(f"sed: -e expression #1, char 0: {e}") from None
    if not multiline:
        # ^ and $ anchor at the pattern space's ends; \` and \' always do
        rx = _re.sub(r"(?<!\\)\$", r"\\Z", rx) if "$" in rx else rx
        rx = _re.sub(r"(?<![\\\[])\^", r"\\A", rx) if "^" in rx else rx
    flags = regex.V0 | regex.POSIX | regex.DOTALL
    if ignore_case:
        flags |= regex.IGNORECASE
    if multiline:
        flags |= regex.MULTILINE
    try:
        return regex.compile(rx, flags)
    except regex.error as e:
        raise SedError(f"sed: -e expression #1, char 0: {e}") from None


# ---------------------------------------------------------------- running

class _Quit(Exception):
    def __init__(self, status: int, autoprint: bool, space: str, by_q: bool = False):
        self.status = status
        self.autoprint = autoprint
        self.space = space          # the pattern space when it quit
        self.by_q = by_q


class _Runner:
    def __init__(self, commands: list, lines: list, quiet: bool, sep: str, out: list, timeout: float,
                 files: _SedFiles, budget: Budget, missing_newline: bool = False):
        self.commands = commands
        self.budget = budget
        self.lines = lines
        self.missing_newline = missing_newline   # the last input line has no terminator
        self.unterminated_at = -1                # len(out) after printing that line's pattern space
        self.quiet = quiet
        self.sep = sep
        self.out = out
        self.timeout = timeout
        self.finders: dict = {}
        self.index = 0           # next input line
        self.lineno = 0
        self.hold = ""
        # Whether the pattern (hold) space's text had a line terminator: only the last line can
        # lack one, and h/H/g/G/x carry the state along as GNU sed does.
        self.chomped = True
        self.hold_chomped = True
        self.last_rx: Any = None     # the last pattern used, for an empty one (s//x/)
        self.append_queue: list[str] = []
        self.files = files        # r R w W targets
        self.substituted = False
        self.labels = {c.arg: k for k, c in enumerate(commands) if c.name == ":"}
        self.steps = 0
        for c in commands:
            if c.name in "btT" and c.arg and c.arg not in self.labels:
                raise SedError(f"sed: can't find label for jump to `{c.arg}'")

    def read_line(self) -> Optional[str]:
        if self.index >= len(self.lines):
            return None
        line = self.lines[self.index]
        self.index += 1
        self.lineno += 1
        self.chomped = not (self.missing_newline and self.index >= len(self.lines))
        return line

    def is_last(self) -> bool:
        return self.index >= len(self.lines)

    def _next_line(self) -> str:
        """The next input line, for n and N (which first check that there is one)."""
        line = self.read_line()
        assert line is not None
        return line

    def search(self, rx, text: str):
        if rx is None:
            rx = self.last_rx
            if rx is None:
                raise SedError("sed: no previous regular expression")
        else:
            self.last_rx = rx
        return self.finder(rx)(text)

    def finder(self, rx):
        """rx.search, paying for the timeout only where the pattern can backtrack badly."""
        find = self.finders.get(rx)
        if find is None:
            find = self.finders[rx] = matcher(rx, self.timeout)
        return find

    def matches(self, addr: Address, space: str) -> bool:
        kind = addr.kind
        if kind == "line":
            return self.lineno == addr.value
        if kind == "last":
            return self.is_last()
        if kind == "regex":
            return self.search(addr.value, space) is not None
        if kind == "step":
            first, step = addr.value, addr.step
            return self.lineno == first if step <= 0 else (self.lineno >= first and (self.lineno - first) % step == 0)
        return False

    def selected(self, cmd: Command, space: str) -> bool:
        if cmd.addr1 is None:
            return not cmd.negate
        if cmd.addr2 is None:
            return self.matches(cmd.addr1, space) != cmd.negate
        if not cmd.in_range:
            if cmd.addr1.kind == "zero":
                start, cmd.range_spent = not cmd.range_spent, True
            elif cmd.addr1.kind == "line" and cmd.addr2.kind in ("line", "plus"):
                # N,M and N,+K open once on any line of their span, even if n, N or c went
                # past line N before this command saw it
                first = cmd.addr1.value
                last = cmd.addr2.value if cmd.addr2.kind == "line" else first + cmd.addr2.value
                start = not cmd.range_spent and first <= self.lineno <= max(first, last)
                cmd.range_spent = cmd.range_spent or start
            else:
                start = self.matches(cmd.addr1, space)
            if not start:
                return cmd.negate
            a2 = cmd.addr2
            if a2.kind == "line":
                cmd.in_range = a2.value > self.lineno
                cmd.range_end = a2.value
            elif a2.kind == "plus":
                cmd.range_end = self.lineno + a2.value
                cmd.in_range = a2.value > 0
            elif a2.kind == "tilde":
                cmd.in_range = a2.value > 0 and self.lineno % a2.value != 0
            elif a2.kind == "last":
                cmd.in_range = not self.is_last()
            else:          # regex: checked from the next line (or this one after 0,)
                cmd.in_range = not (cmd.addr1.kind == "zero" and self.matches(a2, space))
            return not cmd.negate
        a2 = cmd.addr2
        if a2.kind == "line":
            if self.lineno >= cmd.range_end:
                cmd.in_range = False
            if self.lineno > cmd.range_end:      # n or N read past the end line
                return cmd.negate
        elif a2.kind == "plus":
            if self.lineno >= cmd.range_end:     # the last line, or the first one past it
                cmd.in_range = False
        elif a2.kind == "tilde":
            if self.lineno % a2.value == 0:
                cmd.in_range = False
        elif a2.kind == "last":
            if self.is_last():
                cmd.in_range = False
        elif self.matches(a2, space):
            cmd.in_range = False
        return not cmd.negate

    def emit(self, text: str, whole_line: bool = True):
        """Print text and a line terminator. GNU sed leaves the terminator off the last input
        line's pattern space if that line had none and nothing is printed after it."""
        self.out.append(text + self.sep)
        if whole_line and not self.chomped:
            self.unterminated_at = len(self.out)

    def flush_appends(self):
        if self.append_queue:
            for text in self.append_queue:
                self.out.append(text + "\n")
            self.append_queue.clear()

    def run(self) -> int:
        space = self.read_line()
        while space is not None:
            try:
                space, deleted = self.cycle(space)
            except _Quit as q:
                if q.by_q:           # GNU's q ends the output's last line, a missing newline too
                    self.unterminated_at = -1
                if q.autoprint and not self.quiet:
                    self.emit(q.space, whole_line=not q.by_q)
                self.flush_appends()
                return q.status
            if not deleted and not self.quiet:
                self.emit(space)
            self.flush_appends()
            space = self.read_line()
        return 0

    def cycle(self, space: str):
        """Run the script once over `space`: (space, deleted). A deleted cycle ends without
        the automatic print; D restarts the script inside this call."""
        self.substituted = False
        k = 0
        commands = self.commands
        n = len(commands)
        limit = self.budget.string_limit()
        while k < n:
            cmd = commands[k]
            k += 1
            self.steps += 1
            if not self.steps & 1023:       # a branch back (`:a; ...; ba`) can loop for ever
                self.budget.check_clock()
            if len(space) > limit:          # and `s/.*/&&/` in such a loop doubles the space
                self.budget.check_length(len(space), "sed")
            if cmd.name == ":":
                continue
            if not self.selected(cmd, space):
                if cmd.name == "{":
                    k = cmd.block_end
                continue
            name = cmd.name
            if name == "{":
                continue
            if name == "s":
                space = self.substitute(cmd.arg, space)
            elif name == "p":
                self.emit(space)
            elif name == "d":
                return space, True
            elif name == "D":
                if "\n" not in space:
                    return space, True
                space = space.split("\n", 1)[1]
                self.flush_appends()
                k = 0
                self.substituted = False
                continue
            elif name == "n":
                if self.is_last():
                    raise _Quit(0, True, space)
                if not self.quiet:
                    self.emit(space)
                self.flush_appends()
                space = self._next_line()
            elif name == "N":
                if self.is_last():
                    raise _Quit(0, True, space)
                self.flush_appends()
                space = space + "\n" + self._next_line()
            elif name == "P":
                first, newline, _ = space.partition("\n")
                self.emit(first, whole_line=not newline)
            elif name == "h":
                self.hold, self.hold_chomped = space, self.chomped
            elif name == "H":
                self.hold, self.hold_chomped = self.hold + "\n" + space, self.chomped
            elif name == "g":
                space, self.chomped = self.hold, self.hold_chomped
            elif name == "G":
                space, self.chomped = space + "\n" + self.hold, self.hold_chomped
            elif name == "x":
                space, self.hold = self.hold, space
                self.chomped, self.hold_chomped = self.hold_chomped, self.chomped
            elif name == "z":
                space = ""
            elif name == "=":
                self.out.append(f"{self.lineno}\n")
            elif name == "l":
                self.out.append(_unambiguous(space, 70 if cmd.arg is None else cmd.arg))
            elif name == "a":
                self.append_queue.append(cmd.arg)
            elif name in "rR":
                text = self.files.read_all(cmd.arg) if name == "r" else self.files.read_line(cmd.arg)
                if text:
                    self.append_queue.append(text[:-1] if text.endswith("\n") else text)
            elif name in "wW":
                self.files.write(cmd.arg, (space if name == "w" else space.split("\n", 1)[0]) + "\n")
            elif name == "i":
                self.out.append(cmd.arg + "\n")
            elif name == "c":
                if cmd.addr2 is None or not cmd.in_range or cmd.negate:
                    self.out.append(cmd.arg + "\n")
                return space, True
            elif name == "y":
                space = "".join(cmd.arg.get(ch, ch) for ch in space)
            elif name in "qQ":
                raise _Quit(cmd.arg or 0, name == "q", space, by_q=True)
            elif name == "b":
                k = self.labels[cmd.arg] if cmd.arg else n
            elif name == "t":
                if self.substituted:
                    self.substituted = False
                    k = self.labels[cmd.arg] if cmd.arg else n
            elif name == "T":
                if not self.substituted:
                    k = self.labels[cmd.arg] if cmd.arg else n
                else:
                    self.substituted = False
        return space, False

    def substitute(self, sub: Substitution, space: str) -> str:
        rx = sub.rx
        if rx is None:
            rx = self.last_rx
            if rx is None:
                raise SedError("sed: no previous regular expression")
        else:
            self.last_rx = rx
        try:
            result, count = substitute(rx, space, sub.replace, sub.occurrence, sub.global_,
                                       self.timeout if risky(rx) else None)
        except TimeoutError:
            raise RegexTimeout() from None
        if not count:
            return space
        self.substituted = True
        if sub.print_:
            self.emit(result)
        if sub.write_to:
            self.files.write(sub.write_to, result + "\n")
        return result


def _replacer(pieces: list):
    """The function giving an s command's replacement for a match."""
    if all(type(p) is str for p in pieces):
        literal = "".join(pieces)
        return lambda m: literal
    return lambda m: _expand(pieces, m)


def _expand(pieces: list, m) -> str:
    out = []
    mode = None          # 'U' or 'L' until \E
    one = None           # 'u' or 'l' for the next character
    for p in pieces:
        if type(p) is tuple:
            letter = p[1]
            if letter in "UL":
                mode, one = letter, None
            elif letter == "E":
                mode, one = None, None
            else:
                one = letter
            continue
        text = p if type(p) is str else (m.group(p) or "")
        if mode == "U":
            text = text.upper()
        elif mode == "L":
            text = text.lower()
        if one and text:
            text = (text[0].upper() if one == "u" else text[0].lower()) + text[1:]
            one = None
        out.append(text)
    return "".join(out)


def _unambiguous(space: str, width: int) -> str:
    escapes = {"\\": "\\\\", "\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r",
               "\t": "\\t", "\v": "\\v"}
    pieces = []
    for ch in space:
        if ch in escapes:
            pieces.append(escapes[ch])
        elif ord(ch) < 32 or ord(ch) == 127:
            pieces.append("\\%03o" % ord(ch))
        elif ord(ch) > 127:
            pieces.extend("\\%03o" % b for b in ch.encode("utf-8", "surrogateescape"))
        else:
            pieces.append(ch)
    lines, cur = [], ""
    for p in pieces:
        if width > 1 and len(cur) + len(p) > width - 1:
            lines.append(cur + "\\")
            cur = ""
        cur += p
    lines.append(cur + "$")
    return "\n".join(lines) + "\n"


USAGE = Usage("[OPTION]... {script-only-if-no-other-script} [input-file]...",
              "Stream editor: filter and transform text.", (
    "-n, --quiet, --silent      suppress automatic printing of pattern space",
    "-e script, --expression=script  add the script to the commands to be executed",
    "-f script-file, --file=script-file  add the contents of script-file",
    "-i, --in-place             edit files in place",
    "-l N, --line-length=N      the line-wrap length for the `l' command",
    "    --posix                disable all GNU extensions",
    "-E, -r, --regexp-extended  use extended regular expressions",
    "-s, --separate             consider files as separate",
    "    --sandbox              disable e/r/w commands",
    "-u, --unbuffered           flush the output buffers more often",
    "-z, --null-data            separate lines by NUL characters"))


@command("sed", usage=USAGE)
def run(ctx, argv):
    # -i[SUFFIX] / --in-place[=SUFFIX]: the backup suffix is accepted (no backup is kept)
    argv = [a if not (a.startswith("-i") and len(a) > 2 and a[2] not in "nrEsuz") and
            not a.startswith("--in-place=") else "-i" for a in argv]

    opts, ops = parse("sed", argv, short_flags="nrEsuzi", short_values="ef",
                      long_flags={"quiet": "n", "silent": "n", "regexp-extended": "E",
                                  "separate": "s", "unbuffered": "u", "null-data": "z",
                                  "in-place": "i", "posix": "posix", "debug": "debug",
                                  "sandbox": "sandbox"},
                      long_values={"expression": "e", "file": "f", "line-length": "l"})
    scripts = opts.all("e")
    if opts.has("f"):
        try:
            scripts.append(access.read_text(ctx, opts.get("f")).removesuffix("\n"))
        except FsError as e:
            raise UsageError(f"sed: couldn't open file {opts.get('f')}: {e.strerror}", 1) from None
    if not scripts:
        if not ops:
            raise UsageError("Usage: sed [OPTION]... {script-only-if-no-other-script} [input-file]...", 1)
        scripts, ops = [ops[0]], ops[1:]
    text = "\n".join(scripts)
    quiet = opts.has("n") or text.startswith("#n\n") or text == "#n"
    sep = "\0" if opts.has("z") else "\n"
    try:                     # a script error (a jump to a missing label too) before any input
        parser = _ScriptParser(text, opts.has("E") or opts.has("r"))
        commands = parser.parse()
    except SedError as e:
        raise UsageError(str(e), 1) from None
    files = _SedFiles(ctx, parser.files)
    run_on = lambda data: _run_commands(ctx, commands, data, quiet, sep, files)
    inputs = Inputs(ctx, "sed", ops, 2, message="sed: can't read {name}: {reason}")
    if opts.has("i") and ops:
        for name, data in inputs:
            try:
                writer = access.writer(ctx, name)
            except FsError as e:
                raise UsageError(f"sed: couldn't open temporary file {name}: {e.strerror}", 4) from None
            writer(run_on(data))
        return inputs.status
    if opts.has("s"):
        for _, data in inputs:
            ctx.out(run_on(data))
    else:
        ctx.out(run_on(inputs.text()))
    return inputs.status


class _SedFiles:
    """The files of r, R, w, W and s///w, through the filesystem layer. GNU sed creates (and
    empties) every w file before reading input; /dev/stdout goes with sed's own output."""

    def __init__(self, ctx, files: list):
        self.ctx = ctx
        self.out: list = []           # the output of the stream being edited (for /dev/stdout)
        self.writers: dict = {}
        self.lines: dict = {}
        for kind, name in files:
            if kind in ("w", "W") and name not in self.writers:
                try:
                    self.writers[name] = (lambda text: self.out.append(text)) if name == "/dev/stdout" \
                        else access.writer(ctx, name)
                except FsError as e:
                    raise UsageError(f"sed: couldn't open file {name}: {e.strerror}", 4) from None

    def write(self, name: str, text: str):
        self.writers[name](text)

    def read_all(self, name: str) -> str:
        try:
            return access.read_text(self.ctx, name)
        except FsError:
            return ""                 # GNU sed: a file r cannot read is silently skipped

    def read_line(self, name: str) -> str:
        if name not in self.lines:
            self.lines[name] = iter(self.read_all(name).splitlines(keepends=True))
        return next(self.lines[name], "")


def _run_commands(ctx, commands, data: str, quiet: bool, sep: str, files: _SedFiles) -> str:
    """The output of a parsed sed script over one input stream."""
    lines = data.split(sep)
    missing_newline = lines[-1] != ""
    if not missing_newline:
        lines.pop()
    out: list[str] = []
    try:                          # a jump to a missing label fails before any input is read
        runner = _Runner(commands, lines, quiet, sep, out, getattr(ctx.limits, "regex_timeout_seconds", 2.0),
                         files, ctx.budget, missing_newline)
    except SedError as e:
        raise UsageError(str(e), 1) from None
    files.out = out
    try:
        status = runner.run()
    except SedError as e:
        ctx.out("".join(out))
        raise UsageError(str(e), 4) from None
    except RegexTimeout:
        ctx.out("".join(out))
        raise UsageError("sed: regular expression too complex", 4) from None
    if runner.unterminated_at == len(out):
        out[-1] = out[-1][:-1]
    if status:
        ctx.out("".join(out))
        raise _ExitWith(status)
    return "".join(out)


class _ExitWith(UsageError):
    """`q N` / `Q N`: the output so far is written, the command exits N."""

    def __init__(self, status: int):
        super().__init__("", status)
