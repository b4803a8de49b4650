"""numfmt: numbers to and from human-readable sizes (GNU coreutils), following its
double_to_human: scale, round (from zero by default) at one decimal below 10, print."""
from __future__ import annotations

import decimal
import math
import re
from decimal import Decimal
from typing import Callable, Optional

from ._options import Inputs, UsageError, parse, split_lines
from ._bytes import INTMAX, UINTMAX, bounded_decimal, locale_quote
from .registry import Usage, command
from ..base.limits import Budget

USAGE = Usage("[OPTION]... [NUMBER]...", "Reformat NUMBER(s), or the numbers from standard "
              "input if none are specified.", (
    "-d, --delimiter=X    use X instead of whitespace for field delimiter",
    "--field=FIELDS   replace the numbers in these input fields (default=1)",
    "--format=FORMAT  use printf style floating-point FORMAT",
    "--from=UNIT      auto-scale input numbers to UNITs; default is 'none'",
    "--from-unit=N    specify the input unit size (instead of the default 1)",
    "--grouping       use locale-defined grouping of digits",
    "--header[=N]     print (without converting) the first N header lines",
    "--invalid=MODE   failure mode for invalid numbers: abort, fail, warn, ignore",
    "--padding=N      pad the output to N characters",
    "--round=METHOD   up, down, from-zero (default), towards-zero, nearest",
    "--suffix=SUFFIX  add SUFFIX to output numbers, and accept optional SUFFIX in input numbers",
    "--to=UNIT        auto-scale output numbers to UNITs",
    "--to-unit=N      the output unit size (instead of the default 1)",
    "-z, --zero-terminated  line delimiter is NUL, not newline"))

_POWERS = "KMGTPEZY"
_UNITS = ("none", "si", "iec", "iec-i")
_HALF = Decimal("0.5")
_HUGE = Decimal("1e27")                 # 1000Y: past what a suffix can show
_ROUNDING: dict[str, Callable[[Decimal], int]] = {
    "up": math.ceil, "down": math.floor, "towards-zero": math.trunc,
    "from-zero": lambda v: math.ceil(v) if v > 0 else math.floor(v),
    "nearest": lambda v: math.floor(v + _HALF) if v >= 0 else math.ceil(v - _HALF)}
# GNU computes in a long double (a 64-bit mantissa, some 19 to 20 decimal digits): a double
# printed 9999999999999999999 as 1e+19 and rounded 1e26 - 1 up to 101Y
LONG_DOUBLE = decimal.Context(prec=20)


class Invalid(Exception):
    """A number numfmt cannot convert: the message, in GNU's words."""


class Aborted(Exception):
    """--invalid=abort (the default): the lines converted so far are printed, status 2."""


class Settings:
    def __init__(self, opts, budget: Budget):
        self.source = _unit(opts.get("from", "none"), "--from", _UNITS + ("auto",))
        self.target = _unit(opts.get("to", "none"), "--to", _UNITS)
        self.from_unit = _unit_size(opts.get("from-unit", "1"))
        self.to_unit = _unit_size(opts.get("to-unit", "1"))
        method = opts.get("round", "from-zero")
        if method not in _ROUNDING:
            raise _bad_choice(method, "--round", tuple(_ROUNDING))
        self.round = _ROUNDING[method]
        self.suffix = opts.get("suffix", "")
        self.padding = _padding(budget, opts.get("padding")) if opts.has("padding") else 0
        self.format = _format(budget, opts.get("format")) if opts.has("format") else None
        self.invalid = opts.get("invalid", "abort")
        if self.invalid not in ("abort", "fail", "warn", "ignore"):
            raise _bad_choice(self.invalid, "--invalid", ("abort", "fail", "warn", "ignore"))


def _bad_choice(value: str, option: str, choices: tuple) -> UsageError:
    listed = "".join(f"  - ‘{c}’\n" for c in choices)
    return UsageError(f"numfmt: invalid argument {locale_quote(value)} for ‘{option}’\n"
                      f"Valid arguments are:\n{listed}Try 'numfmt --help' for more information.")


def _unit(value: str, option: str, choices: tuple) -> str:
    if value not in choices:
        raise _bad_choice(value, option, choices)
    return value


def _unit_size(text: str) -> int:
    """A unit size from 1 to UINTMAX (GNU's unit_to_umax)."""
    if not (text.isascii() and text.isdigit()) or not 0 < bounded_decimal(text) <= UINTMAX:
        raise UsageError(f"numfmt: invalid unit size: {locale_quote(text)}")
    return int(text)


def _padding(budget: Budget, text: str) -> int:
    """A width as a C long, not 0; past max_string_length refused (GNU pads to 2 GB)."""
    m = re.fullmatch(r"-?(\d+)", text)
    if not m or not 0 < bounded_decimal(m.group(1)) <= INTMAX:
        raise UsageError(f"numfmt: invalid padding value {locale_quote(text)}")
    budget.check_length(int(m.group(1)), "numfmt")
    return int(text)


def _format(budget: Budget, text: str):
    """(prefix, flags, width, precision, suffix) of a --format=...%f... value; a width or a
    precision past a C long is GNU's complaint, a width past max_string_length refused."""
    m = re.fullmatch(r"((?:[^%]|%%)*)%([0'-]*)(\d*)(?:\.(\d*))?f((?:[^%]|%%)*)", text)
    if not m:
        raise UsageError(f"numfmt: invalid format {locale_quote(text)}, directive must be "
                         f"%[0]['][-][N][.][N]f")
    if bounded_decimal(m.group(3) or "0") > INTMAX:
        raise UsageError(f"numfmt: invalid format {locale_quote(text)} (width overflow)")
    if bounded_decimal(m.group(4) or "0") > INTMAX:
        raise UsageError(f"numfmt: invalid precision in format {locale_quote(text)}")
    precision = int(m.group(4) or 0) if m.group(4) is not None else None
    budget.check_length(int(m.group(3) or 0), "numfmt")
    return (m.group(1).replace("%%", "%"), m.group(2), int(m.group(3) or 0), precision,
            m.group(5).replace("%%", "%"))


def _parse_number(text: str, s: Settings):
    """(value, decimals in the input) of one field, with its --from suffix."""
    body = text.strip()
    if s.suffix and body.endswith(s.suffix):
        body = body[:-len(s.suffix)]
    m = re.fullmatch(r"(-?(\d*)(?:\.(\d*))?)(.*)", body, re.S)
    if not m or not re.search(r"\d", m.group(1)):
        raise Invalid(f"invalid number: {locale_quote(text.strip())}")
    if len(m.group(2).lstrip("0")) > MAX_DIGITS:
        raise Invalid(f"value too large to be converted: {locale_quote(text.strip())}")
    value = LONG_DOUBLE.create_decimal(m.group(1))
    letters = m.group(4)
    decimals = len(m.group(3)) if m.group(3) is not None and not letters else 0
    if letters:
        value *= _suffix_scale(letters, s, text.strip())
    return value * s.from_unit, decimals


def _suffix_scale(letters: str, s: Settings, original: str) -> int:
    power = _POWERS.find(letters[0]) + 1
    if power == 0 or len(letters) > 2 or (len(letters) == 2 and letters[1] != "i"):
        raise Invalid(f"invalid suffix in input: {locale_quote(original)}")
    if s.source == "none":
        raise Invalid(f"rejecting suffix in input: {locale_quote(original)} (consider using --from)")
    has_i = len(letters) == 2
    if s.source == "iec-i" and not has_i:
        raise Invalid(f"missing 'i' suffix in input: {locale_quote(original)} (e.g Ki/Mi/Gi)")
    base = 1024 if s.source in ("iec", "iec-i") or (s.source == "auto" and has_i) else 1000
    if s.source == "si" and has_i:
        raise Invalid(f"invalid suffix in input: {locale_quote(original)}")
    return base ** power


# GNU's MAX_UNSCALED_DIGITS (a long double's digits) and MAX_ACCEPTABLE_DIGITS
UNSCALED_DIGITS, MAX_DIGITS = 18, 27


def _check_printable(value: Decimal, precision: int):
    """GNU's prepare_padded_number without --to: digits before the point (expld) and after it
    within a long double's, else its complaint (status 2)."""
    exponent = len(str(int(abs(value)))) - 1 if abs(value) >= 1 else 0
    if exponent + precision > UNSCALED_DIGITS:
        if precision:
            raise Invalid(f"value/precision too large to be printed: '{float(value):g}/{precision}' "
                          f"(consider using --to)")
        raise Invalid(f"value too large to be printed: '{float(value):g}' (consider using --to)")


def to_human(value: Decimal, decimals: int, s: Settings) -> str:
    """GNU double_to_human."""
    user_precision = s.format[3] if s.format else None
    value /= s.to_unit
    if s.target == "none":
        precision = user_precision if user_precision is not None else decimals
        _check_printable(value, precision)
        scaled = Decimal(s.round(value.scaleb(precision))).scaleb(-precision)
        return f"{scaled:.{precision}f}"
    base = 1000 if s.target == "si" else 1024
    power = 0
    while abs(value) >= base and power < len(_POWERS):
        value /= base
        power += 1
    if abs(value) >= base:
        raise Invalid("value too large to be converted")
    if user_precision is not None:
        adjust = min(power * 3, user_precision)
    else:
        adjust = 1 if abs(value) < 10 else 0
    value = Decimal(s.round(value.scaleb(adjust))).scaleb(-adjust)
    if abs(value) >= base:
        value /= base
        power += 1
    shown = user_precision if user_precision is not None else (
        1 if value != 0 and abs(value) < 10 and power > 0 else 0)
    letter = _POWERS[power - 1] if power else ""
    if s.target == "iec-i" and power:
        letter += "i"
    return f"{value:.{shown}f}{letter}"


def convert(field: str, s: Settings) -> str:
    with decimal.localcontext(LONG_DOUBLE):
        return _converted(field, s)


def _converted(field: str, s: Settings) -> str:
    value, decimals = _parse_number(field, s)
    if abs(value) >= _HUGE and s.target != "none":
        raise Invalid(f"value too large to be printed: '{float(value):g}' (cannot handle values > 999Y)")
    number = to_human(value, decimals, s) + s.suffix
    if s.format:
        prefix, flags, width, _, tail = s.format
        if width:
            if "-" in flags:
                number = number.ljust(width)
            elif "0" in flags and number[:1] not in "-":
                number = number.rjust(width, "0")
            else:
                number = number.rjust(width)
        number = prefix + number + tail
    if s.padding:
        number = number.rjust(s.padding) if s.padding > 0 else number.ljust(-s.padding)
    elif field[:1].isspace() and len(field) > len(number):
        number = number.rjust(len(field))      # GNU: keep the width of a blank-padded field
    return number


def _fields(spec: str):
    """A --field list as a predicate on 1-based field numbers."""
    ranges: list[tuple[int, Optional[int]]] = []
    for part in spec.split(","):
        m = re.fullmatch(r"(\d*)(-?)(\d*)", part)
        if not m or part in ("", "-"):
            if part == "-":
                ranges.append((1, None))
                continue
            raise UsageError(f"numfmt: invalid field value {locale_quote(part)}")
        for number in (m.group(1), m.group(3)):
            if number and bounded_decimal(number) >= UINTMAX:           # SIZE_MAX, and past it
                raise UsageError(f"numfmt: field number {locale_quote(number)} is too large\n"
                                 f"Try 'numfmt --help' for more information.")
        lo = int(m.group(1)) if m.group(1) else 1
        hi = (int(m.group(3)) if m.group(3) else None) if m.group(2) else lo
        if lo == 0:
            raise UsageError("numfmt: fields are numbered from 1\nTry 'numfmt --help' for more "
                             "information.")
        ranges.append((lo, hi))
    return lambda n: any(lo <= n and (hi is None or n <= hi) for lo, hi in ranges)


@command("numfmt", usage=USAGE)
def run(ctx, argv):
    header_args = ["--header=1" if a == "--header" else a for a in argv]
    opts, ops = parse("numfmt", header_args, short_flags="z", short_values="d", long_flags={
        "grouping": "grouping", "zero-terminated": "z", "debug": "debug"}, long_values={
        "delimiter": "d", "field": "field", "format": "format", "from": "from",
        "from-unit": "from-unit", "header": "header", "invalid": "invalid", "padding": "padding",
        "round": "round", "suffix": "suffix", "to": "to", "to-unit": "to-unit"})
    s = Settings(opts, ctx.budget)
    delimiter = opts.get("d")
    if delimiter is not None and len(delimiter) != 1:
        raise UsageError("numfmt: the delimiter must be a single character")
    wanted = _fields(opts.get("field", "1"))
    header_lines = _header(opts.get("header")) if opts.has("header") else 0
    end = "\0" if opts.has("z") else "\n"
    job = _Job(ctx, s, delimiter, wanted)
    if ops:
        lines, header = ops, 0
    else:
        text = Inputs(ctx, "numfmt", ["-"]).text()
        lines = split_lines(text, end)
        header = header_lines
    try:
        for k, line in enumerate(lines):
            job.write(line + end if k < header else job.line(line) + end)
    except Aborted:
        job.flush()
        return 2
    job.flush()
    if job.failed:
        return 2 if s.invalid in ("abort", "fail") else 0
    return 0


def _header(text: str) -> int:
    """--header=N: lines from 1 to UINTMAX."""
    if not (text.isascii() and text.isdigit()) or not 0 < bounded_decimal(text) <= UINTMAX:
        raise UsageError(f"numfmt: invalid header value {locale_quote(text)}")
    return int(text)


class _Job:
    def __init__(self, ctx, s: Settings, delimiter, wanted):
        self.ctx, self.s, self.delimiter, self.wanted = ctx, s, delimiter, wanted
        self.failed = False
        self.pending: list[str] = []        # output not written yet
        self.size = 0

    def write(self, text: str):
        """Output goes out a MiB at a time (a padding may be millions), the clock read then."""
        self.pending.append(text)
        self.size += len(text)
        if self.size >= 1 << 20 or len(self.pending) >= 4096:
            self.flush()
            self.ctx.budget.check_clock()

    def flush(self):
        self.ctx.out("".join(self.pending))
        self.pending, self.size = [], 0

    def line(self, line: str) -> str:
        if self.delimiter is not None:
            fields = line.split(self.delimiter)
            return self.delimiter.join(self._field(k + 1, f, line) for k, f in enumerate(fields))
        pieces = re.findall(r"\s*\S+|\s+$", line)
        return "".join(self._field(k + 1, f, line) if f.strip() else f
                       for k, f in enumerate(pieces))

    def _field(self, n: int, field: str, line: str) -> str:
        if not self.wanted(n):
            return field
        if self.failed and self.s.invalid == "abort":
            return field
        try:
            return convert(field, self.s)
        except Invalid as e:
            self.failed = True
            if self.s.invalid != "ignore":
                self.flush()                # (GNU's error() flushes standard output first)
                self.ctx.err(f"numfmt: {e}\n")
            if self.s.invalid == "abort":
                raise Aborted() from None
            return field
