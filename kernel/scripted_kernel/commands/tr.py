"""tr: translate, squeeze or delete characters."""
from __future__ import annotations

import re

from ._options import UsageError, bad_usage, parse, run_guarded

NAMES = ("tr",)
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
    out = []
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
        if c == "[" and re.match(r"\[(.)\*(\d*)\]", spec[i:]):
            m = re.match(r"\[(.)\*(\d*)\]", spec[i:])
            out.append(("repeat", m.group(1), int(m.group(2) or 0)))
            i += m.end()
            continue
        out.append(c)
        i += 1
    return out


def _expand(items: list, for_set2: bool = False, length_hint: int = 0) -> list:
    chars = []
    i = 0
    while i < len(items):
        it = items[i]
        if isinstance(it, tuple):
            if it[0] == "class":
                chars.extend(chr(c) for c in range(256) if CLASSES[it[1]](chr(c)))
            else:
                chars.append(("fill", it[1], it[2]))
            i += 1
            continue
        if i + 2 < len(items) and items[i + 1] == "-" and isinstance(items[i + 2], str):
            lo, hi = ord(it), ord(items[i + 2])
            if hi < lo:
                raise UsageError(f"tr: range-endpoints of '{it}-{items[i + 2]}' are in reverse collating sequence order")
            chars.extend(chr(c) for c in range(lo, hi + 1))
            i += 3
            continue
        chars.append(it)
        i += 1
    if any(isinstance(c, tuple) for c in chars):
        fixed = sum(1 if not isinstance(c, tuple) else c[2] for c in chars)
        out = []
        for c in chars:
            if isinstance(c, tuple):
                n = c[2] if c[2] else max(0, length_hint - fixed)
                out.extend(c[1] * n)
            else:
                out.append(c)
        chars = out
    return chars


def run(sh, argv):
    def body():
        opts, ops = parse("tr", argv, short_flags="cCdst",
                          long_flags={"complement": "c", "delete": "d", "squeeze-repeats": "s",
                                      "truncate-set1": "t"})
        delete, squeeze, complement = opts.has("d"), opts.has("s"), opts.has("c") or opts.has("C")
        if not ops:
            raise bad_usage("tr", "missing operand")
        need = 2 if not delete and not (squeeze and len(ops) == 1) else (2 if delete and squeeze else 1)
        if len(ops) < need:
            raise bad_usage("tr", f"missing operand after '{ops[-1]}'\nTwo strings must be given when translating.")
        if len(ops) > need:
            raise bad_usage("tr", f"extra operand '{ops[need]}'")
        set1 = _expand(_unescape(ops[0]))
        text = sh.stdin.read_all()
        in_set1 = set(set1)
        if complement:
            member = lambda c: c not in in_set1
        else:
            member = lambda c: c in in_set1
        if delete:
            text = "".join(c for c in text if not member(c))
            if squeeze:
                set2 = set(_expand(_unescape(ops[1])))
                text = _squeeze(text, lambda c: c in set2)
            sh.out(text)
            return 0
        if len(ops) == 2:
            set2 = _expand(_unescape(ops[1]), True, len(set1))
            if not set2:
                raise UsageError("tr: when not truncating set1, string2 must be non-empty")
            if complement:
                last = set2[-1]
                text = "".join(c if not member(c) else last for c in text)
            else:
                table = {}
                for k, c in enumerate(set1):
                    table[c] = set2[k] if k < len(set2) else (set2[-1] if not opts.has("t") else c)
                text = "".join(table.get(c, c) for c in text)
            if squeeze:
                s2 = set(set2)
                text = _squeeze(text, lambda c: c in s2)
        else:
            text = _squeeze(text, member)
        sh.out(text)
        return 0
    return run_guarded("tr", sh, body)


def _squeeze(text: str, member) -> str:
    out = []
    for c in text:
        if out and out[-1] == c and member(c):
            continue
        out.append(c)
    return "".join(out)
