"""od: an unambiguous dump of binary data, as GNU coreutils' od.c writes it: octal bytes by
default, any -t types (or the old-style letters) side by side, with their addresses; -S lists
the strings. The dump core (reading, chunked output under the budget) is _dump's.
"""
from __future__ import annotations

import re
import struct
from math import lcm
from typing import Literal

from ..base.limits import Budget
from ._bytes import locale_quote
from ._dump import C_ESCAPES, UINTMAX, Sink, concatenated, printable, scaled_number
from ._options import UsageError, parse
from .registry import Usage, command

USAGE = Usage("[OPTION]... [FILE]...", "Write an unambiguous representation, octal bytes by "
                  "default, of FILE to standard output.", (
    "-A, --address-radix=RADIX   output format for file offsets; RADIX is one of [doxn]",
    "-j, --skip-bytes=BYTES      skip BYTES input bytes first",
    "-N, --read-bytes=BYTES      limit dump to BYTES input bytes",
    "-S BYTES, --strings[=BYTES]  show only NUL terminated strings",
    "-t, --format=TYPE           select output format or formats",
    "-v, --output-duplicates     do not use * to mark line suppression",
    "-w[BYTES], --width[=BYTES]  output BYTES bytes per output line",
    "--endian={big|little}       swap input bytes according the specified order"))

_OCT_DIGITS = {1: 3, 2: 6, 4: 11, 8: 22}
_SIGNED_DIGITS = {1: 4, 2: 6, 4: 11, 8: 20}
_UNSIGNED_DIGITS = {1: 3, 2: 5, 4: 10, 8: 20}
_FLOAT_WIDTH = {4: 15, 8: 24}
_SIZE_LETTERS = {"C": 1, "S": 2, "I": 4, "L": 8}
_FLOAT_LETTERS = {"F": 4, "D": 8}
_NAMES = ("nul soh stx etx eot enq ack bel bs ht nl vt ff cr so si dle dc1 dc2 dc3 dc4 nak syn "
          "etb can em sub esc fs gs rs us sp").split()
_OLD_FORMATS = {"a": "a", "b": "o1", "c": "c", "D": "u4", "d": "u2", "e": "fD", "F": "fD",
                "f": "fF", "H": "x4", "X": "x4", "i": "dI", "I": "dL", "L": "dL", "l": "dL",
                "O": "o4", "o": "o2", "B": "o2", "s": "d2", "x": "x2", "h": "x2"}


class OdType:
    """One -t type: its kind (a c d o u x f), the bytes of one datum, its field width, whether
    the printable characters follow the line (z), and its share of padding."""

    def __init__(self, kind: str, size: int, width: int, trailer: bool):
        self.kind, self.size, self.width, self.trailer = kind, size, width, trailer
        self.pad = 0

    def render(self, chunk: bytes, big_endian: bool) -> str:
        if self.kind == "a":
            c = chunk[0] & 0x7F
            return "del" if c == 127 else _NAMES[c] if c <= 32 else chr(c)
        if self.kind == "c":
            c = chunk[0]
            return C_ESCAPES.get(c) or (chr(c) if printable(c) else f"{c:03o}")
        order: Literal["big", "little"] = "big" if big_endian else "little"
        if self.kind == "f":
            value = struct.unpack((">" if big_endian else "<") + ("f" if self.size == 4 else "d"), chunk)[0]
            return _shortest_float(value, self.size)
        value = int.from_bytes(chunk, order, signed=self.kind == "d")
        if self.kind == "o":
            return f"{value:0{self.width}o}"
        if self.kind == "x":
            return f"{value:0{self.width}x}"
        return str(value)


def _shortest_float(value: float, size: int) -> str:
    """GNU ftoastr: the shortest %g form that reads back as the same float."""
    if value != value:
        return "nan" if struct.pack(">d", value)[0] < 0x80 else "-nan"
    for precision in range(1, 18):
        text = "%.*g" % (precision, value)
        back = float(text)
        if size == 4:
            back = struct.unpack("f", struct.pack("f", back))[0]
        if back == value:
            return text
    return "%.17g" % value


def _od_types(spec: str, errors: list[str]) -> list[OdType]:
    """The types of one -t argument (GNU decode_format_string)."""
    types, s = [], spec
    while s:
        kind = s[0]
        if kind in "doux":
            size, s = _type_size(s[1:], _SIZE_LETTERS, 4)
            if size not in (1, 2, 4, 8):
                errors.append(f"od: invalid type string {locale_quote(spec)};\nthis system "
                              f"doesn't provide a {size}-byte integral type")
                return []
            digits = {"d": _SIGNED_DIGITS, "o": _OCT_DIGITS, "u": _UNSIGNED_DIGITS}.get(kind)
            width = digits[size] if digits else 2 * size
        elif kind == "f":
            size, s = _type_size(s[1:], _FLOAT_LETTERS, 8)
            if size not in (4, 8):
                errors.append(f"od: invalid type string {locale_quote(spec)};\nthis system "
                              f"doesn't provide a {size}-byte floating point type")
                return []
            width = _FLOAT_WIDTH[size]
        elif kind in "ac":
            s, size, width = s[1:], 1, 3
        else:
            errors.append(f"od: invalid character '{kind}' in type string {locale_quote(spec)}")
            return []
        trailer = s[:1] == "z"
        if trailer:
            s = s[1:]
        types.append(OdType(kind, size, width, trailer))
    return types


def _type_size(s: str, letters: dict, default: int) -> tuple[int, str]:
    """The size that follows a type letter of -t (a size letter, or digits, or none: `default`),
    and the rest of the type string."""
    if s[:1] in letters:
        return letters[s[0]], s[1:]
    m = re.match(r"\d*", s)
    assert m is not None                    # \d* matches the empty string
    return (int(m.group()) if m.group() else default), s[m.end():]


def _od_number(text: str, option: str, long_name: str) -> int:
    """-j / -N / -S: decimal, 0x hex or 0 octal, with GNU's multipliers; past 2**64-1 too large."""
    value = scaled_number(text)
    if value is None:
        raise UsageError(f"od: invalid {long_name} argument {locale_quote(text)}")
    if value > UINTMAX:
        raise _too_large(option, text)
    return value


def _too_large(option: str, text: str) -> UsageError:
    return UsageError(f"od: -{option} argument '{text}' too large")     # (xstrtol_fatal's quotes)



def _parse_od(argv: list):
    long_values = {"address-radix": "A", "skip-bytes": "j", "read-bytes": "N", "format": "t",
                   "endian": "endian", "strings": "S", "width": "w"}
    args = []
    for a in argv[1:]:                      # -w and --width take an optional argument
        if a in ("-w", "--width"):
            a = "-w32"
        elif a == "--strings":
            a = "-S3"
        args.append(a)
    return parse("od", ["od"] + args, short_flags="abcdDeFfHhIiLlOoBsvXx",
                 short_values="AjNStw", long_flags={"output-duplicates": "v",
                                                    "traditional": "traditional"},
                 long_values=long_values)


@command("od", usage=USAGE)
def od(ctx, argv):
    opts, ops = _parse_od(argv)
    errors: list[str] = []
    types: list[OdType] = []
    radix, skip, limit, width, big = "o", 0, None, None, False
    for flag in opts.flags:
        if flag in _OLD_FORMATS:
            types += _od_types(_OLD_FORMATS[flag], errors)
        elif flag == "t":
            types += _od_types(opts.values["t"].pop(0), errors)
        elif flag == "A":
            radix = opts.values["A"].pop(0)[:1]
            if radix not in ("d", "o", "x", "n"):
                raise UsageError(f"od: invalid output address radix '{radix}'; it must be one "
                                 f"character from [doxn]")
        elif flag == "j":
            skip = _od_number(opts.values["j"].pop(0), "j", "--skip-bytes")
        elif flag == "N":
            limit = _od_number(opts.values["N"].pop(0), "N", "--read-bytes")
        elif flag == "w":
            value = opts.values["w"].pop(0)
            if not (value.isascii() and value.isdigit()):
                raise UsageError(f"od: invalid -w argument {locale_quote(value)}")
            if len(value) > 30 or int(value) > UINTMAX:
                raise _too_large("w", value)
            width = int(value)
        elif flag == "endian":
            value = opts.values["endian"].pop(0)
            if value not in ("big", "little"):
                raise UsageError(f"od: invalid argument {locale_quote(value)} for '--endian'\n"
                                 f"Valid arguments are:\n  - 'little'\n  - 'big'\n"
                                 f"Try 'od --help' for more information.")
            big = value == "big"
    if errors:
        ctx.err("\n".join(errors) + "\n")
        return 1
    if not types:
        types = _od_types("oS", errors)
    data, failed = concatenated(ctx, "od", ops)
    if failed is None:                  # GNU od dumps nothing when no file opens
        return 1
    if skip > len(data):
        if failed:
            return 1
        raise UsageError("od: cannot skip past end of combined input")
    data = data[skip:skip + limit] if limit is not None else data[skip:]
    if opts.has("S"):
        if any(f in _OLD_FORMATS or f == "t" for f in opts.flags):
            raise UsageError("od: no type may be specified when dumping strings")
        minimum = _od_number(opts.get("S"), "S", "--strings")
        _od_strings(ctx, data, skip, minimum, radix)
        return 1 if failed else 0
    _od_dump(ctx, data, types, radix, skip, width, big, opts.has("v"))
    return 1 if failed else 0


def _od_dump(ctx, data: bytes, types: list, radix: str, start: int, width, big: bool, all_lines: bool):
    unit = lcm(*(t.size for t in types))
    if width is not None:
        if not width or width % unit:
            ctx.err(f"od: warning: invalid width {width}; using {unit} instead\n")
            width = unit
        per_line = width
    else:
        per_line = unit * (16 // unit) if unit < 16 else unit
    widest = max((t.width + 1) * (per_line // t.size) for t in types)
    for t in types:
        t.pad = widest - t.width * (per_line // t.size)
    address_width = {"o": 7, "d": 7, "x": 6, "n": 0}[radix]
    if data:            # the first and the last line are the longest (-w 2147483647 -tx1 is short)
        for n_bytes in (min(per_line, len(data)), len(data) % per_line or per_line):
            ctx.budget.check_length(max(_od_line_length(t, per_line, n_bytes) for t in types), "od")

    def address(n: int) -> str:
        if radix == "n":
            return ""
        digits = f"{n:o}" if radix == "o" else f"{n:x}" if radix == "x" else str(n)
        return digits.rjust(address_width, "0")

    sink, previous, starred = Sink(ctx), None, False
    for offset in range(0, len(data), per_line):
        block = data[offset:offset + per_line]
        if not all_lines and block == previous and len(block) == per_line:
            if not starred:
                sink.add("*\n")
                starred = True
            continue
        previous, starred = block, False
        padded = block + bytes(-len(block) % unit)
        for k, t in enumerate(types):
            head = address(start + offset) if k == 0 else " " * address_width
            sink.add(head + _od_fields(ctx.budget, t, padded, per_line, big, len(block)) + "\n")
    sink.add(address(start + len(data)) + "\n" if radix != "n" else "")
    sink.flush()


def _od_strings(ctx, data: bytes, start: int, minimum: int, radix: str):
    """od -S: runs of at least `minimum` printable characters ended by a NUL, with their
    address (GNU dump_strings)."""
    sink = Sink(ctx)
    shortest = min(max(minimum, 1), len(data) + 1)         # (longer than the data: no match)
    for m in re.finditer(rb"[\x20-\x7e]{%d,}(?=\x00)" % shortest, data):
        address = start + m.start()
        head = "" if radix == "n" else (f"{address:o}" if radix == "o" else f"{address:x}" if
                                        radix == "x" else str(address)).rjust(6 if radix == "x" else 7, "0") + " "
        sink.add(head + m.group().decode("ascii") + "\n")
    sink.flush()


def _od_line_length(t: OdType, per_line: int, n_bytes: int) -> int:
    """The characters _od_fields makes for a line of n_bytes (its fields' padding adds up to
    the share of the shown ones), without making it."""
    fields = per_line // t.size
    shown = fields - (per_line - n_bytes) // t.size
    blank = fields - shown
    length = 7 + shown * t.width + t.pad - t.pad * blank // fields
    return length + (blank * t.width + t.pad * blank // fields + 4 + n_bytes if t.trailer else 0)


def _od_fields(budget: Budget, t: OdType, block: bytes, per_line: int, big: bool, n_bytes: int) -> str:
    """One line of one type: GNU's print functions, padding spread over the fields."""
    fields = per_line // t.size
    shown = fields - (per_line - n_bytes) // t.size
    out, pad_left = [], t.pad
    for i in range(fields, fields - shown, -1):
        next_pad = t.pad * (i - 1) // fields
        k = fields - i
        if not (k + 1) & 0xFFFF:
            budget.check_clock()            # a line of -w 4000000 is millions of fields
        text = t.render(block[k * t.size:(k + 1) * t.size], big)
        out.append(text.rjust(pad_left - next_pad + t.width))
        pad_left = next_pad
    line = "".join(out)
    if t.trailer:
        blank = fields - shown
        line += " " * (blank * t.width + t.pad * blank // fields)
        line += "  >" + "".join(chr(c) if printable(c) else "." for c in block[:n_bytes]) + "<"
    return line

