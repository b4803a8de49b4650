"""split and csplit: one input cut into numbered files (GNU coreutils).

Both write their pieces through the filesystem layer; the filesystem's file-count and size
limits end a runaway split (`split -b 1` of a large file) with the error GNU would print when
the disk is full, and the budget is checked between files.
"""
from __future__ import annotations

import re
from typing import Any

from ..fs import FsError, access
from ..base.limits import check_clock
from ..base.regexes import RegexError, compile_posix, search
from ._bytes import lines_of, locale_quote, parse_size, quote_always, read_bytes, shell_quote
from ._options import UsageError, bad_usage, parse
from .registry import Usage, command

_ALPHABET = "abcdefghijklmnopqrstuvwxyz"
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
        if k >= m ** length:
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
    m, out = len(alphabet), []
    for _ in range(width):
        k, r = divmod(k, m)
        out.append(alphabet[r])
    return "".join(reversed(out))


class Namer:
    """Output file names: PREFIX + suffix + --additional-suffix."""

    def __init__(self, prefix: str, alphabet: str, length, extra: str, start: int):
        self.prefix, self.alphabet, self.extra, self.start = prefix, alphabet, extra, start
        self.auto = length is None and not start
        self.length = length if length is not None else 2
        if start and length is None:
            self.length = max(2, len(str(start)))

    def name(self, k: int) -> str:
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
            check_clock()


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
    value = parse_size(text)
    if value is None:
        raise UsageError(f"split: invalid number of {what}: {locale_quote(text)}")
    if value <= 0:
        raise UsageError(f"split: invalid number of {what}: {locale_quote(text)}: "
                         f"Numerical result out of range")
    return value


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
    alphabet, start = _ALPHABET, 0
    for flag in opts.flags:
        if flag in ("d", "x"):
            alphabet = _DIGITS if flag == "d" else _HEX
        if flag in ("d-from", "x-from"):
            value = opts.get(flag)
            start = int(value, 16 if flag == "x-from" else 10) if value.isalnum() else -1
            if start < 0:
                raise UsageError(f"split: invalid start value for numerical suffix: {locale_quote(value)}")
    length = None
    if opts.has("a"):
        text = opts.get("a")
        if not text.isdigit():
            raise UsageError(f"split: invalid suffix length: {locale_quote(text)}")
        length = int(text)
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
    namer = Namer(prefix, alphabet, length, opts.get("additional-suffix", ""), start)
    writer = Writer(ctx, "split", namer, opts.has("verbose"), opts.has("e"))
    if "/" in namer.extra:
        raise UsageError(f"split: invalid suffix {locale_quote(namer.extra)}, contains directory separator")
    try:
        data = read_bytes(ctx, source)
    except FsError as e:
        raise UsageError(f"split: cannot open {quote_always(source)} for reading: {e.strerror}") from None
    if mode == "n":
        return _split_chunks(ctx, writer, data, opts.get("n"), sep_byte)
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


def _split_chunks(ctx, writer: Writer, data: bytes, spec: str, sep: bytes) -> int:
    """-n N, K/N, l/N, l/K/N, r/N, r/K/N."""
    m = re.fullmatch(r"(?:([lr])/)?(?:(\d+)/)?(\d+)", spec)
    if not m:
        raise UsageError(f"split: invalid number of chunks: {locale_quote(spec)}")
    kind, only, n = m.group(1), int(m.group(2)) if m.group(2) else 0, int(m.group(3))
    if n == 0:
        raise UsageError(f"split: invalid number of chunks: {locale_quote(m.group(3))}")
    if m.group(2) and not 0 < only <= n:
        raise UsageError(f"split: invalid chunk number: {locale_quote(m.group(2))}")
    pieces = _pieces(kind, data, n, sep)
    if only:
        for k, piece in enumerate(pieces):
            if k == only - 1:
                ctx.write_bytes(piece)
                break
        return 0
    for piece in pieces:                # one at a time: a huge N ends at the file-count limit
        writer.file(piece)
    return 0


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
        m = re.fullmatch(r"\{(\d+|\*)\}", arg)
        if m:
            if not patterns:
                raise UsageError(f"csplit: {locale_quote(arg)}: invalid pattern")
            kind, rx, offset, _ = patterns[-1]
            patterns[-1] = (kind, rx, offset, -1 if m.group(1) == "*" else int(m.group(1)))
            continue
        if arg[:1] in ("/", "%"):
            close = arg.rfind(arg[0])
            if close == 0:
                raise UsageError(f"csplit: {arg}: closing delimiter '{arg[0]}' missing")
            offset_text = arg[close + 1:]
            if offset_text and not re.fullmatch(r"[-+]?\d+", offset_text):
                raise UsageError(f"csplit: {locale_quote(offset_text)}: integer expected after delimiter")
            try:
                rx = compile_posix(arg[1:close], False)
            except RegexError as e:
                raise UsageError(f"csplit: {arg[1:close]}: {e}") from None
            patterns.append((arg[0], (rx, arg[1:close]), int(offset_text or 0), 0))
        elif arg.isdigit() and int(arg) > 0:
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
    digits = opts.get("n", "2")
    if not digits.isdigit():
        raise UsageError(f"csplit: invalid number: {locale_quote(digits)}")
    fmt = opts.get("b") or f"%0{int(digits)}d"
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
            check_clock()

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
