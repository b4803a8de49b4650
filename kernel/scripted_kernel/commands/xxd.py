"""xxd: vim's xxd: the hex dump with its ASCII column (-b bits, -e little-endian groups), the
plain (-p) and C include (-i) styles, -a's '*' for runs of zero lines, and -r, which turns a
dump back into bytes (patched into an existing outfile). The dump core (reading, chunked output
under the budget) is _dump's.
"""
from __future__ import annotations

import re

from ..base.limits import Budget
from ..fs import access
from ._bytes import FsError, read_bytes
from ._dump import CHUNK_LINES, Sink, printable
from ._options import UsageError
from .registry import Usage, command

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
        if len(pieces) >= CHUNK_LINES:
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
            line[len(address) + 3 + ascii_at + p] = chr(byte) if printable(byte) else "."
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
