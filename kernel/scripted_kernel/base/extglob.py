"""Shell patterns with extglob groups, matched in polynomial time and as bash 5.2 matches them.

A pattern is parsed as bash's matcher (lib/glob/sm_loop.c) reads it: `?(…) *(…) +(…) @(…)
!(…)` groups found by bash's PATSCAN (which skips bracket expressions), an unterminated group
compared as literal text, runs of fixed-width items (literal characters, `?`, brackets) kept
together as one segment.

Matching computes, from a set of start positions, the set of positions where the pattern can
end; sets of positions are Python ints used as bit sets, so a segment advances every position
at once. A repetition is a fixed point over those sets, `!(…)` a per-start complement (memoised).
That is polynomial in the text and the pattern; bash's own backtracking is exponential on the
same patterns (`+(a|aa)+(a|aa)b`).

bash's answer is kept where it is not the regular language's: after a `*` run (`*`, `?`,
`?(…)`, `*(…)`), a rest that starts with `@(`, `+(` or `!(` is only tried where it has at least
one character to match, and at the very end of the string the pattern's own rest starting with
`!(` is taken as matched (sm_loop.c's `*` case).
"""
from __future__ import annotations

import re

from .limits import check_stop
from .regexes import bracket

GROUP_OPS = frozenset("?*+@!")
_CHECK_EVERY = 1023          # steps between two looks at the clock (a mask of low bits)


class Star:
    __slots__ = ()


STAR = Star()


class Seg:
    """A run of fixed-width items: `width` characters, each matched by one regex atom.
    `anything` marks a run of `?` (all positions qualify); `exact` text is compared as is
    (an unterminated group: bash compares the rest of the pattern literally, case and all)."""
    __slots__ = ("atoms", "width", "anything", "exact", "rx")

    def __init__(self, atoms: tuple, anything: bool = False, exact: bool = False):
        self.atoms, self.width, self.anything, self.exact = atoms, len(atoms), anything, exact
        self.rx = None

    def regex_text(self) -> str:
        body = "".join(self.atoms)
        return f"(?-i:{body})" if self.exact else body


class Group:
    __slots__ = ("op", "alts")

    def __init__(self, op: str, alts: list):
        self.op, self.alts = op, alts


class Unclosed:
    """`@(abc` with no closing parenthesis: the rest, compared literally."""
    __slots__ = ("op", "seg")

    def __init__(self, op: str, seg: Seg):
        self.op, self.seg = op, seg


# ---------------------------------------------------------------- parsing

def patscan(p: str, i: int, end: int, delim: str = "") -> int:
    """bash's PATSCAN: from i, the index after the `)` closing the group (after a `|` at the
    group's own level when delim is '|'), skipping escapes and bracket expressions; -1 if the
    group is not closed before the end of the pattern (`end` itself when the scan reaches
    `end` first, within an alternative)."""
    pnest = bnest = 0
    bfirst = -1
    n = len(p)
    if i >= end:
        return -1
    while i < n:
        if i >= end:
            return i
        c = p[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":
            if bnest == 0:
                bfirst = i + 1
                if bfirst < n and p[bfirst] in "!^":
                    bfirst += 1
                bnest = 1
            elif i + 1 < n and p[i + 1] in ":.=":
                close = _subbracket_end(p, i + 1)
                if close >= 0:
                    i = close + 2
                    continue
        elif c == "]":
            if bnest and i != bfirst:
                bnest = 0
                bfirst = -1
        elif bnest == 0:
            if c == "(":
                pnest += 1
            elif c == ")":
                if pnest <= 0:
                    return i + 1
                pnest -= 1
            elif c == "|" and pnest == 0 and delim == "|":
                return i + 1
        i += 1
    return -1


def _subbracket_end(p: str, i: int) -> int:
    """PARSE_SUBBRACKET: p[i] is the `:`, `.` or `=` after a `[`; the index of the same
    character closing it (before its `]`), or -1."""
    kind = p[i]
    j = i + 1
    while j < len(p) and (kind == "." or p[j] != "]"):
        if p[j] == kind and p[j + 1:j + 2] == "]":
            return j
        j += 1
    return -1


def parse(p: str, i: int = 0, end: int | None = None) -> tuple:
    """The items of p[i:end] as a tuple of Star, Seg, Group and (last) Unclosed."""
    end = len(p) if end is None else end
    items: list = []
    atoms: list = []
    anys = 0

    def flush():
        nonlocal anys
        if anys:
            items.append(Seg(("(?s:.)",) * anys, anything=True))
            anys = 0
        if atoms:
            items.append(Seg(tuple(atoms)))
            atoms.clear()

    while i < end:
        c = p[i]
        if c in GROUP_OPS and i + 1 < end and p[i + 1] == "(":
            close = patscan(p, i + 2, end)
            flush()
            if close < 0:
                items.append(Unclosed(c, Seg(tuple(re.escape(x) for x in p[i:end]), exact=True)))
                break
            items.append(_group(c, p, i + 2, close))
            i = close
            continue
        if c == "*":
            flush()
            if not items or items[-1] is not STAR:
                items.append(STAR)
            i += 1
            continue
        if c == "?":
            if atoms:
                flush()
            anys += 1
            i += 1
            continue
        if anys:
            flush()
        if c == "[":
            found = bracket(p[:end], i + 1, glob=True)
            if found is not None:
                atoms.append(found[0])
                i = found[1]
                continue
            atoms.append(r"\[")
        elif c == "\\" and i + 1 < end:
            atoms.append(re.escape(p[i + 1]))
            i += 1
        else:
            atoms.append(re.escape(c))
        i += 1
    flush()
    return tuple(items)


def _group(op: str, p: str, start: int, close: int):
    """A group whose body is p[start:close - 1], split at its own `|`s."""
    alts = []
    psub = start
    while True:
        pnext = patscan(p, psub, len(p), "|")
        alts.append(parse(p, psub, pnext - 1))
        if pnext >= close:
            break
        psub = pnext
    return Group(op, alts)


# ---------------------------------------------------------------- matching

class Pattern:
    """A parsed pattern: `fullmatch(text)`, and `run(text)` for the sets of ends that removal
    and replacement need."""
    __slots__ = ("items", "flags", "regular", "_empty")

    def __init__(self, items: tuple, nocase: bool = False):
        self.items = items
        self.flags = re.S | (re.I if nocase else 0)
        self.regular = _regular(items)
        self._empty: dict = {}

    def run(self, text: str) -> Matching:
        return Matching(self, text)

    def fullmatch(self, text: str) -> bool:
        return bool(self.run(text).ends(self.items, 0, 1) >> len(text) & 1)

    def matches_empty(self, items: tuple, k: int, top: bool) -> bool:
        """Whether items[k:] match the empty string (where they start: the same anywhere)."""
        key = (id(items), k, top)
        found = self._empty.get(key)
        if found is None:
            found = self._empty[key] = bool(Matching(self, "").ends(items, k, 1, top) & 1)
        return found

    def item_matches_empty(self, item) -> bool:
        if type(item) is not Group:
            return False
        if item.op in "?*":
            return True
        some = any(self.matches_empty(alt, 0, False) for alt in item.alts)
        return some if item.op in "@+" else not some

    def reversed(self) -> Pattern:
        """The pattern that matches the reversed strings (for a regular pattern: what bash
        does with other groups has no mirror image)."""
        return Pattern(_reversed(self.items), bool(self.flags & re.I))

    def regex_text(self) -> str:
        """For a regular pattern: a regex that matches the same strings and cannot backtrack
        more than linearly in the text. Between two `*`s a fixed-width segment's first place
        is always a right one, so each is an atomic lazy search; only the last `*`
        backtracks (with groups there is one `*` at most)."""
        parts: list[list[str]] = [[]]
        for item in self.items:
            if item is STAR:
                parts.append([])
            elif type(item) is Group:
                alts = ("".join(seg.regex_text() for seg in alt) for alt in item.alts)
                parts[-1].append("(?:" + "|".join(alts) + ")")
            else:
                parts[-1].append(item.regex_text())
        texts = ["".join(part) for part in parts]
        if len(texts) == 1:
            return texts[0]
        middle = "".join(f"(?>.*?{t})" for t in texts[1:-1] if t)
        return texts[0] + middle + ".*" + texts[-1]


_MAX_CHOICES = 64


def _regular(items: tuple) -> bool:
    """Whether bash matches the pattern as the regular language it reads as, and a regex
    for it backtracks at most linearly: no group, or only `@(…)` groups of fixed-width
    alternatives (none empty, so bash's `*` rules change nothing), one `*` at most, and few
    combinations of alternatives."""
    groups = [x for x in items if type(x) is not Seg and x is not STAR]
    if not groups:
        return True
    choices = 1
    for group in groups:
        if type(group) is not Group or group.op != "@":
            return False
        if not all(alt and all(type(x) is Seg for x in alt) for alt in group.alts):
            return False
        choices *= len(group.alts)
    return choices <= _MAX_CHOICES and sum(x is STAR for x in items) <= 1


def _reversed(items: tuple) -> tuple:
    out = []
    for item in reversed(items):
        if type(item) is Seg:
            item = Seg(item.atoms[::-1], item.anything, item.exact)
        elif type(item) is Group:
            item = Group(item.op, [_reversed(alt) for alt in item.alts])
        out.append(item)
    return tuple(out)


def compile_pattern(pattern: str, nocase: bool = False) -> Pattern:
    items = parse(pattern)
    plain = _inline_fixed_groups(items)
    return Pattern(items if plain is None else plain, nocase)


def _inline_fixed_groups(items: tuple):
    """The items with each one-alternative `@(x)` written as x, when then no group is left
    (None otherwise): such a pattern is regular and a regex serves it. Where other groups
    remain, bash's `*` rules tell `@(?)` from `?`, so the groups stay; and x must match at
    least a character (after a `*`, `@()` never matches, `` always does)."""
    out: list = []
    for item in items:
        if type(item) is Group:
            alt = item.alts[0]
            if item.op != "@" or len(item.alts) > 1:
                return None
            alt = _inline_fixed_groups(alt)
            if alt is None or all(x is STAR for x in alt):
                return None
            out.extend(alt)
        elif type(item) is Unclosed:
            return None
        else:
            out.append(item)
    return tuple(out)


class Matching:
    """One pattern against one text: masks of where each segment matches, the memo of
    `!(…)` groups, a step counter that looks at the clock."""
    __slots__ = ("pattern", "text", "n", "full", "masks", "negated", "steps")

    def __init__(self, pattern: Pattern, text: str):
        self.pattern, self.text, self.n = pattern, text, len(text)
        self.full = (1 << (self.n + 1)) - 1
        self.masks: dict = {}
        self.negated: dict = {}
        self.steps = 0

    def tick(self):
        self.steps += 1
        if not self.steps & _CHECK_EVERY:
            check_stop()

    def from_here(self, starts: int) -> int:
        """Every position from the first of `starts` to the end (what `*` reaches)."""
        return self.full ^ ((starts & -starts) - 1) if starts else 0

    def ends(self, items: tuple, k: int, starts: int, top: bool = True) -> int:
        """Where items[k:] can end when they start at any of `starts`. `top`: the items end
        the whole pattern (not an alternative of a group), which bash's `*` case tells apart."""
        while k < len(items):
            if not starts:
                return 0
            self.tick()
            item = items[k]
            if item is STAR:
                return self.star_run(items, k, starts, top)
            starts = self.step(item, starts)
            k += 1
        return starts

    def step(self, item, starts: int) -> int:
        kind = type(item)
        if kind is Seg:
            return (starts & self.mask(item)) << item.width
        if kind is Unclosed:
            return (starts & self.mask(item.seg)) << item.seg.width
        op = item.op
        if op == "@":
            return self.alternatives(item, starts)
        if op == "?":
            return starts | self.alternatives(item, starts)
        if op == "*":
            return self.repeated(item, starts)
        if op == "+":
            return self.repeated(item, self.alternatives(item, starts))
        return self.negation(item, starts)

    def alternatives(self, group: Group, starts: int) -> int:
        found = 0
        for alt in group.alts:
            found |= self.ends(alt, 0, starts, False)
        return found

    def repeated(self, group: Group, reached: int) -> int:
        frontier = reached
        while frontier:
            frontier = self.alternatives(group, frontier) & ~reached
            reached |= frontier
        return reached

    def negation(self, group: Group, starts: int, skip: int = 0) -> int:
        """!(…): from each start, every end its alternatives do not reach (those `skip`
        characters or more past the start)."""
        found = 0
        for i in _bits(starts):
            key = (id(group), i)
            matched = self.negated.get(key)
            if matched is None:
                matched = self.negated[key] = self.alternatives(group, 1 << i)
            found |= self.from_here(1 << (i + skip)) & ~matched
        return found

    def star_run(self, items: tuple, k: int, starts: int, top: bool, nonempty: bool = False) -> int:
        """A `*` and what follows it, as GMATCH's `*` case does: the `*`s, `?`s, `?(…)` and
        `*(…)` after it are tried in turn, then the rest is tried at every later position but
        the end of the string. `nonempty`: only ends past the start."""
        found = 0
        moved = not nonempty        # whether every end is past its start already
        k += 1
        while k < len(items):
            item = items[k]
            kind = type(item)
            if item is STAR:
                pass
            elif kind is Seg and item.anything:
                starts = (starts & self.mask(item)) << item.width
                moved = True
                if not starts:
                    return found
            elif kind is Group and item.op == "?":
                found |= (self.ends if moved else self.nonempty)(items, k, starts, top)
            elif kind is Group and item.op == "*":
                found |= self.nonempty(items, k, self.from_here(starts), top)
            elif kind is Unclosed and item.op in "?*":
                return found | self.from_here(starts if moved else starts << 1)
            else:
                break
            k += 1
        if k == len(items):
            return found | self.from_here(starts if moved else starts << 1)
        after = _block_end(items, k)
        if after > k and after < len(items) and items[after] is STAR:
            # fixed text up to the next `*`: bash takes its first place and never comes
            # back (glibc's trick, not neutral under the rules above)
            block, width = self.block_mask(items, k, after)
            return found | self.star_run(items, after, self.earliest(block, starts) << width, top)
        found |= self.nonempty(items, k, self.from_here(starts), top)
        rest = items[k]
        if top and moved and type(rest) is not Seg and rest.op == "!":
            found |= starts          # bash: the `*` at the end of the string, then `!(`: a match
        return found

    def block_mask(self, items: tuple, k: int, after: int) -> tuple:
        """Where the segments items[k:after] match one after the other, and their width."""
        mask, width = -1, 0
        for seg in items[k:after]:
            mask &= self.mask(seg) >> width
            width += seg.width
        return mask, width

    @staticmethod
    def earliest(places: int, starts: int) -> int:
        """For each start, the first of `places` at or after it."""
        found = 0
        while starts:
            n = (starts & -starts).bit_length() - 1
            above = places >> n
            if not above:
                break
            k = n + (above & -above).bit_length() - 1
            found |= 1 << k
            starts &= ~((2 << k) - 1)
        return found

    def nonempty(self, items: tuple, k: int, starts: int, top: bool) -> int:
        """Where items[k:] end having matched at least one character from their start: the
        first item matches some, or it matches none and the rest do."""
        if not self.pattern.matches_empty(items, k, top):
            return self.ends(items, k, starts, top)
        if k == len(items) or not starts:
            return 0
        self.tick()
        item = items[k]
        if item is STAR:
            return self.star_run(items, k, starts, top, nonempty=True)
        found = self.ends(items, k + 1, self.step_nonempty(item, starts), top)
        if self.pattern.item_matches_empty(item):
            found |= self.nonempty(items, k + 1, starts, top)
        return found

    def step_nonempty(self, item, starts: int) -> int:
        """`step` for the ends past their start only."""
        if type(item) is not Group:
            return self.step(item, starts)
        if item.op == "!":
            return self.negation(item, starts, skip=1)
        found = 0
        for alt in item.alts:
            found |= self.nonempty(alt, 0, starts, False)
        return self.repeated(item, found) if item.op in "*+" else found

    def mask(self, seg: Seg) -> int:
        """The positions where the segment matches (bit i: text[i:i+width] matches)."""
        found = self.masks.get(seg)
        if found is None:
            room = self.n - seg.width + 1
            if room <= 0:
                found = 0
            elif seg.anything:
                found = (1 << room) - 1
            else:
                found = _positions_mask(self._segment_regex(seg), self.text, self.n)
            self.masks[seg] = found
        return found

    def _segment_regex(self, seg: Seg):
        rx = seg.rx
        if rx is None:
            import regex       # here: a script whose patterns need no regex never pays its import
            try:
                rx = regex.compile(f"(?=({seg.regex_text()}))", self.pattern.flags)
            except regex.error:        # a bracket such as [z-a]: nothing matches
                rx = regex.compile("(?!)")
            seg.rx = rx
        return rx


def _block_end(items: tuple, k: int) -> int:
    """The index after the segments that start at items[k]."""
    while k < len(items) and type(items[k]) is Seg:
        k += 1
    return k


def _positions_mask(rx, text: str, n: int) -> int:
    """A bit set of the positions where rx (a look-ahead) matches: built as the text of a
    binary number, since or-ing one bit at a time into a long int is quadratic."""
    digits = None
    for m in rx.finditer(text):
        if digits is None:
            digits = bytearray(b"0") * n
        digits[n - 1 - m.start()] = 49
    return 0 if digits is None else int(digits, 2)


def _bits(mask: int):
    """The positions in a bit set, lowest first."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low
