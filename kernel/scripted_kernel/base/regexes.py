"""POSIX regular expressions (BRE, ERE with GNU extensions) on the `regex` package.

One translation serves grep, sed, awk-style matching and `[[ =~ ]]`. Matching where the match
itself is used (grep -o, sed s///, BASH_REMATCH) is leftmost-longest as POSIX requires
(`regex.POSIX`); every match runs under a timeout so a pathological pattern cannot hang.
"""
from __future__ import annotations

import re

CLASSES = {
    "alpha": r"\p{Alphabetic}", "digit": r"0-9", "alnum": r"\p{Alphabetic}0-9", "upper": r"\p{Uppercase}",
    "lower": r"\p{Lowercase}", "space": r" \t\n\r\f\v", "blank": r" \t", "punct": r"!-/:-@\[-`{-~",
    "xdigit": r"0-9A-Fa-f", "cntrl": r"\x00-\x1f\x7f", "print": r"\x20-\x7e\u00a0-\U0010ffff",
    "graph": r"\x21-\x7e\u00a1-\U0010ffff", "word": r"\w",
}
DEFAULT_TIMEOUT = 2.0


class RegexError(Exception):
    """An invalid pattern (message as GNU tools word it)."""


class RegexTimeout(Exception):
    """A match took longer than its budget."""


def bracket(p: str, i: int, glob: bool = False, negate_with_bang: bool = True,
            reversed_range: str = "nothing"):
    """A bracket expression starting after '[': (regex text, index after it).

    POSIX (glob=False): a backslash is literal inside; an unterminated one raises RegexError.
    Shell patterns (glob=True): `!` negates too, a backslash quotes the next character, and an
    unterminated bracket returns None (the '[' is then literal).
    A reversed range such as `z-a` is empty in bash's patterns ("nothing"), an error in GNU
    grep and sed ("error"), and dropped in the One True AWK, whose answers the awk suite states:
    a bracket left empty then matches the empty string ("vanish"; mawk reads the three
    characters, gawk refuses)."""
    j = i
    negate = j < len(p) and (p[j] == "^" or (glob and negate_with_bang and p[j] == "!"))
    if negate:
        j += 1
    items: list[str] = []
    first = True
    while j < len(p):
        c = p[j]
        if c == "]" and not first:
            if not items:                 # [z-a]: nothing is in the set
                if negate:
                    return ".", j + 1
                return ("(?:)" if reversed_range == "vanish" else "(?!)"), j + 1
            return ("[^" if negate else "[") + "".join(items) + "]", j + 1
        first = False
        if c == "[" and j + 1 < len(p) and p[j + 1] in ":=.":
            kind = p[j + 1]
            end = p.find(kind + "]", j + 2)
            if end >= 0:
                name = p[j + 2:end]
                if kind != ":":
                    items.append(re.escape(name))
                elif name in CLASSES:
                    items.append(CLASSES[name])
                elif not glob:
                    raise RegexError("Invalid character class name")
                else:
                    return None
                j = end + 2
                continue
        if glob and c == "\\" and j + 1 < len(p):
            items.append(re.escape(p[j + 1]))
            j += 2
            continue
        if c == "-" and items and j + 1 < len(p) and p[j + 1] != "]":
            lo = items[-1][-1]
            hi = p[j + 2] if p[j + 1] == "\\" and glob and j + 2 < len(p) else p[j + 1]
            if ord(hi) < ord(lo):
                if reversed_range == "error":
                    raise RegexError("Invalid range end")
                items.pop()                # an empty range matches nothing
                j += 2 if p[j + 1] != "\\" else 3
                continue
            items.append("-")
            j += 1
            continue
        items.append("\\" + c if c in "\\]^-[" else c)
        j += 1
    if glob:
        return None
    raise RegexError("Unmatched [, [^, [:, [., or [=")


_AWK_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v", "a": "\a", "b": "\b",
                "/": "/", '"': '"'}


def awk_escapes(pattern: str) -> str:
    """awk's dialect: \\NNN, \\xHH and \\n-style escapes (inside brackets too) become the
    characters they name, quoted where they would be special."""
    out = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c != "\\" or i + 1 >= n:
            out.append(c)
            i += 1
            continue
        e = pattern[i + 1]
        m = re.match(r"[0-7]{1,3}", pattern[i + 1:])
        if m:
            ch = chr(int(m.group(), 8))
            i += 1 + m.end()
        elif e == "x" and (m := re.match(r"[0-9A-Fa-f]{1,2}", pattern[i + 2:])):
            ch = chr(int(m.group(), 16))
            i += 2 + m.end()
        elif e in _AWK_ESCAPES:
            ch = _AWK_ESCAPES[e]
            i += 2
        else:
            out.append(pattern[i:i + 2])
            i += 2
            continue
        out.append("\\" + ch if ch in "\\^$.[]|()*+?{}-/" else ch)
    return "".join(out)


def translate(pattern: str, extended: bool, awk: bool = False, strict: bool = False) -> str:
    """POSIX BRE (extended=False) or ERE → `regex` syntax; `awk` adds awk's escapes, which
    also work inside bracket expressions; `strict` rejects an ERE that starts with a
    repetition (`*`, `{`), as glibc's regcomp does for bash's =~ (grep takes it literally)."""
    if strict and extended and pattern[:1] in ("*", "+", "?", "{"):
        raise RegexError("Invalid preceding regular expression")
    if awk:
        pattern = awk_escapes(pattern)
    out = []
    i, n = 0, len(pattern)
    depth = 0
    at_start = True          # where a BRE `*` is literal and `^` is an anchor
    while i < n:
        c = pattern[i]
        start_here = at_start
        at_start = False
        operator = extended and c in "()|+?{"
        if c == "\\" and i + 1 < n:
            e = pattern[i + 1]
            if not extended and e in "(){}|+?":
                c, operator = e, True    # BRE's escaped operators behave like ERE's plain ones
                i += 1
            else:
                i += 2
                if (e.isascii() and e.isdigit()) and e != "0":
                    out.append("\\" + e)
                elif e == "<":
                    out.append(r"\b(?=\w)")
                elif e == ">":
                    out.append(r"\b(?<=\w)")
                elif e in "bBwWsS":
                    out.append("\\" + e)
                elif e == "`":
                    out.append(r"\A")
                elif e == "'":
                    out.append(r"\Z")
                elif e == "n":
                    out.append(r"\n")
                elif e == "t":
                    out.append(r"\t")
                else:
                    out.append(re.escape(e))
                continue
        i += 1
        if operator:
            literal_here = start_here and extended   # an ERE may not open with {, + or ?
            if c == "(":
                depth += 1
                out.append("(")
                at_start = True
            elif c == ")":
                if depth == 0:
                    if not awk:
                        raise RegexError("Unmatched ) or \\)")
                    out.append(r"\)")        # awk: an unmatched ) is an ordinary character
                    continue
                depth -= 1
                out.append(")")
            elif c == "|":
                out.append("|")
                at_start = True
            elif c == "{":
                if literal_here:
                    out.append(r"\{")
                else:
                    i = _interval(pattern, i, out, bre=not extended)
            elif literal_here:
                out.append("\\" + c)
            else:
                out.append(c)
        elif c == "[":
            if awk:
                found = bracket(pattern, i, glob=True, negate_with_bang=False, reversed_range="vanish")
                if found is None:
                    raise RegexError("Unmatched [, [^, [:, [., or [=")
                rx, i = found
            else:
                rx, i = bracket(pattern, i, reversed_range="error")
            out.append(rx)
        elif c == ".":
            out.append(".")
        elif c == "*":
            if start_here:
                out.append(r"\*")
            else:
                _repeat(out, "*")
        elif c == "^":
            # in a BRE only a leading ^ anchors (a second one, as in ^^, is a character);
            # a * right after the anchor is still literal
            if extended or (start_here and out[-1:] != ["^"]):
                out.append("^")
                at_start = True
            else:
                out.append(r"\^")
        elif c == "$":
            if extended or i == n or pattern.startswith("\\)", i) or pattern.startswith("\\|", i):
                out.append("$")
            else:
                out.append(r"\$")
        else:
            out.append(re.escape(c) if not c.isalnum() else c)
    if depth:
        raise RegexError("Unmatched ( or \\(")
    return "".join(out)


_QUANTIFIED = re.compile(r"(?:[*+?]|\{\d*(?:,\d*)?\})\Z")


def _repeat(out: list, quantifier: str):
    """Append a quantifier; one that follows another (a{2}*) quantifies the whole repeat."""
    if out and _QUANTIFIED.search(out[-1]) and not out[-1].startswith("\\"):
        k = len(out) - 1
        out[k - 1:] = ["(?:" + "".join(out[k - 1:]) + ")"] if k >= 1 else out[k:]
    out.append(quantifier)


def _interval(p: str, i: int, out: list, bre: bool) -> int:
    """{m,n} after the opening brace at p[i-1]; returns the index after the closing brace."""
    close = p.find("\\}" if bre else "}", i)
    body = p[i:close] if close >= 0 else None
    if body is None or not _valid_interval(body):
        if bre:
            raise RegexError("Unmatched \\{")
        out.append(r"\{")       # GNU ERE: a brace that starts no interval is literal
        return i
    lo, _, hi = body.partition(",")
    if "," in body and hi and int(hi) < int(lo or 0):
        raise RegexError("Invalid content of \\{\\}")
    if int(lo or 0) > 32767 or (hi and int(hi) > 32767):
        raise RegexError("Regular expression too big")
    out.append("{" + (lo or "0") + ("," + hi if "," in body else "") + "}")
    return close + (2 if bre else 1)


def _valid_interval(body: str) -> bool:
    lo, comma, hi = body.partition(",")
    return (((lo.isascii() and lo.isdigit()) or (comma != "" and lo == ""))
            and (hi == "" or (hi.isascii() and hi.isdigit())))


_cache: dict = {}


def compile_posix(pattern: str, extended: bool, ignore_case: bool = False,
                  longest: bool = False, dotall: bool = False, strict: bool = False):
    key = (pattern, extended, ignore_case, longest, dotall, strict)
    rx = _cache.get(key)
    if rx is None:
        import regex       # here: a script that matches no regular expression never pays its import
        flags = regex.V0
        if ignore_case:
            flags |= regex.IGNORECASE
        if longest:
            flags |= regex.POSIX
        if dotall:
            flags |= regex.DOTALL
        try:
            rx = regex.compile(translate(pattern, extended, strict=strict), flags)
        except regex.error as e:
            raise RegexError(_gnu_message(str(e))) from None
        if len(_cache) > 2048:
            _cache.clear()
        _cache[key] = rx
    return rx


def _gnu_message(msg: str) -> str:
    if "missing )" in msg or "unbalanced parenthesis" in msg:
        return "Unmatched ( or \\("
    if "nothing to repeat" in msg or "multiple repeat" in msg:
        return "Invalid preceding regular expression"
    if "invalid group reference" in msg or "unknown group" in msg:
        return "Invalid back reference"
    return "Invalid regular expression"


_NESTED_QUANTIFIER = re.compile(r"\((?:[^()\\]|\\.)*[*+}](?:[^()\\]|\\.)*\)[*+{?]|\((?:[^()\\]|\\.)*\|"
                                   r"(?:[^()\\]|\\.)*\)[*+{]|\\[1-9]")


_risky_patterns: dict = {}


def risky(rx) -> bool:
    """Whether a compiled pattern has the shapes that can backtrack exponentially (a
    quantified group holding a quantifier or an alternation, a back-reference). Only those
    pay for a per-call timeout, which costs ~10x a plain match. Cached by pattern text."""
    found = _risky_patterns.get(rx.pattern)
    if found is None:
        if len(_risky_patterns) > 2048:
            _risky_patterns.clear()
        found = _risky_patterns[rx.pattern] = bool(_NESTED_QUANTIFIER.search(rx.pattern))
    return found


def matcher(rx, timeout: float = DEFAULT_TIMEOUT):
    """rx.search, with a timeout where the pattern needs one."""
    if not risky(rx):
        return rx.search

    def guarded(text, *args):
        try:
            return rx.search(text, *args, timeout=timeout)
        except TimeoutError:
            raise RegexTimeout() from None
    return guarded


def search(rx, text: str, pos: int = 0, endpos=None, timeout: float = DEFAULT_TIMEOUT):
    try:
        if endpos is None:
            return rx.search(text, pos, timeout=timeout)
        return rx.search(text, pos, endpos, timeout=timeout)
    except TimeoutError:
        raise RegexTimeout() from None


def finditer(rx, text: str, timeout: float = DEFAULT_TIMEOUT):
    try:
        return list(rx.finditer(text, timeout=timeout))
    except TimeoutError:
        raise RegexTimeout() from None


class _EmptyMatch(Exception):
    pass


def substitute(rx, text: str, replace, first: int = 1, every: bool = True, timeout=None) -> tuple[str, int]:
    """s/re/x/ as sed and awk do it: (new text, number of replacements). `replace(m)` gives a
    match's replacement; the matches before the `first`th are kept; with `every` all later
    ones are replaced too. An empty match right after a match does not count (sed, awk).
    The regex engine's own subn does the common case; since its rules for empty matches are
    not sed's, the first empty match hands the work to the stepping loop. Raises TimeoutError
    past `timeout` (None: no limit)."""
    limit = {} if timeout is None else {"timeout": timeout}
    if first == 1:
        def replace_nonempty(m):
            if m.end() == m.start():
                raise _EmptyMatch()
            return replace(m)
        try:
            return rx.subn(replace_nonempty, text, 0 if every else 1, **limit)
        except _EmptyMatch:
            pass
    out = []
    pos = count = replaced = 0
    n = len(text)
    previous_end = -1
    while pos <= n:
        m = rx.search(text, pos, **limit)
        if m is None:
            break
        if m.start() == m.end() == previous_end:
            if pos < n:              # no empty match right after a match: move on one character
                out.append(text[pos])
            pos += 1
            previous_end = -1
            continue
        previous_end = m.end()
        count += 1
        if count >= first:
            out.append(text[pos:m.start()])
            out.append(replace(m))
            replaced += 1
        else:
            out.append(text[pos:m.end()])
        if m.end() == m.start():
            if m.start() < n:
                out.append(text[m.start()])
            pos = m.start() + 1
        else:
            pos = m.end()
        if replaced and not every:
            break
    if not replaced:
        return text, 0
    out.append(text[pos:])
    return "".join(out), replaced
