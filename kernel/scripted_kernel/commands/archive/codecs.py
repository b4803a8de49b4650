"""The three stream compressors (gzip, bzip2, xz) as one table, and decompression in bounded
chunks: every compressed stream is expanded CHUNK bytes at a time, never with one unbounded
read, so a decompression bomb stops at whatever its consumer counts against (the filesystem's
quota when written to a file, a named limit when kept in memory or sent to standard output).
"""
from __future__ import annotations

import bz2
import io
import lzma
import struct
import zlib
from dataclasses import dataclass
from typing import Callable, Iterator

from ...base.errors import LimitExceeded
from ...base.limits import Budget

CHUNK = 1 << 16
CLOCK_EVERY = 64            # chunks between two checks of the clock, cancel flag and memory


class Corrupt(Exception):
    """The data is not in the format, or is damaged: `kind` is "format", "truncated" or
    "damaged"; each command words it in its own way."""

    def __init__(self, kind: str):
        super().__init__(kind)
        self.kind = kind


@dataclass(frozen=True)
class Codec:
    name: str                    # gzip, bzip2, xz
    suffix: str                  # what compression appends
    magic: bytes
    new_decompressor: Callable
    new_compressor: Callable     # (level) -> an object with compress(data) and flush()


def compress(budget: Budget, codec: Codec, data: bytes, level: int, name: str = "", mtime: int = 0) -> Iterator[bytes]:
    """`data` compressed by `codec`, CHUNK bytes at a time with the budget checked after each
    (xz -9 takes seconds a MiB). A gzip member is written as gzip writes one: FNAME when a name
    is kept, MTIME, XFL for levels 1/9, OS 3 (Unix)."""
    if codec is GZIP:
        flags = 0x08 if name else 0
        xfl = 2 if level == 9 else 4 if level == 1 else 0
        yield b"\x1f\x8b\x08" + bytes([flags]) + struct.pack("<I", mtime & 0xFFFFFFFF) + bytes([xfl, 3])
        if name:
            yield name.encode("utf-8", "surrogateescape").replace(b"\0", b"") + b"\0"
    engine = codec.new_compressor(level)
    view = memoryview(data)
    for at in range(0, len(data), CHUNK):
        yield engine.compress(view[at:at + CHUNK])
        budget.check_clock()
    yield engine.flush()
    if codec is GZIP:
        yield struct.pack("<II", zlib.crc32(data), len(data) & 0xFFFFFFFF)


GZIP = Codec("gzip", ".gz", b"\x1f\x8b", lambda: zlib.decompressobj(31),
             lambda level: zlib.compressobj(level, zlib.DEFLATED, -15))
BZIP2 = Codec("bzip2", ".bz2", b"BZh", bz2.BZ2Decompressor, bz2.BZ2Compressor)
XZ = Codec("xz", ".xz", b"\xfd7zXZ\x00", lambda: lzma.LZMADecompressor(lzma.FORMAT_XZ),
           lambda level: lzma.LZMACompressor(lzma.FORMAT_XZ, check=lzma.CHECK_CRC64, preset=level))
CODECS = (GZIP, BZIP2, XZ)


def sniff(data: bytes):
    """The codec whose magic number begins `data`, or None."""
    for codec in CODECS:
        if data.startswith(codec.magic):
            return codec
    return None


def inflate(budget: Budget, codec: Codec, data: bytes, trailing: list | None = None) -> Iterator[bytes]:
    """The decompressed data in chunks of at most CHUNK bytes. Concatenated streams (gzip
    members, bzip2 and xz streams) follow one another as the tools read them; bytes after the
    last stream that are not one are put in `trailing` (gzip warns of them), or are an error."""
    if not data.startswith(codec.magic):
        raise Corrupt("format")
    chunks = 0
    while True:
        engine = codec.new_decompressor()
        for chunk in one_stream(engine, data):
            yield chunk
            chunks += 1
            if chunks % CLOCK_EVERY == 0:
                budget.check_clock()
        data = engine.unused_data
        if not data or not data.strip(b"\0"):
            return                                 # trailing zeros pad tapes: ignored
        if not data.startswith(codec.magic):
            if trailing is None:
                raise Corrupt("damaged")
            trailing.append(data)
            return


def one_stream(engine, data) -> Iterator[bytes]:
    """One compressed stream of `data` (bytes or a memoryview) expanded by `engine` (a zlib,
    bz2 or lzma decompressor), in chunks of at most CHUNK; raises Corrupt."""
    is_zlib = hasattr(engine, "unconsumed_tail")
    pending = data
    try:
        while not engine.eof:
            chunk = engine.decompress(pending, CHUNK)
            if is_zlib:
                pending = engine.unconsumed_tail
                stuck = not chunk and not pending and not engine.eof
            else:
                pending = b""
                stuck = not chunk and engine.needs_input
            if stuck:
                raise Corrupt("truncated")
            if chunk:
                yield chunk
    except (zlib.error, OSError, lzma.LZMAError, EOFError):
        raise Corrupt("damaged") from None


class Ceiling:
    """Counts bytes expanded into memory or onto standard output against one limit, and stops
    the execution with the limit's name once past it."""

    def __init__(self, limit: int, name: str, what: str):
        self.limit, self.name, self.what, self.used = limit, name, what, 0

    def add(self, size: int):
        self.used += size
        if self.used > self.limit:
            raise LimitExceeded(self.name, f"{self.what}: decompressed data exceeds {self.limit} "
                                           f"bytes ({self.name})")


class ForwardFile:
    """A read-only file over bytes that come in chunks (an archive being expanded), as
    tarfile's random-access mode reads one. It seeks forward by reading on, each chunk counted
    against `ceiling` (and the budget checked by `inflate`), and back only over the last BACK
    bytes (tarfile steps back one byte to test the end of a member). A position past the end
    reads as the end: a header that declares 2**80 bytes costs nothing until they are read, and
    then no more than the input holds."""
    BACK = 1 << 16

    def __init__(self, chunks: Iterator[bytes], ceiling: "Ceiling | None" = None, data: bytes = b""):
        self.chunks, self.ceiling = chunks, ceiling
        self.buffer = bytearray(data)
        self.start = 0                  # the position of buffer[0]
        self.pos = 0
        self.ended = False

    def tell(self) -> int:
        return self.pos

    def seek(self, pos: int, whence: int = 0) -> int:
        if whence == 1:
            pos += self.pos
        elif whence != 0:
            raise io.UnsupportedOperation("seek from the end")
        if pos < self.start:
            raise io.UnsupportedOperation("seek back past the bytes kept")
        self.pos = pos
        return pos

    def read(self, size: int = -1) -> bytes:
        self._fill(None if size is None or size < 0 else self.pos + size)
        at = self.pos - self.start
        out = bytes(self.buffer[at:] if size is None or size < 0 else self.buffer[at:at + size])
        self.pos += len(out)
        return out

    def _fill(self, upto: "int | None"):
        """Expand chunks until the buffer reaches position `upto` (None: the end), dropping
        the bytes more than BACK behind the position as it goes."""
        while not self.ended and (upto is None or self.start + len(self.buffer) < upto):
            chunk = next(self.chunks, None)
            if chunk is None:
                self.ended = True
                break
            if self.ceiling is not None:
                self.ceiling.add(len(chunk))
            self.buffer += chunk
            self._drop()
        self._drop()

    def _drop(self):
        dead = min(self.pos - self.BACK - self.start, len(self.buffer))
        if dead > 0 and dead >= len(self.buffer) // 2:      # (amortised: half the buffer at least)
            del self.buffer[:dead]
            self.start += dead
