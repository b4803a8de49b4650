"""sed's script language read into commands: addresses (a line, `$`, a regex with its I and M
flags, first~step, 0,/re/, addr,+N and addr,~N), negation, blocks and labels, each command with
its argument, and an s command's pattern compiled as a POSIX regex and its replacement as a
function of the match. A bad script is GNU sed's message; the commands that run processes (e,
s///e) are refused here.
"""
from __future__ import annotations

import re as _re
from dataclasses import dataclass
from typing import Any, Callable, Optional

import regex

from ...base.regexes import RegexError, translate


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



class ScriptParser:
    """A sed script (the -e and -f texts joined by newlines) read into its commands."""

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



def _replacer(pieces: list):
    """The function giving an s command's replacement for a match."""
    if all(type(p) is str for p in pieces):
        literal = "".join(pieces)
        return lambda m: literal
    return lambda m: expand_replacement(pieces, m)


def expand_replacement(pieces: list, m) -> str:
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
