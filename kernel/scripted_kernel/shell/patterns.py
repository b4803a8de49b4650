"""Shell patterns (glob with extglob) and `=~` regular expressions, translated to Python regex.

A pattern arrives as text in which a backslash quotes the next character (the expander escapes
quoted parts that way), so one translation serves `case`, `[[ == ]]`, `${x#pat}` and `${x/pat/}`.

Every match runs with the time left before the script's deadline (the regex engine stops
there), and the loops that try one position after another check the clock: an extglob that
backtracks exponentially ends the script at its deadline instead of hanging it.
"""
from __future__ import annotations

import regex as re

from .limits import check_clock, check_length, string_limit, time_left, timed_out
from .regexes import bracket, compile_posix, risky

GLOB_CHARS = frozenset("*?[\\")
EXTGLOB_CHARS = frozenset("?*+@!")


def escape_glob(text: str) -> str:
    """Quote text so that it matches itself as a pattern (a quoted `-` stays literal inside
    a bracket expression too)."""
    if not any(c in text for c in "*?[]\\()|+@!-"):
        return text
    return re.sub(r"([*?\[\]\\()|+@!-])", r"\\\1", text)


def has_glob(text: str) -> bool:
    return any(c in GLOB_CHARS for c in text)


def glob_to_regex(p: str, extglob: bool = True) -> str:
    out = []
    i, n = 0, len(p)
    while i < n:
        c = p[i]
        if extglob and c in EXTGLOB_CHARS and p.startswith("(", i + 1):
            end = group_end(p, i + 2)
            if end > 0:
                alts = [glob_to_regex(a, extglob) for a in _split_alternatives(p[i + 2:end - 1])]
                group = "(?:" + "|".join(alts) + ")"
                if c == "?":
                    out.append(group + "?")
                elif c == "*":
                    out.append(group + "*")
                elif c == "+":
                    out.append(group + "+")
                elif c == "@":
                    out.append(group)
                else:
                    rest = glob_to_regex(p[end:], extglob)
                    out.append(f"(?:(?!{group}(?:{rest})\\Z).*?)")
                    out.append(rest)
                    return "".join(out)
                i = end
                continue
        if c == "*":
            # ** is one *, but not the * that starts a *(...) group
            while i + 1 < n and p[i + 1] == "*" and not (extglob and p.startswith("(", i + 2)):
                i += 1
            out.append(".*")
        elif c == "?":
            out.append(".")
        elif c == "[":
            found = bracket(p, i + 1, glob=True)
            if found is None:
                out.append(r"\[")
            else:
                out.append(found[0])
                i = found[1]
                continue
        elif c == "\\":
            if i + 1 < n:
                out.append(re.escape(p[i + 1]))
                i += 1
            else:
                out.append(r"\\")
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


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


def _split_alternatives(body: str) -> list[str]:
    alts, depth, start, i = [], 0, 0, 0
    while i < len(body):
        c = body[i]
        if c == "\\":
            i += 2
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "|" and depth == 0:
            alts.append(body[start:i])
            start = i + 1
        i += 1
    alts.append(body[start:])
    return alts


_compiled: dict = {}


def compile_glob(pattern: str, nocase: bool = False) -> re.Pattern:
    key = (pattern, nocase)
    rx = _compiled.get(key)
    if rx is None:
        if len(_compiled) > 4096:
            _compiled.clear()
        try:
            rx = re.compile(glob_to_regex(pattern), re.S | (re.I if nocase else 0))
        except re.error:          # e.g. [z-a]: bash's pattern then matches nothing
            rx = re.compile(r"(?!)")
        _compiled[key] = rx
    return rx


# what makes a pattern more than literal text and `*` (then it is matched as a regex)
_NOT_STARS_ONLY = re.compile(r"[?\[\\+@!(]")


def glob_match(pattern: str, text: str, nocase: bool = False) -> bool:
    if not nocase and _NOT_STARS_ONLY.search(pattern) is None:
        if "*" not in pattern:
            return pattern == text
        return _stars_match(pattern.split("*"), text)
    return _fullmatch(compile_glob(pattern, nocase), text) is not None


def _stars_match(pieces: list, text: str) -> bool:
    """Whether text matches the literal pieces with `*` between them (`ITEM-*`, `*.json`):
    a pattern new to the process costs no regex compilation, about 100 µs."""
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


def _timed(method, *args):
    """A regex method's result, given the time left before the deadline when the pattern can
    backtrack badly (a timeout costs ~1.6 µs a call, several times a plain match)."""
    if not _needs_timeout(method.__self__):
        return method(*args)
    try:
        return method(*args, timeout=time_left())
    except TimeoutError:
        raise timed_out() from None


_QUANTIFIED_GROUP = re.compile(r"\)[*+?{]")
_risk: dict = {}


def _needs_timeout(rx) -> bool:
    """Extglob repetitions (a quantified group) and what regexes.risky flags can backtrack."""
    found = _risk.get(rx.pattern)
    if found is None:
        if len(_risk) > 4096:
            _risk.clear()
        found = _risk[rx.pattern] = bool(_QUANTIFIED_GROUP.search(rx.pattern)) or risky(rx)
    return found


def _fullmatch(rx, text, start=0, end=None):
    return _timed(rx.fullmatch, text, start, len(text) if end is None else end)


def _tried(positions):
    """The positions, checking the clock every so often."""
    for k, i in enumerate(positions):
        if not k & 255:
            check_clock()
        yield i


def unescape_glob(pattern: str) -> str:
    return re.sub(r"\\(.)", r"\1", pattern, flags=re.S)


# ---------------------------------------------------------------- removal and replacement

def remove_prefix(value: str, pattern: str, longest: bool) -> str:
    if not has_glob(pattern) and not any(c in pattern for c in "+@!"):
        return value[len(pattern):] if value.startswith(pattern) else value
    rx = compile_glob(pattern)
    if longest and "(?!" not in rx.pattern:
        m = _timed(_posix(rx.pattern).match, value)
        return value[m.end():] if m else value
    rng = range(len(value), -1, -1) if longest else range(0, len(value) + 1)
    for i in _tried(rng):
        if _fullmatch(rx, value, 0, i):
            return value[i:]
    return value


def remove_suffix(value: str, pattern: str, longest: bool) -> str:
    if not has_glob(pattern) and not any(c in pattern for c in "+@!"):
        return value[:len(value) - len(pattern)] if pattern and value.endswith(pattern) else value
    rx = compile_glob(pattern)
    n = len(value)
    rng = range(0, n + 1) if longest else range(n, -1, -1)
    for i in _tried(rng):
        if _fullmatch(rx, value, i, n):
            return value[:i]
    return value


def replace(value: str, pattern: str, replacement, mode: str) -> str:
    """${v/p/r} (mode '/'), ${v//p/r} ('//'), ${v/#p/r} ('/#'), ${v/%p/r} ('/%').

    `replacement` is a function of the matched text (bash 5.2 puts the match in for `&`)."""
    if not value and mode != "/%" and pattern and not pattern.startswith("*"):
        # bash tries a match only where the pattern's first character could match the
        # string's (match_pattern_char); at the end of the string only `*` can
        return value
    rx_text = glob_to_regex(pattern)
    try:
        re.compile(rx_text)
    except re.error:
        return value
    if mode == "/#":
        found = _leftmost_longest(re.compile(rx_text, re.S), rx_text, value, 0, anchored=True)
        if found is None:
            return value
        return replacement(value[:found[1]]) + value[found[1]:]
    if mode == "/%":
        rx = re.compile(rx_text, re.S)
        for i in _tried(range(0, len(value) + 1)):
            if _fullmatch(rx, value, i):
                return value[:i] + replacement(value[i:])
        return value
    if pattern == "":
        return value
    rx = re.compile(rx_text, re.S)
    out = []
    pos = 0
    n = len(value)
    rounds = size = 0
    limit = string_limit()
    while pos <= n:
        rounds += 1
        if not rounds & 255:
            check_clock()
        if size > limit:
            check_length(size, "${parameter//pattern/string}")
        found = _leftmost_longest(rx, rx_text, value, pos)
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


def _leftmost_longest(rx, rx_text: str, value: str, pos: int, anchored: bool = False):
    """(start, end) of the first place from pos (only pos itself if anchored) where the
    pattern matches, and its longest extent there; None when it matches nowhere. A !(...)
    group limits the matched text itself, which a regex search (whose look-ahead sees the
    whole rest) cannot express: those patterns try each start and end."""
    if "(?!" not in rx_text:
        m = _timed(rx.match if anchored else rx.search, value, pos)
        return None if m is None else (m.start(), _longest_end(rx_text, value, m.start()))
    for start in _tried(range(pos, pos + 1 if anchored else len(value) + 1)):
        for end in _tried(range(len(value), start - 1, -1)):
            if _fullmatch(rx, value, start, end):
                return start, end
    return None


def _longest_end(rx_text: str, value: str, start: int) -> int:
    """The end of the longest match of the pattern starting at `start` (glob semantics).
    Greedy backtracking finds it for plain globs; alternations need the POSIX
    (leftmost-longest) mode, which is slower, so only they use it."""
    rx = _posix(rx_text) if "(?:" in rx_text else _plain(rx_text)
    m = _timed(rx.match, value, start)
    return m.end() if m else start


_by_text: dict = {}


def _compiled_text(rx_text: str, flags: int):
    key = (rx_text, flags)
    rx = _by_text.get(key)
    if rx is None:
        if len(_by_text) > 4096:
            _by_text.clear()
        rx = _by_text[key] = re.compile(rx_text, flags)
    return rx


def _plain(rx_text: str):
    return _compiled_text(rx_text, re.S)


def _posix(rx_text: str):
    return _compiled_text(rx_text, re.S | re.POSIX)


# ---------------------------------------------------------------- [[ =~ ]]

def compile_ere(ere: str, nocase: bool = False):
    """`[[ s =~ ere ]]`: POSIX extended syntax, leftmost-longest as BASH_REMATCH needs."""
    return compile_posix(ere, extended=True, ignore_case=nocase, longest=True, strict=True)
