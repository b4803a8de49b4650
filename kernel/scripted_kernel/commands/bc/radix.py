"""Big numbers to and from digits in any base, in less than quadratic time and under the clock.

Before Python 3.12 the interpreter's own conversions are quadratic (a million decimal digits:
over a minute, and refused past 4,300 digits), and so is its long division, which the schoolbook
conversion to another base repeats digit by digit (`obase=2; 7^355000` never ended). What is
faster:
- powers of two: binary and hexadecimal text convert in linear time (`format`, `int(text, 16)`);
- Python's multiplication (Karatsuba): digits become an int by halves, high * base**len(low) + low;
- the decimal module (libmpdec) multiplies and divides big numbers in about n log n (number
  theoretic transform, Newton division): an int becomes a Decimal by halves split at powers of
  two, whose decimal text is then linear, and a Decimal splits into digits of any base by divmod
  with base**(2**k), down to pieces small enough for Python's own conversions.
Every split of a large number looks at the clock (check_stop), so a conversion that cannot end in
time ends at the deadline; callers bound the sizes (numbers.check_digits) before converting."""
from __future__ import annotations

import decimal
import math
from decimal import Decimal
from functools import lru_cache

# The thread-local budget: conversions run inside Num's printing and parsing, with no context
from ...base.limits import check_stop

# Exact arithmetic on integers of any size (only products, sums, integer quotients and shifts
# are asked of it: a true division would be computed to MAX_PREC digits); quantize truncates.
_EXACT = decimal.Context(prec=decimal.MAX_PREC, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN,
                         rounding=decimal.ROUND_DOWN,
                         traps=[decimal.InvalidOperation, decimal.DivisionByZero, decimal.Overflow])
_SMALL_BITS = 4096            # below this (1,233 decimal digits) Python's own conversions are faster
_SMALL_DIGITS = 1000          # digits of text that int(text, base) converts at once
_LEAF_DIGITS = 600            # decimal digits of a piece that the D&C split hands to Python ints
_ONE = Decimal(1)
_TEXT_FORMATS = {2: "b", 8: "o", 16: "x"}
_HEX_VALUES = bytes.maketrans(b"0123456789abcdef", bytes(range(16)))


# ------------------------------------------------------------------------ decimal text

def decimal_text(n: int) -> str:
    """The decimal digits of n >= 0."""
    if n.bit_length() <= _SMALL_BITS:
        return str(n)
    return str(_to_decimal(n, {}))


def _to_decimal(n: int, powers: dict) -> Decimal:
    """n >= 0 as a Decimal: split at a power of two (so that the powers repeat) and joined with
    libmpdec's fast products."""
    if n.bit_length() <= _SMALL_BITS:
        return Decimal(n)
    check_stop()
    width = 1 << ((n.bit_length() - 1).bit_length() - 1)     # the largest power of two below
    high = n >> width
    low = n - (high << width)
    return _EXACT.fma(_to_decimal(high, powers), _power_of_two(width, powers), _to_decimal(low, powers))


def _power_of_two(width: int, powers: dict) -> Decimal:
    """2**width as a Decimal, width a power of two: each from the square of the one below."""
    power = powers.get(width)
    if power is None:
        power = Decimal(2) if width == 1 else _EXACT.multiply(*[_power_of_two(width >> 1, powers)] * 2)
        powers[width] = power
    return power


# ------------------------------------------------------------------------ reading digits

def from_text(text: str, base: int) -> int:
    """The value of `text`, digits valid in `base` (at most 36), most significant first."""
    if not base & (base - 1):
        return int(text, base)                      # linear for powers of two, and unlimited
    return _from_text(text, base, {})


def _from_text(text: str, base: int, powers: dict) -> int:
    if len(text) <= _SMALL_DIGITS:
        return int(text, base)
    check_stop()
    half = 1 << ((len(text) - 1).bit_length() - 1)          # a power of two: the powers repeat
    power = powers.get(half)
    if power is None:
        power = powers[half] = base ** half
    return _from_text(text[:-half], base, powers) * power + _from_text(text[-half:], base, powers)


# ------------------------------------------------------------------------ writing digits

def whole_digits(n: int, base: int) -> list[int]:
    """The digits of n >= 0 in `base`, most significant first (none for 0)."""
    if not n:
        return []
    if not base & (base - 1):
        return _power_of_two_digits(n, base)
    if n.bit_length() <= _SMALL_BITS:
        return _small_digits(n, base, 0)
    return decimal_digits(_to_decimal(n, {}), base, 0)


def _power_of_two_digits(n: int, base: int) -> list[int]:
    letter = _TEXT_FORMATS.get(base)
    if letter is not None:
        return list(format(n, letter).encode().translate(_HEX_VALUES))
    bits = base.bit_length() - 1
    text = format(n, "b")
    text = text.zfill(-(-len(text) // bits) * bits)
    return [int(text[k:k + bits], 2) for k in range(0, len(text), bits)]


def _small_digits(n: int, base: int, width: int) -> list[int]:
    """Digits of a small n, at least `width` of them: a machine word's worth of digits at a time,
    and for small bases a table giving the digits of each group of them (a Python step per
    digit was most of the cost)."""
    group, table = _digit_groups(base) if base <= _TABLE_SIZE else (1, None)
    unit = base ** group
    per_word = max(1, int(60 / math.log2(unit)))
    word = unit ** per_word
    digits: list[int] = []              # least significant first
    while n:
        n, chunk = divmod(n, word)
        for _ in range(per_word):
            chunk, part = divmod(chunk, unit)
            if table is None:
                digits.append(part)
            else:
                digits += table[part]
    while digits and digits[-1] == 0:                  # the last word's leading zeros
        digits.pop()
    digits.extend([0] * (width - len(digits)))
    digits.reverse()
    return digits


_TABLE_SIZE = 1024


@lru_cache(maxsize=16)
def _digit_groups(base: int) -> tuple[int, list]:
    """(g, table) for a base of at most _TABLE_SIZE: the largest g with base**g within the size,
    and the digits of every value below base**g, least significant first."""
    group = max(1, int(math.log(_TABLE_SIZE, base) + 1e-9))
    table = [tuple(_reversed_digits(value, base, group)) for value in range(base ** group)]
    return group, table


def _reversed_digits(value: int, base: int, count: int):
    for _ in range(count):
        value, digit = divmod(value, base)
        yield digit


def decimal_digits(d: Decimal, base: int, width: int) -> list[int]:
    """The digits of the integral Decimal d >= 0 in `base`, at least `width` of them (zeros in
    front): divide and conquer by base**(2**k)."""
    powers = [Decimal(base)]                     # powers[k] = base ** (2 ** k)
    while _EXACT.compare(powers[-1], d) <= 0:
        check_stop()
        powers.append(_EXACT.multiply(powers[-1], powers[-1]))
    digits: list[int] = []
    _split(d, len(powers) - 1, False, powers, base, digits)
    if len(digits) < width:
        digits[:0] = [0] * (width - len(digits))
    return digits


def _split(d: Decimal, level: int, pad: bool, powers: list, base: int, digits: list):
    """Append the digits of d < base**(2**level): exactly 2**level of them when `pad`, else
    without leading zeros."""
    if powers[level].adjusted() < _LEAF_DIGITS:
        count = 1 << level if pad else 0
        digits.extend(_small_digits(int(d), base, count) if d or pad else [])
        return
    check_stop()
    high, low = _EXACT.divmod(d, powers[level - 1])
    if high or pad:
        _split(high, level - 1, pad, powers, base, digits)
        _split(low, level - 1, True, powers, base, digits)
    else:
        _split(low, level - 1, False, powers, base, digits)


# ------------------------------------------------------------------------ numbers with a point

def in_base(magnitude: int, scale: int, base: int) -> tuple[list[int], list[int]]:
    """The digits in `base` of magnitude / 10**scale: those of its whole part (none for 0) and,
    when scale > 0, its first fraction_width(scale, base) fraction digits, truncated."""
    if not scale:
        return whole_digits(magnitude, base), []
    count = fraction_width(scale, base)
    if magnitude.bit_length() <= _SMALL_BITS and scale <= _LEAF_DIGITS:
        unit = 10 ** scale
        whole, fraction = divmod(magnitude, unit)
        return whole_digits(whole, base), _padded(whole_digits(fraction * base ** count // unit, base), count)
    # Python's divmod by 10**scale is quadratic: a shift of decimal digits instead
    d = _to_decimal(magnitude, {})
    whole_part = _EXACT.quantize(_EXACT.scaleb(d, -scale), _ONE)
    fraction_part = _EXACT.subtract(d, _EXACT.scaleb(whole_part, scale))
    scaled = _EXACT.multiply(fraction_part, _EXACT.power(Decimal(base), count))
    truncated = _EXACT.quantize(_EXACT.scaleb(scaled, -scale), _ONE)
    return decimal_digits(whole_part, base, 0), decimal_digits(truncated, base, count)


def _padded(digits: list[int], count: int) -> list[int]:
    return [0] * (count - len(digits)) + digits


def fraction_width(scale: int, base: int) -> int:
    """How many fraction digits bc prints in `base` for a number of `scale` decimals: the
    fewest k with base**k >= 10**scale (GNU bc's out_num)."""
    estimate = scale / math.log10(base)
    if abs(estimate - round(estimate)) > 1e-6:         # far from a whole number: the float decides
        return max(1, math.ceil(estimate))
    width = max(1, round(estimate))                      # near one: exactly, by the digit counts
    if _EXACT.power(Decimal(base), width).adjusted() < scale:
        return width + 1
    if width > 1 and _EXACT.power(Decimal(base), width - 1).adjusted() >= scale:
        return width - 1
    return width
