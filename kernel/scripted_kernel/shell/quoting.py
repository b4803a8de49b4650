"""Quoting values for reuse as shell input: `${x@Q}`, `printf %q`, `declare -p`, `set -x`."""
from __future__ import annotations

import re


def quote_for_reuse(value: str) -> str:
    """${x@Q}: single-quoted, or $'...' when the value holds control characters."""
    if needs_ansi_c(value):
        return "$'" + ansi_c_escape(value) + "'"
    return "'" + value.replace("'", "'\\''") + "'"


def needs_ansi_c(value: str) -> bool:
    """Control characters or bytes of invalid UTF-8: only $'...' can spell them."""
    return any(ord(c) < 32 or ord(c) == 127 or 0xDC80 <= ord(c) <= 0xDCFF for c in value)


def ansi_c_escape(value: str) -> str:
    out = []
    table = {"\n": "\\n", "\t": "\\t", "\r": "\\r", "\a": "\\a", "\b": "\\b", "\f": "\\f",
             "\v": "\\v", "\x1b": "\\E", "'": "\\'", "\\": "\\\\"}
    for c in value:
        if c in table:
            out.append(table[c])
        elif ord(c) < 32 or ord(c) == 127:
            out.append("\\%03o" % ord(c))
        elif 0xDC80 <= ord(c) <= 0xDCFF:          # a byte of invalid UTF-8
            out.append("\\%03o" % (ord(c) - 0xDC00))
        else:
            out.append(c)
    return "".join(out)


def printf_q(value: str) -> str:
    """printf %q: backslash quoting, $'...' for control characters, '' for empty."""
    if value == "":
        return "''"
    if needs_ansi_c(value):
        return "$'" + ansi_c_escape(value) + "'"
    if value[0] in "~#":                    # special only where a word starts
        return "\\" + value[0] + _Q_SPECIAL.sub(r"\\\1", value[1:])
    return _Q_SPECIAL.sub(r"\\\1", value)


# Characters %q escapes: ASCII punctuation, blanks and controls, and lone surrogates; printable
# non-ASCII text stays as it is (in a UTF-8 locale). Listed rather than negated: the negated
# class spans the whole of Unicode and takes `re` 5 ms to compile at every start.
_Q_SAFE_ASCII = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./:@%+=~#-")
_Q_SPECIAL = re.compile("([" + "".join(re.escape(chr(c)) for c in range(128) if chr(c) not in _Q_SAFE_ASCII)
                        + "\ud800-\udfff])")
