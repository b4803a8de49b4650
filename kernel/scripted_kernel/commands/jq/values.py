"""jq's values as text: numbers and documents printed as jq 1.7+ prints them, and input
parsed into Python values where nothing of its text would be lost."""
from __future__ import annotations

import json
import re
from decimal import Decimal

BLANKS = re.compile(r"[ \t\r\n]*")


def skip_blanks(text: str, pos: int = 0) -> int:
    """The index of the first character at or after `pos` that is not JSON whitespace."""
    m = BLANKS.match(text, pos)
    assert m is not None                  # the pattern matches the empty string
    return m.end()


def special_number(text: str) -> bool:
    """Whether jq 1.7+ prints this number text otherwise than the double it stands for: libjq
    keeps the decNumber form of what it was handed (`1.50`, `1E+2`, `0.00001`, `-0`, more
    digits than a double holds)."""
    if not any(c in text for c in ".eE"):
        return len(text.lstrip("-")) > 17 or text == "-0"
    return ("e" in text or "E" in text or text[-1] == "0" or text.lstrip("-").startswith("0.0000")
            or len(text.lstrip("-0.").replace(".", "")) > 17)



def _number(v, literal_ints: bool = False) -> str:
    """jq's number format: the shortest digits of the double, in decimal notation unless the
    exponent is far out (jv_dtoa_fmt: decpt <= -4 or decpt > ndigits + 15). `literal_ints`:
    every integer is one jq was handed as text, whose digits jq 1.7+ keeps (fast.py's results:
    its arithmetic makes doubles); otherwise a large one may stand for a double."""
    if type(v) is int and (literal_ints or -10 ** 17 < v < 10 ** 17):
        return str(v)
    x = float(v)
    if x != x:
        return "null"
    if x in (float("inf"), float("-inf")):
        return "1.7976931348623157e+308" if x > 0 else "-1.7976931348623157e+308"
    if x == 0:
        return "-0" if str(x).startswith("-") else "0"
    sign, digit_tuple, exponent = Decimal(repr(x)).normalize().as_tuple()
    assert isinstance(exponent, int)      # a finite number ('n', 'N', 'F' are NaN and infinity)
    digits = "".join(map(str, digit_tuple))
    decpt = len(digits) + exponent
    text = "-" if sign else ""
    if decpt <= -4 or decpt > len(digits) + 15:
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        e = decpt - 1
        return f"{text}{mantissa}e{'-' if e < 0 else '+'}{abs(e):02d}"
    if decpt <= 0:
        return f"{text}0.{'0' * -decpt}{digits}"
    if decpt >= len(digits):
        return text + digits + "0" * (decpt - len(digits))
    return f"{text}{digits[:decpt]}.{digits[decpt:]}"


def dump(v, indent, sort_keys: bool, ascii_only: bool, level: int = 0,
         literal_ints: bool = False) -> str:
    """A JSON value as jq prints it (indent: None for compact, else the indent string)."""
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, (int, float)):
        return _number(v, literal_ints)
    if isinstance(v, str):
        text = json.dumps(v, ensure_ascii=ascii_only)
        return text.replace("\x7f", "\\u007f")
    if isinstance(v, list):
        if not v:
            return "[]"
        if indent is None:
            return "[" + ",".join(dump(x, None, sort_keys, ascii_only, 0, literal_ints) for x in v) + "]"
        inner = indent * (level + 1)
        items = (",\n" + inner).join(dump(x, indent, sort_keys, ascii_only, level + 1, literal_ints)
                                     for x in v)
        return "[\n" + inner + items + "\n" + indent * level + "]"
    if isinstance(v, dict):
        if not v:
            return "{}"
        keys = sorted(v) if sort_keys else list(v)
        if indent is None:
            return "{" + ",".join(dump(k, None, False, ascii_only) + ":" +
                                  dump(v[k], None, sort_keys, ascii_only, 0, literal_ints)
                                  for k in keys) + "}"
        inner = indent * (level + 1)
        items = (",\n" + inner).join(dump(k, None, False, ascii_only) + ": " +
                                     dump(v[k], indent, sort_keys, ascii_only, level + 1, literal_ints)
                                     for k in keys)
        return "{\n" + inner + items + "\n" + indent * level + "}"
    return json.dumps(v)


# ---------------------------------------------------------------- input

# -0 as a JSON number (not `-0.5`, not inside `SKU-001`): jq prints it so, Python's int cannot
# (starting with the literal `-` lets the regex engine skip ahead quickly)
_NEGATIVE_ZERO = re.compile(r"-0(?![\d.eE])(?<![\w.-]-0)")


def watching_decoder():
    """A JSON decoder, and a list that gets the text of a number jq 1.7+ would print as it was
    written (`special_number`): input with such a number goes to libjq."""
    special: list[str] = []

    def parse_float(number: str) -> float:
        if not special and special_number(number):
            special.append(number)
        return float(number)
    return json.JSONDecoder(parse_float=parse_float), special


def has_negative_zero(text: str) -> bool:
    return "-0" in text and _NEGATIVE_ZERO.search(text) is not None


def parse_values(text: str):
    """The JSON values of a text stream, for fast.py; None where libjq must read it: text
    Python's parser refuses, or a number whose text jq keeps (`special_number`, `-0`)."""
    decoder, special = watching_decoder()
    pos, n = 0, len(text)
    values = []
    try:
        while True:
            pos = skip_blanks(text, pos)
            if pos >= n:
                break
            value, pos = decoder.raw_decode(text, pos)
            values.append(value)
    except json.JSONDecodeError:
        return None
    if special or has_negative_zero(text):
        return None
    return values
