"""Backslash escapes of $'...', printf formats, printf %b and echo -e.

Escapes make bytes (\\xE2\\x98\\xA0 is one UTF-8 character; \\377 alone is an invalid byte),
so results are decoded as UTF-8 with invalid bytes kept as surrogates, like bash's byte strings.
"""
from __future__ import annotations

import re

_SIMPLE = {"a": 7, "b": 8, "e": 27, "E": 27, "f": 12, "n": 10, "r": 13, "t": 9, "v": 11, "\\": 92}
_QUOTES = {"'": 39, '"': 34, "?": 63}
_HEX = re.compile(r"[0-9A-Fa-f]{1,2}")


# A surrogate that `surrogateescape` does not make (those are U+DC80..U+DCFF, one per byte that
# is not UTF-8): no character and no byte, so nothing can encode it. JSON's "\ud800" gives one.
_LONE_SURROGATE = re.compile("[\ud800-\udc7f\udd00-\udfff]")


def text_from_host(text: str) -> str:
    """Text entering the shell from outside (a script, its input, a variable, a callback's
    result) with each lone surrogate that stands for no byte as U+FFFD, as a UTF-8 decoder
    shows such a sequence; the surrogates that stand for undecodable bytes stay bytes."""
    if text.isascii():
        return text
    return _LONE_SURROGATE.sub("\ufffd", text)


class StopOutput(Exception):
    """\\c in echo -e or %b: nothing more is printed. args[0] is the text before it."""


def decode(text: str, mode: str) -> str:
    """mode: 'ansi_c' ($'...'), 'format' (printf's format), 'echo' (echo -e), 'b' (%b)."""
    if "\\" not in text:
        return text
    out = bytearray()
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c != "\\" or i + 1 >= n:
            out += c.encode("utf-8", "surrogateescape")
            i += 1
            continue
        e = text[i + 1]
        i += 2
        if e in _SIMPLE:
            out.append(_SIMPLE[e])
        elif e in _QUOTES and mode in ("ansi_c", "format"):
            out.append(_QUOTES[e])
        elif e == "c" and mode in ("echo", "b"):
            raise StopOutput(out.decode("utf-8", "surrogateescape"))
        elif e == "c" and mode == "ansi_c" and i < n:
            out.append(ord(text[i]) & 0x1F)
            i += 1
        elif e in "01234567" and (e == "0" or mode != "echo"):
            start = i - 1
            if e == "0" and mode in ("echo", "b"):
                start = i           # \0NNN: up to three digits after the 0
            k = start
            while k < n and k < start + 3 and text[k] in "01234567":
                k += 1
            out.append(int(text[start:k] or "0", 8) & 0xFF)
            i = k
        elif e == "x":
            m = _HEX.match(text, i)
            if m:
                out.append(int(m.group(), 16))
                i = m.end()
            else:
                out += b"\\x"
        elif e in "uU":
            m = re.compile(r"[0-9A-Fa-f]{1,%d}" % (4 if e == "u" else 8)).match(text, i)
            if m:
                cp = int(m.group(), 16)
                out += (chr(cp) if cp < 0x110000 else "\ufffd").encode("utf-8", "surrogatepass")
                i = m.end()
            else:
                out += ("\\" + e).encode()
        else:
            out += ("\\" + e).encode("utf-8", "surrogateescape")
    return out.decode("utf-8", "surrogateescape")
