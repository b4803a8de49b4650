"""zip and unzip as Info-ZIP's zip 3.0 and unzip 6.0 print and exit, over the filesystem
layer (zip writes with `zipfile` over io.BytesIO; both read with `zipread`).

zip adds and replaces members of a new or existing archive ("  adding: x (deflated 53%)"),
deletes those matching patterns (-d) and adds only files newer than their copy (-u).
unzip lists (-l), tests (-t), extracts (into the current directory or -d DIR; -o, -n, -j, -q)
or prints (-p) members; every member goes through `members.Destination`, after unzip's own cleaning of
`..` components and leading slashes, so that no member lands outside the target directory.
"""
from __future__ import annotations

import functools
import io
import stat as st_mod
import struct
import time
import zipfile
import zlib
from typing import Optional

from ...fs import FsError
from ...fs.base import ENAMETOOLONG
from ...base.errors import LimitExceeded, bounded
from ...base.patterns import glob_match
from .._bytes import read_bytes
from .._options import UsageError
from ..registry import Usage, command
from .codecs import Ceiling
from .members import Destination, drop_dotdot
from .zipread import OVERLAP, Archive, BadCrc, MemberError, NotAZip, Overlap, member_bytes, read_archive

ZIP_FLAGS = set("rqjyDT0123456789gmdu")
UNZIP_FLAGS = set("lovnqjpt")
NOT_A_ZIP = ("  End-of-central-directory signature not found.  Either this file is not\n"
             "  a zipfile, or it constitutes one disk of a multi-part archive.  In the\n"
             "  latter case the central directory and zipfile comment will be found on\n"
             "  the last disk(s) of this archive.\n")

NO_END_SIGNATURE = ("\tzip warning: missing end signature--probably not a zip file (did you\n"
                    "\tzip warning: remember to use binary mode when you transferred it?)\n"
                    "\tzip warning: (if you are trying to read a damaged archive try -F)\n")


def _zip_time(mtime: float) -> tuple:
    return max(time.localtime(mtime)[:6], (1980, 1, 1, 0, 0, 0))


def _timestamp_extra(mtime: float) -> bytes:
    """The extended-timestamp field (UT) zip writes, holding the exact modification time."""
    return b"UT" + struct.pack("<HBI", 5, 1, int(mtime) & 0xFFFFFFFF)


def _extra_mtime(info: zipfile.ZipInfo):
    extra = info.extra
    i = 0
    while i + 4 <= len(extra):
        tag, size = struct.unpack("<2sH", extra[i:i + 4])
        if tag == b"UT" and size >= 5 and i + 9 <= len(extra) and extra[i + 4] & 1:
            return struct.unpack("<I", extra[i + 5:i + 9])[0]
        i += 4 + size
    return None


def _percent(size: int, packed: int) -> int:
    """Info-ZIP's rounded integer percentage saved."""
    if size > 0xFFFFFF:
        size, packed = (size + 0x80) >> 8, (packed + 0x80) >> 8
    return (1 + (200 * (size - packed)) // size) // 2 if size > packed else 0


# ====================================================================== zip


def _command_line(args: list, excludes: list, valued: str = "") -> tuple[list[tuple[str, str]], list]:
    """Info-ZIP's command line: (the option letters in order, each with its value, and the
    operands). Letters are grouped after `-`; one in `valued` takes the rest of its word or the
    next word; -x takes the words up to the next option, into `excludes`."""
    letters: list[tuple[str, str]] = []
    operands, i = [], 0
    while i < len(args):
        a = args[i]
        i += 1
        if not (a.startswith("-") and len(a) > 1):
            operands.append(a)
            continue
        for j, c in enumerate(a[1:], 1):
            if c in valued:
                value = a[j + 1:] or (args[i] if i < len(args) else "")
                if not a[j + 1:]:
                    i += 1
                letters.append((c, value))
                break
            if c == "x":
                while i < len(args) and not args[i].startswith("-"):
                    excludes.append(args[i])
                    i += 1
            else:
                letters.append((c, ""))
    return letters, operands



class Zip:
    def __init__(self, ctx, argv: list):
        self.ctx, self.fs = ctx, ctx.fs
        self.flags: set = set()
        self.excludes: list = []
        self.level = 6
        operands = self.parse(argv[1:])
        if not operands:
            raise UsageError("zip error: Nothing to do! (no archive name)", 16)  # zip's usage
        self.archive = operands[0]
        if self.archive != "-" and "." not in self.archive.rsplit("/", 1)[-1]:
            self.archive += ".zip"
        self.inputs = operands[1:]

    def parse(self, args: list) -> list:
        letters, operands = _command_line(args, self.excludes)
        for c, _ in letters:
            if c not in ZIP_FLAGS:
                raise UsageError(f"zip error: Invalid command arguments (no such option: {c})", 16)
            self.flags.add(c)
            if c.isdigit():
                self.level = int(c)
        return operands

    def say(self, text: str, always: bool = False):
        """zip's messages, warnings included, go to standard output (standard error when
        the archive does); -q silences all but the warnings."""
        if always or "q" not in self.flags:
            (self.ctx.err if self.archive == "-" else self.ctx.out)(text + "\n")

    def run(self) -> int:
        existing = self.read_existing()
        if existing is None:
            return 3                     # zip's ZE_FORM
        self.entries = existing          # name -> (ZipInfo, data), in archive order
        self.changed = 0
        if "d" in self.flags:
            return self.delete()
        self.archive_ino = None
        if self.archive != "-":
            try:
                self.archive_ino = self.fs.stat(self.ctx.path(self.archive)).ino
            except FsError:
                pass
        if "u" in self.flags and not self.inputs:
            self.inputs = [name for name in self.entries]    # -u alone: every member's file
        elif "u" in self.flags and not self.entries and self.archive != "-":
            self.say(f"\tzip warning: {self.archive} not found or empty")
        self.stored: dict[str, str] = {}
        for name in self.inputs:
            self.add_operand(name)
        for member in self.entries:           # members replaced in their place, then the new ones
            if member in self.stored:
                self.say(self.stored[member])
        if not self.changed:
            if "u" not in self.flags:     # (-u with nothing newer says nothing)
                self.say(f"\nzip error: Nothing to do! ({self.archive})", always=True)
            return 12
        return self.write()

    def delete(self) -> int:
        """-d: the members matching the patterns (`*` matches `/` too) taken out."""
        if not self.entries and self.inputs:
            self.say(f"\tzip warning: {self.archive} not found or empty")
        doomed = set()
        for pattern in self.inputs:
            hits = {name for name in self.entries if glob_match(pattern, name)}
            if not hits:
                self.say(f"\tzip warning: name not matched: {pattern}")
            doomed |= hits
        if not doomed:
            self.say(f"\nzip error: Nothing to do! ({self.archive})", always=True)
            return 12
        for name in [name for name in self.entries if name in doomed]:
            del self.entries[name]
            self.say(f"deleting: {name}")
        if not self.entries:
            self.say("\tzip warning: zip file empty", always=True)
        return self.write()

    def read_existing(self):
        """name -> (ZipInfo, data) of the archive's members, expanded (zip writes them again),
        all together no more than max_fs_bytes; None when the archive cannot be read."""
        if self.archive == "-":
            return {}
        try:
            data = self.fs.read_bytes(self.ctx.path(self.archive))
        except FsError:
            return {}
        ceiling = Ceiling(self.ctx.limits.max_fs_bytes, "max_fs_bytes", "zip")
        members = {}
        try:
            archive = read_archive(data, self.ctx.budget)
            if len(archive.entries) > self.ctx.limits.max_file_count:
                raise LimitExceeded("max_file_count", f"zip: {self.archive}: more than "
                                    f"{self.ctx.limits.max_file_count} entries (max_file_count)")
            for number, info in enumerate(archive.entries, 1):
                expanded = bytearray()
                for chunk in member_bytes(archive, info, number):
                    ceiling.add(len(chunk))
                    expanded += chunk
                if archive.overlapped:
                    raise Overlap
                members[info.filename] = (info, bytes(expanded))
        except NotAZip:
            self.say(NO_END_SIGNATURE + f"\nzip error: Zip file structure invalid ({self.archive})", always=True)
            return None
        except (MemberError, BadCrc, Overlap):
            _say(self.ctx, f"\nzip error: Zip file structure invalid ({self.archive})\n")
            return None
        return members

    def add_operand(self, name: str):
        path = self.ctx.path(name)
        try:
            info = self.fs.stat(path, follow="y" not in self.flags)
        except FsError:
            self.say(f"\tzip warning: name not matched: {name}", always=True)
            return
        self.add(path, name, info)

    def member_name(self, name: str, is_dir: bool) -> str:
        if "j" in self.flags:
            name = name.rstrip("/").rsplit("/", 1)[-1]
        parts = [p for p in name.split("/") if p not in ("", ".")]
        member = "/".join(parts)
        return member + "/" if is_dir and member else member

    def add(self, path: str, name: str, info):
        self.ctx.budget.check_clock()
        member = self.member_name(name, info.is_dir)
        if self.excluded(member) or (info.ino == self.archive_ino and info.is_file):
            return
        current = self.up_to_date(member, info)
        if info.is_dir:
            if member and "j" not in self.flags and "D" not in self.flags and not current:
                self.store(member, info, b"")
            if "r" in self.flags:
                for child in sorted(self.fs.listdir(path), key=lambda n: n.encode("utf-8", "surrogateescape")):
                    child_path = path.rstrip("/") + "/" + child
                    try:
                        child_info = self.fs.stat(child_path, follow="y" not in self.flags)
                    except FsError:
                        self.say(f"\tzip warning: name not matched: {name}/{child}", always=True)
                        continue
                    self.add(child_path, name.rstrip("/") + "/" + child, child_info)
            return
        if current:
            return
        if info.is_link:
            self.store(member, info, info.target.encode("utf-8", "surrogateescape"))
            return
        try:
            data = self.fs.read_bytes(path)
        except FsError as e:
            self.say(f"\tzip warning: could not open for reading: {name}\n"
                     f"\tzip warning: {e.strerror}", always=True)
            return
        self.store(member, info, data)

    def up_to_date(self, member: str, info) -> bool:
        """-u: the archive's copy is as new as the file: to the second when the copy holds
        its exact time (the UT field), else in DOS time (even seconds, an odd one rounded up)."""
        if "u" not in self.flags or member not in self.entries:
            return False
        stored = self.entries[member][0]
        exact = _extra_mtime(stored)
        if exact is not None:
            return int(info.mtime) <= exact
        return _zip_time((int(info.mtime) + 1) & ~1) <= stored.date_time

    def excluded(self, member: str) -> bool:
        return any(glob_match(p, member) or glob_match(p, member.rstrip("/")) for p in self.excludes)

    def store(self, member: str, info, data: bytes):
        entry = zipfile.ZipInfo(member, _zip_time(info.mtime))
        entry.create_system = 3
        kind = st_mod.S_IFDIR if info.is_dir else st_mod.S_IFLNK if info.is_link else st_mod.S_IFREG
        entry.external_attr = ((kind | (info.mode & 0o7777)) << 16) | (0x10 if info.is_dir else 0)
        entry.extra = _timestamp_extra(info.mtime)
        method, ratio = "stored", 0
        entry.compress_type = zipfile.ZIP_STORED
        if data and self.level > 0:
            packer = zlib.compressobj(self.level, zlib.DEFLATED, -15)
            packed = len(packer.compress(data) + packer.flush())
            if packed < len(data):
                entry.compress_type, method = zipfile.ZIP_DEFLATED, "deflated"
                ratio = _percent(len(data), packed)
        verb = "updating" if member in self.entries else "  adding"
        self.entries[member] = (entry, data)      # an updated member keeps its place
        self.changed += 1
        self.stored[member] = f"{verb}: {member} ({method} {ratio}%)"

    def write(self) -> int:
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as out:
            for entry, data in self.entries.values():
                out.writestr(entry, data, compresslevel=self.level if self.level else None)
        if self.archive == "-":
            self.ctx.write_bytes(buffer.getvalue())
            return 0
        try:
            self.fs.write_bytes(self.ctx.path(self.archive), buffer.getvalue(),
                                mode=0o666 & ~self.ctx.umask)
        except FsError as e:
            _say(self.ctx, f"\nzip error: Could not create output file ({self.archive}): "
                         f"{e.strerror}\n")
            return 15
        return 0


# ====================================================================== unzip


class Unzip:
    def __init__(self, ctx, argv: list):
        self.ctx, self.fs = ctx, ctx.fs
        self.flags: set = set()
        self.exdir: Optional[str] = None
        self.excludes: list = []
        self.status = 0
        operands = self.parse(argv[1:])
        if not operands:
            raise UsageError("UnZip 6.00 of 20 April 2009, by Debian. Original by Info-ZIP.\n\n"
                             "Usage: unzip [-Z] [-opts[modifiers]] file[.zip] [list] [-x xlist] "
                             "[-d exdir]", 0)
        self.archive, self.wanted = operands[0], operands[1:]
        self.quiet = "q" in self.flags or "p" in self.flags
        self.skipped = 0               # members skipped for their method or version (-t counts them)

    def parse(self, args: list) -> list:
        letters, operands = _command_line(args, self.excludes, valued="d")
        for c, value in letters:
            if c == "d":
                self.exdir = value
            elif c in UNZIP_FLAGS:
                self.flags.add(c)
            else:
                raise UsageError(f"unzip:  unrecognized option -- {c}", 10)
        return operands

    def say(self, text: str):
        if not self.quiet:
            self.ctx.out(text + "\n")

    def warn(self, status: int):
        self.status = max(self.status, status)

    def open(self) -> Optional[Archive]:
        name = self.archive
        for candidate in (name, name + ".zip", name + ".ZIP"):
            try:
                data = read_bytes(self.ctx, candidate)
                break
            except FsError:
                continue
        else:
            _say(self.ctx, f"unzip:  cannot find or open {name}, {name}.zip or {name}.ZIP.\n")
            return None
        if "p" not in self.flags and not ("q" in self.flags and "l" not in self.flags):
            self.ctx.out(f"Archive:  {name}\n")
        try:
            return read_archive(data, self.ctx.budget)
        except NotAZip:
            _say(self.ctx, NOT_A_ZIP + f"unzip:  cannot find zipfile directory in one of {name} or\n"
                         f"        {name}.zip, and cannot find {name}.ZIP, period.\n")
            return None

    def run(self) -> int:
        archive = self.open()
        if archive is None:
            return 9
        if not archive.entries:
            _say(self.ctx, f"warning [{self.archive}]:  zipfile is empty\n")
            return 1
        self.matched: set = set()
        entries = [(number, info) for number, info in enumerate(archive.entries, 1)
                   if self.selected(info.filename)]
        if "l" in self.flags:
            self.list_entries([info for _, info in entries])
        elif "p" in self.flags:
            self.pipe(archive, entries)
        elif "t" in self.flags:
            self.test(archive, entries)
        else:
            self.extract(archive, entries)
        missing = [w for w in self.wanted if w not in self.matched]
        for name in missing if "l" not in self.flags else ():
            _say(self.ctx, f"caution: filename not matched:  {name}\n")
        if missing:
            self.warn(11)
        return self.status

    def selected(self, name: str) -> bool:
        if any(glob_match(p, name) for p in self.excludes):
            return False
        if not self.wanted:
            return True
        hits = [w for w in self.wanted if glob_match(w, name)]
        self.matched.update(hits)
        return bool(hits)

    def list_entries(self, entries: list[zipfile.ZipInfo]):
        out = self.ctx.out
        out("  Length      Date    Time    Name\n---------  ---------- -----   ----\n")
        total = 0
        for count, info in enumerate(entries, 1):
            if count % 1024 == 0:
                self.ctx.budget.check_clock()
            y, mo, d, h, mi, _ = info.date_time
            out(f"{info.file_size:9d}  {y:04d}-{mo:02d}-{d:02d} {h:02d}:{mi:02d}   {info.filename}\n")
            total += info.file_size
        n = len(entries)
        out(f"---------                     -------\n{total:9d}                     "
            f"{n} file{'s' if n != 1 else ''}\n")

    def read_member(self, archive: Archive, number: int, info: zipfile.ZipInfo, shown: str,
                    verb: str, consume) -> str:
        """Expand one member into `consume` (called with each chunk): open_member, then
        expand."""
        chunks = self.open_member(archive, number, info, shown)
        if isinstance(chunks, str):
            return chunks
        return self.expand(archive, chunks, shown, verb, consume)

    def open_member(self, archive: Archive, number: int, info: zipfile.ZipInfo, shown: str):
        """The member's chunks (see zipread.member_bytes), or what came of it when unzip does
        not read it, reported: DAMAGED (skipped, or its header is not where the directory says)
        or STOP (it begins inside bytes read before: an overlapped zip bomb). Messages go to
        standard output under -t, else to standard error, as all of unzip's below."""
        say = self.ctx.out if "t" in self.flags else self.ctx.err
        try:
            chunks = member_bytes(archive, info, number)
        except MemberError as e:
            unsupported = e.status == 81
            if not (unsupported and self.quiet):
                say(f"   skipping: {shown:<22}  {e.message}\n" if e.skipped else e.message + "\n")
            self.warn(e.status)
            self.skipped += unsupported
            return DAMAGED
        except Overlap:
            say(OVERLAP + "\n")
            self.warn(12)
            return STOP
        if info.compress_type == zipfile.ZIP_STORED and info.file_size != info.compress_size:
            say(f"{shown}:  ucsize {info.file_size} <> csize {info.compress_size} for STORED entry\n"
                '         continuing with "compressed" size value\n')
        return chunks

    def expand(self, archive: Archive, chunks, shown: str, verb: str, consume) -> str:
        """The member's chunks into `consume`, with unzip's messages: "VERB: NAME" first
        (unless quiet), then the end of that line or what went wrong. READ (a bad CRC
        included), DAMAGED (the data could not be expanded to its end) or STOP (it ran over
        bytes read before)."""
        say = self.ctx.out if "t" in self.flags else self.ctx.err
        announced = not self.quiet
        if announced:
            self.ctx.out(f"{verb}: {shown:<23} ")
        outcome = READ
        try:
            for chunk in chunks:
                consume(chunk)
        except MemberError as e:
            say(f"\n  error:  {e.message}\n" if announced else f"  error:  {e.message} {shown}\n")
            self.warn(e.status)
            outcome = DAMAGED
        except BadCrc as e:
            say(f" {e}\n" if announced else f"{shown:<23} {e}\n")
            self.warn(2)
        except FsError:
            if announced:
                self.ctx.out("\n")
            raise
        else:
            if announced:
                self.ctx.out(" OK\n" if "t" in self.flags else "\n")
        if archive.overlapped:
            say(OVERLAP + "\n")
            self.warn(12)
            return STOP
        return outcome

    def pipe(self, archive: Archive, entries: list[tuple[int, zipfile.ZipInfo]]):
        ceiling = Ceiling(self.ctx.limits.max_string_length, "max_string_length", "unzip")
        for number, info in entries:
            if info.is_dir():
                continue
            data = bytearray()
            outcome = self.read_member(archive, number, info, info.filename, "",
                                       functools.partial(_keep, data, ceiling))
            if outcome != DAMAGED:
                self.ctx.write_bytes(bytes(data))
            if outcome == STOP:
                return

    def test(self, archive: Archive, entries: list[tuple[int, zipfile.ZipInfo]]):
        """-t: every member expanded and its CRC checked; nothing written."""
        tested = 0
        for number, info in entries:
            skipped = self.skipped
            if self.read_member(archive, number, info, info.filename, "    testing", _discard) == STOP:
                return
            tested += self.skipped == skipped
        name = self.archive
        if not tested and self.skipped:
            self.ctx.out(f"Caution:  zero files tested in {name}.\n")
        elif self.status > 1:
            self.ctx.out(f"At least one error was detected in {name}.\n")
        else:
            self.ctx.out(f"No errors detected in compressed data of {name}.\n")
        if self.skipped:
            self.ctx.out(f"{self.skipped} file{'s' if self.skipped > 1 else ''} skipped because "
                         "of unsupported compression or encoding.\n")

    def extract(self, archive: Archive, entries: list[tuple[int, zipfile.ZipInfo]]):
        limit = self.ctx.limits.max_file_count
        if len(entries) > limit:
            raise LimitExceeded("max_file_count", f"unzip: {self.archive}: {len(entries)} entries, "
                                f"more than the {limit} files allowed (max_file_count)")
        base = self.ctx.cwd
        if self.exdir:
            base = self.ctx.path(self.exdir)
            if not self.make_exdir(base):
                return
        dest = Destination(self.ctx, base)
        self.replace_all = "o" in self.flags
        self.refuse_all = "n" in self.flags
        deferred: list[tuple[str, str, str]] = []             # (path, shown, target) of symlinks
        directories: list[tuple[str, zipfile.ZipInfo]] = []
        for count, (number, info) in enumerate(entries, 1):
            if count % 256 == 0:
                self.ctx.budget.check_clock()
            rel = self.clean(info.filename)
            if not rel:
                continue
            shown = f"{self.exdir.rstrip('/')}/{rel}" if self.exdir else rel
            try:
                if self.extract_one(archive, number, info, rel, shown, dest, deferred, directories) == STOP:
                    break
            except FsError as e:
                _say(self.ctx, f"error:  cannot create {shown}\n        {e.strerror}\n")
                self.warn(2 if e.strerror not in ("File too large", "No space left on device") else 50)
        self.finish(deferred, directories)

    def make_exdir(self, base: str) -> bool:
        if self.fs.exists(base):
            return True
        parts = [p for p in base.split("/") if p]
        try:
            for k in range(len(parts)):
                here = "/" + "/".join(parts[:k + 1])
                if not self.fs.exists(here):
                    self.fs.mkdir(here, 0o777 & ~self.ctx.umask)
        except FsError:
            _say(self.ctx, f"checkdir:  cannot create extraction directory: {self.exdir}\n")
            self.warn(3)
            return False
        return True

    def clean(self, name: str) -> str:
        """unzip's cleaning of a member name, with its warnings (status 1)."""
        cleaned, dotdot, absolute = drop_dotdot(name)
        if dotdot:
            self.say(f'warning:  skipped "../" path component(s) in {name}')
            self.warn(1)
        if absolute:
            _say(self.ctx, f"warning:  stripped absolute path spec from {name}\n")
            self.warn(1)
        if "j" in self.flags:
            cleaned = "" if cleaned.endswith("/") else cleaned.rsplit("/", 1)[-1]
        return cleaned

    def extract_one(self, archive, number, info, rel, shown, dest, deferred, directories) -> str:
        """Extract one member; read_member's outcome."""
        path = dest.path(rel)
        mode = (info.external_attr >> 16) if info.create_system == 3 else 0
        if info.is_dir():
            existed = self.fs.exists(path, follow=False)
            if dest.directory(path):
                directories.append((path, info))
            if not existed:
                self.say(f"   creating: {shown}")
            return READ
        if self.fs.exists(path, follow=False):
            if self.refuse_all:
                return READ
            if not self.replace_all:
                _say(self.ctx, f"replace {shown}? [y]es, [n]o, [A]ll, [N]one, [r]ename:  NULL\n"
                             '(EOF or read error, treating as "[N]one" ...)\n')
                self.refuse_all = True
                self.warn(1)
                return READ
        chunks = self.open_member(archive, number, info, shown)
        if isinstance(chunks, str):
            return chunks
        dest.clear(path)
        if st_mod.S_ISLNK(mode):
            return self.link(archive, chunks, path, shown, deferred)
        out = self.fs.open_write(path, mode=0o600)
        outcome = self.expand(archive, chunks, shown, VERBS.get(info.compress_type, "  inflating"),
                              out.write_bytes)
        self.fs.chmod(path, (mode & 0o777) if mode & 0o777 else 0o666 & ~self.ctx.umask)
        self.fs.utime(path, self.mtime(info))
        return outcome

    def link(self, archive, chunks, path: str, shown: str, deferred) -> str:
        """A symbolic link member: its target read (no longer than a path may be), the link
        made last, so that nothing is written through it."""
        target = bytearray()

        def keep(chunk: bytes):
            target.extend(chunk)
            if len(target) > PATH_MAX:
                raise FsError(ENAMETOOLONG)
        quiet, self.quiet = self.quiet, True
        try:
            outcome = self.expand(archive, chunks, shown, "", keep)
        finally:
            self.quiet = quiet
        if outcome == READ:
            text = target.decode("utf-8", "surrogateescape")
            self.say(f"    linking: {shown:<23} -> {text} ")
            deferred.append((path, shown, text))
        return outcome

    def mtime(self, info) -> float:
        exact = _extra_mtime(info)
        return exact if exact is not None else time.mktime(info.date_time + (0, 0, -1))

    def finish(self, deferred: list[tuple[str, str, str]], directories: list[tuple[str, zipfile.ZipInfo]]):
        if deferred:
            self.say("finishing deferred symbolic links:")
        for path, shown, target in deferred:
            self.say(f"  {shown:<22} -> {target}")
            try:
                self.fs.symlink(target, path)
            except FsError as e:
                _say(self.ctx, f"error:  cannot create symlink {shown}: {e.strerror}\n")
                self.warn(1)
        for path, info in reversed(directories):
            try:
                self.fs.utime(path, self.mtime(info))
            except FsError:
                pass


PATH_MAX = 4096                 # bytes of a symbolic link's target
VERBS = {zipfile.ZIP_STORED: " extracting", zipfile.ZIP_BZIP2: " bunzipping"}
READ, DAMAGED, STOP = "read", "damaged", "stop"      # what came of reading a member


def _discard(chunk: bytes):
    pass


def _keep(data: bytearray, ceiling: Ceiling, chunk: bytes):
    ceiling.add(len(chunk))
    data.extend(chunk)


ZIP_USAGE = Usage("[-options] [-b path] [-t mmddyyyy] [-n suffixes] [zipfile list] [-xi list]",
                  "Zip 3.0 (July 5th 2008). Package and compress (archive) files.",
                  ("-r   recurse into directories     -j   junk (don't record) directory names",
                   "-q   quiet operation              -y   store symbolic links as the link",
                   "-0   store only                   -9   compress better",
                   "-x   exclude the following names  -D   do not add directory entries",
                   "-d   delete entries in zipfile    -u   update: only changed or new files"))
UNZIP_USAGE = Usage("[-opts[modifiers]] file[.zip] [list] [-x xlist] [-d exdir]",
                    "UnZip 6.00: list, test and extract compressed files in a ZIP archive.",
                    ("-l  list files (short format)     -p  extract files to pipe, no messages",
                     "-d  extract files into exdir      -o  overwrite files WITHOUT prompting",
                     "-n  never overwrite existing files -q  quiet mode (-qq => quieter)",
                     "-j  junk paths (do not make directories)  -x  exclude files that follow"))


@command("zip", usage=ZIP_USAGE, needs_files=True)
def zip_command(ctx, argv):
    return Zip(ctx, argv).run()


@command("unzip", usage=UNZIP_USAGE, needs_files=True)
def unzip_command(ctx, argv):
    return Unzip(ctx, argv).run()


def _say(ctx, text: str):
    """A diagnostic to standard error, an operand in it quoted at most 4 KiB (base/errors.py)."""
    ctx.err(bounded(text))
