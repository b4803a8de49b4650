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
        if test(sh, value, nocase):
            return True
    return False


def pattern_test(pattern: Callable) -> Callable:
    """fn(sh, value, nocase) -> bool: whether value matches a pattern (a `case` item's, the
    right of `[[ == ]]`) that `pattern(sh)` makes."""
    return lambda sh, value, nocase: patterns.glob_match(pattern(sh), value, nocase)


_NOT_STARS_ONLY: Final = patterns.NOT_STARS_ONLY      # (compiled: read once, not per character)


def written_pattern_test(text: str) -> Callable:
    """pattern_test for a pattern written out (no expansion in its word). A text of literal
    characters with at most one `*` (`ITEM-*`, `*.json`, `*`), the patterns scripts are full
    of, is tested here, without a call to glob_match, which would look at the text again at
    every test."""
    stars = 0
    for c in text:
        if c == "*":
            stars += 1
        elif c in _NOT_STARS_ONLY:
            stars = 2
            break
    if stars > 1:
        return lambda sh, value, nocase: patterns.glob_match(text, value, nocase)
    if stars == 0:
        return lambda sh, value, nocase: value == text if not nocase else patterns.glob_match(text, value, True)
    first, _, last = text.partition("*")
    if not first and not last:
        return _matches_anything
    least = len(first) + len(last)
    return lambda sh, value, nocase: (len(value) >= least and value.startswith(first) and value.endswith(last)
                                      if not nocase else patterns.glob_match(text, value, True))


def _matches_anything(sh, value: str, nocase: bool) -> bool:
    return True
