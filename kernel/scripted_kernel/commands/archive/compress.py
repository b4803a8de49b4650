"""gzip, bzip2 and xz (and gunzip/zcat, bunzip2/bzcat, unxz/xzcat): one implementation of a
stream compressor's command line (replace FILE by FILE.gz unless -k or -c, the reverse with -d,
standard input to standard output), with each program's own messages and exit statuses.

Compression reads the whole file (a file is at most max_file_bytes); decompression expands in
chunks that go straight into the output file, where the filesystem's limits stop a bomb, or to
standard output counted against max_string_length.
"""
from __future__ import annotations

import struct

from ...base.errors import bounded
from ...fs import FsError
from .._bytes import read_bytes
from .._options import UsageError, parse
from ..registry import Usage, command
from .codecs import BZIP2, GZIP, XZ, Ceiling, Codec, Corrupt, compress, inflate


class Tool:
    """One compressor family: its codec, suffixes, options and messages (GNU gzip's here;
    bzip2 and xz override the wording)."""
    codec: Codec = GZIP
    suffixes = {".gz": "", "-gz": "", ".z": "", "-z": "", "_z": "", ".Z": "", ".tgz": ".tar",
                ".taz": ".tar"}
    default_level = 6
    short_flags = "cdfhklnNqrtvz"
    long_flags = {"stdout": "c", "to-stdout": "c", "decompress": "d", "uncompress": "d",
                  "force": "f", "keep": "k", "list": "l", "no-name": "n", "name": "N",
                  "quiet": "q", "recursive": "r", "test": "t", "verbose": "v", "fast": "1",
                  "best": "9"}

    format_first = False         # xz looks at the data before the name
    tries_suffix = True          # gunzip x finds x.gz; bzip2 and xz take names as given

    def __init__(self, ctx, prog: str):
        self.ctx, self.prog = ctx, prog
        self.statuses: set[int] = set()
        self.speaker = self.speaker_name(prog)

    @staticmethod
    def speaker_name(prog: str) -> str:
        """gunzip and zcat are scripts that run gzip: their messages say gzip."""
        return "gzip"

    # ---------------------------------------------------------------- messages

    def complain(self, text: str, status: int):
        _say(self.ctx, f"{self.speaker}: {text}\n")
        self.statuses.add(status)

    def missing(self, name: str, reason: str):
        self.complain(f"{name}: {reason}", 1)

    def is_directory(self, name: str):
        self.complain(f"{name} is a directory -- ignored", 2)

    def has_suffix(self, name: str):
        _say(self.ctx, f"{self.speaker}: {name} already has {self.codec.suffix} suffix -- unchanged\n")

    def unknown_suffix(self, name: str) -> str | None:
        self.complain(f"{name}: unknown suffix -- ignored", 2)
        return None

    def invalid_suffix(self, suffix: str) -> UsageError:
        return UsageError(f"{self.speaker}: invalid suffix '{suffix}'", 1)

    def exists(self, out: str):
        self.complain(f"{out} already exists;\tnot overwritten", 2)

    def corrupt(self, name: str, kind: str):
        text = {"format": "not in gzip format", "truncated": "unexpected end of file",
                "damaged": "invalid compressed data--format violated"}[kind]
        _say(self.ctx, "\n" if kind == "format" else "")
        self.complain(f"{name}: {text}", 1)

    def trailing_garbage(self, name: str):
        _say(self.ctx, "\n")
        self.complain(f"{name}: decompression OK, trailing garbage ignored", 2)

    def status(self) -> int:
        """gzip and xz: an error (1) outranks a warning (2)."""
        return 1 if 1 in self.statuses else max(self.statuses, default=0)

    # ---------------------------------------------------------------- the command line

    def parse(self, argv: list):
        opts, operands = parse(self.prog, argv, self.short_flags + "123456789", "S",
                               self.long_flags, {"suffix": "S"}, numeric_short="L")
        self.opts = opts
        name = self.prog
        self.decompress = opts.has("d") or name in DECOMPRESSORS
        if opts.has("z"):
            self.decompress = False
        self.to_stdout = opts.has("c") or name.endswith("cat")
        self.test = opts.has("t")
        levels = [f for f in opts.flags if f in "0123456789" and len(f) == 1]
        level = int(opts.get("L", levels[-1] if levels else self.default_level))
        self.level = max(level, 1) if self.codec is not XZ else level
        if opts.has("S"):
            if not opts.get("S"):               # it would name the output after the input
                raise self.invalid_suffix(opts.get("S"))
            self.suffixes = {opts.get("S"): ""}
        return operands or ["-"]

    def run(self, argv: list) -> int:
        operands = self.parse(argv)
        if self.opts.has("l"):
            return self.list(operands)
        for name in operands:
            if name == "-":
                self.stream()
            else:
                self.file(name)
        return self.status()

    # ---------------------------------------------------------------- operands

    def stream(self):
        """Standard input to standard output."""
        data = self.ctx.read_stdin_bytes()
        if self.decompress or self.test:
            self.expand(data, "stdin", True)
        else:
            self.ctx.write_bytes(b"".join(compress(self.ctx.budget, self.codec, data, self.level)))

    def file(self, name: str):
        path = self.ctx.path(name)
        try:
            st = self.ctx.fs.stat(path)
        except FsError as e:
            found = self.with_suffix(name) if self.decompress and self.tries_suffix else None
            if found is None:
                self.missing(self.missing_name(name), e.strerror)
                return
            name, path, st = found
        if st.is_dir:
            if self.opts.has("r"):
                for entry in sorted(self.ctx.fs.listdir(path)):
                    self.file(name.rstrip("/") + "/" + entry)
            else:
                self.is_directory(name)
            return
        if self.decompress or self.test:
            self.unpack(name, path, st)
        else:
            self.pack(name, path, st)

    def missing_name(self, name: str) -> str:
        if self.decompress and self.tries_suffix and not self.known_suffix(name):
            return name + self.codec.suffix
        return name

    def with_suffix(self, name: str):
        """gunzip x finds x.gz: (name, path, stat) of the first existing NAME+suffix."""
        for suffix in (self.codec.suffix,):
            try:
                path = self.ctx.path(name + suffix)
                return name + suffix, path, self.ctx.fs.stat(path)
            except FsError:
                pass
        return None

    def known_suffix(self, name: str):
        for suffix in sorted(self.suffixes, key=len, reverse=True):
            if name.endswith(suffix) and len(name) > len(suffix):
                return suffix
        return None

    def read(self, name: str, path: str) -> bytes | None:
        """The input file's bytes; None when it cannot be read (reported)."""
        try:
            return self.ctx.fs.read_bytes(path)
        except FsError as e:
            self.missing(name, e.strerror)
            return None

    def pack(self, name: str, path: str, st):
        if self.known_suffix(name) is not None and not (self.opts.has("f") or self.to_stdout):
            self.has_suffix(name)
            return
        data = self.read(name, path)
        if data is None:
            return
        keep_name = "" if self.opts.has("n") else name.rsplit("/", 1)[-1]
        packed = compress(self.ctx.budget, self.codec, data, self.level, keep_name,
                          0 if self.opts.has("n") else int(st.mtime))
        if self.to_stdout:
            self.ctx.write_bytes(b"".join(packed))
            return
        self.replace(name, path, st, name + self.codec.suffix, packed)

    def unpack(self, name: str, path: str, st):
        data = None
        if self.format_first:
            data = self.read(name, path)
            if data is None:
                return
            if not data.startswith(self.codec.magic):
                self.corrupt(name, "format")
                return
        suffix = self.known_suffix(name)
        out: str | None = None
        if suffix is not None:
            out = name[:len(name) - len(suffix)] + self.suffixes[suffix]
        elif not (self.to_stdout or self.test):
            out = self.unknown_suffix(name)
            if out is None:
                return
        if data is None:
            data = self.read(name, path)
            if data is None:
                return
        if self.test:
            self.expand(data, name, False)
        elif self.to_stdout:
            self.expand(data, name, True)
        else:
            assert out is not None              # named by its suffix, or by unknown_suffix
            self.replace(name, path, st, out, self.checked(data, name))

    def checked(self, data: bytes, name: str):
        """The expanded chunks; a damaged stream raises Corrupt (reported by replace)."""
        trailing: list = []
        yield from inflate(self.ctx.budget, self.codec, data, trailing)
        if trailing:
            self.trailing_garbage(name)

    def expand(self, data: bytes, name: str, show: bool):
        """Decompress to standard output (`show`) or only check (-t). The output is written
        once at the end, so that no UTF-8 character is split between two writes."""
        ceiling = Ceiling(self.ctx.limits.max_string_length, "max_string_length", self.prog)
        held = bytearray()
        try:
            for chunk in self.checked(data, name):
                if show:
                    ceiling.add(len(chunk))
                    held += chunk
        except Corrupt as e:
            self.corrupt(name, e.kind)
        if held:
            self.ctx.write_bytes(bytes(held))

    def replace(self, name: str, path: str, st, out: str, chunks):
        """Write `out` from `chunks`, give it the input's mode and mtime, and remove the input
        (unless -k). A failure removes the partial output."""
        fs = self.ctx.fs
        out_path = self.ctx.path(out)
        if fs.exists(out_path, follow=False):
            if not self.opts.has("f"):
                self.exists(out)
                return
            try:
                fs.unlink(out_path)
            except FsError as e:
                self.missing(out, e.strerror)
                return
        try:
            writer = fs.open_write(out_path, mode=st.mode & 0o7777)
            for chunk in chunks:
                writer.write_bytes(chunk)
        except (Corrupt, FsError) as e:
            _remove(fs, out_path)
            if isinstance(e, Corrupt):
                self.corrupt(name, e.kind)
            else:
                self.missing(out, e.strerror)
            return
        except BaseException:        # the deadline, a cancel: no half-written output, as gzip
            _remove(fs, out_path)    # removes it when a signal stops it
            raise
        fs.chmod(out_path, st.mode & 0o7777)
        fs.utime(out_path, st.mtime)
        if not self.opts.has("k"):
            try:
                fs.unlink(path)
            except FsError as e:
                self.missing(name, e.strerror)

    # ---------------------------------------------------------------- gzip -l

    def list(self, operands: list) -> int:
        self.ctx.out("         compressed        uncompressed  ratio uncompressed_name\n")
        totals = [0, 0, 0]
        count = 0
        for name in operands:
            try:
                data = read_bytes(self.ctx, name)
            except FsError as e:
                self.missing(self.missing_name(name), e.strerror)
                continue
            if not data.startswith(GZIP.magic) or len(data) < 18:
                self.corrupt(name, "format")
                continue
            header = _gzip_header_size(data)
            size = struct.unpack("<I", data[-4:])[0]
            shown = "stdout" if name == "-" else name[:len(name) - len(self.known_suffix(name) or "")]
            self.ctx.out(_list_line(len(data), size, header, shown))
            totals = [totals[0] + len(data), totals[1] + size, header]
            count += 1
        if count > 1:
            self.ctx.out(_list_line(totals[0], totals[1], totals[2], "(totals)"))
        return self.status()


def _gzip_header_size(data: bytes) -> int:
    """The bytes of a gzip member's header plus its 8-byte trailer (gzip -l's overhead)."""
    flags, pos = data[3], 10
    if flags & 4:
        pos += 2 + struct.unpack("<H", data[pos:pos + 2])[0]
    for bit in (8, 16):
        if flags & bit:
            pos = data.index(b"\0", pos) + 1 if b"\0" in data[pos:] else len(data)
    if flags & 2:
        pos += 2
    return pos + 8


def _list_line(compressed: int, size: int, overhead: int, name: str) -> str:
    saved = size - (compressed - overhead)
    ratio = 100.0 * saved / size if size else 0.0
    return f"{compressed:19d} {size:19d} {ratio:5.1f}% {name}\n"


def _remove(fs, path: str):
    try:
        fs.unlink(path)
    except FsError:
        pass


class Bzip2(Tool):
    codec = BZIP2
    tries_suffix = False
    speaker_name = staticmethod(lambda prog: prog)
    suffixes = {".bz2": "", ".bz": "", ".tbz2": ".tar", ".tbz": ".tar"}
    default_level = 9
    short_flags = "cdfhkqstvz"
    long_flags = {"stdout": "c", "decompress": "d", "compress": "z", "force": "f", "keep": "k",
                  "quiet": "q", "small": "s", "test": "t", "verbose": "v", "fast": "1", "best": "9"}

    def missing(self, name, reason):
        self.complain(f"Can't open input file {name}: {reason}.", 1)

    def is_directory(self, name):
        self.complain(f"Input file {name} is a directory.", 1)

    def has_suffix(self, name):
        self.complain(f"Input file {name} already has {self.codec.suffix} suffix.", 1)

    def unknown_suffix(self, name):
        _say(self.ctx, f"{self.prog}: Can't guess original name for {name} -- using {name}.out\n")
        return name + ".out"

    def exists(self, out):
        self.complain(f"Output file {out} already exists.", 1)

    def corrupt(self, name, kind):
        if kind == "format":
            self.complain(f"{name} is not a bzip2 file.", 2)
        else:
            self.complain(f"{name}: Compressed file ends unexpectedly;\n\tperhaps it is corrupted?"
                          if kind == "truncated" else f"{name}: Data integrity error when "
                          "decompressing.", 2)

    def status(self):
        return max(self.statuses, default=0)

    def trailing_garbage(self, name):
        _say(self.ctx, f"\n{self.speaker}: {name}: trailing garbage after EOF ignored\n")


class Xz(Tool):
    codec = XZ
    tries_suffix = False
    format_first = True
    speaker_name = staticmethod(lambda prog: prog)

    def trailing_garbage(self, name):
        self.corrupt(name, "truncated")
    suffixes = {".xz": "", ".txz": ".tar"}
    short_flags = "cdefhkqtvzT"
    long_flags = {"stdout": "c", "to-stdout": "c", "decompress": "d", "uncompress": "d",
                  "compress": "z", "force": "f", "keep": "k", "quiet": "q", "test": "t",
                  "verbose": "v", "extreme": "e", "fast": "0", "best": "9"}

    def parse(self, argv):
        argv = [a for a in argv if not a.startswith(("-T", "--threads"))]   # one thread here
        operands = super().parse(argv)
        if self.opts.has("e"):
            self.level |= 0x80000000          # lzma.PRESET_EXTREME
        return operands

    def is_directory(self, name):
        self.complain(f"{name}: Is a directory, skipping", 2)

    def has_suffix(self, name):
        self.complain(f"{name}: File already has `{self.codec.suffix}' suffix, skipping", 2)

    def unknown_suffix(self, name):
        self.complain(f"{name}: Filename has an unknown suffix, skipping", 2)
        return None

    def invalid_suffix(self, suffix):
        return UsageError(f"{self.speaker}: {suffix}: Invalid filename suffix", 1)

    def exists(self, out):
        self.complain(f"{out}: File exists", 1)

    def corrupt(self, name, kind):
        self.complain(f"{name}: " + {"format": "File format not recognized",
                                     "truncated": "Unexpected end of input",
                                     "damaged": "Compressed data is corrupt"}[kind], 1)


DECOMPRESSORS = {"gunzip", "zcat", "bunzip2", "bzcat", "unxz", "xzcat"}
FAMILIES = {"gzip": Tool, "gunzip": Tool, "zcat": Tool, "bzip2": Bzip2, "bunzip2": Bzip2,
            "bzcat": Bzip2, "xz": Xz, "unxz": Xz, "xzcat": Xz}

_OPTIONS = ("-c, --stdout      write on standard output, keep original files unchanged",
            "-d, --decompress  decompress",
            "-f, --force       force overwrite of output file",
            "-k, --keep        keep (don't delete) input files",
            "-t, --test        test compressed file integrity",
            "-1 .. -9          compress faster .. compress better")
USAGES = {name: Usage("[OPTION]... [FILE]...",
                      f"{'Decompress' if name in DECOMPRESSORS else 'Compress or decompress'}"
                      f" FILEs ({FAMILIES[name].codec.name} format; by default, in-place).",
                      _OPTIONS + (("-l, --list        list compressed file contents",
                                   "-r, --recursive   operate recursively on directories",
                                   "-n, --no-name     do not save the original name and timestamp")
                                  if FAMILIES[name] is Tool else ()))
          for name in FAMILIES}


@command("gzip", "gunzip", "zcat", "bzip2", "bunzip2", "bzcat", "xz", "unxz", "xzcat", usage=USAGES,
         needs_files=True)
def compressor(ctx, argv):
    prog = argv[0].rsplit("/", 1)[-1]
    return FAMILIES.get(prog, Tool)(ctx, prog).run(argv)


def _say(ctx, text: str):
    """A diagnostic to standard error, an operand in it quoted at most 4 KiB (base/errors.py)."""
    ctx.err(bounded(text))
