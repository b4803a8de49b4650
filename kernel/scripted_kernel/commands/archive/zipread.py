"""Reading zip archives for unzip and zip (when it updates one): the central directory and each
member's data, with unzip 6.0's (Debian's) checks and nothing taken on trust.

`zipfile` is not used to read: it trusts a member's header to bound the work (a bzip2 member is
expanded in one call, however far it inflates), refuses a whole archive for one member's
version or name, and raises what unzip reports member by member. Here:
- the directory is parsed with every offset and length checked against the bytes there are;
  names that are not valid UTF-8 are kept as surrogates, never refused;
- a member's data is expanded CHUNK bytes at a time by `codecs`, and its CRC checked at the end;
- each member's local header and data must not overlap the directory or another member
  (Debian's fix for overlapped-entry zip bombs, CVE-2019-13232).
"""
from __future__ import annotations

import bisect
import bz2
import math
import struct
import zipfile
import zlib
from dataclasses import dataclass, field
from typing import Iterator

from ...base.limits import Budget
from .codecs import CHUNK, Corrupt, one_stream

CAN_DO = 46                     # the version unzip 6.0 can extract ("can do v4.6")
METHODS = {zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2}
_END = struct.Struct("<4s4H2LH")              # end of central directory record
_END64_LOCATOR = struct.Struct("<4sLQL")
_END64 = struct.Struct("<4sQ2H2L4Q")
_ENTRY = struct.Struct("<4s4B4HL2L5H2L")      # central directory file header
_LOCAL = struct.Struct("<4s2B4HL2L2H")        # local file header
MAX_COMMENT = 0xFFFF


class NotAZip(Exception):
    """No central directory could be read: unzip's "cannot find zipfile directory"."""


class MemberError(Exception):
    """A member unzip does not extract: `message` as it words it, `status` its exit status,
    `skipped` for a refusal before reading (the "skipping:" lines)."""

    def __init__(self, message: str, status: int, skipped: bool = False):
        super().__init__(message)
        self.message, self.status, self.skipped = message, status, skipped


class BadCrc(Exception):
    def __init__(self, got: int, wanted: int):
        super().__init__(f"bad CRC {got:08x}  (should be {wanted:08x})")


class Overlap(Exception):
    """A member begins inside bytes read before: unzip stops (status 12)."""


OVERLAP = "error: invalid zip file with overlapped components (possible zip bomb)"


@dataclass
class Archive:
    data: bytes
    entries: list[zipfile.ZipInfo]
    shift: int                   # bytes before the archive proper (a self-extractor's stub)
    budget: Budget               # the running command's, checked as members are read
    covered: list[tuple[int, int]] = field(default_factory=list)   # spans read, sorted
    # a member's data ran over bytes read before: unzip reports it after the member, and stops
    overlapped: bool = False


def read_archive(data: bytes, budget: Budget) -> Archive:
    """The archive's directory; raises NotAZip."""
    end_at = data.rfind(b"PK\x05\x06", max(0, len(data) - _END.size - MAX_COMMENT))
    if end_at < 0 or end_at + _END.size > len(data):
        raise NotAZip
    _, disk, cd_disk, _, count, cd_size, cd_offset, _ = _END.unpack_from(data, end_at)
    if disk or cd_disk:
        raise NotAZip                          # one disk of several
    cd_end = end_at
    locator_at = end_at - _END64_LOCATOR.size
    if locator_at >= 0 and data[locator_at:locator_at + 4] == b"PK\x06\x07":
        end64_at = locator_at - _END64.size
        if end64_at < 0 or data[end64_at:end64_at + 4] != b"PK\x06\x06":
            raise NotAZip
        fields = _END64.unpack_from(data, end64_at)
        count, cd_size, cd_offset = fields[7], fields[8], fields[9]
        cd_end = end64_at
    shift = cd_end - cd_size - cd_offset
    if shift < 0 or cd_size > cd_end:
        raise NotAZip
    entries = _entries(budget, data, cd_end - cd_size, cd_end, count)
    return Archive(data, entries, shift, budget, [(cd_end - cd_size, len(data))])


def _entries(budget: Budget, data: bytes, at: int, end: int, count: int) -> list[zipfile.ZipInfo]:
    entries: list[zipfile.ZipInfo] = []
    while at < end:
        if at + _ENTRY.size > end or data[at:at + 4] != b"PK\x01\x02":
            raise NotAZip
        (_, create_version, create_system, extract_version, _, flags, method, dos_time, dos_date,
         crc, compress_size, file_size, name_len, extra_len, comment_len, _, _, external_attr,
         offset) = _ENTRY.unpack_from(data, at)
        name_at = at + _ENTRY.size
        at = name_at + name_len + extra_len + comment_len
        if at > end:
            raise NotAZip
        raw_name = data[name_at:name_at + name_len]
        info = zipfile.ZipInfo(raw_name.decode("utf-8" if flags & 0x800 else "cp437",
                                               "surrogateescape"),
                               ((dos_date >> 9) + 1980, (dos_date >> 5) & 15, dos_date & 31,
                                dos_time >> 11, (dos_time >> 5) & 63, (dos_time & 31) * 2))
        info.create_version, info.create_system = create_version, create_system
        info.extract_version, info.flag_bits, info.compress_type = extract_version, flags, method
        info.CRC, info.external_attr = crc, external_attr
        info.extra = data[name_at + name_len:name_at + name_len + extra_len]
        info.file_size, info.compress_size, info.header_offset = _zip64_sizes(
            info.extra, file_size, compress_size, offset)
        entries.append(info)
        if len(entries) % 1024 == 0:
            budget.check_clock()
    if len(entries) != count and count != 0xFFFF:
        raise NotAZip
    return entries


def _zip64_sizes(extra: bytes, *values: int) -> tuple[int, int, int]:
    """(size, compressed size, offset): those the header marks 0xFFFFFFFF come from the zip64
    extra field, in that order."""
    out = list(values)
    pos = 0
    while pos + 4 <= len(extra):
        tag, size = struct.unpack_from("<HH", extra, pos)
        if tag == 1:
            field_data, k = extra[pos + 4:pos + 4 + size], 0
            for i, value in enumerate(out):
                if value == 0xFFFFFFFF and k + 8 <= len(field_data):
                    out[i] = struct.unpack_from("<Q", field_data, k)[0]
                    k += 8
            break
        pos += 4 + size
    return out[0], out[1], out[2]


def member_bytes(archive: Archive, info: zipfile.ZipInfo, number: int) -> Iterator[bytes]:
    """The member's expanded bytes, in chunks of at most CHUNK, checked as unzip checks them.
    Raises at once MemberError (a member unzip skips, or whose header is not where the
    directory says) or Overlap (it begins inside bytes read before); the chunks raise
    MemberError (data that cannot be expanded) and, after the last, BadCrc, and set
    `archive.overlapped` when the data ran over bytes read before."""
    if info.extract_version > CAN_DO:
        version = info.extract_version
        raise MemberError(f"need PK compat. v{version // 10}.{version % 10} (can do v4.6)", 81,
                          skipped=True)
    if info.compress_type not in METHODS:
        raise MemberError(f"unsupported compression method {info.compress_type}", 81, skipped=True)
    if info.flag_bits & 1:
        raise MemberError("unable to get password", 5, skipped=True)
    return _checked_chunks(archive, info, _data_start(archive, info, number))


def _checked_chunks(archive: Archive, info: zipfile.ZipInfo, start: int) -> Iterator[bytes]:
    packed = memoryview(archive.data)[start:start + info.compress_size]
    consumed = [len(packed)]
    crc = 0
    for chunk in _expand(archive.budget, info.compress_type, packed, consumed):
        crc = zlib.crc32(chunk, crc)
        yield chunk
    _cover(archive, info.header_offset + archive.shift, start + consumed[0])
    if crc != info.CRC:
        raise BadCrc(crc, info.CRC)


def _data_start(archive: Archive, info: zipfile.ZipInfo, number: int) -> int:
    at = info.header_offset + archive.shift
    if at + _LOCAL.size > len(archive.data):
        raise MemberError(f"file #{number}:  bad zipfile offset (lseek):  {info.header_offset}", 3)
    if archive.data[at:at + 4] != b"PK\x03\x04":
        raise MemberError(f"file #{number}:  bad zipfile offset (local header sig):  "
                          f"{info.header_offset}", 2)
    if _inside(archive.covered, at):
        raise Overlap
    name_len, extra_len = _LOCAL.unpack_from(archive.data, at)[-2:]
    return at + _LOCAL.size + name_len + extra_len


def _expand(budget: Budget, method: int, packed: memoryview, consumed: list) -> Iterator[bytes]:
    """The member's data (its compressed size, or up to the end of the archive): stored data
    as it is; a deflate or bzip2 stream expanded until it ends (not trusting the sizes), which
    must be within the data; `consumed[0]` set to the bytes it took."""
    if method == zipfile.ZIP_STORED or not packed:       # (no byte at all: empty, as in unzip)
        for at in range(0, len(packed), CHUNK):
            yield bytes(packed[at:at + CHUNK])
        return
    engine = zlib.decompressobj(-15) if method == zipfile.ZIP_DEFLATED else bz2.BZ2Decompressor()
    try:
        for count, chunk in enumerate(one_stream(engine, packed), 1):
            yield chunk
            if count % 64 == 0:
                budget.check_clock()
    except Corrupt:
        raise MemberError("invalid compressed data to inflate", 2) from None
    consumed[0] = len(packed) - len(engine.unused_data)


def _inside(covered: list[tuple[int, int]], at: int) -> bool:
    """Whether `at` lies in one of the spans (sorted, not overlapping one another)."""
    i = bisect.bisect_right(covered, (at, math.inf)) - 1
    return i >= 0 and at < covered[i][1]


def _cover(archive: Archive, start: int, end: int):
    covered = archive.covered
    i = bisect.bisect_left(covered, (start, end))
    if (i and covered[i - 1][1] > start) or (i < len(covered) and covered[i][0] < end):
        archive.overlapped = True
    covered.insert(i, (start, end))
