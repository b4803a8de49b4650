"""Shell patterns (glob with extglob) for `case`, `[[ == ]]`, `${x#pat}`, `${x/pat/}` and
globbing, and `=~` regular expressions.

A pattern arrives as text in which a backslash quotes the next character (the expander escapes
quoted parts that way). Matching is polynomial in the text whatever the pattern (extglob.py);
literal text, `*` and fixed-width patterns without groups take faster routes to the same
answer. The loops over places in the value check the clock.
"""
from __future__ import annotations

import re

from .extglob import Matching, Pattern, Seg, compile_pattern
from .limits import check_clock, check_length, string_limit
from .regexes import compile_posix

GLOB_CHARS = frozenset("*?[\\")


def escape_glob(text: str) -> str:
    """Quote text so that it matches itself as a pattern (a quoted `-` stays literal inside
    a bracket expression too)."""
    if not any(c in text for c in "*?[]\\()|+@!-"):
        return text
    return re.sub(r"([*?\[\]\\()|+@!-])", r"\\\1", text)


def has_glob(text: str) -> bool:
    return any(c in GLOB_CHARS for c in text)


def group_end(p: str, i: int) -> int:
    """The index after the ')' closing a group whose body starts at i, or -1."""
    depth = 1
    while i < len(p):
        c = p[i]
        if c == "\\":
            i += 2
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return -1


class _Glob:
    """A pattern ready for every use: `fullmatch` (a regex for a regular pattern, see
    extglob.Pattern.regular, else the extglob matcher), the matcher for removal and
    replacement, and for a pattern of fixed width (no `*`, no group) the regex whose first
    match is bash's."""
    __slots__ = ("matcher", "fullmatch", "fixed", "_backward")
    _backward: Pattern | None

    def __init__(self, pattern: str, nocase: bool):
        self.matcher = compile_pattern(pattern, nocase)
        self.fullmatch = self.matcher.fullmatch
        self.fixed = None
        self._backward = None
        if self.matcher.regular:
            rx = _regex(self.matcher.regex_text(), self.matcher.flags)
            self.fullmatch = rx.fullmatch
            if all(type(x) is Seg for x in self.matcher.items):
                self.fixed = rx

    def backward(self):
        """The mirror-image matcher (regular patterns only)."""
        if self._backward is None:
            self._backward = self.matcher.reversed()
        return self._backward


def _regex(text: str, flags: int):
    import regex           # here: a script whose patterns need no regex never pays its import
    try:
        return regex.compile(text, flags)
    except regex.error:       # e.g. [z-a]: bash's pattern then matches nothing
        return regex.compile(r"(?!)")


_compiled: dict = {}


def _glob(pattern: str, nocase: bool = False) -> _Glob:
    key = (pattern, nocase)
    found = _compiled.get(key)
    if found is None:
        if len(_compiled) > 4096:
            _compiled.clear()
        found = _compiled[key] = _Glob(pattern, nocase)
    return found


def compile_glob(pattern: str, nocase: bool = False):
    """An object whose `fullmatch(name)` is true when the pattern matches all of name."""
    return _glob(pattern, nocase)


# what makes a pattern more than literal text and `*`
NOT_STARS_ONLY = frozenset("?[\\+@!(")
_NOT_STARS_ONLY = re.compile("[" + re.escape("".join(sorted(NOT_STARS_ONLY))) + "]")


def glob_match(pattern: str, text: str, nocase: bool = False) -> bool:
    if not nocase and _NOT_STARS_ONLY.search(pattern) is None:
        if "*" not in pattern:
            return pattern == text
        return _stars_match(pattern.split("*"), text)
    return bool(_glob(pattern, nocase).fullmatch(text))


def _stars_match(pieces: list, text: str) -> bool:
    """Whether text matches the literal pieces with `*` between them (`ITEM-*`, `*.json`):
    a pattern new to the process costs no compilation, about 100 µs."""
    first, last = pieces[0], pieces[-1]
    start, end = len(first), len(text) - len(last)
    if end < start or not text.startswith(first) or not text.endswith(last):
        return False
    for piece in pieces[1:-1]:
        if piece:
            found = text.find(piece, start, end)
            if found < 0:
                return False
            start = found + len(piece)
    return True


def unescape_glob(pattern: str) -> str:
    return re.sub(r"\\(.)", r"\1", pattern, flags=re.S)


def _is_literal(pattern: str) -> bool:
    return not has_glob(pattern) and not any(c in pattern for c in "+@!")


# ---------------------------------------------------------------- removal and replacement
# Each is the longest or shortest match at each place, found from sets of ends: polynomial
# in the value's length whatever the pattern, with the clock looked at as the sets are built.

def remove_prefix(value: str, pattern: str, longest: bool) -> str:
    if _is_literal(pattern):
        return value[len(pattern):] if value.startswith(pattern) else value
    if _one_star(pattern):
        end = _star_cut(value, pattern, True, longest)
        return value if end is None else value[end:]
    glob = _glob(pattern)
    if glob.fixed is not None:
        m = glob.fixed.match(value)
        return value[m.end():] if m else value
    ends = glob.matcher.run(value).ends(glob.matcher.items, 0, 1)
    if not ends:
        return value
    return value[_highest(ends) if longest else _lowest(ends):]


def remove_suffix(value: str, pattern: str, longest: bool) -> str:
    if _is_literal(pattern):
        return value[:len(value) - len(pattern)] if pattern and value.endswith(pattern) else value
    if _one_star(pattern):
        start = _star_cut(value, pattern, False, longest)
    else:
        start = _suffix_start(_glob(pattern), value, longest)
    return value if start is None else value[:start]


def _one_star(pattern: str) -> bool:
    """Literal text around one `*` (`*/`, `.*`, `*=`): ${v##*/} and its kind, by string search."""
    return pattern.count("*") == 1 and _NOT_STARS_ONLY.search(pattern) is None


def _star_cut(value: str, pattern: str, prefix: bool, longest: bool):
    """Where ${v#head*tail} (prefix) or ${v%head*tail} cuts value, or None: the prefix ends at
    the first (longest: last) tail after the head; the suffix starts at the last (longest:
    first) head before the tail."""
    head, _, tail = pattern.partition("*")
    if prefix:
        if not value.startswith(head):
            return None
        found = (value.rfind if longest else value.find)(tail, len(head))
        return None if found < 0 else found + len(tail)
    if not value.endswith(tail):
        return None
    found = (value.find if longest else value.rfind)(head, 0, len(value) - len(tail))
    return None if found < 0 else found


def replace(value: str, pattern: str, replacement, mode: str, nocase: bool = False) -> str:
    """${v/p/r} (mode '/'), ${v//p/r} ('//'), ${v/#p/r} ('/#'), ${v/%p/r} ('/%').

    `replacement` is a function of the matched text (bash 5.2 puts the match in for `&`);
    nocasematch applies (bash 5.2)."""
    if not value and mode != "/%" and pattern and not pattern.startswith("*"):
        # bash tries a match only where the pattern's first character could match the
        # string's (match_pattern_char); at the end of the string only `*` can
        return value
    glob = _glob(pattern, nocase)
    screen = _screen(pattern, mode, nocase)
    if mode == "/#":
        found = _leftmost_longest(glob, value, 0, anchored=True)
        if found is None or not _passes(screen, value, 0):
            return value
        return replacement(value[:found[1]]) + value[found[1]:]
    if mode == "/%":
        start = _suffix_start(glob, value, longest=True)
        if start is None or not _passes(screen, value, 0):
            return value
        return value[:start] + replacement(value[start:])
    if pattern == "":
        return value
    out = []
    pos = 0
    n = len(value)
    rounds = size = 0
    limit = string_limit()
    finder = _Finder(glob, value, screen)
    while pos <= n:
        rounds += 1
        if not rounds & 255:
            check_clock()
        if size > limit:
            check_length(size, "${parameter//pattern/string}")
        found = finder.next(pos)
        if found is None:
            break
        start, end = found
        if end == start:
            # bash puts the replacement before the character at an empty match (not after
            # the last one, unless the value is empty) and moves on past that character
            if start == n and n:
                break
            out.append(value[pos:start])
            out.append(replacement(""))
            out.append(value[start:start + 1])
            pos = start + 1
        else:
            out.append(value[pos:start])
            out.append(replacement(value[start:end]))
            pos = end
        size += len(out[-1]) + len(out[-2])
        if mode != "//":
            break
    out.append(value[pos:])
    return "".join(out)


def _suffix_start(glob: _Glob, value: str, longest: bool):
    """Where the longest (or shortest) suffix of value that the pattern matches starts, or
    None. A regular pattern: the mirror-image pattern over the reversed value, whose ends are
    the suffixes' lengths; with groups, a search over the starts."""
    n = len(value)
    if glob.matcher.regular:
        backward = glob.backward()
        lengths = backward.run(value[::-1]).ends(backward.items, 0, 1)
        if not lengths:
            return None
        return n - (_highest(lengths) if longest else _lowest(lengths))
    run = glob.matcher.run(value)
    return _nearest_start(run, 0, n, lambda ends: ends >> n & 1) if longest else \
        _nearest_start(run, n, 0, lambda ends: ends >> n & 1)


def _screen(pattern: str, mode: str, nocase: bool):
    """What bash matches against the whole rest of the value before it looks for the pattern
    in it (match_upattern): `*pat*`, `pat*` for /#, `*pat` for /%; where that fails there is
    no match. For a regular pattern the search finds the same; with other groups bash's `*`
    rules can refuse what a search finds, so the screen is applied (None: not needed)."""
    if _glob(pattern, nocase).matcher.regular:
        return None
    if not pattern.startswith("*") or pattern.startswith("*(") or not _ends_with_star(pattern):
        if mode != "/#" and (not pattern.startswith("*") or pattern.startswith("*(")):
            pattern = "*" + pattern
        if mode != "/%" and not _ends_with_star(pattern):
            pattern += "*"
    return _glob(pattern, nocase)


def _ends_with_star(pattern: str) -> bool:
    """Whether the pattern ends with a `*` that no backslash quotes."""
    body = pattern[:-1]
    return pattern.endswith("*") and (len(body) - len(body.rstrip("\\"))) % 2 == 0


def _passes(screen, value: str, pos: int, run=None) -> bool:
    """Whether the screen matches value[pos:] (True without a screen)."""
    if screen is None:
        return True
    run = run or screen.matcher.run(value)
    return bool(run.ends(screen.matcher.items, 0, 1 << pos) >> len(value) & 1)


class _Finder:
    """The leftmost place from a position where the pattern matches, and its longest extent
    there, over one value: the sets of ends (and for a regular pattern the set of
    places where a match starts, found once) are computed on one run of the matcher."""
    __slots__ = ("glob", "value", "screen", "run", "screen_run", "starts")
    run: Matching | None
    screen_run: Matching | None
    starts: int | None

    def __init__(self, glob: _Glob, value: str, screen):
        self.glob, self.value, self.screen = glob, value, screen
        self.run = self.screen_run = self.starts = None

    def next(self, pos: int):
        glob, value = self.glob, self.value
        if glob.fixed is not None:
            m = glob.fixed.search(value, pos)
            return None if m is None else m.span()
        if self.run is None:
            self.run = glob.matcher.run(value)
            if glob.matcher.regular:
                self.starts = _match_starts(glob, value)
            elif self.screen is not None:
                self.screen_run = self.screen.matcher.run(value)
        found = _leftmost_longest(glob, value, pos, run=self.run, starts=self.starts)
        if found is None or not _passes(self.screen, value, pos, self.screen_run):
            return None
        return found


def _match_starts(glob: _Glob, value: str) -> int:
    """For a regular pattern, the places where a match starts, as a bit set of
    n - start: the mirror-image pattern run from every place of the reversed value."""
    backward = glob.backward()
    n = len(value)
    return backward.run(value[::-1]).ends(backward.items, 0, (1 << (n + 1)) - 1)


def _leftmost_longest(glob: _Glob, value: str, pos: int, anchored: bool = False,
                      run=None, starts=None):
    """(start, end) of the first place from pos (only pos itself if anchored) where the
    pattern matches, and its longest extent there; None when it matches nowhere."""
    n = len(value)
    if run is None:
        run = glob.matcher.run(value)
    items = glob.matcher.items
    if starts is not None:
        # the highest n - start at or below n - pos is the leftmost start from pos
        reversed_starts = starts & ((1 << (n - pos + 1)) - 1)
        if not reversed_starts:
            return None
        start = n - _highest(reversed_starts)
        return start, _highest(run.ends(items, 0, 1 << start))
    start = _nearest_start(run, pos, pos if anchored else n, bool)
    return None if start is None else (start, _highest(run.ends(items, 0, 1 << start)))


def _nearest_start(run, near: int, far: int, accept):
    """The start nearest to `near`, between it and `far`, whose set of ends `accept` takes,
    or None. The ends from a set of starts are the union of each one's, so windows of starts
    doubling in size find the window that holds it, and halving finds it there: O(log n)
    runs of the matcher, not one a start."""
    step = 1 if far >= near else -1
    width = 1
    while True:
        end = near + step * (width - 1)
        end = min(end, far) if step > 0 else max(end, far)
        if accept(run.ends(run.pattern.items, 0, _between(near, end))):
            break
        if end == far:
            return None
        near, width = end + step, width * 2
    while near != end:
        middle = near + step * (abs(end - near) // 2)
        if accept(run.ends(run.pattern.items, 0, _between(near, middle))):
            end = middle
        else:
            near = middle + step
    return near


def _between(a: int, b: int) -> int:
    """The bit set of the positions from a to b (either way round)."""
    low, high = min(a, b), max(a, b)
    return ((2 << high) - 1) ^ ((1 << low) - 1)


def _highest(bits: int) -> int:
    return bits.bit_length() - 1


def _lowest(bits: int) -> int:
    return (bits & -bits).bit_length() - 1


# ---------------------------------------------------------------- [[ =~ ]]

def compile_ere(ere: str, nocase: bool = False):
    """`[[ s =~ ere ]]`: POSIX extended syntax, leftmost-longest as BASH_REMATCH needs."""
    return compile_posix(ere, extended=True, ignore_case=nocase, longest=True, strict=True)
