"""Brace expansion: `a{b,c}d` and `{1..10..2}` sequences, within max_brace_expansion."""
from __future__ import annotations

import re

from ..base.errors import LimitExceeded
from .nodes import Lit, Word, WordPart


_SEQ = re.compile(r"^(-?[0-9]+)\.\.(-?[0-9]+)(?:\.\.(-?[0-9]+))?$|^([A-Za-z])\.\.([A-Za-z])(?:\.\.(-?[0-9]+))?$")


def has_braces(word: Word) -> bool:
    for p in word.parts:
        if type(p) is Lit and not p.escaped and "{" in p.text:
            return True
    return False


def brace_expand(word: Word, limit: int) -> list[Word]:
    """Expand {a,b} and {x..y} in the unquoted literal parts of a word (bash's first expansion)."""
    seq: list[str | WordPart] = []    # the characters of unquoted literals, and the other parts
    for p in word.parts:
        if type(p) is Lit and not p.escaped:
            seq.extend(p.text)
        else:
            seq.append(p)
    results = _brace_seq(seq, limit)
    words = []
    for items in results:
        parts, text = [], []
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
        words.append(Word(word.pos, parts))
    return words


def _brace_seq(seq: list, limit: int) -> list[list]:
    i = 0
    n = len(seq)
    while i < n:
        if seq[i] == "{" and not (i > 0 and seq[i - 1] == "$"):
            depth, j, commas = 0, i, []
            while j < n:
                c = seq[j]
                if c == "{":
                    depth += 1
                elif c == "}":
                    depth -= 1
                    if depth == 0:
                        break
                elif c == "," and depth == 1:
                    commas.append(j)
                j += 1
            if j >= n:            # no closing brace: this one is literal, look further on
                rest = _brace_seq(seq[i + 1:], limit)
                return [seq[:i + 1] + r for r in rest]
            prefix, body, suffix = seq[:i], seq[i + 1:j], seq[j + 1:]
            if commas:
                alts, start = [], i + 1
                for c in commas + [j]:
                    alts.append(seq[start:c])
                    start = c + 1
                expanded = []
                for alt in alts:
                    expanded.extend(_brace_seq(alt, limit))
            else:
                text = "".join(x for x in body if type(x) is str) if all(type(x) is str for x in body) else None
                items = _sequence(text, limit) if text is not None else None
                if items is None:
                    rest = _brace_seq(seq[i + 1:], limit)
                    return [seq[:i + 1] + r for r in rest]
                # (a sequence's words are never scanned again: each is one item, not a list
                # of characters, which brace_expand would join back one by one)
                expanded = [[s] for s in items]
            tails = _brace_seq(suffix, limit)
            if len(expanded) * len(tails) > limit:
                raise LimitExceeded("max_brace_expansion",
                                    f"brace expansion: more than {limit} words (max_brace_expansion)")
            return [prefix + e + t for e in expanded for t in tails]
        i += 1
    return [seq]


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
