"""Brace expansion: `a{b,c}d` and `{1..10..2}` sequences, within max_brace_expansion."""
from __future__ import annotations

import re
from typing import Callable, Optional

from ..base.errors import LimitExceeded
from ..base.limits import check_stop
from .nodes import Lit, Word


_SEQ = re.compile(r"^(-?[0-9]+)\.\.(-?[0-9]+)(?:\.\.(-?[0-9]+))?$|^([A-Za-z])\.\.([A-Za-z])(?:\.\.(-?[0-9]+))?$")


def has_braces(word: Word) -> bool:
    for p in word.parts:
        if type(p) is Lit and not p.escaped and "{" in p.text:
            return True
    return False


# Alternatives nested deeper than this are an error (as the recursion they take would be);
# the compiled build recurses on the C stack, which Python's recursion limit does not watch.
MAX_NESTING = 1000
# the characters of a `{x..y..z}` sequence's body: a body with any other is not one
_SEQUENCE_CHARS = frozenset("0123456789-.abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def brace_expand(word: Word, limit: int, note: Optional[Callable[[int], None]] = None) -> list[Word]:
    """Expand {a,b} and {x..y} in the unquoted literal parts of a word (bash's first expansion).
    More than `limit` words is LimitExceeded; `note(size)` is told the characters of literal
    text in each word made (the memory budget's Budget.note). Linear in the word's length and the words made: braces
    are matched in one pass, and the deadline is checked as words are made."""
    seq: list = []    # the characters of unquoted literals, and the other parts
    for p in word.parts:
        if type(p) is Lit and not p.escaped:
            seq.extend(p.text)
        else:
            seq.append(p)
    closes, commas = _pairs(seq)
    results = _expand(seq, 0, len(seq), closes, commas, limit, 0)
    words = []
    for number, items in enumerate(results):
        if not number & 255:
            check_stop()
        parts: list = []
        text: list = []
        for it in items:
            if type(it) is str:
                text.append(it)
            else:
                if text:
                    parts.append(Lit(word.pos, "".join(text)))
                    text = []
                parts.append(it)
        if text:
            parts.append(Lit(word.pos, "".join(text)))
        if note is not None:
            note(sum(len(p.text) for p in parts if type(p) is Lit))
        words.append(Word(word.pos, parts))
    return words


def _pairs(seq: list) -> tuple[dict, dict]:
    """Where each `{` that has a matching `}` closes, and the commas directly inside each
    such pair (its alternatives' bounds): every brace counts, as bash counts them."""
    closes: dict[int, int] = {}
    commas: dict[int, list] = {}
    open_at: list[int] = []
    for k, c in enumerate(seq):
        if c == "{":
            open_at.append(k)
        elif c == "}":
            if open_at:
                closes[open_at.pop()] = k
        elif c == "," and open_at:
            commas.setdefault(open_at[-1], []).append(k)
    for k in open_at:               # never closed: its commas split nothing
        commas.pop(k, None)
    return closes, commas


def _expand(seq: list, lo: int, hi: int, closes: dict, commas: dict, limit: int, depth: int) -> list[list]:
    """The expansions of seq[lo:hi], each a list of characters and parts: the groups from
    left to right, each multiplying the words so far (the first group varies slowest)."""
    if depth > MAX_NESTING:
        raise RecursionError("braces nested too deep")
    results: list[list] = [[]]
    literal_from = i = lo
    while i < hi:
        if seq[i] != "{" or (i > 0 and seq[i - 1] == "$") or i not in closes:
            i += 1
            continue
        j = closes[i]
        inside = commas.get(i)
        expanded: list[list] = []
        if inside:
            start = i + 1
            for c in inside + [j]:
                expanded.extend(_expand(seq, start, c, closes, commas, limit, depth + 1))
                start = c + 1
        else:
            items = _sequence_items(seq, i + 1, j, limit)
            if items is None:       # `{x}`, `{}`: the brace is literal; look further on
                i += 1
                continue
            # (a sequence's words are never scanned again: each is one item, not a list of
            # characters, which brace_expand would join back one by one)
            expanded = [[s] for s in items]
        if len(results) * len(expanded) > limit:
            raise LimitExceeded("max_brace_expansion",
                                f"brace expansion: more than {limit} words (max_brace_expansion)")
        prefix = seq[literal_from:i]
        grown: list[list] = []
        for number, r in enumerate(results):
            if not number & 255:
                check_stop()
            head = r + prefix
            for e in expanded:
                grown.append(head + e)
        results = grown
        literal_from = i = j + 1
    if literal_from < hi:
        rest = seq[literal_from:hi]
        for r in results:
            r.extend(rest)
    return results


def _sequence_items(seq: list, lo: int, hi: int, limit: int) -> Optional[list]:
    """The words of a `{x..y..z}` sequence whose body is seq[lo:hi], or None when the body is
    not one (looked at up to its first character that no sequence has)."""
    for k in range(lo, hi):
        c = seq[k]
        if type(c) is not str or c not in _SEQUENCE_CHARS:
            return None
    return _sequence("".join(seq[lo:hi]), limit)


def _sequence(text: str, limit: int):
    m = _SEQ.match(text)
    if not m:
        return None
    if m.group(1) is not None:
        a, b = int(m.group(1)), int(m.group(2))
        step = abs(int(m.group(3))) if m.group(3) else 1
        step = step or 1
        count = abs(b - a) // step + 1
        if count > limit:
            raise LimitExceeded("max_brace_expansion",
                                f"brace expansion: {{{text}}} makes {count} words, more than {limit} "
                                f"(max_brace_expansion)")
        width = 0
        sa, sb = m.group(1).lstrip("-"), m.group(2).lstrip("-")
        if (len(sa) > 1 and sa[0] == "0") or (len(sb) > 1 and sb[0] == "0"):
            width = max(len(m.group(1)), len(m.group(2)))
        rng = range(a, b + 1, step) if a <= b else range(a, b - 1, -step)
        if width:
            return [(f"-{str(abs(v)).zfill(width - 1)}" if v < 0 else str(v).zfill(width)) for v in rng]
        return [str(v) for v in rng]
    a, b = ord(m.group(4)), ord(m.group(5))
    step = abs(int(m.group(6))) if m.group(6) else 1
    step = step or 1
    rng = range(a, b + 1, step) if a <= b else range(a, b - 1, -step)
    return [chr(v) for v in rng]
