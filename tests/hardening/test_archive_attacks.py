"""Hostile archives against tar, gzip/zcat, unzip: decompression bombs stop at the filesystem's
limits or a named limit (never by expanding everything in memory), no member lands outside
the target directory (zip-slip, `..`, absolute names, links planted by the archive or before
it), and archives with huge member counts stop at the file-count limit."""
import functools
import io
import struct
import tarfile
import zipfile
import zlib

from scripted_kernel import BashTool
from scripted_kernel.fs import MemoryFs

GIB = 1 << 30
MIB = 1 << 20


def _raw_deflate_zeros(total: int, header: bytes = b"", trailer: bytes = b"") -> bytes:
    """`header` + `total` zero bytes + `trailer` as one raw deflate stream, built without
    compressing a gibibyte: after a full flush the compressor starts afresh, so one mebibyte
    of zeros compresses to the same bytes every time and is repeated."""
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    head = packer.compress(header) + packer.flush(zlib.Z_FULL_FLUSH)
    block = packer.compress(bytes(MIB)) + packer.flush(zlib.Z_FULL_FLUSH)
    tail = packer.compress(trailer) + packer.flush()
    return head + block * (total // MIB) + tail


@functools.lru_cache(maxsize=None)
def _zeros_crc() -> int:
    crc, block = 0, bytes(MIB)
    for _ in range(GIB // MIB):
        crc = zlib.crc32(block, crc)
    return crc


@functools.lru_cache(maxsize=None)
def gzip_bomb() -> bytes:
    """1 GiB of zeros as one gzip member (about 1 MB)."""
    trailer = struct.pack("<II", _zeros_crc(), GIB & 0xFFFFFFFF)
    return b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03" + _raw_deflate_zeros(GIB) + trailer


@functools.lru_cache(maxsize=None)
def tar_bomb() -> bytes:
    """A .tar.gz holding one 1 GiB member of zeros."""
    info = tarfile.TarInfo("big")
    info.size = GIB
    body = _raw_deflate_zeros(GIB, info.tobuf(format=tarfile.GNU_FORMAT), bytes(1024))
    return b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03" + body + bytes(8)


@functools.lru_cache(maxsize=None)
def zip_bomb() -> bytes:
    """A zip whose one member inflates to 1 GiB of zeros."""
    packed = _raw_deflate_zeros(GIB)
    info = zipfile.ZipInfo("big", (2024, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_DEFLATED
    info.CRC, info.compress_size, info.file_size = _zeros_crc(), len(packed), GIB
    buffer = io.BytesIO()
    header = info.FileHeader(zip64=True)
    info.header_offset = 0
    buffer.write(header + packed)
    with zipfile.ZipFile(buffer, "a") as archive:       # the central directory, by hand
        archive.filelist = [info]
        archive.NameToInfo = {"big": info}
        archive.start_dir = buffer.tell()
        archive._didModify = True
    return buffer.getvalue()


def tool(**files) -> BashTool:
    return BashTool(files={name: data for name, data in files.items()})


# ---------------------------------------------------------------- bombs


def test_gunzip_bomb_stops_at_the_file_size_limit_and_leaves_nothing():
    r = tool(**{"bomb.gz": gzip_bomb()}).execute("gunzip bomb.gz; echo rc=$?; ls")
    assert r.stdout == "rc=1\nbomb.gz\n"
    assert r.stderr == "gzip: bomb: File too large\n"


def test_zcat_bomb_stops_at_max_string_length():
    r = tool(**{"bomb.gz": gzip_bomb()}).execute("zcat bomb.gz | wc -c; echo after")
    assert "max_string_length" in r.stderr
    assert r.exit_code != 0


def test_tar_bomb_extraction_stops_at_the_file_size_limit():
    r = tool(**{"bomb.tgz": tar_bomb()}).execute("mkdir o; tar xzf bomb.tgz -C o; echo rc=$?")
    assert r.stdout == "rc=2\n"
    assert r.stderr == ("tar: big: Cannot write: File too large\n"
                        "tar: Error is not recoverable: exiting now\n")


def test_tar_bomb_listing_stops_at_the_filesystem_size_limit():
    r = tool(**{"bomb.tgz": tar_bomb()}).execute("tar tzf bomb.tgz")
    assert "max_fs_bytes" in r.stderr and r.exit_code != 0


def test_unzip_bomb_stops_at_the_file_size_limit():
    t = tool(**{"bomb.zip": zip_bomb()})
    r = t.execute("unzip -q bomb.zip; echo rc=$?")
    assert r.stdout == "rc=50\n"
    assert "File too large" in r.stderr
    r = t.execute("unzip -p bomb.zip | wc -c")
    assert "max_string_length" in r.stderr


# ---------------------------------------------------------------- paths


def _tar(*members) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for name, kind, target in members:
            info = tarfile.TarInfo(name)
            info.type, info.linkname = kind, target
            info.mode = 0o755 if kind == tarfile.DIRTYPE else 0o644
            data = b"pwned\n" if kind == tarfile.REGTYPE else b""
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def _zip(*members) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, link in members:
            info = zipfile.ZipInfo(name)
            info.create_system = 3
            info.external_attr = (0o120777 if link else 0o100644) << 16
            archive.writestr(info, link or "pwned\n")
    return buffer.getvalue()


def outside(t: BashTool) -> list:
    """Every file the attacks might have reached outside the target directory `o`."""
    return sorted(p for p in t.filesystem.tree() if "evil" in p and not p.startswith("/home/user/o/"))


REG, SYM, LNK = tarfile.REGTYPE, tarfile.SYMTYPE, tarfile.LNKTYPE


def test_tar_members_never_leave_the_directory():
    archive = _tar(("../evil1", REG, ""), ("/tmp/evil2", REG, ""), ("a/../../evil3", REG, ""),
                   ("lnk", SYM, "/tmp"), ("lnk/evil4", REG, ""), ("up", SYM, "../.."),
                   ("up/evil5", REG, ""), ("hl", LNK, "../../../etc/evil6"))
    t = tool(**{"a.tar": archive})
    r = t.execute("mkdir o; tar xf a.tar -C o; echo rc=$?; readlink o/lnk o/up")
    assert r.stdout == "rc=2\n/tmp\n../..\n"
    assert outside(t) == []
    assert t.execute("cat o/tmp/evil2").stdout == "pwned\n"      # stripped of its `/`, inside


def test_tar_never_writes_through_a_link_planted_before():
    t = tool(**{"one.tar": _tar(("lnk", SYM, "/tmp")), "two.tar": _tar(("lnk/evil", REG, ""),
                                                                      ("lnk/sub/evil", REG, ""))})
    r = t.execute("mkdir o; tar xf one.tar -C o; tar xf two.tar -C o; echo rc=$?")
    assert r.stdout == "rc=2\n"
    assert "tar: lnk/evil: Cannot open: Path leads outside the extraction directory" in r.stderr
    assert outside(t) == []


def test_tar_links_inside_the_directory_still_work():
    t = tool(**{"a.tar": _tar(("d/", tarfile.DIRTYPE, ""), ("in", SYM, "d"), ("in/f", REG, ""))})
    r = t.execute("mkdir o; tar xf a.tar -C o; echo rc=$?; cat o/d/f")
    assert r.stdout == "rc=0\npwned\n"


def test_unzip_slip_and_links_stay_inside():
    t = tool(**{"a.zip": _zip(("../evil1", None), ("/tmp/evil2", None), ("x/../../evil3", None),
                              ("lnk", "/tmp"), ("lnk/evil4", None))})
    r = t.execute("mkdir o; cd o; unzip -q ../a.zip; echo rc=$?")
    assert r.stdout.endswith("rc=1\n")
    assert outside(t) == []
    planted = tool(**{"b.zip": _zip(("lnk/evil", None))})
    r = planted.execute("mkdir o; ln -s /tmp o/lnk; unzip -q b.zip -d o; echo rc=$?")
    assert outside(planted) == [] and "outside the extraction directory" in r.stderr


def test_archive_commands_touch_no_host_file(tmp_path):
    """The fs layer only: an absolute member is stripped into the sandbox, not written to the
    host, whatever the directory."""
    host_target = tmp_path / "evil"
    t = tool(**{"a.tar": _tar((str(host_target), REG, ""))})
    t.execute("tar xf a.tar -C /tmp")
    assert not host_target.exists()
    assert t.execute(f"cat /tmp{host_target}").stdout == "pwned\n"


# ---------------------------------------------------------------- counts


def test_unzip_of_100000_entries_stops_at_the_file_count_limit():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for i in range(100_000):
            archive.writestr(f"f{i}", b"")
    t = tool(**{"many.zip": buffer.getvalue()})
    r = t.execute("unzip -q many.zip; echo rc=$?; ls | wc -l")
    assert "max_file_count" in r.stderr and r.exit_code != 0
    assert t.filesystem.file_count < 100


def test_tar_of_100000_members_stops_at_the_file_count_limit():
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=1) as archive:
        for i in range(100_000):
            archive.addfile(tarfile.TarInfo(f"f{i}"), io.BytesIO(b""))
    fs = MemoryFs()
    fs.limits.max_file_count = 2_000
    fs.add_file("/home/user/many.tgz", buffer.getvalue())
    t = BashTool(filesystem=fs)
    r = t.execute("mkdir o; tar xzf many.tgz -C o; echo rc=$?")
    assert r.stdout == "rc=2\n"
    assert "No space left on device" in r.stderr
    assert fs.file_count <= 2_000


# ---------------------------------------------------------------- the modes that change archives


def _bash(files=None):
    return BashTool(files=files or {"a": "x\n"})


def test_tar_transform_with_a_backtracking_pattern_answers():
    name = "a" * 47 + "!"
    r = _bash({name: "x\n"}).execute(f"tar cf x.tar --transform 's/(a+)+$/x/x;s/\\(a*\\)*b/y/' {name}; "
                                     "echo rc=$?; tar tf x.tar")
    assert (r.stdout, r.stderr) == (f"rc=0\n{name}\n", "")


def test_tar_transform_whose_match_runs_out_of_time_stops_with_a_named_error(monkeypatch):
    from scripted_kernel.commands.archive import transform

    def too_slow(*args):
        raise TimeoutError
    monkeypatch.setattr(transform, "substitute", too_slow)
    r = _bash().execute("tar cf x.tar --transform 's/a/b/' a; echo rc=$?")
    assert r.stdout == "rc=2\n"
    assert r.stderr == ("tar: --transform: matching the regular expression took too long\n"
                        "tar: Error is not recoverable: exiting now\n")


def test_tar_transform_that_multiplies_a_name_fails_that_member_only():
    grow = ";".join(["s/./&&&&&&&&/g"] * 5)         # 8**5 times the name: past the name limit
    r = _bash({"a": "x\n", "b": "y\n"}).execute(
        f"tar cf x.tar --transform 's/^a$/{'&' * 200}/;{grow}' a; echo rc=$?; "
        f"tar cf y.tar --xform 's/a/{'&' * 5000}/' b a; echo rc=$?; tar tf y.tar")
    assert r.stdout == "rc=2\nrc=2\nb\n"
    assert r.stderr == ("tar: a: Name after --transform is longer than 4096 bytes\n"
                        "tar: Exiting with failure status due to previous errors\n") * 2


def test_tar_delete_and_append_leave_a_cut_or_foreign_archive_as_it_was():
    tool = _bash({"big": "1\n" * 3000, "b": "y\n"})
    r = tool.execute("tar cf x.tar big b; head -c 3000 x.tar > cut.tar; cp cut.tar was.tar; "
                     "tar --delete -f cut.tar b; echo rc=$?; tar rf cut.tar b; echo rc=$?; "
                     "cmp cut.tar was.tar && echo same; echo junk > j.tar; tar rf j.tar b; echo rc=$?; cat j.tar")
    assert r.stdout == "rc=2\nrc=2\nsame\nrc=2\njunk\n"
    assert r.stderr == ("tar: Unexpected EOF in archive\ntar: Error is not recoverable: exiting now\n" * 2
                        + "tar: This does not look like a tar archive\n"
                          "tar: Exiting with failure status due to previous errors\n")


def test_tar_delete_leaves_an_archive_with_a_damaged_header_as_it_was():
    archive = bytearray(_members_tar())
    archive[512 + 512 + 148] ^= 0x01                  # the second header's checksum
    tool = _bash({"x.tar": bytes(archive)})
    r = tool.execute("cp x.tar was.tar; tar --delete -f x.tar a; echo rc=$?; cmp x.tar was.tar && echo same")
    assert r.stdout == "rc=2\nsame\n"
    assert r.stderr == "tar: Skipping to next header\ntar: Exiting with failure status due to previous errors\n"


def _members_tar() -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.GNU_FORMAT) as archive:
        for name in ("a", "b", "c"):
            info = tarfile.TarInfo(name)
            info.size = 2
            archive.addfile(info, io.BytesIO(b"x\n"))
    return buffer.getvalue()


def test_zip_delete_and_update_leave_a_damaged_archive_as_it_was():
    tool = _bash({"a": "x\n"})
    r = tool.execute("zip -q x.zip a; head -c 40 x.zip > cut.zip; cp cut.zip was.zip; echo junk > j.zip; "
                     "for z in cut.zip j.zip; do zip -d $z a > /dev/null; echo rc=$?; zip -u $z a > /dev/null; "
                     "echo rc=$?; done; cmp cut.zip was.zip && cat j.zip; zip -d x.zip '*[' nope; echo rc=$?")
    assert r.stdout == ("rc=3\n" * 4 + "junk\n\tzip warning: name not matched: *[\n"
                        "\tzip warning: name not matched: nope\n\nzip error: Nothing to do! (x.zip)\nrc=12\n")
    assert r.stderr == ""
