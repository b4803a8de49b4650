"""bc's numbers: arbitrary precision decimals that carry their own scale (digits after the
point), with GNU bc's rules for the scale of each result (number.c). Every result is truncated,
never rounded. The size of a number is bounded, so `10^10^10` or `scale=10^9; 1/3` is refused
before Python is asked to build it."""
from __future__ import annotations

from functools import lru_cache
from math import isqrt

from ...base.errors import LimitExceeded
from ...base.limits import string_limit, time_left, timed_out

_CHUNK = 4000                 # below Python's int/str conversion limit (4300 digits)


class BcError(Exception):
    """A runtime error: bc prints it and abandons the statement being run."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


@lru_cache(maxsize=256)
def pow10(k: int) -> int:
    return 10 ** k


def max_digits() -> int:
    """The most digits a number may have: a sixteenth of max_string_length (a million by
    default), so the arithmetic on it stays within a fraction of a second."""
    return max(1000, string_limit() // 16)


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
        left = time_left()
        if left is not None and work / DIGIT_PAIRS_PER_SECOND > left:
            raise timed_out()


def _digits(n: int) -> int:
    return int(n.bit_length() * 0.30103) + 1


def int_to_str(n: int) -> str:
    """Decimal digits of n >= 0, split into chunks so that Python's conversion limit (and its
    quadratic cost) never applies."""
    if n < pow10(_CHUNK):
        return str(n)
    half = int(n.bit_length() * 0.30103) // 2
    high, low = divmod(n, pow10(half))
    return int_to_str(high) + int_to_str(low).zfill(half)


def str_to_int(digits: str) -> int:
    if len(digits) <= _CHUNK:
        return int(digits)
    half = len(digits) // 2
    return str_to_int(digits[:-half]) * pow10(half) + str_to_int(digits[-half:])


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

    @classmethod
    def of(cls, value: int) -> "Num":
        return cls(value, 0)

    def is_zero(self) -> bool:
        return self.n == 0

    def sign(self) -> int:
        return (self.n > 0) - (self.n < 0)

    def rescaled(self, scale: int) -> int:
        """The digits at another scale (truncated when it is smaller)."""
        if scale >= self.scale:
            return self.n * pow10(scale - self.scale)
        return _truncating_div(self.n, pow10(self.scale - scale))

    def truncated(self, scale: int) -> "Num":
        return self if scale >= self.scale else Num(self.rescaled(scale), scale)

    def integer(self) -> int:
        return self.rescaled(0)

    def compare(self, other: "Num") -> int:
        s = max(self.scale, other.scale)
        a, b = self.rescaled(s), other.rescaled(s)
        return (a > b) - (a < b)

    def length(self) -> int:
        """bc's length(): significant digits (the scale counts, leading zeros do not)."""
        if self.n == 0:
            return max(1, self.scale)
        return max(len(int_to_str(abs(self.n))), self.scale)

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
    _check_product(a, b)
    return Num(_truncating_div(a.n * b.n, pow10(full - keep)), keep)


def _check_product(a: Num, b: Num):
    check_digits(int((a.n.bit_length() + b.n.bit_length()) * 0.30103), "a product")
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
    if a.n == 0:
        if exponent < 0:
            raise BcError("Divide by zero")
        return Num(0, keep)
    if abs(a.n) == pow10(a.scale):                     # ±1 does not grow
        sign = -1 if a.n < 0 and magnitude % 2 else 1
        at = scale if exponent < 0 else keep
        return Num(sign * pow10(at), at)
    check_digits(int(magnitude * a.n.bit_length() * 0.30103), "a power")
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


def parse_number(text: str, ibase: int) -> Num:
    """A numeric literal in base `ibase`; a single digit is its own value in any base, and the
    scale is the number of digits written after the point."""
    whole, _, fraction = text.partition(".")
    if ibase == 10:
        digits = (whole + fraction).lstrip("0") or "0"
        if all(c.isdigit() for c in digits):
            check_digits(len(digits), "a number")
            return Num(str_to_int(digits), len(fraction))
    if len(text) == 1:
        return Num(DIGIT_VALUES[text], 0)
    value = 0
    for c in whole:
        value = value * ibase + DIGIT_VALUES[c]
    if not fraction:
        return Num(value, 0)
    numerator = 0
    for c in fraction:
        numerator = numerator * ibase + DIGIT_VALUES[c]
    frac = div(Num(numerator, 0), Num(ibase ** len(fraction), 0), len(fraction))
    return add(Num(value, 0), frac)


def format_number(x: Num, obase: int) -> str:
    """The digits bc prints for x (without line breaks)."""
    if x.n == 0:
        return "0"
    sign = "-" if x.n < 0 else ""
    magnitude = abs(x.n)
    whole, fraction = divmod(magnitude, pow10(x.scale))
    if obase == 10:
        text = int_to_str(whole) if whole else ""
        if x.scale:
            text += "." + int_to_str(fraction).zfill(x.scale)
        return sign + text
    return sign + _whole_in_base(whole, obase) + _fraction_in_base(fraction, x.scale, obase)


def _digit(d: int, obase: int) -> str:
    if obase <= 16:
        return "0123456789ABCDEF"[d]
    return " " + str(d).zfill(len(str(obase - 1)))


def _whole_in_base(whole: int, obase: int) -> str:
    if whole == 0:
        return ""
    digits = []
    while whole:
        whole, d = divmod(whole, obase)
        digits.append(_digit(d, obase))
    return "".join(reversed(digits))


def _fraction_in_base(fraction: int, scale: int, obase: int) -> str:
    """As many digits as it takes for obase**k to have more than `scale` decimal digits."""
    if not scale:
        return ""
    out, reach, unit = ["."], 1, pow10(scale)
    while len(str(reach)) <= scale:
        fraction *= obase
        d, fraction = divmod(fraction, unit)
        digit = _digit(d, obase)
        out.append(digit[1:] if len(out) == 1 and obase > 16 else digit)   # no space after the point
        reach *= obase
    return "".join(out)
