"""bc's numbers: arbitrary precision decimals that carry their own scale (digits after the
point), with GNU bc's rules for the scale of each result (number.c). Every result is truncated,
never rounded. The size of a number is bounded, so `10^10^10`, `scale=10^9; 1/3` or a power of
ten for a scale of 10^9 is refused before Python is asked to build it; conversions to and from
other bases go through `radix`, in less than quadratic time and under the clock."""
from __future__ import annotations

import math
from functools import lru_cache
from math import isqrt

from ...base.errors import LimitExceeded
# The thread-local budget: a Num's arithmetic and printing are handed no context (operators)
from ...base.limits import string_limit, time_left, timed_out
from . import radix


class BcError(Exception):
    """A runtime error: bc prints it and abandons the statement being run."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


def pow10(k: int) -> int:
    """10**k, refused past the digits a number may have (a scale of 10^9 asks for it)."""
    if k <= _CACHED_POWERS:
        return _small_pow10(k)
    check_digits(k, "a power of ten")
    return 10 ** k


_CACHED_POWERS = 4096         # the cache keeps small powers only (big ones would stay in memory)


@lru_cache(maxsize=256)
def _small_pow10(k: int) -> int:
    return 10 ** k


def max_digits() -> int:
    """The most digits a number may have: a sixteenth of max_string_length (a million by
    default), so the arithmetic on it stays within a fraction of a second."""
    return max(1000, string_limit() // 16)      # thread-local: called from Num's operators


def check_digits(estimate: int, what: str):
    limit = max_digits()
    if estimate > limit:
        raise LimitExceeded("max_string_length",
                            f"bc: {what} would have more than {limit} digits (max_string_length)")


# Digit pairs a slow machine divides per second (Python's long division is quadratic: a
# quotient of q digits by a divisor of d digits costs about q*d); products and square roots are
# counted the same way, which overestimates them.
DIGIT_PAIRS_PER_SECOND = 10 ** 10


def afford(digits_a: int, digits_b: int):
    """Refuse, as the deadline would, one operation that would run past the time left: a
    single big-number operation cannot look at the clock while it runs."""
    work = digits_a * digits_b
    if work > 10 ** 8:
        left = time_left()              # thread-local: called from Num's operators
        if left is not None and work / DIGIT_PAIRS_PER_SECOND > left:
            raise timed_out()


# Seconds a conversion of a million digits takes on the 2-core development machine (radix),
# growing about as n**1.6; a slow machine is allowed half as much again.
TO_DECIMAL_SECONDS = 0.9            # an int to decimal text
FROM_TEXT_SECONDS = 1.5             # digits to an int
TO_BASE_SECONDS = 3.0               # an int to the digits of another base (3, 17, 1000 ...)


def afford_conversion(digits: int, seconds_per_million: float):
    """Refuse, as the deadline would, a conversion of a big number that cannot end in the time
    left: its largest steps (a product or quotient of half its size) cannot look at the clock."""
    if digits > 100_000:
        left = time_left()              # thread-local: called from Num's conversions
        if left is not None and 1.5 * seconds_per_million * (digits / 1e6) ** 1.6 > left:
            raise timed_out()


def _digits(n: int) -> int:
    return int(n.bit_length() * 0.30103) + 1


def decimal_length(n: int) -> int:
    """The number of decimal digits of n != 0, exactly, without converting it."""
    n = abs(n)
    length = int((n.bit_length() - 1) * 0.30102999) + 1      # never above the true length
    while n >= pow10(length):
        length += 1
    return length


def _truncating_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


class Num:
    """n / 10**scale."""
    __slots__ = ("n", "scale")

    def __init__(self, n: int, scale: int = 0):
        self.n = n
        self.scale = scale

    def __repr__(self):
        return f"Num({self.to_decimal()})"

    def is_zero(self) -> bool:
        return self.n == 0

    def sign(self) -> int:
        return (self.n > 0) - (self.n < 0)

    def rescaled(self, scale: int) -> int:
        """The digits at another scale (truncated when it is smaller). Zeros and digits cut away
        whole cost nothing, whatever the scales (a zero may carry a scale of 10^9)."""
        if not self.n:
            return 0
        if scale >= self.scale:
            return self.n * pow10(scale - self.scale)
        drop = self.scale - scale
        if abs(self.n).bit_length() <= 3 * drop:      # |n| < 8**drop <= 10**drop: all cut away
            return 0
        return _truncating_div(self.n, pow10(drop))

    def truncated(self, scale: int) -> "Num":
        return self if scale >= self.scale else Num(self.rescaled(scale), scale)

    def integer(self) -> int:
        return self.rescaled(0)

    def compare(self, other: "Num") -> int:
        if self.sign() != other.sign() or not self.n:
            return (self.sign() > other.sign()) - (self.sign() < other.sign())
        s = max(self.scale, other.scale)
        a, b = self.rescaled(s), other.rescaled(s)
        return (a > b) - (a < b)

    def length(self) -> int:
        """bc's length(): significant digits (the scale counts, leading zeros do not)."""
        if self.n == 0:
            return max(1, self.scale)
        return max(decimal_length(self.n), self.scale)

    def to_decimal(self) -> str:
        return format_number(self, 10)


# ------------------------------------------------------------------ arithmetic

def add(a: Num, b: Num, min_scale: int = 0) -> Num:
    s = max(a.scale, b.scale, min_scale)
    return Num(a.rescaled(s) + b.rescaled(s), s)


def sub(a: Num, b: Num, min_scale: int = 0) -> Num:
    s = max(a.scale, b.scale, min_scale)
    return Num(a.rescaled(s) - b.rescaled(s), s)


def mul(a: Num, b: Num, scale: int) -> Num:
    full = a.scale + b.scale
    keep = min(full, max(scale, a.scale, b.scale))
    _check_product(a, b, keep)
    return Num(a.n * b.n, full).truncated(keep)


def _check_product(a: Num, b: Num, scale: int):
    """The digits of the product, and its scale: squaring .1 thirty times at a large `scale`
    keeps one digit but doubles the scale each time."""
    check_digits(max(scale, int((a.n.bit_length() + b.n.bit_length()) * 0.30103)), "a product")
    afford(_digits(a.n), _digits(b.n))


def div(a: Num, b: Num, scale: int) -> Num:
    if b.n == 0:
        raise BcError("Divide by zero")
    quotient_digits = int(a.n.bit_length() * 0.30103) + scale + b.scale
    check_digits(quotient_digits, "a quotient")
    afford(max(1, quotient_digits - _digits(b.n)), _digits(b.n) + a.scale)
    numerator = a.n * pow10(b.scale + scale)
    denominator = b.n * pow10(a.scale)
    return Num(_truncating_div(numerator, denominator), scale)


def mod(a: Num, b: Num, scale: int) -> Num:
    """a - (a/b)*b, the quotient at `scale` (GNU bc's bc_modulo)."""
    if b.n == 0:
        raise BcError("Modulo by zero")
    result_scale = max(a.scale, b.scale + scale)
    quotient = div(a, b, scale)
    return sub(a, mul(quotient, b, result_scale), result_scale)


def power(a: Num, exponent: int, scale: int) -> Num:
    """a^exponent (an integer): exact, then truncated to min(a.scale*e, max(scale, a.scale));
    a negative exponent divides 1 by the power at `scale`."""
    if exponent == 0:
        return Num(1, 0)
    magnitude = abs(exponent)
    keep = min(a.scale * magnitude, max(scale, a.scale))
    check_digits(keep, "a power")
    if a.n == 0:
        if exponent < 0:
            raise BcError("Divide by zero")
        return Num(0, keep)
    if abs(a.n) == pow10(a.scale):                     # ±1 does not grow
        sign = -1 if a.n < 0 and magnitude % 2 else 1
        at = scale if exponent < 0 else keep
        return Num(sign * pow10(at), at)
    check_digits(int(magnitude * math.log10(abs(a.n))), "a power")
    value = Num(a.n ** magnitude, a.scale * magnitude)
    if exponent < 0:
        return div(Num(1, 0), value, scale)
    return value.truncated(keep)


def sqrt(a: Num, scale: int) -> Num:
    if a.n < 0:
        raise BcError("Square root of a negative number")
    result_scale = max(scale, a.scale)
    root_digits = int(a.n.bit_length() * 0.30103) // 2 + result_scale
    check_digits(root_digits, "a square root")
    afford(root_digits, root_digits)
    return Num(isqrt(a.n * pow10(2 * result_scale - a.scale)), result_scale)


# ------------------------------------------------------------------ reading and printing

DIGIT_VALUES = {c: i for i, c in enumerate("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ")}
# GNU bc reads a digit at or above ibase as ibase-1 (ZZZ is the largest three digits)
_CLAMPED = {base: str.maketrans({c: "0123456789ABCDEF"[base - 1] for c, v in DIGIT_VALUES.items()
                                 if v >= base}) for base in range(2, 17)}


def parse_number(text: str, ibase: int) -> Num:
    """A numeric literal in base `ibase`, its scale the number of digits written after the point.
    Digits at or above ibase count as ibase-1, but for a lone digit before the point (or, in
    base 10, a lone digit), which is its own value: GNU bc's push_constant and push_b10_const."""
    whole, _, fraction = text.partition(".")
    check_digits(int(len(whole) * math.log10(ibase)) + len(fraction), "a number")
    afford_conversion(len(text), FROM_TEXT_SECONDS)
    lone = len(whole) == 1 and (ibase != 10 or not fraction)
    clamped_whole = whole.translate(_CLAMPED[ibase]) if not lone else "0"
    fraction = fraction.translate(_CLAMPED[ibase])
    if ibase == 10 and not lone:
        return Num(radix.from_text((clamped_whole + fraction) or "0", 10), len(fraction))
    value = DIGIT_VALUES[whole] if lone else radix.from_text(clamped_whole or "0", ibase)
    if not fraction:
        return Num(value, 0)
    if ibase == 10:
        return Num(value * pow10(len(fraction)) + radix.from_text(fraction, 10), len(fraction))
    numerator = Num(radix.from_text(fraction, ibase), 0)
    return add(Num(value, 0), div(numerator, Num(ibase ** len(fraction), 0), len(fraction)))


def format_number(x: Num, obase: int) -> str:
    """The digits bc prints for x (without line breaks)."""
    if x.n == 0:
        return "0"
    sign = "-" if x.n < 0 else ""
    magnitude = abs(x.n)
    if obase == 10:
        afford_conversion(_digits(magnitude), TO_DECIMAL_SECONDS)
        text = radix.decimal_text(magnitude)
        if not x.scale:
            return sign + text
        return sign + text[:-x.scale] + "." + text[-x.scale:].rjust(x.scale, "0")
    _check_printed_length(magnitude, x.scale, obase)
    if obase & (obase - 1) or x.scale:                  # (a power of two converts in linear time)
        afford_conversion(_digits(magnitude), TO_BASE_SECONDS)
    whole, fraction = radix.in_base(magnitude, x.scale, obase)
    text = _rendered(whole, obase)
    if x.scale:
        text += "." + _rendered(fraction, obase)[obase > 16:]      # no space after the point
    return sign + text


def _check_printed_length(magnitude: int, scale: int, obase: int):
    """Refuse, before converting, a number whose digits in obase would pass max_string_length."""
    whole_bits = max(0, magnitude.bit_length() - int(scale * 3.32))
    count = whole_bits / math.log2(obase) + 1 + (radix.fraction_width(scale, obase) if scale else 0)
    length = int(count * _digit_width(obase))
    limit = string_limit()              # thread-local: format_number has no context
    if length > limit:
        raise LimitExceeded("max_string_length", f"bc: a number printed in base {obase} would be "
                            f"longer than {limit} characters (max_string_length)")


def _digit_width(obase: int) -> int:
    """Characters of one printed digit: a letter up to base 16, else a space and decimal digits."""
    return 1 if obase <= 16 else 1 + len(str(obase - 1))


_DIGIT_CHARS = bytes.maketrans(bytes(range(16)), b"0123456789ABCDEF")


def _rendered(digits: list, obase: int) -> str:
    if obase <= 16:
        return bytes(digits).translate(_DIGIT_CHARS).decode("ascii")
    width = len(str(obase - 1))
    return "".join([f" {d:0{width}d}" for d in digits])
