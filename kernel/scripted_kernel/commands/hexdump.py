"""hexdump (hd): util-linux's format engine. Every option is a format string, as in
util-linux: a format is units of print units, applied to the input a block at a time, '*' for
repeated blocks, blanks past the end of the data. The dump core (reading, chunked output under
the budget) is _dump's.
"""
from __future__ import annotations

import re
import struct

from ..base.errors import LimitExceeded
from ..base.limits import MAX_FIELD_WIDTH, Budget
from ._bytes import FsError, read_bytes
from ._dump import C_ESCAPES, UINTMAX, Sink, concatenated, printable, scaled_number
from ._options import UsageError, parse
from .registry import Usage, command

USAGE = Usage("[options] <file>...", "Display file contents in hexadecimal, decimal, "
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
        return (fmt + "c") % (chunk[0] if printable(chunk[0]) else 46)
    if pr.kind == "c":
        c = chunk[0]
        if c in C_ESCAPES:
            return (fmt + "s") % C_ESCAPES[c]
        return (fmt + "c") % c if printable(c) else (fmt + "s") % f"{c:03o}"
    if pr.kind == "u":
        c = chunk[0]
        if c <= 0x1F:
            return (fmt + "s") % _U_NAMES[c]
        if c == 0x7F:
            return (fmt + "s") % "del"
        return (fmt + "c") % c if printable(c) else (fmt + "x") % c
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
    value = scaled_number(text.strip(), allow_b=False)
    if value is None:
        raise HexdumpError(f"{what}: '{text}'")
    if value > UINTMAX:
        raise HexdumpError(f"{what}: '{text}': Numerical result out of range")
    return value


@command("hexdump", "hd", usage=USAGE)
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

