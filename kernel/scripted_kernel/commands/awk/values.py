"""awk values: numbers (float), strings (str) and strnums (input that looks numeric)."""
from __future__ import annotations

import math
import re

_DECIMAL = re.compile(r"[ \t\n\r\f\v]*[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?[ \t\n\r\f\v]*\Z")
_LEADING_NUMBER = re.compile(r"\s*[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


class AwkError(Exception):
    def __init__(self, message: str, status: int = 2):
        super().__init__(message)
        self.message = message
        self.status = status


class StrNum(str):
    """A string from input that looks like a number: compares numerically."""
    __slots__ = ("num",)
    num: float


def strnum(text: str):
    """`text` as a strnum if it looks numeric. A number too large for a double is not one:
    it stays a string, as in mawk and the One True AWK (gawk makes it +inf)."""
    if (text.isdigit() and text.isascii()) or _DECIMAL.match(text):
        number = float(text)
        if number - number != 0.0:                 # overflowed to an infinity
            return text
        s = StrNum(text)
        s.num = number
        return s
    return text


_INF_NAN = re.compile(r"\s*([-+]?)(inf|infinity|nan)\s*\Z", re.I)


def to_num(v) -> float:
    t = type(v)
    if t is float:
        return v
    if t is StrNum:
        return v.num
    if t is int:
        return float(v)
    if v.isdigit() and v.isascii():
        return float(v)
    m = _LEADING_NUMBER.match(v)
    if m:
        return float(m.group())
    m = _INF_NAN.match(v)          # only the whole word: "inform" is 0
    if m:
        value = float(m.group(2)[:3])
        return -value if m.group(1) == "-" else value
    return 0.0


def num_to_str(n: float, fmt: str = "%.6g") -> str:
    if n.is_integer() and -2 ** 63 < n < 2 ** 63:
        return str(int(n))
    # Infinities and NaNs carry their sign, as gawk and the One True AWK print them (mawk
    # prints C's "inf" and "nan")
    if n != n:
        return "+nan" if math.copysign(1, n) > 0 else "-nan"
    if n in (math.inf, -math.inf):
        return "+inf" if n > 0 else "-inf"
    return fmt % n


EMPTY = StrNum("")        # the value of anything unset: "" and 0 at once
EMPTY.num = 0.0


def is_num(v) -> bool:
    t = type(v)
    return t is float or t is StrNum or t is int
