"""Tests at run time: `[[ ]]`'s binary operators and `=~` (BASH_REMATCH), and the patterns of a
`case` item. The compile stage (compile.py) turns each test into a closure that calls these."""
from __future__ import annotations

from typing import Callable, Final

from ..base import patterns
from ..base.errors import FatalError
from ..base.regexes import RegexError, RegexTimeout, search
from .builtins.test import binary_test


def regex_test(sh, value: str, pattern: str) -> bool:
    """[[ value =~ pattern ]], setting BASH_REMATCH."""
    try:
        rx = patterns.compile_ere(pattern, sh.shopts["nocasematch"])
        m = search(rx, value)
    except (RegexError, RegexTimeout):
        raise CondError("=~: invalid or too complex regular expression") from None
    if m is None:
        sh.set_array("BASH_REMATCH", [])
        return False
    groups = [m.group(0)] + [g if g is not None else "" for g in m.groups()]
    sh.set_array("BASH_REMATCH", [(None, g, False) for g in groups])
    return True


def cond_binary_test(sh, op: str, lhs: str, rhs: str) -> bool:
    """[[ lhs op rhs ]] for the operators other than the pattern ones."""
    try:
        return binary_test(sh, op, lhs, rhs, arith=True)
    except ValueError as err:
        raise CondError(str(err)) from None
    except FatalError as fatal:     # bash: the test fails (status 1), the line goes on
        if fatal.exits:
            raise
        raise CondError(f"[[: {fatal.message}", status=1) from None


class CondError(Exception):
    """A [[ ]] that cannot be evaluated: status 2, or 1 for an arithmetic error in -eq & co."""

    def __init__(self, message: str, status: int = 2):
        super().__init__(message)
        self.status = status


def any_matches(sh, tests: list, value: str, nocase: bool) -> bool:
    """Whether a case item's patterns match, tried in order (each a pattern_test)."""
    for test in tests:
        if isinstance(test, WrittenPattern):      # (most: tested without a call through Python)
            if test.matches(value, nocase):
                return True
        elif test(sh, value, nocase):
            return True
    return False


def pattern_test(pattern: Callable) -> Callable:
    """fn(sh, value, nocase) -> bool: whether value matches a pattern (a `case` item's, the
    right of `[[ == ]]`) that `pattern(sh)` makes."""
    return lambda sh, value, nocase: patterns.glob_match(pattern(sh), value, nocase)


_NOT_STARS_ONLY: Final = patterns.NOT_STARS_ONLY      # (compiled: read once, not per character)


class WrittenPattern:
    """pattern_test for a pattern written out (no expansion in its word), as fn(sh, value,
    nocase). A text of literal characters with at most one `*` (`ITEM-*`, `*.json`, `*`), the
    patterns scripts are full of, is tested here, without a call to glob_match, which would
    look at the text again at every test. (An object rather than a closure: one allocation,
    not two, for every pattern of every `case` compiled.)"""
    __slots__ = ("text", "glob", "exact", "first", "last", "least")

    def __init__(self, text: str):
        stars = 0
        for c in text:
            if c == "*":
                stars += 1
            elif c in _NOT_STARS_ONLY:
                stars = 2
                break
        self.text = text
        self.glob = stars > 1               # anything else: glob_match
        self.exact = stars == 0
        first, _, last = text.partition("*")
        self.first, self.last = first, last
        self.least = len(first) + len(last)

    def matches(self, value: str, nocase: bool) -> bool:
        if self.glob or nocase:
            return patterns.glob_match(self.text, value, nocase)
        if self.exact:
            return value == self.text
        return len(value) >= self.least and value.startswith(self.first) and value.endswith(self.last)

    def __call__(self, sh, value: str, nocase: bool) -> bool:
        return self.matches(value, nocase)
