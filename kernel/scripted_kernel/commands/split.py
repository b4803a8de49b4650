"""split and csplit: one input cut into numbered files (GNU coreutils).

Both write their pieces through the filesystem layer; the filesystem's file-count and size
limits end a runaway split (`split -b 1` of a large file) with the error GNU would print when
the disk is full, and the budget is checked between files.
"""
from __future__ import annotations

import re
from typing import Any

from ..fs import FsError, access
from ..base.regexes import RegexError, compile_posix, search
from ._bytes import (INT_MAX, INTMAX, OUT_OF_RANGE, bounded_decimal, gnu_number, lines_of, locale_quote,
                     quote_always, read_bytes, shell_quote)
from ._options import UsageError, bad_usage, parse
from .registry import Usage, command

_ALPHABET = "abcdefghijklmnopqrstuvwxyz"
_NAME_MAX = 255
_DIGITS = "0123456789"
_HEX = "0123456789abcdef"


class Exhausted(Exception):
    """No more suffixes of the fixed length (-a)."""


def suffix(k: int, alphabet: str, length: int, auto: bool, start: int = 0) -> str:
    """The k-th output suffix (0-based). With a fixed length, in base len(alphabet); with the
    default length, GNU's widening: aa..yz, then zaaa..zyzz, then zzaaaa ..."""
    m = len(alphabet)
    k += start
    if not auto:
        if length < 64 and k >= m ** length:       # (past 64 digits no count of files reaches it)
            raise Exhausted()
        return _digits(k, alphabet, length)
    level = 0
    while True:
        width = length + level
        count = (m - 1) * m ** (width - 1)
        if k < count:
            return alphabet[-1] * level + _digits(k, alphabet, width)
        k -= count
        level += 1


def _digits(k: int, alphabet: str, width: int) -> str:
    """k in `width` digits of the alphabet (the leading ones its zero: -a 1000000 is cheap)."""
    m, out = len(alphabet), []
    while k:
        k, r = divmod(k, m)
        out.append(alphabet[r])
    return alphabet[0] * (width - len(out)) + "".join(reversed(out))


class Namer:
    """Output file names: PREFIX + suffix + --additional-suffix."""

    def __init__(self, budget, prefix: str, alphabet: str, length, extra: str, start: str):
        self.prefix, self.alphabet, self.extra, self.start_text = prefix, alphabet, extra, start
        self.auto = length is None and not start
        self.length = length if length is not None else 2
        if len(start) > self.length:
            raise bad_usage("split", "numerical suffix start value is too large for the suffix length")
        budget.check_length(len(prefix) + self.length + len(extra), "split: file name")
        # a start past NAME_MAX digits names no file: only its first name is ever made
        self.start = int(start, len(alphabet)) if start and len(start) <= _NAME_MAX else 0

    def name(self, k: int) -> str:
        if len(self.start_text) > _NAME_MAX:
            return self.prefix + self.start_text.rjust(self.length, self.alphabet[0]) + self.extra
        return self.prefix + suffix(k, self.alphabet, self.length, self.auto, self.start) + self.extra


class Writer:
    """Creates the numbered files one after the other; --verbose names each; -e skips empty
    ones. A file that cannot be written ends the command, as in GNU."""

    def __init__(self, ctx, cmd: str, namer: Namer, verbose: bool, elide: bool):
        self.ctx, self.cmd, self.namer, self.verbose, self.elide = ctx, cmd, namer, verbose, elide
        self.count = 0

    def file(self, data: bytes):
        if self.elide and not data:
            return
        try:
            name = self.namer.name(self.count)
        except Exhausted:
            raise UsageError(f"{self.cmd}: output file suffixes exhausted") from None
        self.count += 1
        if self.verbose:
            self.ctx.out(f"creating file {quote_always(name)}\n")
        try:
            access.writer(self.ctx, name)(data.decode("utf-8", "surrogateescape"))
        except FsError as e:
            raise UsageError(f"{self.cmd}: {shell_quote(name)}: {e.strerror}") from None
        if not self.count & 255:
            self.ctx.budget.check_clock()


# ----------------------------------------------------------------------------------- split

_SPLIT_USAGE = Usage("[OPTION]... [FILE [PREFIX]]", "Output pieces of FILE to PREFIXaa, PREFIXab, "
                     "...; default size is 1000 lines, and default PREFIX is 'x'.", (
    "-a, --suffix-length=N   generate suffixes of length N (default 2)",
    "--additional-suffix=SUFFIX  append an additional SUFFIX to file names",
    "-b, --bytes=SIZE        put SIZE bytes per output file",
    "-C, --line-bytes=SIZE   put at most SIZE bytes of records per output file",
    "-d                      use numeric suffixes starting at 0, not alphabetic",
    "--numeric-suffixes[=FROM]  same as -d, but allow setting the start value",
    "-x                      use hex suffixes starting at 0, not alphabetic",
    "-e, --elide-empty-files  do not generate empty output files with '-n'",
    "-l, --lines=NUMBER      put NUMBER lines/records per output file",
    "-n, --number=CHUNKS     generate CHUNKS output files",
    "-t, --separator=SEP     use SEP instead of newline as the record separator",
    "--verbose               print a diagnostic just before each output file is opened"))


def _split_args(argv: list) -> list:
    """--numeric-suffixes and --hex-suffixes take an optional =FROM."""
    out = []
    for a in argv:
        for name, letter in (("--numeric-suffixes", "d"), ("--hex-suffixes", "x")):
            if a == name:
                a = f"-{letter}"
            elif a.startswith(name + "="):
                out.append(f"--{letter}-from={a.split('=', 1)[1]}")
                a = f"-{letter}"
        out.append(a)
    return out


def _count(text: str, what: str) -> int:
    return gnu_number(text, 1, INTMAX, f"split: invalid number of {what}", units=True, unsigned=True)


@command("split", usage=_SPLIT_USAGE, needs_files=True)
def split(ctx, argv):
    opts, ops = parse("split", _split_args(argv), short_flags="dxe", short_values="abCln t",
                      long_flags={"elide-empty-files": "e", "verbose": "verbose"},
                      long_values={"suffix-length": "a", "additional-suffix": "additional-suffix",
                                   "bytes": "b", "line-bytes": "C", "lines": "l", "number": "n",
                                   "separator": "t", "d-from": "d-from", "x-from": "x-from"},
                      numeric_short="l")
    if len(ops) > 2:
        raise bad_usage("split", f"extra operand {locale_quote(ops[2])}")
    source = ops[0] if ops else "-"
    prefix = ops[1] if len(ops) > 1 else "x"
    alphabet, start = _ALPHABET, ""
    for flag in opts.flags:
        if flag in ("d", "x"):
            alphabet = _DIGITS if flag == "d" else _HEX
        if flag in ("d-from", "x-from"):
            value = opts.get(flag)
            digits = _HEX if flag == "x-from" else _DIGITS
            if not value or value.strip(digits):
                kind = "hexadecimal" if flag == "x-from" else "numerical"
                raise bad_usage("split", f"{locale_quote(value)}: invalid start value for {kind} suffix")
            start = value.lstrip("0") or "0"                # GNU skips the leading zeros
    length = None
    if opts.has("a"):
        length = gnu_number(opts.get("a"), 0, INTMAX, "split: invalid suffix length", unsigned=True) or None
    sep = opts.get("t", "\n")
    if not sep:
        raise UsageError("split: empty record separator")
    if len(sep.encode("utf-8", "surrogateescape")) != 1 and sep != "\\0":
        raise UsageError(f"split: multi-character separator {locale_quote(sep)}")
    sep_byte = b"\0" if sep == "\\0" else sep.encode("utf-8", "surrogateescape")
    modes = [f for f in opts.flags if f in ("b", "C", "l", "n")]
    if len(set(modes)) > 1:
        raise bad_usage("split", "cannot split in more than one way")
    mode = modes[-1] if modes else "l"
    chunks = _chunk_spec(opts.get("n")) if mode == "n" else None
    if chunks is not None and not chunks[1]:
        length = _chunk_suffix_length(chunks[2], len(alphabet), length)
    namer = Namer(ctx.budget, prefix, alphabet, length, opts.get("additional-suffix", ""), start)
    writer = Writer(ctx, "split", namer, opts.has("verbose"), opts.has("e"))
    if "/" in namer.extra:
        raise UsageError(f"split: invalid suffix {locale_quote(namer.extra)}, contains directory separator")
    try:
        data = read_bytes(ctx, source)
    except FsError as e:
        raise UsageError(f"split: cannot open {quote_always(source)} for reading: {e.strerror}") from None
    if chunks is not None:
        return _split_chunks(ctx, writer, data, chunks, sep_byte)
    if mode == "l":
        _split_lines(writer, data, _count(opts.get("l", "1000"), "lines"), sep_byte)
    elif mode == "b":
        size = _count(opts.get("b"), "bytes")
        for k in range(0, len(data), size):
            writer.file(data[k:k + size])
    else:
        _split_line_bytes(writer, data, _count(opts.get("C"), "bytes"), sep_byte)
    return 0


def _records(data: bytes, sep: bytes) -> list:
    """The records with their separators (the last may lack one)."""
    parts = data.split(sep)
    records = [p + sep for p in parts[:-1]]
    if parts[-1]:
        records.append(parts[-1])
    return records


def _split_lines(writer: Writer, data: bytes, per_file: int, sep: bytes):
    records = _records(data, sep)
    for k in range(0, len(records), per_file):
        writer.file(b"".join(records[k:k + per_file]))


def _split_line_bytes(writer: Writer, data: bytes, size: int, sep: bytes):
    """-C: as many whole records as fit in SIZE bytes; a longer record is cut into SIZE pieces."""
    current = b""
    for record in _records(data, sep):
        if len(current) + len(record) <= size:
            current += record
            continue
        if current:
            writer.file(current)
            current = b""
        while len(record) > size:
            writer.file(record[:size])
            record = record[size:]
        current = record
    if current:
        writer.file(current)


def _chunk_spec(spec: str) -> tuple:
    """(kind, K or 0, N) of -n N, K/N, l/N, l/K/N, r/N, r/K/N, as GNU's parse_chunk reads them."""
    m = re.fullmatch(r"(?:([lr])/)?(?:([^/]*)/)?([^/]*)", spec)
    if not m:
        raise UsageError(f"split: invalid number of chunks: {locale_quote(spec)}")
    n = gnu_number(m.group(3), 1, INTMAX, "split: invalid number of chunks", unsigned=True)
    only = 0
    if m.group(2) is not None:
        only = gnu_number(m.group(2), 1, INTMAX, "split: invalid chunk number", unsigned=True)
        if only > n:
            raise UsageError(f"split: invalid chunk number: {locale_quote(m.group(2))}{OUT_OF_RANGE}")
    return m.group(1), only, n


def _chunk_suffix_length(n: int, base: int, length):
    """The suffix length for N files: at least the digits of N-1 (GNU refuses a shorter -a)."""
    needed, rest = 1, (n - 1) // base
    while rest:
        needed, rest = needed + 1, rest // base
    if length is None:
        return max(2, needed)
    if length < needed:
        raise UsageError(f"split: the suffix length needs to be at least {needed}")
    return length


def _split_chunks(ctx, writer: Writer, data: bytes, chunks: tuple, sep: bytes) -> int:
    kind, only, n = chunks
    if only:
        ctx.write_bytes(_piece(kind, data, n, sep, only - 1))
        return 0
    for k, piece in enumerate(_pieces(kind, data, n, sep)):
        writer.file(piece)              # one at a time: a huge N ends at the file-count limit
        if not (k + 1) % 4096:
            ctx.budget.check_clock()    # (and at the clock: -e makes no file of the empty ones)
        if writer.elide and kind != "l" and k >= len(data):
            break                       # every byte or record chunk from here on is empty
    return 0


def _piece(kind, data: bytes, n: int, sep: bytes, k: int) -> bytes:
    """Chunk k of N alone (K/N), without making the chunks before it."""
    if kind == "r":
        return b"".join(_records(data, sep)[k::n]) if k < len(data) else b""
    if kind == "l":
        return _line_chunks(data, n, sep).get(k, b"")
    size = max(len(data) // n, 1)
    return data[k * size:(k + 1) * size if k < n - 1 else len(data)]


def _pieces(kind, data: bytes, n: int, sep: bytes):
    """The N chunks, made one at a time: bytes, whole records (l/) or every Nth record (r/)."""
    if kind == "r":
        records = _records(data, sep)
        for k in range(n):
            yield b"".join(records[k::n]) if k < len(records) else b""
        return
    if kind == "l":
        found = _line_chunks(data, n, sep)
        for k in range(n):
            yield found.get(k, b"")
        return
    size = max(len(data) // n, 1)
    for k in range(n):
        yield data[k * size:(k + 1) * size if k < n - 1 else len(data)]


def _line_chunks(data: bytes, n: int, sep: bytes) -> dict:
    """GNU lines_chunk_split: chunk k ends with the record that holds byte k*size-1.
    {chunk index: bytes} of the chunks that are not empty."""
    size = len(data) // n
    pieces: dict = {}
    chunk, chunk_end, pos = 0, size - 1, 0
    while pos < len(data):
        found = data.find(sep, max(pos, chunk_end))
        end = found + 1 if found >= 0 else len(data)
        pieces[chunk] = pieces.get(chunk, b"") + data[pos:end]
        pos = end
        crossed = found >= 0
        while crossed or chunk_end <= pos - 1:
            if not crossed and pos == len(data):
                break
            if chunk + 1 >= n:
                break
            chunk += 1
            chunk_end = len(data) - 1 if chunk == n - 1 else chunk_end + size
            if chunk_end > pos - 1:
                crossed = False
    return pieces


# ---------------------------------------------------------------------------------- csplit

_CSPLIT_USAGE = Usage("[OPTION]... FILE PATTERN...", "Output pieces of FILE separated by "
                      "PATTERN(s) to files 'xx00', 'xx01', ..., and output byte counts of each "
                      "piece to standard output.", (
    "-b, --suffix-format=FORMAT  use sprintf FORMAT instead of %02d",
    "-f, --prefix=PREFIX        use PREFIX instead of 'xx'",
    "-k, --keep-files           do not remove output files on errors",
    "-n, --digits=DIGITS        use specified number of digits instead of 2",
    "-s, --quiet, --silent      do not print counts of output file sizes",
    "-z, --elide-empty-files    suppress empty output files"))


class CsplitError(Exception):
    pass


# (kind, target, offset, repeat): kind "line" with a line number as target, or "/" or "%" with
# (compiled regex, its source)
_CsplitPattern = tuple[str, Any, int, int]


def _csplit_patterns(args: list) -> list[_CsplitPattern]:
    """[(kind, regex or line, offset, repeat)] from the PATTERN operands."""
    patterns: list[_CsplitPattern] = []
    for arg in args:
        if arg[:1] == "{" and arg[-1:] == "}" and len(arg) > 1:
            count = arg[1:-1]
            if count != "*" and not (count.isascii() and count.isdigit() and bounded_decimal(count) <= INTMAX):
                raise UsageError(f"csplit: {locale_quote(arg[:-1])}}}: integer required between '{{' and '}}'")
            if not patterns:
                raise UsageError(f"csplit: {locale_quote(arg)}: invalid pattern")
            kind, rx, offset, _ = patterns[-1]
            patterns[-1] = (kind, rx, offset, -1 if count == "*" else int(count))
            continue
        if arg[:1] in ("/", "%"):
            close = arg.rfind(arg[0])
            if close == 0:
                raise UsageError(f"csplit: {arg}: closing delimiter '{arg[0]}' missing")
            offset_text = arg[close + 1:]
            if offset_text and not (re.fullmatch(r"[-+]?\d+", offset_text)
                                    and bounded_decimal(offset_text.lstrip("+-")) <= INTMAX):
                raise UsageError(f"csplit: {locale_quote(arg)}: integer expected after delimiter")
            try:
                rx = compile_posix(arg[1:close], False)
            except RegexError as e:
                raise UsageError(f"csplit: {arg[1:close]}: {e}") from None
            patterns.append((arg[0], (rx, arg[1:close]), int(offset_text or 0), 0))
        elif arg.isascii() and arg.isdigit() and 0 < bounded_decimal(arg) <= INTMAX:
            patterns.append(("line", int(arg), 0, 0))
        else:
            raise UsageError(f"csplit: {locale_quote(arg)}: invalid pattern")
    return patterns


@command("csplit", usage=_CSPLIT_USAGE, needs_files=True)
def csplit(ctx, argv):
    opts, ops = parse("csplit", argv, short_flags="ksqz", short_values="bfn", long_flags={
        "keep-files": "k", "quiet": "s", "silent": "s", "elide-empty-files": "z"},
        long_values={"suffix-format": "b", "prefix": "f", "digits": "n"})
    if not ops:
        raise bad_usage("csplit", "missing operand")
    if len(ops) == 1:
        raise bad_usage("csplit", f"missing operand after {locale_quote(ops[0])}")
    digits = gnu_number(opts.get("n", "2"), 0, INT_MAX, "csplit: invalid number")
    fmt = opts.get("b") or f"%0{digits}d"
    for width in re.findall(r"%[-+ #0']*(\d*)(?:\.(\d*))?", fmt):  # a name of their size is built
        ctx.budget.check_length(max(bounded_decimal(w or "0") for w in width), "csplit: file name")
    prefix = opts.get("f", "xx")
    patterns = _csplit_patterns(ops[1:])
    try:
        data = read_bytes(ctx, ops[0])
    except FsError as e:
        raise UsageError(f"csplit: cannot open {quote_always(ops[0])} for reading: {e.strerror}") from None
    lines = [line + b"\n" for line in lines_of(data)]
    if data and not data.endswith(b"\n"):
        lines[-1] = lines[-1][:-1]
    job = _Csplit(ctx, prefix, fmt, opts.has("z"), opts.has("s"))
    try:
        job.run(lines, patterns)
    except CsplitError as e:
        ctx.err(f"csplit: {e}\n")
        if not opts.has("k"):
            job.remove()
        return 1
    return 0


class _Csplit:
    def __init__(self, ctx, prefix: str, fmt: str, elide: bool, quiet: bool):
        self.ctx, self.prefix, self.fmt, self.elide, self.quiet = ctx, prefix, fmt, elide, quiet
        self.created: list[str] = []
        self.pos = 0

    def emit(self, lines: list, end: int):
        piece = b"".join(lines[self.pos:end])
        self.pos = end
        if self.elide and not piece:
            return
        try:
            name = self.prefix + (self.fmt % len(self.created))
        except (TypeError, ValueError):
            raise UsageError(f"csplit: invalid conversion specifier in suffix: {self.fmt}") from None
        try:
            access.writer(self.ctx, name)(piece.decode("utf-8", "surrogateescape"))
        except FsError as e:
            raise CsplitError(f"{shell_quote(name)}: {e.strerror}") from None
        self.created.append(name)
        if not self.quiet:
            self.ctx.out(f"{len(piece)}\n")
        if not len(self.created) & 255:
            self.ctx.budget.check_clock()

    def remove(self):
        for name in self.created:
            try:
                self.ctx.fs.unlink(self.ctx.path(name))
            except FsError:
                pass

    def run(self, lines: list, patterns: list):
        """GNU csplit's loop: `pos` lines have been written (or skipped); a line-number pattern
        N writes up to line N*(repetition+1)-1, a /RE/ up to the next matching line after the
        last match (plus its offset), a %RE% skips to it."""
        for kind, target, offset, repeat in patterns:
            times = 0
            while repeat < 0 or times <= repeat:
                if kind == "line":
                    last = target * (times + 1)
                    if last > len(lines):
                        self.emit(lines, len(lines))
                        raise CsplitError(f"{locale_quote(str(target))}: line number out of range"
                                          + _repetition(times))
                    self.emit(lines, last - 1)
                elif not self._regexp(lines, kind, target, offset, times, repeat < 0):
                    return
                times += 1
        self.emit(lines, len(lines))

    def _regexp(self, lines: list, kind: str, rx, offset: int, times: int, forever: bool) -> bool:
        found = None
        for k in range(self.searched, len(lines)):
            text = lines[k].rstrip(b"\n").decode("utf-8", "surrogateescape")
            if search(rx[0], text) is not None:
                found = k
                break
        if found is None:
            if forever:
                if kind == "/":
                    self.emit(lines, len(lines))
                return False
            if kind == "/":
                self.emit(lines, len(lines))
            raise CsplitError(f"{_spec_text(kind, rx, offset)}: match not found" + _repetition(times))
        cut = found + offset
        if cut < self.pos or cut > len(lines):
            raise CsplitError(f"{_spec_text(kind, rx, offset)}: line number out of range"
                              + _repetition(times))
        if kind == "%":
            self.pos = cut
        else:
            self.emit(lines, cut)
        self.searched = max(found, cut) + 1 if offset > 0 else found + 1
        return True

    searched = 0


def _repetition(times: int) -> str:
    return f" on repetition {times}" if times else ""


def _spec_text(kind, rx, offset) -> str:
    return locale_quote(f"{kind}{rx[1]}{kind}" + (f"{offset:+d}" if offset else ""))
