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

from ..shell.limits import check_clock
from ._bytes import FsError, locale_quote, parse_size, read_bytes, shell_quote
from ._options import UsageError, bad_usage, parse
from .registry import Usage, command

_CHUNK_LINES = 2048


class Sink:
    """Output lines gathered and written a chunk at a time, checking the budget between chunks."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.parts: list[str] = []

    def add(self, piece: str):
        self.parts.append(piece)
        if len(self.parts) >= _CHUNK_LINES:
            self.flush()
            check_clock()

    def flush(self):
        if self.parts:
            self.ctx.out("".join(self.parts))
            self.parts = []


def concatenated(ctx, cmd: str, operands: list, message: str = "{cmd}: {name}: {reason}"):
    """The operands' bytes one after the other (none: standard input), and whether one failed."""
    pieces, failed = [], False
    for name in operands or ["-"]:
        try:
            pieces.append(read_bytes(ctx, name))
        except FsError as e:
            ctx.err(message.format(cmd=cmd, name=shell_quote(name), reason=e.strerror) + "\n")
            failed = True
    return b"".join(pieces), failed


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
        order = "big" if big_endian else "little"
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


def _od_types(spec: str, errors: list) -> list:
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
                size = int(m.group()) if m.group() else 4
                s = s[m.end():]
                if size not in (1, 2, 4, 8):
                    errors.append(f"od: invalid type string {locale_quote(spec)};\nthis system "
                                  f"doesn't provide a {size}-byte integral type")
                    return []
            width = {"d": _SIGNED_DIGITS, "o": _OCT_DIGITS, "u": _UNSIGNED_DIGITS}.get(kind, None)
            width = width[size] if width else 2 * size
        elif kind == "f":
            s = s[1:]
            if s[:1] in _FLOAT_LETTERS:
                size, s = _FLOAT_LETTERS[s[0]], s[1:]
            else:
                m = re.match(r"\d*", s)
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
    """-j / -N: decimal, 0x hex or 0 octal, with GNU's multipliers."""
    m = re.fullmatch(r"(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)([A-Za-z]*)", text)
    value = None
    if m:
        digits = m.group(1)
        base = int(digits, 16) if digits[:2].lower() == "0x" else int(digits, 8) if digits.startswith("0") else int(digits)
        scale = parse_size("1" + m.group(2)) if m.group(2) else 1
        value = base * scale if scale is not None else None
    if value is None:
        raise UsageError(f"od: invalid {long_name} argument {locale_quote(text)}")
    return value


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


@command("od", usage=_OD_USAGE, needs_files=True)
def od(ctx, argv):
    opts, ops = _parse_od(argv)
    errors, types = [], []
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
            if not value.isdigit() or int(value) <= 0:
                raise UsageError(f"od: invalid -w argument {locale_quote(value)}")
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
        if width % unit:
            ctx.err(f"od: warning: invalid width {width}; using {unit} instead\n")
            width = unit
        per_line = width
    else:
        per_line = unit * (16 // unit) if unit < 16 else unit
    widest = max((t.width + 1) * (per_line // t.size) for t in types)
    for t in types:
        t.pad = widest - t.width * (per_line // t.size)
    address_width = {"o": 7, "d": 7, "x": 6, "n": 0}[radix]

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
            sink.add(head + _od_fields(t, padded, per_line, big, len(block)) + "\n")
    sink.add(address(start + len(data)) + "\n" if radix != "n" else "")
    sink.flush()


def _od_strings(ctx, data: bytes, start: int, minimum: int, radix: str):
    """od -S: runs of at least `minimum` printable characters ended by a NUL, with their
    address (GNU dump_strings)."""
    sink = Sink(ctx)
    for m in re.finditer(rb"[\x20-\x7e]{%d,}(?=\x00)" % max(minimum, 1), data):
        address = start + m.start()
        head = "" if radix == "n" else (f"{address:o}" if radix == "o" else f"{address:x}" if
                                        radix == "x" else str(address)).rjust(6 if radix == "x" else 7, "0") + " "
        sink.add(head + m.group().decode("ascii") + "\n")
    sink.flush()


def _od_fields(t: OdType, block: bytes, per_line: int, big: bool, n_bytes: int) -> str:
    """One line of one type: GNU's print functions, padding spread over the fields."""
    fields = per_line // t.size
    shown = fields - (per_line - n_bytes) // t.size
    out, pad_left = [], t.pad
    for i in range(fields, fields - shown, -1):
        next_pad = t.pad * (i - 1) // fields
        k = fields - i
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
    """One print unit (util-linux hexdump_pr): text, or one conversion with its printf format."""
    __slots__ = ("kind", "fmt", "size", "nospace")

    def __init__(self, kind: str, fmt: str, size: int = 0):
        self.kind, self.fmt, self.size, self.nospace = kind, fmt, size, False


class Unit:
    """A format unit: `reps` times its conversions, each `size` bytes."""
    __slots__ = ("reps", "count", "prints", "set_reps", "is_end")

    def __init__(self):
        self.reps, self.count, self.prints, self.set_reps, self.is_end = 1, 0, [], False, False


def _hexdump_units(text: str) -> list:
    """util-linux add_fmt + rewrite_rules: a format string as format units of print units."""
    units, p = [], 0
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
            unit.reps, unit.set_reps = int(m.group(1)), True
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
            unit.count = int(m.group(1))
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


def _conversion(prefix: str, flags: str, conv: str, unit: Unit) -> Conversion:
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
        if not count and not precision:
            raise HexdumpError("%s requires a precision or a byte count")
        return Conversion("str", f"{prefix}%{flags}s", count or int(precision.group(1)))
    if conv[:2] in ("_a", "_A"):
        if conv[1] == "A":
            unit.is_end = True
        return Conversion("address", f"{prefix}%{flags}{conv[2]}", 0)
    raise HexdumpError(f"bad conversion character %{flags}{conv}")


class HexFormat:
    """All format strings of one hexdump: their units, the block size, the end-of-data unit."""

    def __init__(self, texts: list):
        self.groups = [_hexdump_units(t) for t in texts]
        self.block = max((sum(u.count * u.reps for u in g) for g in self.groups), default=0)
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
    m = re.match(r"(.*?)%[-+ #0]*(\d*)(?:\.\d*)?\w?(.*)$", pr.fmt, re.S)
    if not m:
        return pr.fmt
    return m.group(1) + " " * int(m.group(2) or 0) + m.group(3)


def _render(pr: Conversion, chunk: bytes, address: int) -> str:
    fmt = pr.fmt
    if pr.kind == "text":
        return fmt
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
    pieces = []
    for group in form.groups:
        address, pos, remaining = base, 0, form.block
        for unit in group:
            if unit.is_end:
                break
            for rep in range(unit.reps, 0, -1):
                if remaining < 0:
                    break
                for pr in unit.prints:
                    chunk = block[pos:pos + pr.size]
                    past_end = end is not None and address >= end and pr.kind != "text"
                    piece = _blank(pr) if past_end else _render(pr, chunk, address)
                    if rep == 1 and pr.nospace:
                        piece = piece[:-1]      # util-linux: the last iteration drops it
                    pieces.append(piece)
                    address += pr.size
                    remaining -= pr.size
                    if remaining < 0:
                        break
                    pos += pr.size
    sink.add("".join(pieces))


def _hexdump_number(text: str, what: str) -> int:
    m = re.fullmatch(r"(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)([A-Za-z]*)", text.strip())
    if m:
        digits = m.group(1)
        value = int(digits, 0) if digits[:2].lower() == "0x" else int(digits, 8) if digits.startswith("0") and len(digits) > 1 else int(digits)
        scale = parse_size("1" + m.group(2), allow_b=False) if m.group(2) else 1
        if scale is not None:
            return value * scale
    raise HexdumpError(f"{what}: '{text}'")


@command("hexdump", "hd", usage=_HEXDUMP_USAGE, needs_files=True)
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
    form = HexFormat(formats or _DEFAULT_FORMAT)
    skip = _hexdump_number(opts.get("s"), "failed to parse offset") if opts.has("s") else 0
    length = _hexdump_number(opts.get("n"), "failed to parse length") if opts.has("n") else None
    data, failed = concatenated(ctx, "hexdump", ops)
    if failed and not data and all(_unreadable(ctx, n) for n in ops):
        ctx.err("hexdump: all input file arguments failed\n")
        return 1
    start = min(skip, len(data))          # util-linux: a skip past the end ends at the end
    data = data[skip:] if length is None else data[skip:skip + length]
    sink = Sink(ctx)
    _hexdump_display(sink, form, data, start, not opts.has("v"))
    sink.flush()
    return 1 if failed else 0


def _unreadable(ctx, name: str) -> bool:
    try:
        read_bytes(ctx, name)
        return False
    except FsError:
        return True


def _format_file(ctx, name: str) -> list:
    try:
        text = read_bytes(ctx, name).decode("utf-8", "surrogateescape")
    except FsError as e:
        raise HexdumpError(f"can't read {name}: {e.strerror}") from None
    return [line for line in text.splitlines() if line.strip() and not line.strip().startswith("#")]
