"""od, hexdump (hd) and xxd: dumps of binary data, each in its own program's layout.

They share the dump core: the operands read as bytes through the filesystem layer and
concatenated, the skip and length applied, and the output written a chunk of lines at a time
with the budget checked between chunks (a dump is several times larger than its input).
od follows GNU coreutils' od.c, hexdump util-linux's format engine (every option is a format
string, as in util-linux), xxd vim's xxd.
"""
from __future__ import annotations

import re
import struct
from typing import Literal, Optional

from ..base.errors import LimitExceeded
from ..base.limits import MAX_FIELD_WIDTH, Budget
from ._bytes import ByteInputs, FsError, locale_quote, parse_size, read_bytes
from ._options import UsageError, parse
from .registry import Usage, command

_CHUNK_LINES = 2048
_CHUNK_CHARS = 1 << 20


class Sink:
    """Output gathered and written a chunk at a time (2,048 pieces or a MiB, whichever comes
    first: a piece may be a wide field), checking the budget between chunks."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.parts: list[str] = []
        self.size = 0

    def add(self, piece: str):
        self.parts.append(piece)
        self.size += len(piece)
        if len(self.parts) >= _CHUNK_LINES or self.size >= _CHUNK_CHARS:
            self.flush()
            self.ctx.budget.check_clock()

    def flush(self):
        if self.parts:
            self.ctx.out("".join(self.parts))
            self.parts = []
            self.size = 0

    def close(self) -> int:
        self.flush()
        return 0


def concatenated(ctx, cmd: str, operands: list) -> tuple[bytes, Optional[bool]]:
    """The operands' bytes one after the other (none: standard input), and whether one failed
    (None when none could be read)."""
    inputs = ByteInputs(ctx, cmd, operands)
    pieces = [data for _, data in inputs]
    if inputs.status and not pieces:
        return b"", None
    return b"".join(pieces), bool(inputs.status)


def _printable(byte: int) -> bool:
    return 32 <= byte < 127


# ------------------------------------------------------------------------------------- od

_OD_USAGE = Usage("[OPTION]... [FILE]...", "Write an unambiguous representation, octal bytes by "
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
_C_ESCAPES = {0: "\\0", 7: "\\a", 8: "\\b", 12: "\\f", 10: "\\n", 13: "\\r", 9: "\\t", 11: "\\v"}
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
            return _C_ESCAPES.get(c) or (chr(c) if _printable(c) else f"{c:03o}")
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
            s = s[1:]
            if s[:1] in _SIZE_LETTERS:
                size, s = _SIZE_LETTERS[s[0]], s[1:]
            else:
                m = re.match(r"\d*", s)
                assert m is not None                # \d* matches the empty string
                size = int(m.group()) if m.group() else 4
                s = s[m.end():]
                if size not in (1, 2, 4, 8):
                    errors.append(f"od: invalid type string {locale_quote(spec)};\nthis system "
                                  f"doesn't provide a {size}-byte integral type")
                    return []
            digits = {"d": _SIGNED_DIGITS, "o": _OCT_DIGITS, "u": _UNSIGNED_DIGITS}.get(kind)
            width = digits[size] if digits else 2 * size
        elif kind == "f":
            s = s[1:]
            if s[:1] in _FLOAT_LETTERS:
                size, s = _FLOAT_LETTERS[s[0]], s[1:]
            else:
                m = re.match(r"\d*", s)
                assert m is not None                # \d* matches the empty string
                size = int(m.group()) if m.group() else 8
                s = s[m.end():]
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


def _od_number(text: str, option: str, long_name: str) -> int:
    """-j / -N / -S: decimal, 0x hex or 0 octal, with GNU's multipliers; past 2**64-1 too large."""
    m = re.fullmatch(r"(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)([A-Za-z]*)", text)
    value = None
    if m:
        digits = m.group(1)
        if len(digits) > 30:
            raise _too_large(option, text)
        base = (int(digits, 16) if digits[:2].lower() == "0x" else int(digits, 8) if digits.startswith("0")
                else int(digits))
        scale = parse_size("1" + m.group(2)) if m.group(2) else 1
        value = base * scale if scale is not None else None
    if value is None:
        raise UsageError(f"od: invalid {long_name} argument {locale_quote(text)}")
    if value > _UINTMAX:
        raise _too_large(option, text)
    return value


def _too_large(option: str, text: str) -> UsageError:
    return UsageError(f"od: -{option} argument '{text}' too large")     # (xstrtol_fatal's quotes)


_UINTMAX = 2 ** 64 - 1


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


@command("od", usage=_OD_USAGE)
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
            if len(value) > 30 or int(value) > _UINTMAX:
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


def _lcm(values) -> int:
    from math import lcm
    return lcm(*values)


def _od_dump(ctx, data: bytes, types: list, radix: str, start: int, width, big: bool, all_lines: bool):
    unit = _lcm([t.size for t in types])
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
        line += "  >" + "".join(chr(c) if _printable(c) else "." for c in block[:n_bytes]) + "<"
    return line


# -------------------------------------------------------------------------------- hexdump

_HEXDUMP_USAGE = Usage("[options] <file>...", "Display file contents in hexadecimal, decimal, "
                       "octal, or ascii.", (
    "-b, --one-byte-octal      one-byte octal display",
    "-c, --one-byte-char       one-byte character display",
    "-C, --canonical           canonical hex+ASCII display",
    "-d, --two-bytes-decimal   two-byte decimal display",
    "-o, --two-bytes-octal     two-byte octal display",
    "-x, --two-bytes-hex       two-byte hexadecimal display",
    "-e, --format <format>     format string to be used for displaying data",
    "-n, --length <length>     interpret only length bytes of input",
    "-s, --skip <offset>       skip offset bytes from the beginning",
    "-v, --no-squeezing        output identical lines"))

_HEAD = '"%07.7_Ax\n"'
_CANONICAL = ['"%08.8_Ax\n"', '"%08.8_ax  " 8/1 "%02x " "  " 8/1 "%02x " ', '"  |" 16/1 "%_p" "|\n"']
_HEXDUMP_FORMATS = {
    "b": [_HEAD, '"%07.7_ax " 16/1 "%03o " "\n"'],
    "c": [_HEAD, '"%07.7_ax " 16/1 "%3_c " "\n"'],
    "C": _CANONICAL,
    "d": [_HEAD, '"%07.7_ax " 8/2 "  %05u " "\n"'],
    "o": [_HEAD, '"%07.7_ax " 8/2 " %06o " "\n"'],
    "x": [_HEAD, '"%07.7_ax " 8/2 "   %04x " "\n"'],
}
_DEFAULT_FORMAT = [_HEAD, '"%07.7_ax " 8/2 "%04x " "\n"']
_U_NAMES = ("nul soh stx etx eot enq ack bel bs ht lf vt ff cr so si dle dc1 dc2 dc3 dc4 nak "
            "syn etb can em sub esc fs gs rs us").split()
_HEX_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}


class HexdumpError(UsageError):
    def __init__(self, message: str):
        super().__init__(f"hexdump: {message}", 1)


class Conversion:
    """One print unit (util-linux hexdump_pr): text, or one conversion with its printf format;
    a silent one prints nothing (printf fails on a width or precision past INT_MAX)."""
    __slots__ = ("kind", "fmt", "size", "nospace", "silent")

    def __init__(self, kind: str, fmt: str, size: int = 0):
        self.kind, self.fmt, self.size, self.nospace, self.silent = kind, fmt, size, False, False


class Unit:
    """A format unit: `reps` times its conversions, each `size` bytes."""
    __slots__ = ("reps", "count", "prints", "set_reps", "is_end")

    def __init__(self):
        self.reps, self.count, self.prints, self.set_reps, self.is_end = 1, 0, [], False, False


def _hexdump_units(text: str) -> list:
    """util-linux add_fmt + rewrite_rules: a format string as format units of print units."""
    units: list[Unit] = []
    p = 0
    while True:
        while p < len(text) and text[p].isspace():
            p += 1
        if p >= len(text):
            return units
        unit = Unit()
        units.append(unit)
        m = re.match(r"(\d+)", text[p:])
        if m:
            p += m.end()
            if p >= len(text) or not (text[p].isspace() or text[p] == "/"):
                raise HexdumpError(f"bad format {{{text}}}")
            unit.reps, unit.set_reps = _bounded(m.group(1)), True
            p += 1
            while p < len(text) and text[p].isspace():
                p += 1
        if p < len(text) and text[p] == "/":
            p += 1
            while p < len(text) and text[p].isspace():
                p += 1
        m = re.match(r"(\d+)", text[p:])
        if m:
            p += m.end()
            if p >= len(text) or not text[p].isspace():
                raise HexdumpError(f"bad format {{{text}}}")
            unit.count = _bounded(m.group(1))
            p += 1
            while p < len(text) and text[p].isspace():
                p += 1
        if p >= len(text) or text[p] != '"':
            raise HexdumpError(f"bad format {{{text}}}")
        end = text.find('"', p + 1)
        if end < 0:
            raise HexdumpError(f"bad format {{{text}}}")
        unit.prints = _print_units(_unescape(text[p + 1:end]), unit)
        p = end + 1


def _unescape(fmt: str) -> str:
    return re.sub(r"\\(.)", lambda m: _HEX_ESCAPES.get(m.group(1), m.group(1)), fmt)


_CONVERSION = re.compile(r"%([-+ #0]*\d*(?:\.\d*)?)(_[aA][dox]|_[cpu]|[cdiouxXeEfgGs]|_.|.?)", re.S)


def _print_units(fmt: str, unit: Unit) -> list:
    prints, pos, conversions = [], 0, 0
    while pos < len(fmt):
        m = _CONVERSION.search(fmt, pos)
        if m is None:
            prints.append(Conversion("text", fmt[pos:]))
            break
        prefix, flags, conv = fmt[pos:m.start()], m.group(1), m.group(2)
        pos = m.end()
        prints.append(_conversion(prefix, flags, conv, unit))
        if prints[-1].kind != "address" and unit.count and conversions:
            raise HexdumpError("byte count with multiple conversion characters")
        if prints[-1].kind != "address":
            conversions += 1
    if not unit.count:
        unit.count = sum(pr.size for pr in prints)
    return prints


_INT_MAX = 2 ** 31 - 1


def _bounded(digits: str) -> int:
    """A decimal count, any past INT_MAX read as INT_MAX + 1 (its digits may be thousands)."""
    return int(digits) if len(digits) <= 10 and int(digits) <= _INT_MAX else _INT_MAX + 1


def _conversion(prefix: str, flags: str, conv: str, unit: Unit) -> Conversion:
    """The print unit of one conversion. A width or precision past INT_MAX makes printf fail:
    it prints nothing, as util-linux's does; one past MAX_FIELD_WIDTH is refused before a
    field of that size is built."""
    m = re.search(r"(\d*)(?:\.(\d*))?$", flags)
    assert m is not None                    # every part is optional
    width, precision = _bounded(m.group(1) or "0"), _bounded(m.group(2) or "0")
    pr = _conversion_of(prefix, flags, conv, unit)
    if max(width, precision) > _INT_MAX:
        pr.silent = True
    elif max(width, precision) > MAX_FIELD_WIDTH:
        raise LimitExceeded("max_string_length",
                            "hexdump: field width or precision too large (max_string_length)")
    return pr


def _conversion_of(prefix: str, flags: str, conv: str, unit: Unit) -> Conversion:
    count = unit.count
    if conv == "c" or conv in ("_c", "_p", "_u"):
        if count not in (0, 1):
            raise HexdumpError(f"bad byte count for conversion character %{flags}{conv}")
        kind = {"c": "char", "_c": "c", "_p": "p", "_u": "u"}[conv]
        return Conversion(kind, f"{prefix}%{flags}", 1)
    if conv and conv in "diouxX":
        if count not in (0, 1, 2, 4, 8):
            raise HexdumpError(f"bad byte count for conversion character %{flags}{conv}")
        kind = "int" if conv in "di" else "uint"
        return Conversion(kind, f"{prefix}%{flags}{conv}", count or 4)
    if conv and conv in "eEfgG":
        if count not in (0, 4, 8):
            raise HexdumpError(f"bad byte count for conversion character %{flags}{conv}")
        return Conversion("float", f"{prefix}%{flags}{conv}", count or 8)
    if conv == "s":
        precision = re.search(r"\.(\d+)", flags)
        if not count:
            if not precision:
                raise HexdumpError("%s requires a precision or a byte count")
            count = _bounded(precision.group(1))
        return Conversion("str", f"{prefix}%{flags}s", count)
    if conv[:2] in ("_a", "_A"):
        if conv[1] == "A":
            unit.is_end = True
        return Conversion("address", f"{prefix}%{flags}{conv[2]}", 0)
    raise HexdumpError(f"bad conversion character %{flags}{conv}")


class HexFormat:
    """All format strings of one hexdump: their units, the block size, the end-of-data unit."""

    def __init__(self, texts: list, budget: Budget):
        self.groups = [_hexdump_units(t) for t in texts]
        self.block = max((sum(u.count * u.reps for u in g) for g in self.groups), default=0)
        budget.check_length(self.block, "hexdump: format block")     # read and padded a block at a time
        self.end_unit = None
        for group in self.groups:
            size = sum(u.count * u.reps for u in group)
            for k, unit in enumerate(group):
                if unit.is_end and self.end_unit is None:
                    self.end_unit = unit
                if k == len(group) - 1 and size < self.block and not unit.set_reps and unit.count:
                    unit.reps += (self.block - size) // unit.count
                if unit.reps > 1 and unit.prints and unit.prints[-1].fmt[-1:].isspace():
                    unit.prints[-1].nospace = True


def _blank(pr: Conversion) -> str:
    """util-linux bpad: a conversion past the end of the data prints as blanks of its width."""
    if pr.silent:
        return ""
    m = re.match(r"(.*?)%[-+ #0]*(\d*)(?:\.\d*)?\w?(.*)$", pr.fmt, re.S)
    if not m:
        return pr.fmt
    return m.group(1) + " " * int(m.group(2) or 0) + m.group(3)


def _render(pr: Conversion, chunk: bytes, address: int) -> str:
    fmt = pr.fmt
    if pr.kind == "text":
        return fmt
    if pr.silent:
        return ""
    if pr.kind == "address":
        return fmt % address
    if pr.kind == "char":
        return (fmt + "c") % chunk[0]
    if pr.kind == "p":
        return (fmt + "c") % (chunk[0] if _printable(chunk[0]) else 46)
    if pr.kind == "c":
        c = chunk[0]
        if c in _C_ESCAPES:
            return (fmt + "s") % _C_ESCAPES[c]
        return (fmt + "c") % c if _printable(c) else (fmt + "s") % f"{c:03o}"
    if pr.kind == "u":
        c = chunk[0]
        if c <= 0x1F:
            return (fmt + "s") % _U_NAMES[c]
        if c == 0x7F:
            return (fmt + "s") % "del"
        return (fmt + "c") % c if _printable(c) else (fmt + "x") % c
    if pr.kind in ("int", "uint"):
        return fmt % int.from_bytes(chunk, "little", signed=pr.kind == "int")
    if pr.kind == "float":
        return fmt % struct.unpack("<f" if pr.size == 4 else "<d", chunk)[0]
    return fmt % chunk.split(b"\0")[0].decode("latin-1")


def _hexdump_display(sink: Sink, form: HexFormat, data: bytes, start: int, squeeze: bool):
    """util-linux display() over get(): blocks, '*' for repeated blocks, blanks past the end."""
    size = form.block
    if size == 0:
        return
    previous, state, address, end = None, "first", start, None
    for offset in range(0, len(data), size):
        block = data[offset:offset + size]
        address = start + offset
        if len(block) == size:
            if squeeze and state != "first" and block == previous:
                if state == "wait":
                    sink.add("*\n")
                state = "dup"
                continue
            state = "wait"
        else:
            end = address + len(block)
            block = block + bytes(size - len(block))
        previous = block
        _hexdump_block(sink, form, block, address, end)
    final = end if end is not None else start + len(data)
    if form.end_unit is not None and final:
        for pr in form.end_unit.prints:
            if pr.kind == "address":
                sink.add(pr.fmt % final)
            elif pr.kind == "text":
                sink.add(pr.fmt)


def _hexdump_block(sink: Sink, form: HexFormat, block: bytes, base: int, end):
    """One block through every format: each piece to the sink as it is made (a block may hold
    millions of them)."""
    for group in form.groups:
        address, pos, remaining = base, 0, form.block
        for unit in group:
            if unit.is_end:
                break
            for rep in range(unit.reps, 0, -1):
                if remaining < 0:
                    break
                if not rep & 0xFFFF:
                    sink.ctx.budget.check_clock()
                for pr in unit.prints:
                    chunk = block[pos:pos + pr.size]
                    past_end = end is not None and address >= end and pr.kind != "text"
                    piece = _blank(pr) if past_end else _render(pr, chunk, address)
                    if rep == 1 and pr.nospace:
                        piece = piece[:-1]      # util-linux: the last iteration drops it
                    sink.add(piece)
                    address += pr.size
                    remaining -= pr.size
                    if remaining < 0:
                        break
                    pos += pr.size


def _hexdump_number(text: str, what: str) -> int:
    """-n and -s: decimal, 0x hex or 0 octal with util-linux's size suffixes; past 2**64-1 out
    of range, as its strtosize says."""
    m = re.fullmatch(r"(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)([A-Za-z]*)", text.strip())
    if m:
        digits = m.group(1)
        if len(digits) > 30:
            raise HexdumpError(f"{what}: '{text}': Numerical result out of range")
        value = (int(digits, 0) if digits[:2].lower() == "0x"
                 else int(digits, 8) if digits.startswith("0") and len(digits) > 1 else int(digits))
        scale = parse_size("1" + m.group(2), allow_b=False) if m.group(2) else 1
        if scale is not None:
            if value * scale > _UINTMAX:
                raise HexdumpError(f"{what}: '{text}': Numerical result out of range")
            return value * scale
    raise HexdumpError(f"{what}: '{text}'")


_UINTMAX = 2 ** 64 - 1


@command("hexdump", "hd", usage=_HEXDUMP_USAGE)
def hexdump(ctx, argv):
    opts, ops = parse("hexdump", argv, short_flags="bcCdoxv", short_values="efns", long_flags={
        "one-byte-octal": "b", "one-byte-char": "c", "canonical": "C", "two-bytes-decimal": "d",
        "two-bytes-octal": "o", "two-bytes-hex": "x", "no-squeezing": "v"}, long_values={
        "format": "e", "format-file": "f", "length": "n", "skip": "s"})
    formats = list(_CANONICAL) if argv[0].rsplit("/", 1)[-1] == "hd" else []
    for flag in opts.flags:
        if flag in _HEXDUMP_FORMATS:
            formats += _HEXDUMP_FORMATS[flag]
        elif flag == "e":
            formats.append(opts.values["e"].pop(0))
        elif flag == "f":
            formats += _format_file(ctx, opts.values["f"].pop(0))
    form = HexFormat(formats or _DEFAULT_FORMAT, ctx.budget)
    skip = _hexdump_number(opts.get("s"), "failed to parse offset") if opts.has("s") else 0
    length = _hexdump_number(opts.get("n"), "failed to parse length") if opts.has("n") else None
    data, failed = concatenated(ctx, "hexdump", ops)
    if failed is None:
        ctx.err("hexdump: all input file arguments failed\n")
        return 1
    start = min(skip, len(data))          # util-linux: a skip past the end ends at the end
    data = data[skip:] if length is None else data[skip:skip + length]
    sink = Sink(ctx)
    _hexdump_display(sink, form, data, start, not opts.has("v"))
    sink.flush()
    return 1 if failed else 0


def _format_file(ctx, name: str) -> list:
    try:
        text = read_bytes(ctx, name).decode("utf-8", "surrogateescape")
    except FsError as e:
        raise HexdumpError(f"can't read {name}: {e.strerror}") from None
    return [line for line in text.splitlines() if line.strip() and not line.strip().startswith("#")]


# ------------------------------------------------------------------------------------ xxd

_XXD_USAGE_TEXT = """Usage:
       xxd [options] [infile [outfile]]
    or
       xxd -r [-s [-]offset] [-c cols] [-ps] [infile [outfile]]
Options:
    -a          toggle autoskip: A single '*' replaces nul-lines. Default off.
    -b          binary digit dump (incompatible with -ps,-i,-r). Default hex.
    -C          capitalize variable names in C include file style (-i).
    -c cols     format <cols> octets per line. Default 16 (-i: 12, -ps: 30).
    -E          show characters in EBCDIC. Default ASCII.
    -e          little-endian dump (incompatible with -ps,-i,-r).
    -g bytes    number of octets per group in normal output. Default 2 (-e: 4).
    -h          print this summary.
    -i          output in C include file style.
    -l len      stop after <len> octets.
    -n name     set the variable name used in C include output (-i).
    -o off      add <off> to the displayed file position.
    -ps         output in postscript plain hexdump style.
    -r          reverse operation: convert (or patch) hexdump into binary.
    -r -s off   revert with <off> added to file positions found in hexdump.
    -d          show offset in decimal instead of hex.
    -s [+][-]seek  start at <seek> bytes abs. (or +: rel.) infile offset.
    -u          use upper case hex letters.
    -v          show version: "xxd 2022-01-14 by Juergen Weigert et al.".
"""
_XXD_MAX_COLS = 256
_NORMAL, _PLAIN, _INCLUDE, _BITS, _LITTLE = 0, 1, 2, 4, 8


_LONG_MAX = 2 ** 63 - 1
_ULONG_MAX = 2 ** 64 - 1


def _c_int(value: int) -> int:
    """A long stored in a C int, as xxd keeps -c and -g: its low 32 bits, signed."""
    return (value + 2 ** 31) % 2 ** 32 - 2 ** 31


def _signed_long(value: int) -> int:
    return (value + 2 ** 63) % 2 ** 64 - 2 ** 63


def _strtol(text: str, unsigned: bool = False) -> int:
    """C strtol(s, NULL, 0) (strtoul when `unsigned`): the longest number at the start, 0 when
    there is none; out of range, the nearest bound (strtoul wraps a negative number around)."""
    m = re.match(r"\s*([-+]?)(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)?", text)
    assert m is not None                    # every part is optional: it always matches
    digits = m.group(2)
    if not digits:
        return 0
    negative = m.group(1) == "-"
    if len(digits) > 30:                    # (no int() of thousands of digits)
        value = _ULONG_MAX + 1
    else:
        value = int(digits, 16) if digits[:2].lower() == "0x" else int(digits, 8) if digits[0] == "0" else int(digits)
    if unsigned:
        return _ULONG_MAX if value > _ULONG_MAX else (-value) % (_ULONG_MAX + 1) if negative else value
    if negative:
        return max(-value, -_LONG_MAX - 1)
    return min(value, _LONG_MAX)


class XxdOptions:
    """xxd's own command line: options only before the files, matched by their first letter."""

    def __init__(self):
        self.autoskip = self.capitalize = self.decimal = self.revert = self.upper = False
        self.kind = _NORMAL
        self.cols = 0
        self.cols_given = False
        self.group = -1
        self.length = -1
        self.seek, self.relative, self.negative = 0, True, False
        self.display_offset = 0
        self.name = None
        self.files: list[str] = []


def _xxd_usage() -> UsageError:
    return UsageError(_XXD_USAGE_TEXT.rstrip("\n"), 1)


# the options that only set one field: (field, value)
_XXD_SETTINGS = {"-b": ("kind", _BITS), "-e": ("kind", _LITTLE), "-u": ("upper", True),
                 "-p": ("kind", _PLAIN), "-i": ("kind", _INCLUDE), "-C": ("capitalize", True),
                 "-d": ("decimal", True), "-r": ("revert", True)}


def _xxd_value(args: list, rest: str, long_tail: str) -> str:
    """The value of the option args[0]: glued on (`rest`), unless the rest spells the long name,
    else the next argument (taken from `args`)."""
    if rest and rest[:len(long_tail)] != long_tail:
        return rest
    if len(args) < 2:
        raise _xxd_usage()
    return args.pop(1)


def _parse_xxd(argv: list) -> XxdOptions:
    o, args = XxdOptions(), list(argv[1:])
    while args:
        arg = args[0]
        pp = arg[1:] if arg.startswith("--") and len(arg) > 2 else arg
        letter, rest = pp[:2], pp[2:]
        if pp == "--":
            args.pop(0)
            break
        if letter == "-a":
            o.autoskip = not o.autoskip
        elif letter in _XXD_SETTINGS:
            setattr(o, *_XXD_SETTINGS[letter])
        elif letter == "-E":
            pass                            # EBCDIC: not supported, shown as ASCII
        elif letter == "-v":
            raise UsageError("xxd 2022-01-14 by Juergen Weigert et al.", 0)
        elif letter == "-c":
            if rest and rest[:9] == "apitalize":
                o.capitalize = True
            else:
                o.cols, o.cols_given = _c_int(_strtol(_xxd_value(args, rest, "ols"))), True
        elif letter == "-g":
            o.group = _c_int(_strtol(_xxd_value(args, rest, "roup")))
        elif letter == "-o":
            o.display_offset = _strtol(_xxd_value(args, rest, "ffset"), unsigned=True)
        elif letter == "-s":
            text = _xxd_value(args, rest, "kip" if rest[:3] == "kip" else "eek")
            o.relative = text.startswith("+")
            text = text[1:] if o.relative else text
            o.negative = text.startswith("-")
            o.seek = _strtol(text[1:] if o.negative else text)
        elif letter == "-l":
            o.length = _strtol(_xxd_value(args, rest, "en"))
        elif letter == "-n":
            o.name = _xxd_value(args, rest, "ame")
        elif letter == "-R":
            if not rest:
                _xxd_value(args, rest, "when")      # colours: never, output is not a terminal
        elif pp.startswith("-") and len(pp) > 1:
            raise _xxd_usage()
        else:
            break
        args.pop(0)
    if len(args) > 2:
        raise _xxd_usage()
    o.files = args
    return o


def _xxd_layout(o: XxdOptions):
    if not o.cols_given or (not o.cols and o.kind != _PLAIN):
        o.cols = {_PLAIN: 30, _INCLUDE: 12, _INCLUDE | _BITS: 6, _BITS: 6}.get(o.kind, 16)
    if o.group < 0:
        o.group = {_BITS: 1, _INCLUDE | _BITS: 1, _NORMAL: 2, _LITTLE: 4}.get(o.kind, 0)
    if ((o.kind == _PLAIN and o.cols < 0) or (o.kind != _PLAIN and o.cols < 1)
            or (o.kind in (_NORMAL, _BITS, _LITTLE) and o.cols > _XXD_MAX_COLS)):
        raise UsageError(f"xxd: invalid number of columns (max. {_XXD_MAX_COLS}).")
    if o.group < 1 or o.group > o.cols:
        o.group = o.cols
    elif o.kind == _LITTLE and o.group & (o.group - 1):
        raise UsageError("xxd: number of octets per group must be a power of 2 with -e.")


@command("xxd", usage=Usage("[options] [infile [outfile]]", "Make a hexdump or do the reverse."))
def xxd(ctx, argv):
    o = _parse_xxd(argv)
    _xxd_layout(o)
    source = o.files[0] if o.files and o.files[0] != "-" else "-"
    try:
        data = read_bytes(ctx, source)
    except FsError as e:
        ctx.err(f"xxd: {source}: {e.strerror}\n")
        return 2
    target = o.files[1] if len(o.files) > 1 and o.files[1] != "-" else None
    if o.revert:
        if o.kind not in (_NORMAL, _PLAIN):
            raise UsageError("xxd: Sorry, cannot revert this type of hexdump", 255)
        return _xxd_revert(ctx, o, data, target)
    start = _xxd_start(o, len(data))
    if start is None:
        raise UsageError("xxd: Sorry, cannot seek.", 4)
    data = data[start:]
    if o.length >= 0:
        data = data[:o.length]
    out = Sink(ctx) if target is None else _FileSink(ctx, target)
    if o.kind & _INCLUDE:
        name = o.name if o.name is not None else (o.files[0] if source != "-" else None)
        _xxd_include(out, data, o, name)
    elif o.kind == _PLAIN:
        _xxd_plain(out, data, o)
    else:
        _xxd_lines(out, data, o, start)
    return out.close()


def _xxd_start(o: XxdOptions, size: int):
    """Where the dump starts: -s N absolute, +N relative (the same here), -N from the end."""
    if not (o.seek or o.negative or not o.relative):
        return 0
    if o.negative:
        start = size - o.seek
        return start if start >= 0 else None
    return o.seek


class _FileSink(Sink):
    """xxd's outfile: written through the filesystem layer when the dump is complete."""

    def __init__(self, ctx, name: str):
        super().__init__(ctx)
        self.name = name

    def add(self, piece: str):
        self.parts.append(piece)

    def flush(self):
        pass

    def close(self) -> int:
        from ..fs import access
        try:
            access.writer(self.ctx, self.name)("".join(self.parts))
        except FsError as e:
            self.ctx.err(f"xxd: {self.name}: {e.strerror}\n")
            return 3
        return 0


def _xxd_include(out: Sink, data: bytes, o: XxdOptions, name):
    cap = (lambda c: c.upper()) if o.capitalize else (lambda c: c)
    ident = None
    if name is not None:
        ident = ("__" if name[:1].isdigit() else "") + "".join(
            cap(c) if c.isascii() and c.isalnum() else "_" for c in name)
        out.add(f"unsigned char {ident}[] = {{\n")
    form = "0X%02X" if o.upper else "0x%02x"
    pieces = []
    for k, byte in enumerate(data):
        pieces.append(("  " if k == 0 else ", " if k % o.cols else ",\n  ") + form % byte)
        if len(pieces) >= _CHUNK_LINES:
            out.add("".join(pieces))
            pieces = []
    out.add("".join(pieces) + ("\n" if data else ""))
    if ident is not None:
        out.add(f"}};\nunsigned int {ident}_{'LEN' if o.capitalize else 'len'} = {len(data)};\n")


def _xxd_plain(out: Sink, data: bytes, o: XxdOptions):
    hexed = data.hex().upper() if o.upper else data.hex()
    if o.cols == 0:
        out.add(hexed + "\n")
        return
    step = 2 * o.cols
    for k in range(0, len(hexed), step):
        out.add(hexed[k:k + step] + "\n")


def _xxd_lines(out: Sink, data: bytes, o: XxdOptions, start: int):
    """The normal, -b and -e layouts: xxd's line buffer, and -a's '*' for runs of zero lines."""
    bits, little = o.kind == _BITS, o.kind == _LITTLE
    group_len = 8 * o.group + 1 if bits else 2 * o.group + 1
    ascii_at = (group_len * o.cols - 1) // o.group
    width = 12 + ascii_at + group_len * (o.cols + o.group) + o.cols
    digits = "0123456789ABCDEF" if o.upper else "0123456789abcdef"
    skipper = _ZeroSkipper(out) if o.autoskip else None
    for offset in range(0, len(data), o.cols):
        chunk = data[offset:offset + o.cols]
        position = (offset + start + o.display_offset) & _ULONG_MAX       # an unsigned long
        address = f"{_signed_long(position):08d}:" if o.decimal else f"{position:08x}:"
        line = [" "] * width        # xxd's line buffer: the line ends after its last character
        line[:len(address)] = address
        for p, byte in enumerate(chunk):
            x = p ^ (o.group - 1) if little else p
            c = len(address) + 1 + (group_len * x) // o.group
            text = format(byte, "08b") if bits else digits[byte >> 4] + digits[byte & 15]
            line[c:c + len(text)] = text
            line[len(address) + 3 + ascii_at + p] = chr(byte) if _printable(byte) else "."
        text = "".join(line[:len(address) + 3 + ascii_at + len(chunk)]) + "\n"
        if skipper is None:
            out.add(text)
        else:
            skipper.line(text, any(chunk), len(chunk) < o.cols)
    if skipper is not None and data and len(data) % o.cols == 0:
        skipper.finish()


class _ZeroSkipper:
    """xxd -a (xxdline): three or more lines of zeros become the first, '*' and the last."""

    def __init__(self, out: Sink):
        self.out, self.seen, self.held = out, 0, ""

    def line(self, text: str, nonzero: bool, last_partial: bool):
        nz = 1 if nonzero or last_partial else 0
        self._xxdline(text, nz)

    def finish(self):
        self._xxdline(self.last, -1)

    def _xxdline(self, text: str, nz: int):
        self.last = text
        if not nz and self.seen == 1:
            self.held = text
        if nz or not self.seen:
            if not nz:
                self.seen += 1
            if nz:
                if nz < 0:
                    self.seen -= 1
                if self.seen == 2:
                    self.out.add(self.held)
                if self.seen > 2:
                    self.out.add("*\n")
            if nz >= 0 or self.seen > 0:
                self.out.add(text)
            if nz:
                self.seen = 0
        else:
            self.seen += 1


def _xxd_revert(ctx, o: XxdOptions, data: bytes, target) -> int:
    """xxd -r (huntype): hex (or -p plain hex, or -b bits) back to bytes; offsets in the dump
    place them, zeros fill the gaps; into an existing outfile the bytes are patched in."""
    base = -o.seek if o.negative else o.seek
    existing = b""
    if target is not None:
        try:
            existing = read_bytes(ctx, target)
        except FsError:
            existing = b""
    out = bytearray(existing)
    limit = ctx.limits.max_file_bytes if target is not None else ctx.limits.max_output_bytes
    try:
        position, status = _huntype(ctx.budget, data, o.cols, o.kind, base, out, target is not None, limit)
    except _TooLarge:
        raise UsageError(f"xxd: {target or '(stdout)'}: File too large", 3) from None
    if status:
        ctx.err("xxd: Sorry, cannot seek backwards.\n")
    if target is None:
        ctx.write_bytes(bytes(out))
        return status
    try:
        from ..fs import access
        access.writer(ctx, target)(bytes(out).decode("utf-8", "surrogateescape"))
    except FsError as e:
        ctx.err(f"xxd: {target}: {e.strerror}\n")
        return 3
    return status


def _hex_value(c: int) -> int:
    if 48 <= c <= 57:
        return c - 48
    if 97 <= c <= 102:
        return c - 87
    if 65 <= c <= 70:
        return c - 55
    return -1


class _TooLarge(Exception):
    """xxd -r was asked to place a byte past what the output may hold."""


def _huntype(budget: Budget, data: bytes, cols: int, kind: int, base: int, out: bytearray, seekable: bool,
             limit: int):
    """A port of xxd's huntype loop; writes into `out` at the offsets it finds. Returns
    (the final offset, 5 if it had to seek backwards on an unseekable output else 0)."""
    ign_garb, n1, n2, n3, p, b, bcnt = True, -1, 0, 0, cols, 0, 0
    have, want = 0, 0
    i, size = 0, len(data)
    if not seekable:
        out.clear()
    while i < size:
        c = data[i]
        i += 1
        if c == 13:
            continue
        if kind == _PLAIN and c in (32, 10, 9):
            continue
        if kind != _BITS:
            n3, n2 = n2, n1
            n1 = _hex_value(c)
            if n1 == -1 and ign_garb:
                continue
        else:
            n1 = _hex_value(c)
            if n1 == -1 and ign_garb:
                continue
            if c in (48, 49):
                b, bcnt = (b << 1) | (c - 48), bcnt + 1
        ign_garb = False
        if kind != _PLAIN and p >= cols:
            if n1 < 0:
                p = 0
                if kind == _BITS:
                    bcnt = 0
                continue
            want = (want << 4) | n1
            continue
        if base + want != have:
            if base + want > limit:
                raise _TooLarge()
            if seekable:
                have = base + want
            elif base + want < have:
                return have, 5
            else:
                out.extend(bytes(base + want - have))
                have = base + want
        if kind != _BITS:
            if n2 >= 0 and n1 >= 0:
                _put(out, have, (n2 << 4) | n1)
                have, want, n1 = have + 1, want + 1, -1
                if kind == _NORMAL:
                    p += 1
                    if p >= cols:
                        while i < size and data[i - 1] != 10:
                            c = data[i]
                            i += 1
                        c = data[i - 1]
            elif n1 < 0 and n2 < 0 and n3 < 0:
                while c != 10 and i < size:
                    c = data[i]
                    i += 1
        elif bcnt == 8:
            _put(out, have, b)
            have, want, b, bcnt = have + 1, want + 1, 0, 0
            p += 1
            if p >= cols:
                while c != 10 and i < size:
                    c = data[i]
                    i += 1
        if c == 10:
            if kind in (_NORMAL, _BITS):
                want = 0
            p, ign_garb = cols, True
        check_every = i & 0xFFFF
        if not check_every:
            budget.check_clock()
    return have, 0


def _put(out: bytearray, at: int, byte: int):
    if at < len(out):
        out[at] = byte
    else:
        out.extend(bytes(at - len(out)))
        out.append(byte)
