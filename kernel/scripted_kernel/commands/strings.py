"""strings: the printable character runs of binary files (GNU binutils; the whole file is
scanned, as binutils' default -a does)."""
from __future__ import annotations

import re

from ..fs import FsError
from ._bytes import UINTMAX, read_bytes
from ._options import UsageError, parse
from .registry import Usage, command

USAGE = Usage("[option(s)] [file(s)]", "Display printable strings in [file(s)] (stdin by default)", (
    "-a, --all                Scan the entire file",
    "-f, --print-file-name    Print the name of the file before each string",
    "-n, --bytes=<number>     Locate & print any sequence of at least <number> chars",
    "-t, --radix={o,d,x}      Print the location of the string in base 8, 10 or 16",
    "-o                       An alias for --radix=o",
    "-e, --encoding={s,S}     Select character size and endianness: s = 7-bit, S = 8-bit",
    "-w, --include-all-whitespace  Include all whitespace as valid string characters",
    "-s, --output-separator=<string>  String used to separate strings in output"))

_RADIX = {"o": "o", "d": "d", "x": "x"}
_TAKING_VALUES = {"-n", "-t", "-e", "-s", "-T", "--bytes", "--radix", "--encoding", "--output-separator",
                  "--target"}


def _pattern(minimum: int, eight_bit: bool, all_space: bool):
    chars = rb"\x20-\x7e\t"
    if all_space:
        chars += rb"\n\r\x0b\x0c"
    if eight_bit:
        chars += rb"\x80-\xff"
    return re.compile(rb"[" + chars + rb"]{%d,}" % minimum)


def _minimum(text: str) -> int:
    """binutils' -n: strtoul (base 0, out of range: ULONG_MAX) kept in an unsigned int."""
    m = re.fullmatch(r"\s*([-+]?)(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)", text)
    if m is None:
        raise UsageError(f"strings: invalid integer argument {text}")
    digits = m.group(2)
    if len(digits) > 30:
        value = UINTMAX
    else:
        value = int(digits, 16) if digits[:2].lower() == "0x" else int(digits, 8) if digits[0] == "0" else int(digits)
        value = min(value, UINTMAX)
        if m.group(1) == "-":
            value = -value % (UINTMAX + 1)
    minimum = value & 0xFFFFFFFF
    if minimum == 0:
        raise UsageError(f"strings: invalid minimum string length {minimum}")
    return minimum


@command("strings", usage=USAGE)
def run(ctx, argv):
    args = [f"-n{a[1:]}" if a[:1] == "-" and a[1:].isdigit() and before not in _TAKING_VALUES else a
            for before, a in zip([""] + argv, argv)]        # (-5 is -n 5, but not -n's value)
    opts, ops = parse("strings", args, short_flags="afow", short_values="nteTs", long_flags={
        "all": "a", "print-file-name": "f", "include-all-whitespace": "w"}, long_values={
        "bytes": "n", "radix": "t", "encoding": "e", "output-separator": "s", "target": "T"})
    minimum = _minimum(opts.get("n", "4"))
    radix = "o" if opts.has("o") and not opts.has("t") else opts.get("t")
    if radix is not None and radix not in _RADIX:
        raise UsageError(f"strings: invalid radix: {radix}")
    encoding = opts.get("e", "s")
    if encoding not in ("s", "S"):
        raise UsageError(f"strings: invalid encoding: {encoding}" if encoding not in "lbLB"
                         else "strings: 16- and 32-bit encodings are not supported here")
    pattern = _pattern(min(minimum, 1 << 30), encoding == "S", opts.has("w"))   # (past any file here)
    separator = opts.get("s", "\n")
    status = 0
    for name in ops or ["-"]:
        try:
            data = read_bytes(ctx, name)
        except FsError as e:
            ctx.err(f"strings: '{name}': No such file\n" if "No such" in e.strerror
                    else f"strings: {name}: {e.strerror}\n")
            status = 1
            continue
        label = f"{'{standard input}' if name == '-' else name}: " if opts.has("f") else ""
        out = []
        for m in pattern.finditer(data):
            where = f"{m.start():7{_RADIX[radix]}} " if radix else ""
            out.append(label + where + m.group().decode("utf-8", "surrogateescape") + separator)
        ctx.out("".join(out))
    return status
