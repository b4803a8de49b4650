"""tar's --transform (--xform): sed's s/REGEX/REPLACEMENT/FLAGS on member names, as GNU tar 1.34
parses and applies it. Expressions are separated by `;` and applied in turn; the flags are sed's
`g`, `i`, a number (the first occurrence replaced), `x` (extended regular expressions), and the
scope letters: `r`, `s`, `h` apply the expression to member names, symbolic-link targets and
hard-link targets (all three by default), `R`, `S`, `H` exclude them.

A name is bounded at each step (MAX_NAME) and each match by the regular expressions' timeout,
so neither a replacement that multiplies a name nor a pattern that backtracks can run away.
"""
from __future__ import annotations

from ...base.regexes import DEFAULT_TIMEOUT, RegexError, compile_posix, substitute
from ..sed.parser import ScriptParser, SedError, expand_replacement

NAME, SYMLINK, HARDLINK = "r", "s", "h"
MAX_NAME = 4096          # bytes of a transformed name (PATH_MAX): longer is the member's failure


class BadExpression(Exception):
    """A --transform argument tar refuses (its message, after "tar: ")."""


class NameTooLong(Exception):
    """A transformed name past MAX_NAME."""


class RegexTooSlow(Exception):
    """A transform's match ran past the regular expressions' timeout."""


class _Expression:
    def __init__(self, rx, pieces: list, every: bool, occurrence: int, scope: set):
        self.rx, self.pieces, self.every, self.occurrence = rx, pieces, every, occurrence
        self.scope = scope

    def apply(self, name: str) -> str:
        try:
            result, _ = substitute(self.rx, name, lambda m: expand_replacement(self.pieces, m),
                                   self.occurrence, self.every, DEFAULT_TIMEOUT)
        except TimeoutError:
            raise RegexTooSlow() from None
        return result


class Transform:
    """The --transform expressions of a command line, in order (none: names are unchanged)."""

    def __init__(self, arguments: list):
        self.expressions: list[_Expression] = []
        for text in arguments:
            self.expressions += _parse(text)

    def __bool__(self) -> bool:
        return bool(self.expressions)

    def __call__(self, name: str, kind: str = NAME) -> str:
        for expression in self.expressions:
            if kind in expression.scope:
                name = expression.apply(name)
                if len(name.encode("utf-8", "surrogateescape")) > MAX_NAME:
                    raise NameTooLong()
        return name


def _parse(text: str) -> list[_Expression]:
    parser = ScriptParser(text, extended=False)
    found = []
    while parser.i < len(text):
        if text[parser.i] != "s" or parser.i + 1 >= len(text) or text[parser.i + 1] in "\\\n":
            raise BadExpression("Invalid transform expression")
        delimiter = text[parser.i + 1]
        parser.i += 2
        try:
            pattern = parser.parse_regex(delimiter)
            pieces = parser.parse_replacement(delimiter)
        except SedError:
            raise BadExpression("Invalid transform expression") from None
        found.append(_flags(parser, pattern, pieces))
    return found


def _flags(parser: ScriptParser, pattern: str, pieces: list) -> _Expression:
    """The flags after the replacement, up to `;` or the end, and the compiled expression."""
    text = parser.text
    every, occurrence, extended, ignore_case = False, 1, False, False
    scope = {NAME, SYMLINK, HARDLINK}
    while parser.i < len(text) and text[parser.i] != ";":
        c = text[parser.i]
        parser.i += 1
        if c == "g":
            every = True
        elif c == "i":
            ignore_case = True
        elif c == "x":
            extended = True
        elif c in "rsh":
            scope.add(c)
        elif c in "RSH":
            scope.discard(c.lower())
        elif c.isascii() and c.isdigit():
            start = parser.i - 1
            while parser.i < len(text) and text[parser.i].isascii() and text[parser.i].isdigit():
                parser.i += 1
            occurrence = int(text[start:parser.i])
        else:
            raise BadExpression(f"Unknown flag in transform expression: {c}")
    parser.i += 1                                   # past the `;`
    try:
        rx = compile_posix(pattern, extended, ignore_case, longest=True)
    except RegexError as e:
        raise BadExpression(f"Invalid transform expression: {e}") from None
    if any(type(p) is int and p > rx.groups for p in pieces):
        raise BadExpression("Invalid transform replacement: back reference out of range")
    return _Expression(rx, pieces, every, max(occurrence, 1), scope)
