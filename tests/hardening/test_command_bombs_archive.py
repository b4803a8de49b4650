"""Hostile input against the commands that read archives, compressed data and databases (tar,
unzip, zip, gzip/bzip2/xz, sqlite3): sizes and counts declared by the input are checked against
the bytes there are and the run's limits before anything is allocated or skipped; every loop
reads the clock; SQLite's memory is bounded and its statements interrupted at the deadline; a
damaged archive gets the real program's message and status, never an internal error. Times are
asserted with generous slack; what each test checks is the named outcome, and that the next
call on the same tool still works. Memory is measured in a child process (peak RSS)."""
import bz2
import functools
import io
import json
import random
import shutil
import struct
import subprocess
import sys
import tarfile
import textwrap
import time
import zipfile
import zlib

import pytest

from support import ours_with_files, real_with_files
from scripted_kernel import BashTool
from scripted_kernel.base.limits import ExecutionLimits

MIB = 1 << 20
EOF_ERROR = "tar: Unexpected EOF in archive\ntar: Error is not recoverable: exiting now\n"
needs_tar = pytest.mark.skipif(shutil.which("tar") is None, reason="GNU tar is not installed")
needs_unzip = pytest.mark.skipif(shutil.which("unzip") is None, reason="unzip is not installed")


def timed(files: dict, script: str, timeout: float = 3, **limits):
    """(result, seconds, the files left) of `script` in a BashTool holding `files`, after a
    check that the same tool still runs the next call."""
    tool = BashTool.builder().limits(ExecutionLimits(timeout_seconds=timeout, **limits)).files(files).build()
    started = time.monotonic()
    result = tool.execute(script)
    elapsed = time.monotonic() - started
    after = tool.execute("echo next; ls")
    assert after.exit_code == 0 and after.stdout.startswith("next\n"), after
    return result, elapsed, after.stdout.split("\n")[1:-1]


def peak_growth(files: dict, script: str, **limits) -> dict:
    """The result of `script` run in a new Python process, and how far the process's peak
    resident memory grew past what it was before (`growth`, bytes)."""
    program = textwrap.dedent(f"""
        import json, resource, sys
        from scripted_kernel import BashTool
        from scripted_kernel.base.limits import ExecutionLimits
        files = {{name: bytes.fromhex(data) for name, data in json.load(sys.stdin).items()}}
        tool = BashTool.builder().limits(ExecutionLimits(**{limits!r})).files(files).build()
        tool.execute("true")
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        r = tool.execute({script!r})
        growth = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) * 1024
        print(json.dumps({{"stdout": r.stdout, "stderr": r.stderr, "status": r.exit_code,
                          "growth": growth}}))
    """)
    payload = json.dumps({name: data.hex() for name, data in files.items()})
    done = subprocess.run([sys.executable, "-c", program], input=payload, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


# ---------------------------------------------------------------- tar: declared sizes

def _header(name: str, **fields) -> bytes:
    info = tarfile.TarInfo(name)
    for field, value in fields.items():
        setattr(info, field, value)
    return info.tobuf(format=tarfile.GNU_FORMAT)


def _with_checksum(block: bytearray) -> bytes:
    block[148:156] = b" " * 8
    block[148:156] = b"%06o\0 " % sum(block[:512])
    return bytes(block)


def declaring(size: int) -> bytes:
    """A 5 KB archive whose one member declares `size` bytes."""
    return _header("big", size=size) + b"x" * 4608


@pytest.mark.parametrize("compressed", [False, True])
def test_tar_listing_a_member_that_declares_2_40_bytes_ends_at_once(compressed):
    """tarfile's stream mode read on to the declared size, for ever; GNU tar: at once."""
    archive = declaring(1 << 40)
    if compressed:
        archive = _gzip(archive)
    result, elapsed, _ = timed({"h.tar": archive}, "tar tf h.tar; echo rc=$?; tar tvf h.tar; echo rc=$?")
    assert result.stdout == ("big\nrc=2\n-rw-r--r-- 0/0   1099511627776 1970-01-01 00:00 big\n"
                             "rc=2\n")
    assert result.stderr == EOF_ERROR * 2
    assert elapsed < 3.5


def _gzip(data: bytes) -> bytes:
    packer = zlib.compressobj(6, zlib.DEFLATED, 31)
    return packer.compress(data) + packer.flush()


def test_tar_member_that_declares_2_80_bytes_is_skipped_as_gnu_tar_skips_it():
    result, elapsed, _ = timed({"h.tar": declaring(1 << 80)}, "tar tvf h.tar; echo rc=$?; mkdir o; "
                            "tar xf h.tar -C o; echo rc=$?; ls o | wc -l")
    assert result.stdout == "rc=2\nrc=2\n0\n"
    assert result.stderr == ("tar: Archive base-256 value is out of off_t range\n"
                             "tar: This does not look like a tar archive\n"
                             "tar: Skipping to next header\n"
                             "tar: Exiting with failure status due to previous errors\n") * 2
    assert elapsed < 3.5


def _negative_size() -> bytes:
    block = bytearray(_header("neg"))
    block[124:136] = b"\xff" * 11 + b"\x00"             # base-256: -256
    return _with_checksum(block) + b"y" * 2048


def _damaged_second_header() -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.GNU_FORMAT) as archive:
        for name in ("a", "b"):
            info = tarfile.TarInfo(name)
            info.size = 3
            archive.addfile(info, io.BytesIO(b"xyz"))
    data = bytearray(buffer.getvalue())
    data[1024:1536] = b"z" * 512
    return bytes(data)


GNU_CASES = {
    "2**40 bytes": declaring(1 << 40),
    "2**80 bytes": declaring(1 << 80),
    "negative size": _negative_size(),
    "time past time_t": _header("t", mtime=1 << 70) + bytes(1024),
    "time past the year 2**31": _header("t", mtime=1 << 60) + bytes(1024),
    "damaged header": _damaged_second_header(),
    "last block cut short": _header("a", size=3) + b"xyz" + bytes(509) + _header("b")[:300],
}


@needs_tar
@pytest.mark.parametrize("name", sorted(GNU_CASES))
def test_tar_reads_damaged_headers_as_gnu_tar(name):
    script = "tar tvf - < a.tar; echo rc=$?; tar tf - < a.tar; tar xOf - < a.tar | wc -c"
    if "time" not in name:               # (we do not warn of implausible times when extracting)
        script += "; mkdir o; tar xf - -C o < a.tar; echo rc=$?; find o -type f | xargs -r wc -c"
    files = {"a.tar": GNU_CASES[name]}
    assert ours_with_files(script, files) == real_with_files(script, files)


def _pax(records: bytes, body: bytes = b"x") -> bytes:
    pax = _header("./PaxHeaders/x", type=tarfile.XHDTYPE, size=len(records))
    member = _header("x", size=len(body))
    return (pax + records + bytes(-len(records) % 512) + member + body + bytes(-len(body) % 512)
            + bytes(1024))


def _long_names(count: int) -> bytes:
    chain = b""
    for k in range(count):
        name = f"name{k}".encode() + b"\0"
        chain += _header("././@LongLink", type=tarfile.GNUTYPE_LONGNAME, size=len(name))
        chain += name + bytes(512 - len(name))
    return chain + _header("real") + bytes(1024)


def test_extended_headers_are_bounded():
    """An extended header is read whole and parsed by a loop that does not see the clock:
    one past a MiB is refused (GNU tar: "memory exhausted" at 2**40 bytes), as is a run of
    more than 64 before a member (tarfile reads them by recursion); a long name is fine."""
    files = {"huge.tar": _header("./PaxHeaders/x", type=tarfile.XHDTYPE, size=1 << 40) + b"x" * 4096,
             "chain.tar": _long_names(100), "short.tar": _long_names(1)}
    result, elapsed, _ = timed(files, "tar tf huge.tar; echo rc=$?; tar tf chain.tar; echo rc=$?; "
                            "tar tf short.tar")
    assert result.stdout == "rc=2\nrc=2\nname0\n"
    assert result.stderr == ("tar: Extended header of 1099511627776 bytes: more than the 1048576 allowed\n"
                             "tar: Error is not recoverable: exiting now\n"
                             "tar: More than 64 extended headers in a row\n"
                             "tar: Error is not recoverable: exiting now\n")
    assert elapsed < 3.5


def _record(key: str, value: str) -> bytes:
    text = f" {key}={value}\n"
    length = len(text) + len(str(len(text)))
    length = len(text) + len(str(length))
    return f"{length}{text}".encode()


def test_damaged_extended_headers_are_a_tar_error():
    """What tarfile's parsers raise on them (ValueError, IndexError) reached the shell as an
    internal error."""
    sparse = bytearray(_header("sp", type=tarfile.GNUTYPE_SPARSE))
    sparse[482] = 1                                      # "more sparse headers follow": none do
    sparse_one = (_record("GNU.sparse.major", "1") + _record("GNU.sparse.minor", "0")
                  + _record("GNU.sparse.name", "s"))
    files = {"sparse.tar": _with_checksum(sparse),
             "map.tar": _pax(sparse_one, b"not a number\n" + b"a" * 600),
             "digits.tar": _pax(b"9" * 5000 + b" a=b\n"),
             "size.tar": _pax(_record("GNU.sparse.map", "1,2,3,x") + _record("GNU.sparse.size", "9"))}
    result, _, _ = timed(files, "for f in sparse map digits size; do tar tvf $f.tar; echo rc=$?; done")
    assert result.stdout == "rc=2\n" * 4
    assert result.stderr == ("tar: Damaged extended header\n"
                             "tar: Error is not recoverable: exiting now\n") * 4


def test_a_name_ends_at_a_nul_as_in_gnu_tar():
    result, _, _ = timed({"a.tar": _pax(_record("path", "a\0b"))}, "mkdir o; tar xf a.tar -C o; ls o")
    assert (result.stdout, result.exit_code) == ("a\n", 0)


def _mutated_tar(rng: random.Random) -> bytes:
    buffer = io.BytesIO()
    kind = rng.choice([tarfile.GNU_FORMAT, tarfile.PAX_FORMAT])
    with tarfile.open(fileobj=buffer, mode="w", format=kind) as archive:
        for i in range(rng.randint(1, 3)):
            data = bytes(rng.randrange(256) for _ in range(rng.randint(0, 1500)))
            info = tarfile.TarInfo("d/" + "long" * rng.randint(1, 40) + str(i))
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    data = bytearray(buffer.getvalue())
    headers = [at for at in range(0, len(data) - 512, 512) if data[at + 257:at + 262] == b"ustar"]
    for _ in range(rng.randint(1, 4)):
        at = rng.choice(headers) + rng.choice([124, 136, 100, 156, 345, 482, 483, 512, 520])
        data[at:at + 12] = rng.choice([b"\x80" + bytes(3) + b"\xff" * 8, b"\xff" * 12, b"77777777777\0",
                                       b"99 path=aaaa", b"0 a=b\n", b"9" * 12, bytes([rng.randrange(256)])])
    for at in headers:
        data[at:at + 512] = _with_checksum(data[at:at + 512])
    if rng.random() < 0.2:
        del data[rng.randrange(len(data)):]
    return bytes(data) if rng.random() < 0.7 else _gzip(bytes(data))


def test_mutated_tar_archives_never_reach_an_internal_error():
    rng = random.Random(7)
    tool = BashTool.builder().limits(ExecutionLimits(timeout_seconds=5)).build()
    for case in range(150):
        tool.filesystem.add_file("/home/user/a.tar", _mutated_tar(rng))
        r = tool.execute("rm -rf o; mkdir o; tar tvf a.tar >/dev/null; tar xf a.tar -C o; "
                         "tar xOf a.tar >/dev/null; echo done")
        assert r.stdout == "done\n" and "internal error" not in r.stderr, (case, r.stderr)


# ---------------------------------------------------------------- unzip: members that lie

def _zip(name: str, data: bytes, method=zipfile.ZIP_DEFLATED, change=None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(zipfile.ZipInfo(name, (2024, 1, 1, 0, 0, 0)), data, compress_type=method)
    raw = bytearray(buffer.getvalue())
    if change is not None:
        central = raw.find(b"PK\x01\x02")
        change(raw, central)
    return bytes(raw)


def _both(local: int, central: int, value: bytes):
    """Sets a field of the local header (at `local`) and the central directory entry."""
    def change(raw: bytearray, at: int):
        raw[local:local + len(value)] = value
        raw[at + central:at + central + len(value)] = value
    return change


def _corrupt(raw: bytearray, central: int):
    raw[40:60] = b"\xff" * 20


def _header_offset(raw: bytearray, central: int):
    raw[central + 42:central + 46] = struct.pack("<I", MIB)


def _local_signature(raw: bytearray, central: int):
    raw[0:4] = b"XXXX"


TEXT = b"hello world\n" * 100
LYING_ZIPS = {
    "size larger": _zip("m.txt", TEXT, change=_both(22, 24, struct.pack("<I", 1 << 30))),
    "size smaller": _zip("m.txt", TEXT, change=_both(22, 24, struct.pack("<I", 10))),
    "compressed size larger": _zip("m.txt", TEXT, change=_both(18, 20, struct.pack("<I", 1 << 30))),
    "bad crc": _zip("m.txt", TEXT, change=_both(14, 16, bytes(4))),
    "damaged data": _zip("m.txt", TEXT, change=_corrupt),
    "encrypted": _zip("m.txt", TEXT, change=_both(6, 8, struct.pack("<H", 1))),
    "unknown method": _zip("m.txt", TEXT, change=_both(8, 10, struct.pack("<H", 99))),
    "newer version": _zip("m.txt", TEXT, method=zipfile.ZIP_LZMA),
    "offset past the end": _zip("m.txt", TEXT, change=_header_offset),
    "no local header": _zip("m.txt", TEXT, change=_local_signature),
    "stored size larger": _zip("m.txt", TEXT, method=zipfile.ZIP_STORED,
                               change=_both(18, 20, struct.pack("<I", 5000))),
    "bzip2": _zip("m.txt", TEXT, method=zipfile.ZIP_BZIP2),
}


@needs_unzip
@pytest.mark.parametrize("name", sorted(LYING_ZIPS))
def test_unzip_of_members_that_lie_as_unzip(name):
    """A member whose sizes, CRC, method, version or offset lie: unzip's (Debian's) messages
    and statuses in every mode; `unzip -p` of one that lies about its size ended in an internal
    error (BadZipFile)."""
    script = ("unzip -p a.zip > out; echo rc=$?; wc -c < out; unzip -t a.zip; echo rc=$?; "
              "mkdir o; cd o; unzip ../a.zip; echo rc=$?; unzip -qo ../a.zip; echo rc=$?")
    files = {"a.zip": LYING_ZIPS[name]}
    assert ours_with_files(script, files) == real_with_files(script, files)


def _raw_zip(method: int, packed: bytes, crc: int, size: int, names: list) -> bytes:
    """One local header (named as the first entry) and its data, and a directory entry for
    each of `names`, all of them pointing at that one header."""
    first = names[0].encode()
    out = io.BytesIO()
    out.write(struct.pack("<4s2B4HL2L2H", b"PK\x03\x04", 20, 0, 0, method, 0, 0x5821, crc,
                          len(packed), size, len(first), 0) + first + packed)
    start = out.tell()
    for name in names:
        encoded = name.encode()
        out.write(struct.pack("<4s4B4HL2L5H2L", b"PK\x01\x02", 20, 3, 20, 0, 0, method, 0, 0x5821,
                              crc, len(packed), size, len(encoded), 0, 0, 0, 0, 0o100644 << 16, 0)
                  + encoded)
    count, length = len(names), out.tell() - start
    out.write(struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, count, count, length, start, 0))
    return out.getvalue()


def _overlapped(count: int) -> bytes:
    """David Fifield's overlapped-entry bomb: `count` directory entries over one local header
    and one MiB of zeros."""
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    packed = packer.compress(bytes(MIB)) + packer.flush()
    return _raw_zip(zipfile.ZIP_DEFLATED, packed, zlib.crc32(bytes(MIB)), MIB,
                    [f"f{i}" for i in range(count)])


@needs_unzip
def test_overlapped_entries_stop_as_in_debians_unzip():
    script = "unzip -p a.zip | wc -c; unzip -t a.zip; echo rc=$?; mkdir o; cd o; unzip ../a.zip; echo rc=$?; ls"
    files = {"a.zip": _overlapped(50)}
    ours, real = ours_with_files(script, files), real_with_files(script, files)
    assert ours == real
    assert "overlapped components (possible zip bomb)" in ours[1]


@functools.lru_cache(maxsize=None)
def bzip2_bomb() -> bytes:
    """A zip whose bzip2 member expands to 64 MiB of zeros from 50 bytes; zipfile expanded such
    a member in one call, whatever its size."""
    packer = bz2.BZ2Compressor(9)
    packed = b"".join(packer.compress(bytes(MIB)) for _ in range(64)) + packer.flush()
    return _raw_zip(zipfile.ZIP_BZIP2, packed, zlib.crc32(bytes(64 * MIB)), 64 * MIB, ["big"])


def test_a_bzip2_member_bomb_expands_a_chunk_at_a_time():
    bomb = bzip2_bomb()
    piped = peak_growth({"b.zip": bomb}, "unzip -p b.zip | wc -c", timeout_seconds=10)
    assert "max_string_length" in piped["stderr"] and piped["status"] != 0
    assert piped["growth"] < 48 * MIB, piped
    extracted = peak_growth({"b.zip": bomb}, "unzip -q b.zip; echo rc=$?; unzip -t b.zip | tail -1",
                            timeout_seconds=10)
    assert extracted["stdout"] == "rc=50\nNo errors detected in compressed data of b.zip.\n", extracted
    assert "File too large" in extracted["stderr"]
    assert extracted["growth"] < 48 * MIB, extracted


def test_zip_updating_a_bomb_stops_at_a_limit():
    """zip writes an archive's members again: they are expanded within max_fs_bytes."""
    result, elapsed, _ = timed({"b.zip": bzip2_bomb()}, "echo x > new; zip b.zip new; echo rc=$?",
                            timeout=10, max_fs_bytes=32 * MIB)
    assert "decompressed data exceeds" in result.stderr and "max_fs_bytes" in result.stderr
    assert result.exit_code != 0 and elapsed < 10.5


def _mutated_zip(rng: random.Random) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for i in range(rng.randint(1, 3)):
            info = zipfile.ZipInfo(rng.choice(["a", "d/", "d/b", "é"]) + str(i), (2024, 1, 2, 3, 4, 5))
            info.create_system = 3
            info.external_attr = rng.choice([0o100644, 0o120777]) << 16
            data = bytes(rng.randrange(4) for _ in range(rng.randint(0, 2000)))
            archive.writestr(info, data, compress_type=rng.choice([0, 8, 12, 14]))
    raw = bytearray(buffer.getvalue())
    headers = [at for at in range(len(raw) - 4) if raw[at:at + 4] in (b"PK\x03\x04", b"PK\x01\x02")]
    for _ in range(rng.randint(1, 4)):
        at = rng.choice(headers) + rng.choice([6, 8, 10, 14, 18, 20, 22, 24, 26, 28, 30, 42])
        raw[at:at + 4] = rng.choice([b"\xff\xff\xff\xff", bytes(4), b"\x01\x00", b"\x0c\x00",
                                     b"\x00\x08", b"\x00\x00\x00\x40", bytes([rng.randrange(256)])])
    return bytes(raw)


def test_mutated_zip_archives_never_reach_an_internal_error():
    rng = random.Random(11)
    tool = BashTool.builder().limits(ExecutionLimits(timeout_seconds=5)).build()
    for case in range(150):
        tool.filesystem.add_file("/home/user/a.zip", _mutated_zip(rng))
        r = tool.execute("rm -rf o; unzip -l a.zip >/dev/null; unzip -p a.zip >/dev/null; "
                         "unzip -t a.zip >/dev/null; unzip -oq -d o a.zip; echo x > n; zip -q a.zip n >/dev/null; "
                         "echo done")
        assert r.stdout == "done\n" and "internal error" not in r.stderr, (case, r.stderr)


# ---------------------------------------------------------------- file, checksums

def test_file_of_json_nested_400000_deep_goes_on():
    """json's recursion on it ended the whole run ("maximum nesting depth exceeded"): the depth
    is measured first, and past file's 500 levels it is text, as file says."""
    result, elapsed, _ = timed({"deep.json": b"[" * 400_000 + b"]" * 400_000},
                               "file -b --mime-type deep.json; echo after")
    assert (result.stdout, result.stderr) == ("text/plain\nafter\n", "")
    assert elapsed < 3.5


def test_checking_millions_of_lines_reads_the_clock():
    result, elapsed, _ = timed({"sums": b"x\n" * 8_000_000}, "md5sum -c sums; echo after", timeout=1)
    assert result.exit_code == 124 and "after" not in result.stdout
    assert elapsed < 1.5 + 1.5


# ---------------------------------------------------------------- gzip, bzip2, xz

@pytest.mark.parametrize("script", ["xz -9e r", "bzip2 -9 r", "tar cJf r.txz r"])
def test_compression_reads_the_clock(script):
    """xz -9 takes seconds a MiB and was one call: now a chunk at a time, with the budget
    checked after each; a compressor stopped by the deadline leaves no half-written output."""
    noise = random.Random(3).randbytes(16 * MIB)
    result, elapsed, _ = timed({"r": noise}, script + "; echo after", timeout=1)
    assert result.exit_code == 124 and "timed out" in result.stderr and "after" not in result.stdout
    assert elapsed < 1.5 + 1.5           # (on a loaded machine)
    listing = BashTool(files={"r": noise}).execute("ls")
    assert listing.stdout == "r\n"


def test_an_unreadable_file_is_the_compressors_error():
    """xz read its input before the name checks, unguarded ("bash: line 1: xz: write error")."""
    result, _, _ = timed({}, "echo hi > a; xz a; chmod 000 a.xz; xz -d a.xz; echo rc=$?")
    assert (result.stdout, result.stderr) == ("rc=1\n", "xz: a.xz: Permission denied\n")


# ---------------------------------------------------------------- sqlite3

sqlite_3_11 = pytest.mark.skipif(sys.version_info < (3, 11), reason="sqlite3 needs Python 3.11")
ROWS = "with recursive c(x) as (select 1 union all select x + 1 from c limit {n}) "


@sqlite_3_11
@pytest.mark.parametrize("target", ["temp table t", "table m.t"])
def test_a_temporary_or_attached_database_is_bounded_as_the_main_one(target):
    """100k rows of zeroblob(10000000) in a temporary table peaked the host at 2.85 GB (7.5 s
    against 3 s): every database has the main one's page bound, the temporary one from its first
    use, an attached one from its attachment."""
    script = (f"sqlite3 :memory: \"attach ':memory:' as m; create {target} as "
              + ROWS.format(n=100_000) + "select zeroblob(10000000) as b from c\"; echo rc=$?")
    result, elapsed, _ = timed({}, script)
    assert (result.stdout, result.stderr) == ("rc=13\n", "Error: stepping, database or disk is full (13)\n")
    assert elapsed < 3.5
    assert peak_growth({}, script, timeout_seconds=3)["growth"] < 256 * MIB


@sqlite_3_11
def test_a_sort_of_giant_rows_stops_at_the_heap_limit():
    """Sorts and temporary indexes are no database's pages: SQLite's heap is bounded at
    max_memory_bytes while the command runs, and the bound is put back after."""
    script = ("sqlite3 :memory: 'select length(b) from (" + ROWS.format(n=100_000)
              + "select zeroblob(10000000) as b from c order by random()) limit 1'; echo after")
    result, elapsed, _ = timed({}, script, timeout=10, max_memory_bytes=256 * MIB)
    assert result.stderr == ("bash: sqlite3: out of memory: SQLite may use at most 268435456 bytes "
                             "(max_memory_bytes)\n")
    assert result.exit_code == 1 and "after" not in result.stdout
    assert elapsed < 10.5
    measured = peak_growth({}, script, timeout_seconds=10, max_memory_bytes=256 * MIB)
    assert measured["growth"] < 512 * MIB, measured
    from scripted_kernel.commands.sqlite3 import native
    assert native.hard_heap_limit(-1) == 0


@sqlite_3_11
def test_four_giant_printf_calls_end_at_once():
    """printf('%.*c', 2000000000, 'x') loops on after its result is too long (NULL) and never
    reaches the progress handler: four of them ran 41 s. NULL now comes at once."""
    call = "printf('%.*c', 2000000000, 'x')"
    result, elapsed, _ = timed({}, f"sqlite3 :memory: \"select {call}, {call}, {call}, {call} is null\"")
    assert (result.stdout, result.stderr, result.exit_code) == ("|||1\n", "", 0)
    assert elapsed < 3.5


@sqlite_3_11
def test_a_long_call_in_every_row_stops_at_the_deadline():
    """Each row's printf of 16 MB takes a tenth of a second in one virtual-machine instruction,
    so the progress handler (every 20000 instructions) would wait minutes: the interrupter stops
    the statement at the deadline."""
    script = ("sqlite3 :memory: \"" + ROWS.format(n=2000)
              + "select sum(length(printf('%.*c', 16000000 - x, 'x'))) from c\"; echo after")
    result, elapsed, _ = timed({}, script, timeout=1)
    assert result.exit_code == 124 and "timed out" in result.stderr and "after" not in result.stdout
    assert "interrupted" not in result.stderr
    assert elapsed < 1.5 + 1.5


@sqlite_3_11
def test_a_cancel_reaches_a_statement_through_the_interrupter(monkeypatch):
    """The interrupter's thread holds each connection with its run's budget: a cancel stops a
    statement that the progress handler does not reach (held off here), and the command raises
    the budget's own error. Ordered by the watch, not a sleep; unstopped, the count would end
    after some seconds and print."""
    import threading
    from scripted_kernel import CancelToken
    from scripted_kernel.commands.sqlite3 import bounds, database
    monkeypatch.setattr(database, "PROGRESS_STEPS", 2_000_000_000)
    watching = threading.Event()
    watch = bounds.INTERRUPTER.watch

    def watch_and_say(conn, budget):
        watch(conn, budget)
        watching.set()
    monkeypatch.setattr(bounds.INTERRUPTER, "watch", watch_and_say)
    cancel = CancelToken()
    threading.Thread(target=lambda: watching.wait(60) and cancel.cancel(), daemon=True).start()
    tool = BashTool.builder().limits(ExecutionLimits(timeout_seconds=120)).build()
    result = tool.execute("sqlite3 :memory: \"" + ROWS.format(n=10_000_000) + "select count(*) from c\"; "
                          "echo after", cancel=cancel)
    assert watching.is_set()
    assert (result.exit_code, result.error, result.stdout) == (130, "cancelled", "")


def _database() -> bytes:
    import sqlite3
    import tempfile
    from pathlib import Path
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "f.db"
        conn = sqlite3.connect(path)
        conn.executescript("create table t(a integer primary key, b text, c blob); create index i on t(b); "
                           "create view v as select * from t; "
                           "create trigger g after insert on t begin select 1; end;")
        conn.executemany("insert into t(b, c) values (?, ?)", [(f"row{i}" * 10, bytes(50)) for i in range(300)])
        conn.commit()
        conn.close()
        return path.read_bytes()


@sqlite_3_11
def test_mutated_databases_never_reach_an_internal_error():
    """A damaged schema quoted in SQLite's message made Python's module raise UnicodeDecodeError."""
    rng = random.Random(1)
    base = _database()
    tool = BashTool.builder().limits(ExecutionLimits(timeout_seconds=5)).build()
    for case in range(80):
        data = bytearray(base)
        for _ in range(rng.randint(1, 10)):            # the header, the schema's page, any page
            where = rng.choice([100, 4096, len(data)])
            data[rng.randrange(where)] = rng.randrange(256)
        tool.filesystem.add_file("/home/user/f.db", bytes(data))
        r = tool.execute("sqlite3 f.db 'select count(*), sum(length(b)) from t' .tables; sqlite3 f.db .dump; "
                         "sqlite3 f.db .schema 'select * from v limit 3' 'pragma integrity_check'; echo done")
        assert r.stdout.endswith("done\n") and "internal error" not in r.stderr, (case, r.stderr)
