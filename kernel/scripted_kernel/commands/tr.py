"""tr: translate, squeeze or delete characters."""
from __future__ import annotations

import re

from ._options import UsageError, bad_usage, parse
from .registry import Usage, command

CLASSES = {
    "alpha": lambda c: c.isalpha(), "digit": lambda c: "0" <= c <= "9",
    "alnum": lambda c: c.isalnum(), "upper": lambda c: c.isupper(), "lower": lambda c: c.islower(),
    "space": lambda c: c in " \t\n\r\f\v", "blank": lambda c: c in " \t",
    "punct": lambda c: 33 <= ord(c) < 127 and not c.isalnum(), "xdigit": lambda c: c in "0123456789abcdefABCDEF",
    "cntrl": lambda c: ord(c) < 32 or ord(c) == 127, "print": lambda c: 32 <= ord(c) < 127,
    "graph": lambda c: 33 <= ord(c) < 127,
}
_ESC = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v", "\\": "\\"}


def _unescape(spec: str) -> list:
    """Characters of a SET, with [:class:] and [c*n] kept as markers."""
    out: list[str | tuple] = []
    i = 0
    while i < len(spec):
        c = spec[i]
        if c == "\\" and i + 1 < len(spec):
            e = spec[i + 1]
            m = re.match(r"[0-7]{1,3}", spec[i + 1:])
            if m:
                out.append(chr(int(m.group(), 8)))
                i += 1 + m.end()
                continue
            out.append(_ESC.get(e, e))
            i += 2
            continue
        if c == "[" and spec.startswith("[:", i):
            end = spec.find(":]", i)
            if end > 0:
                name = spec[i + 2:end]
                if name not in CLASSES:
                    raise UsageError(f"tr: invalid character class '{name}'")
                out.append(("class", name))
                i = end + 2
                continue
        repeat = re.match(r"\[(.)\*(\d*)\]", spec[i:]) if c == "[" else None
        if repeat:
            out.append(("repeat", repeat.group(1), int(repeat.group(2) or 0)))
            i += repeat.end()
            continue
        out.append(c)
        i += 1
    return out


def _expand(items: list, length_hint: int = 0) -> list:
    chars: list[str | tuple] = []
    i = 0
    while i < len(items):
        it = items[i]
        if isinstance(it, tuple):
            if it[0] == "class":
                # bytes, as GNU tr in a UTF-8 locale: classes hold ASCII characters only
                chars.extend(chr(c) for c in range(128) if CLASSES[it[1]](chr(c)))
            else:
                chars.append(("fill", it[1], it[2]))
            i += 1
            continue
        if i + 2 < len(items) and items[i + 1] == "-" and isinstance(items[i + 2], str):
            lo, hi = ord(it), ord(items[i + 2])
            if hi < lo:
                raise UsageError(f"tr: range-endpoints of '{it}-{items[i + 2]}' "
                                 "are in reverse collating sequence order")
            chars.extend(chr(c) for c in range(lo, hi + 1))
            i += 3
            continue
        chars.append(it)
        i += 1
    if any(isinstance(c, tuple) for c in chars):
        fixed = sum(1 if not isinstance(c, tuple) else c[2] for c in chars)
        out: list[str | tuple] = []
        for c in chars:
            if isinstance(c, tuple):
                n = c[2] if c[2] else max(0, length_hint - fixed)
                # characters past SET1's length are never used: [x*2000000000] needs no more
                out.extend(c[1] * min(n, max(length_hint, 1)))
            else:
                out.append(c)
        chars = out
    return chars


USAGE = Usage("[OPTION]... STRING1 [STRING2]", "Translate, squeeze, and/or delete characters from standard input.", (
    "-c, -C, --complement    use the complement of STRING1",
    "-d, --delete            delete characters in STRING1, do not translate",
    "-s, --squeeze-repeats   replace each sequence of a repeated character with one",
    "-t, --truncate-set1     first truncate STRING1 to length of STRING2"))


@command("tr", usage=USAGE)
def run(ctx, argv):
    opts, ops = parse("tr", argv, short_flags="cCdst",
                      long_flags={"complement": "c", "delete": "d", "squeeze-repeats": "s",
                                  "truncate-set1": "t"})
    flags = opts.flags
    delete, squeeze, complement = "d" in flags, "s" in flags, "c" in flags or "C" in flags
    if not ops:
        raise bad_usage("tr", "missing operand")
    need = 2 if not delete and not (squeeze and len(ops) == 1) else (2 if delete and squeeze else 1)
    if len(ops) < need:
        raise bad_usage("tr", f"missing operand after '{ops[-1]}'\nTwo strings must be given when translating.")
    if len(ops) > need:
        raise bad_usage("tr", f"extra operand '{ops[need]}'")
    translate = _plan(tuple(ops), delete, squeeze, complement, "t" in flags)
    ctx.out(translate(ctx.stdin.read_all()))
    return 0


_PLANS: dict = {}


def _plan(*key):
    """The text → text function for these operands and flags, kept for short operands:
    scripts run the same `tr a-z A-Z` many times, and building its sets costs more than
    translating a line."""
    plan = _PLANS.get(key)
    if plan is None:
        plan, size = _make_plan(*key)
        if size <= 4096:            # not a set of a million characters (a range up to U+10FFFF)
            if len(_PLANS) >= 256:
                _PLANS.clear()
            _PLANS[key] = plan
    return plan


def _make_plan(ops: tuple, delete: bool, squeeze: bool, complement: bool, truncate: bool):
    """(text → text function, how many characters its sets hold)"""
    set1 = _expand(_unescape(ops[0]))
    # str.translate and one regex pass over the text instead of a Python step per character
    selected = _char_class(set1, complement)
    if delete and not squeeze:
        return (lambda text: selected.sub("", text)), len(set1)
    if delete:
        set2 = _expand(_unescape(ops[1]))
        squeezed = _char_class(set2, False)
        return (lambda text: _squeeze(selected.sub("", text), squeezed)), len(set1) + len(set2)
    if len(ops) == 1:
        return (lambda text: _squeeze(text, selected)), len(set1)
    items1, items2 = _unescape(ops[0]), _unescape(ops[1])
    set2 = _expand(items2, len(set1))
    if not set2:
        raise UsageError("tr: when not truncating set1, string2 must be non-empty")
    _check_classes(items1, items2, set1, set2, complement)
    if complement:
        last = set2[-1]
        replace = lambda text: selected.sub(lambda m: last, text)
    else:
        table = {}
        for k, c in enumerate(set1):
            table[ord(c)] = set2[k] if k < len(set2) else (set2[-1] if not truncate else c)
        replace = lambda text: text.translate(table)
    size = len(set1) + len(set2)
    if not squeeze:
        return replace, size
    squeezed = _char_class(set2, False)
    return (lambda text: _squeeze(replace(text), squeezed)), size


def _check_classes(items1: list, items2: list, set1: list, set2: list, complement: bool):
    """GNU tr's rules for [:class:] in string2 when translating."""
    classes2 = [(k, it[1]) for k, it in enumerate(items2) if isinstance(it, tuple) and it[0] == "class"]
    if any(name not in ("upper", "lower") for _, name in classes2):
        raise UsageError("tr: when translating, the only character classes that may appear in\n"
                         "string2 are 'upper' and 'lower'")
    has_class1 = any(isinstance(it, tuple) and it[0] == "class" for it in items1)
    if complement and has_class1 and len(set(set2)) > 1:
        raise UsageError("tr: when translating with complemented character classes,\n"
                         "string2 must map all characters in the domain to one")
    if classes2 and (complement or not set(_class_offsets(items2)) <= set(_class_offsets(items1))):
        raise UsageError("tr: misaligned [:upper:] and/or [:lower:] construct")
    if items2 and isinstance(items2[-1], tuple) and items2[-1][0] == "class" and \
            (complement or len(set1) > len(set2)):
        raise UsageError("tr: when translating with string1 longer than string2,\n"
                         "the latter string must not end with a character class")


def _class_offsets(items: list) -> list:
    """Where each [:upper:] or [:lower:] starts in the expanded set."""
    out, offset = [], 0
    for it in items:
        if isinstance(it, tuple) and it[0] == "class":
            if it[1] in ("upper", "lower"):
                out.append(offset)
            offset += len(_expand([it]))
        else:
            offset += 1
    return out


def _char_class(chars: list, complement: bool):
    """A regex matching one character of chars (or, complemented, any other)."""
    if not chars:
        return re.compile(r"[\s\S]" if complement else r"(?!)")
    members = "".join(sorted({re.escape(c) for c in chars}))
    return re.compile(("[^" if complement else "[") + members + "]")


def _squeeze(text: str, member) -> str:
    """Each run of one repeated character that `member` matches becomes one."""
    return re.compile(f"({member.pattern})\\1+").sub(r"\1", text)
