"""tar: create (c), list (t) and extract (x) archives, append to them (r), update them (u) and
delete members (--delete), as GNU tar 1.34 does, with its messages and exit statuses (2 for any
failure), over the filesystem layer: the archive is built and read with `tarfile` in memory,
compressed and expanded by `codecs` (-z -j -J, and detected by magic number when reading a
file, as GNU tar does). -r, -u and --delete rewrite the archive's bytes around the members kept,
and refuse a compressed archive as GNU tar does. --transform renames members (transform.py).

Extraction goes through `members.Destination`: member names lose their leading `/` and refuse
`..` as GNU tar's do, symbolic links that point up or out are made only once every other
member is written (GNU tar's placeholders), and no member is ever written outside the -C
directory, even through a link planted before.
"""
from __future__ import annotations

import contextlib
import copy
import io
import re
import stat as st_mod
import tarfile
import time

from ...base.errors import bounded
from ...base.limits import Budget
from ...fs import FsError, absolute
from ...fs.base import EFBIG, ENOENT, ENOSPC
from ...base.patterns import glob_match
from .._bytes import read_bytes
from .._options import UsageError
from ..registry import Usage, command
from .codecs import BZIP2, CHUNK, GZIP, XZ, Ceiling, Corrupt, ForwardFile, compress, inflate, sniff
from .members import Destination, has_dotdot, unsafe_prefix
from .transform import (HARDLINK, MAX_NAME, NAME, SYMLINK, BadExpression, NameTooLong, RegexTooSlow,
                        Transform)

TRY = "Try 'tar --help' or 'tar --usage' for more information."
FLAGS = {"c": "create", "x": "extract", "t": "list", "r": "append", "u": "update", "z": "gzip", "j": "bzip2", "J": "xz",
         "a": "auto-compress", "v": "verbose", "O": "to-stdout", "k": "keep-old-files",
         "m": "touch", "p": "preserve-permissions", "h": "dereference"}
VALUES = {"f": "file", "C": "directory", "T": "files-from", "X": "exclude-from"}
LONG_FLAGS = {**{v: v for v in FLAGS.values()}, "get": "extract", "gunzip": "gzip",
              "ungzip": "gzip", "same-permissions": "preserve-permissions",
              "overwrite": "overwrite", "skip-old-files": "skip-old-files",
              "no-same-owner": "ignored", "same-owner": "ignored", "no-same-permissions": "ignored",
              "numeric-owner": "numeric-owner", "wildcards": "wildcards",
              "no-wildcards": "no-wildcards", "totals": "ignored", "no-recursion": "no-recursion",
              "recursion": "recursion", "unlink-first": "ignored", "dereference": "dereference",
              "delete": "delete", "show-transformed-names": "show-transformed-names"}
LONG_VALUES = {**{v: v for v in VALUES.values()}, "exclude": "exclude",
               "strip-components": "strip-components", "sort": "sort", "owner": "owner",
               "group": "group", "mode": "ignored", "warning": "ignored", "format": "ignored",
               "mtime": "ignored", "blocking-factor": "ignored", "transform": "transform",
               "xform": "transform"}
MODES = ("create", "extract", "list", "append", "update", "delete")
CODEC_FLAGS = {"gzip": GZIP, "bzip2": BZIP2, "xz": XZ}
CODEC_LETTER = {GZIP: "z", BZIP2: "j", XZ: "J"}
AUTO_SUFFIXES = {".gz": GZIP, ".tgz": GZIP, ".taz": GZIP, ".bz2": BZIP2, ".tbz": BZIP2,
                 ".tbz2": BZIP2, ".tz2": BZIP2, ".xz": XZ, ".txz": XZ}
TYPE_LETTER = {tarfile.DIRTYPE: "d", tarfile.SYMTYPE: "l", tarfile.LNKTYPE: "h",
               tarfile.CHRTYPE: "c", tarfile.BLKTYPE: "b", tarfile.FIFOTYPE: "p"}


class Fatal(Exception):
    """An error tar does not recover from: its message, then "Error is not recoverable".
    `raw`: the message is printed as it is (a compressor's complaint), not after "tar: "."""

    def __init__(self, message: str, raw: bool = False):
        super().__init__(message)
        self.raw = raw


def _bad(problem: str) -> UsageError:
    return UsageError(f"tar: {problem}\n{TRY}", 2)


class Command:
    """A parsed tar command line: settings in `opts`, and each operand with the -C directory
    in force where it stood (GNU tar applies -C to the operands after it)."""

    def __init__(self, argv: list):
        self.opts: dict = {}
        self.lists: dict = {"exclude": [], "files-from": [], "exclude-from": [], "transform": []}
        self.operands: list[tuple[str, str]] = []
        self.directory = "."
        self.parse(_old_style(argv[1:]))

    def parse(self, args: list):
        i = 0
        while i < len(args):
            a = args[i]
            i += 1
            if a == "--":
                self.operands += [(x, self.directory) for x in args[i:]]
                break
            if a.startswith("--"):
                name, eq, value = a[2:].partition("=")
                key, takes = _long_option(name, a)
                if takes and not eq:
                    if i >= len(args):
                        raise _bad(f"option '--{key}' requires an argument")
                    value, i = args[i], i + 1
                elif eq and not takes:
                    raise _bad(f"option '--{key}' doesn't allow an argument")
                self.set(LONG_VALUES[key], value) if takes else self.set(LONG_FLAGS[key], None)
            elif a.startswith("-") and len(a) > 1:
                for j, c in enumerate(a[1:], 1):
                    if c in VALUES:
                        value = a[j + 1:]
                        if not value:
                            if i >= len(args):
                                raise _bad(f"option requires an argument -- '{c}'")
                            value, i = args[i], i + 1
                        self.set(VALUES[c], value)
                        break
                    if c not in FLAGS:
                        raise _bad(f"invalid option -- '{c}'")
                    self.set(FLAGS[c], None)
            else:
                self.operands.append((a, self.directory))

    def set(self, key: str, value):
        if key == "directory":
            self.directory = value
        elif key in self.lists:
            self.lists[key].append(value)
        elif key == "verbose":
            self.opts["verbose"] = self.opts.get("verbose", 0) + 1
        elif key in MODES:
            if self.opts.get("mode", key) != key:
                raise _bad("You may not specify more than one '-Acdtrux', '--delete' or  "
                           "'--test-label' option")
            self.opts["mode"] = key
        else:
            self.opts[key] = value if value is not None else True


def _old_style(args: list) -> list:
    """`tar czf x.tgz dir`: a first word without a dash is a bundle of letters, each letter
    that takes a value taking the next word."""
    if not args or args[0].startswith("-"):
        return args
    letters, rest, out = args[0], list(args[1:]), []
    for c in letters:
        if c in VALUES:
            if not rest:
                raise _bad(f"option requires an argument -- '{c}'")
            out += ["-" + c, rest.pop(0)]
        else:
            out.append("-" + c)
    return out + rest


def _long_option(name: str, word: str) -> tuple[str, bool]:
    names = list(LONG_FLAGS) + list(LONG_VALUES)
    matches = [n for n in names if n == name] or sorted({n for n in names if n.startswith(name)})
    if not matches:
        raise _bad(f"unrecognized option '{word}'")
    if len(matches) > 1:
        raise _bad(f"option '{word}' is ambiguous")
    return matches[0], matches[0] in LONG_VALUES


class Tar:
    """One run of tar: its command line, the failures seen, the warnings already given."""

    def __init__(self, ctx, cmd: Command):
        self.ctx, self.fs, self.cmd, self.opts = ctx, ctx.fs, cmd, cmd.opts
        self.failed = False
        self.warned: set = set()
        self.ugs_width = 19            # GNU tar widens the owner/size column as names need
        self.excludes = list(cmd.lists["exclude"])
        self.wildcards = bool(self.opts.get("wildcards"))
        try:
            self.transform = Transform(cmd.lists["transform"])
        except BadExpression as e:
            raise _bad(str(e)) from None
        self.archive_ino = None
        self.archived: dict[str, float] = {}   # -u: member name -> its newest time in the archive
        self.wanted: list = []
        self.matched: set = set()

    def fail(self, text: str):
        _say(self.ctx, f"tar: {text}\n")
        self.failed = True

    def warn_once(self, prefix: str, what: str = "member names"):
        if (prefix, what) not in self.warned:
            self.warned.add((prefix, what))
            _say(self.ctx, f"tar: Removing leading `{prefix}' from {what}\n")

    def status(self) -> int:
        if self.failed:
            _say(self.ctx, "tar: Exiting with failure status due to previous errors\n")
            return 2
        return 0

    def verbose_out(self):
        """Where -v names go: standard error when the archive or its members use stdout."""
        to_stdout = self.opts.get("to-stdout") or (self.opts.get("mode") == "create"
                                                   and self.archive_name() == "-")
        return self.ctx.err if to_stdout else self.ctx.out

    def archive_name(self) -> str:
        return self.opts.get("file") or "-"

    def excluded(self, name: str) -> bool:
        """GNU's --exclude: the pattern against the whole name or any run of its components."""
        if not self.excludes:
            return False
        parts = name.rstrip("/").split("/")
        for i in range(len(parts)):
            for j in range(i + 1, len(parts) + 1):
                piece = "/".join(parts[i:j])
                if any(glob_match(p, piece) for p in self.excludes):
                    return True
        return False

    # ------------------------------------------------------------------ create

    def create(self) -> int:
        operands = self.operands()
        if not operands:
            raise _bad("Cowardly refusing to create an empty archive")
        codec = self.codec_for_create()
        name = self.archive_name()
        writer, self.archive_ino = None, None
        if name != "-":
            try:
                writer = self.fs.open_write(self.ctx.path(name), mode=0o666 & ~self.ctx.umask)
                self.archive_ino = self.fs.stat(self.ctx.path(name)).ino
            except FsError as e:
                raise Fatal(f"{name}: Cannot open: {e.strerror}") from None
        data = self.build(operands)
        if codec is not None:
            data = b"".join(compress(self.ctx.budget, codec, data, 9 if codec is BZIP2 else 6))
        if writer is None:
            self.ctx.write_bytes(data)
        else:
            try:
                writer.write_bytes(data)
            except FsError as e:
                raise Fatal(f"{name}: Cannot write: {e.strerror}") from None
        return self.status()

    def operands(self) -> list:
        return self.cmd.operands + [(n, ".") for n in self.names_from_files()]

    def build(self, operands: list) -> bytes:
        """An archive (uncompressed, its end blocks included) of the operands."""
        buffer = io.BytesIO()
        self.links: dict[int, str] = {}     # inode -> the member it was first stored as (hard links)
        with tarfile.open(fileobj=buffer, mode="w", format=tarfile.GNU_FORMAT) as archive:
            for operand, directory in operands:
                self.add(archive, operand, absolute(self.ctx.cwd, directory))
        return buffer.getvalue()

    # ------------------------------------------------------------------ append, update, delete

    def append(self) -> int:
        """-r: the operands' members written after the archive's last member; -u: only those
        the archive holds no copy of as new as the file (GNU's update)."""
        name = self.archive_name()
        path = self.ctx.path(name)
        data = self.existing_archive(path)
        end = 0
        for member, _start, member_end in self.member_spans(data):
            end = member_end
            if self.opts.get("mode") == "update":
                self.archived[member.name] = max(member.mtime, self.archived.get(member.name, -1))
        if self.failed:
            return self.status()
        with contextlib.suppress(FsError):
            self.archive_ino = self.fs.stat(path).ino
        self.write_archive(path, data[:end] + self.build(self.operands()))
        return self.status()

    def delete(self) -> int:
        """--delete: the archive again without the members the operands name."""
        name = self.archive_name()
        path = None if name == "-" else self.ctx.path(name)
        data = self.existing_archive(path)
        self.wanted = [op for op, _ in self.cmd.operands]
        kept = []
        for member, start, end in self.member_spans(data):
            if not self.selected(member):
                kept.append(data[start:end])
        if self.failed:                  # a damaged header: the archive is left as it is
            return self.status()
        for op in self.wanted:
            if op not in self.matched:
                self.fail(f"{op}: Not found in archive")
        out = _ended(b"".join(kept)) if data else b""
        if path is None:
            self.ctx.write_bytes(out)
        else:
            self.write_archive(path, out)
        return self.status()

    def existing_archive(self, path) -> bytes:
        """The bytes of the archive to change (standard input's when `path` is None); none
        when there is no such file (GNU tar then makes one)."""
        try:
            data = read_bytes(self.ctx, "-") if path is None else self.fs.read_bytes(path)
        except FsError as e:
            if e.strerror != ENOENT:
                raise Fatal(f"{self.archive_name()}: Cannot open: {e.strerror}") from None
            return b""
        if sniff(data) is not None:
            raise Fatal("Cannot update compressed archives")
        return data

    def member_spans(self, data: bytes):
        """Each member of the uncompressed archive `data`, with the offsets where its first
        header starts and its data ends. An archive cut inside a member is a Fatal error:
        nothing is written over it."""
        if not data:
            return
        self.steps = 0
        for _, member in self.members(ForwardFile(iter(()), data=data)):
            end = member.offset_data + -(-member.size // tarfile.BLOCKSIZE) * tarfile.BLOCKSIZE
            if end > len(data):
                raise Fatal("Unexpected EOF in archive")
            yield member, member.offset, end

    def write_archive(self, path: str, data: bytes):
        try:
            self.fs.write_bytes(path, data, mode=0o666 & ~self.ctx.umask)
        except FsError as e:
            raise Fatal(f"{self.archive_name()}: Cannot write: {e.strerror}") from None

    def codec_for_create(self):
        for flag, codec in CODEC_FLAGS.items():
            if self.opts.get(flag):
                return codec
        if self.opts.get("auto-compress"):
            name = self.archive_name()
            for suffix, codec in AUTO_SUFFIXES.items():
                if name.endswith(suffix):
                    return codec
        return None

    def names_from_files(self) -> list:
        names = []
        for source in self.cmd.lists["files-from"]:
            try:
                text = read_bytes(self.ctx, source).decode("utf-8", "surrogateescape")
            except FsError as e:
                raise Fatal(f"{source}: Cannot open: {e.strerror}") from None
            names += [line for line in text.split("\n") if line]
        return names

    def add(self, archive, operand: str, directory: str):
        """Add `operand` (a path as given, relative to `directory`) and, for a directory, all
        below it, in name order."""
        path = absolute(directory, operand)
        name = operand.rstrip("/") or "/"
        prefix = unsafe_prefix(name)
        if prefix:
            self.warn_once(prefix)
        self.add_entry(archive, path, name, name[len(prefix):], top=True)

    def add_entry(self, archive, path: str, shown: str, member: str, top: bool = False):
        self.ctx.budget.check_clock()
        if self.excluded(member):
            return
        try:
            info = self.fs.stat(path, follow=bool(self.opts.get("dereference")))
        except FsError as e:
            self.fail(f"{shown}: Cannot stat: {e.strerror}")
            return
        if info.ino == self.archive_ino and info.is_file:
            _say(self.ctx, f"tar: {shown}: file is the archive; not dumped\n")
            return
        entry = self.header(member, info) if member else None
        if entry is not None and not self.up_to_date(entry, info):
            self.store(archive, entry, path, shown, member, info)
        if info.is_dir and (top or not self.opts.get("no-recursion")):
            try:
                children = sorted(self.fs.listdir(path), key=_byte_order)
            except FsError as e:
                self.fail(f"{shown}: Cannot open: {e.strerror}")
                return
            for child in children:
                self.add_entry(archive, path.rstrip("/") + "/" + child,
                               shown.rstrip("/") + "/" + child,
                               (member.rstrip("/") + "/" if member else "") + child)

    def up_to_date(self, entry, info) -> bool:
        """-u: the archive holds a copy of the member at least as new as the file."""
        # (in whole seconds, as the archive holds them)
        return entry.name in self.archived and int(info.mtime) <= self.archived[entry.name]

    def store(self, archive, entry, path: str, shown: str, member: str, info):
        """Write one member (its data read now), and name it under -v."""
        data = None
        if info.is_file:
            seen = self.links.get(info.ino) if info.nlink > 1 else None
            if seen is not None:
                target = self.rename(seen, HARDLINK)
                if target is None:
                    return
                entry.type, entry.linkname, entry.size = tarfile.LNKTYPE, target, 0
            else:
                try:
                    data = self.fs.read_bytes(path)
                except FsError as e:
                    self.fail(f"{shown}: Cannot open: {e.strerror}")
                    return
                entry.size = len(data)
                if info.nlink > 1:
                    self.links[info.ino] = member
        archive.addfile(entry, io.BytesIO(data) if data is not None else None)
        shown_entry = entry
        if self.transform and not self.opts.get("show-transformed-names"):
            shown_entry = copy.copy(entry)        # -v names what was read, not what was stored
            shown_entry.name = member
        self.report(shown_entry, self.verbose_out())

    def rename(self, name: str, kind: str = NAME):
        """`name` after --transform; None (reported) when it grows past the name limit."""
        if not self.transform:
            return name
        try:
            return self.transform(name, kind)
        except NameTooLong:
            self.fail(f"{name}: Name after --transform is longer than {MAX_NAME} bytes")
            return None
        except RegexTooSlow:
            raise Fatal("--transform: matching the regular expression took too long") from None

    def header(self, member: str, info):
        """The member's header, its name and link target transformed; None when a
        transformed name is refused."""
        name = self.rename(member)
        if name is None:
            return None
        entry = tarfile.TarInfo(name)
        entry.mode = info.mode & 0o7777
        entry.mtime = int(info.mtime)
        user = getattr(self.fs, "user", "user")
        entry.uname, entry.uid = _owner(self.opts.get("owner"), user)
        entry.gname, entry.gid = _owner(self.opts.get("group"), user)
        if self.opts.get("numeric-owner"):
            entry.uname = entry.gname = ""
        if info.is_dir:
            entry.type = tarfile.DIRTYPE
        elif info.is_link:
            target = self.rename(info.target, SYMLINK)
            if target is None:
                return None
            entry.type, entry.linkname = tarfile.SYMTYPE, target
        elif info.kind == "c":
            entry.type = tarfile.CHRTYPE
        return entry

    def report(self, entry, out):
        """-v: the member's name; -vv: the long listing line."""
        level = self.opts.get("verbose", 0)
        if level >= 2:
            out(self.long_line(entry))
        elif level:
            out(_quote(_display_name(entry)) + "\n")

    # ------------------------------------------------------------------ reading

    def open_archive(self) -> ForwardFile:
        """The archive's bytes, expanded as they are read when compressed."""
        name = self.archive_name()
        try:
            data = read_bytes(self.ctx, name)
        except FsError as e:
            raise Fatal(f"{name}: Cannot open: {e.strerror}") from None
        codec = next((c for flag, c in CODEC_FLAGS.items() if self.opts.get(flag)), None)
        found = sniff(data)
        if codec is None and found is not None:
            if name == "-":
                raise Fatal(f"Archive is compressed. Use -{CODEC_LETTER[found]} option")
            codec = found
        if codec is None:
            return ForwardFile(iter(()), data=data)
        self.codec = codec
        ceiling = Ceiling(self.ctx.limits.max_fs_bytes, "max_fs_bytes", "tar")
        return ForwardFile(inflate(self.ctx.budget, codec, data), ceiling)

    def members(self, stream: ForwardFile):
        """Each member in turn (its data readable until the next), read by tarfile in its
        random-access mode over `stream`: going past a member's data is a seek, which costs
        nothing past the end of the input, where tarfile's stream mode read on to the declared
        size (2**40 bytes of a 5 KB archive, for ever). Damaged headers are skipped as GNU tar
        skips them; member counts and time are checked as they go. tarfile's own list of
        members is not kept."""
        try:
            archive = _open_tarfile(stream, self.ctx.budget)
        except tarfile.ReadError:
            self.fail("This does not look like a tar archive")
            return
        first, skipping = True, False
        while True:
            self.steps += 1
            if self.steps % 256 == 0:
                self.ctx.budget.check_clock()
            member = _next_member(archive)
            # tarfile keeps every member it reads in `members`, which typeshed does not declare
            archive.members.clear()  # type: ignore[attr-defined]
            if member is not None and self.valid(member, first):
                first, skipping = False, False
                yield archive, member
                continue
            bad_header = archive.offset if member is None else member.offset
            if member is None and not _damaged_header(stream, bad_header):
                return
            if not skipping:
                self.fail("Skipping to next header")
                skipping = True
            first = False
            archive.offset = bad_header + tarfile.BLOCKSIZE

    def valid(self, member, first: bool) -> bool:
        """GNU tar's checks of a header: a size out of range makes it unusable (it is skipped),
        a time out of range reads as -1, a name ends at a NUL."""
        if member.size > _OFF_T_MAX or member.size < 0:
            self.fail("Archive base-256 value is out of off_t range" if member.size > _OFF_T_MAX
                      else f"Archive value {member.size} is out of off_t range 0..{_OFF_T_MAX}")
            if first:
                self.fail("This does not look like a tar archive")
            return False
        if not -_OFF_T_MAX - 1 <= member.mtime <= _OFF_T_MAX:
            self.fail("Archive base-256 value is out of time_t range")
            member.mtime = -1
        # names are C strings to GNU tar: a NUL (possible in a pax record) ends them
        member.name = member.name.partition("\0")[0]
        member.linkname = member.linkname.partition("\0")[0]
        return True

    def selected(self, member) -> bool:
        name = member.name
        if self.excluded(name):
            return False
        if not self.wanted:
            return True
        for op in self.wanted:
            pattern = op.rstrip("/") or op
            if (glob_match(pattern, name) if self.wildcards else name == pattern) \
                    or name.startswith(pattern + "/"):
                self.matched.add(op)
                return True
        return False

    def read_archive(self, handle) -> int:
        self.wanted = [op for op, _ in self.cmd.operands]
        self.matched = set()
        self.steps = 0
        stream = self.open_archive()
        try:
            for archive, member in self.members(stream):
                if self.selected(member):
                    handle(archive, member)
        except Corrupt as e:
            text = {"format": "not in gzip format", "truncated": "unexpected end of file"}.get(
                e.kind, "invalid compressed data--format violated")
            raise Fatal(f"\n{self.codec.name}: stdin: {text}\ntar: Child returned status 1",
                        raw=True) from None
        except tarfile.ReadError:      # (a member's data ends before its declared size)
            raise Fatal("Unexpected EOF in archive") from None
        except _Unreadable as e:
            raise Fatal(str(e)) from None
        for op in self.wanted:
            if op not in self.matched:
                self.fail(f"{op}: Not found in archive")
        return self.status()

    # ------------------------------------------------------------------ list

    def list(self) -> int:
        return self.read_archive(self.list_member)

    def list_member(self, archive, member):
        # GNU tar lists a member under its own name (--show-transformed-names: the name
        # transformed) and its link target transformed
        member = self.transformed(member, names=bool(self.opts.get("show-transformed-names")))
        if member is None:
            return
        prefix = unsafe_prefix(member.name)
        if prefix:
            self.warn_once(prefix)
        if member.islnk():
            target = unsafe_prefix(member.linkname)
            if target:
                self.warn_once(target, "hard link targets")
        if self.opts.get("verbose"):
            self.ctx.out(self.long_line(member))
        else:
            self.ctx.out(_quote(_display_name(member)) + "\n")

    def transformed(self, member, names: bool):
        """A copy of the member with --transform applied to its link target and, with
        `names`, to its name; None (reported) when one grows past the name limit."""
        if not self.transform:
            return member
        copied = copy.copy(member)
        if names:
            copied.name = self.rename(member.name)
        if member.issym() or member.islnk():
            copied.linkname = self.rename(member.linkname, SYMLINK if member.issym() else HARDLINK)
        return None if copied.name is None or copied.linkname is None else copied

    def long_line(self, m) -> str:
        """`-rw-r--r-- user/group  size yyyy-mm-dd hh:mm name`, as GNU tar's print_header."""
        kind = TYPE_LETTER.get(m.type, "-")
        modes = kind + st_mod.filemode(m.mode & 0o7777)[1:]
        user = m.uname or str(m.uid)
        group = m.gname or str(m.gid)
        size = f"{m.devmajor},{m.devminor}" if m.type in (tarfile.CHRTYPE, tarfile.BLKTYPE) \
            else str(m.size if m.type not in (tarfile.SYMTYPE, tarfile.LNKTYPE) else 0)
        pad = len(user) + 1 + len(group) + 1 + len(size)
        self.ugs_width = max(self.ugs_width, pad)
        when = _listed_time(m.mtime)
        line = f"{modes} {user}/{group} {size.rjust(self.ugs_width - pad + len(size))} {when} " \
               f"{_quote(_display_name(m))}"
        if m.type == tarfile.SYMTYPE:
            line += " -> " + _quote(m.linkname)
        elif m.type == tarfile.LNKTYPE:
            line += " link to " + _quote(m.linkname[len(unsafe_prefix(m.linkname)):])
        return line + "\n"

    # ------------------------------------------------------------------ extract

    def extract(self) -> int:
        base = self.cmd.directory
        try:
            if not self.fs.stat(self.ctx.path(base)).is_dir:
                raise FsError("Not a directory")
            self.dest = Destination(self.ctx, self.ctx.path(base))
        except FsError as e:
            raise Fatal(f"{base}: Cannot open: {e.strerror}") from None
        self.strip = _strip_count(self.opts.get("strip-components"))
        self.directories: list = []
        self.placeholders: list = []
        self.stdout_ceiling = Ceiling(self.ctx.limits.max_string_length, "max_string_length", "tar")
        try:
            return self.read_archive(self.extract_member)
        finally:
            self.finish()

    def relative(self, name: str, what: str = "member names"):
        """A member (or hard-link target) name as extracted: the unsafe prefix removed (with
        GNU's warning), --strip-components applied. None: nothing is left of it."""
        prefix = unsafe_prefix(name)
        if prefix:
            self.warn_once(prefix, what)
        parts = [p for p in name[len(prefix):].split("/") if p]
        if len(parts) <= self.strip:
            return None
        return "/".join(parts[self.strip:])

    def extract_member(self, archive, member):
        read = member              # what -v names, as GNU tar does (--show-transformed-names: the new name)
        member = self.transformed(member, names=True)
        if member is None:
            return
        if self.opts.get("show-transformed-names"):
            read = member
        shown = _display_name(member)
        rel = self.relative(member.name)
        if has_dotdot(member.name):
            self.fail(f"{shown}: Member name contains '..'")
            return
        if rel is None:
            return
        if self.opts.get("verbose"):
            self.report(read, self.verbose_out())
        if self.opts.get("to-stdout"):
            if member.isreg():
                self.to_stdout(archive, member)
            return
        try:
            self.place(archive, member, rel, shown)
        except FsError as e:
            if e.strerror in (ENOSPC, EFBIG):
                raise Fatal(f"{shown}: Cannot write: {e.strerror}") from None
            verb = "Cannot mkdir" if member.isdir() else "Cannot open"
            self.fail(f"{shown}: {verb}: {e.strerror}")

    def place(self, archive, member, rel: str, shown: str):
        path = self.dest.path(rel)
        if member.isdir():
            if self.dest.directory(path):
                self.directories.append((path, member))
            return
        self.dest.clear(path, keep_old=bool(self.opts.get("keep-old-files")))
        if member.issym():
            target = member.linkname
            if target.startswith("/") or has_dotdot(target):
                self.fs.open_write(path, mode=0)              # GNU's placeholder
                self.placeholders.append((path, self.fs.stat(path).ino, target, member))
            else:
                self.fs.symlink(target, path)
            return
        if member.islnk():
            source = self.relative(member.linkname, "hard link targets")
            try:
                self.fs.link(self.dest.link_source(source or "."), path)
            except FsError as e:
                self.fail(f"{shown}: Cannot hard link to ‘{source}’: {e.strerror}")
            return
        if not member.isreg():
            self.fail(f"{shown}: Cannot mknod: Operation not permitted")
            return
        try:
            self.dest.write(path, _member_data(archive, member), 0o600)
        except tarfile.ReadError:
            self.cut_short()
        self.attributes(path, member)

    def cut_short(self):
        """The input ended inside a member's data (what there was of it is kept): GNU tar says
        so, then again for want of the next header."""
        self.fail("Unexpected EOF in archive")
        raise Fatal("Unexpected EOF in archive")

    def attributes(self, path: str, member):
        mode = member.mode & 0o7777
        self.fs.chmod(path, mode if self.opts.get("preserve-permissions") else mode & ~self.ctx.umask)
        if not self.opts.get("touch"):
            self.fs.utime(path, member.mtime)

    def to_stdout(self, archive, member):
        data = bytearray()
        try:
            for chunk in _member_data(archive, member):
                self.stdout_ceiling.add(len(chunk))
                data += chunk
        except tarfile.ReadError:
            self.ctx.write_bytes(bytes(data))
            self.cut_short()
        self.ctx.write_bytes(bytes(data))

    def finish(self):
        """The deferred work: symbolic links in place of their placeholders, then directory
        modes and times (set last: writing into a directory changes its time)."""
        for path, ino, target, member in self.placeholders:
            try:
                if self.fs.stat(path, follow=False).ino == ino:
                    self.fs.unlink(path)
                    self.fs.symlink(target, path)
            except FsError as e:
                self.fail(f"{_display_name(member)}: Cannot create symlink to ‘{target}’: "
                          f"{e.strerror}")
        for path, member in reversed(self.directories):
            try:
                self.attributes(path, member)
            except FsError:
                pass


_OFF_T_MAX = (1 << 63) - 1
# Extended headers (a long name, a pax header) are read whole into memory and parsed by a
# Python loop that does not look at the clock (0.5 s a MiB): bigger ones are refused (GNU tar
# gives up with "memory exhausted" on 2**40 bytes), and so is a run of more of them before a
# member than any archive has (tarfile reads them by recursion).
MAX_EXTENDED_BYTES = 1 << 20
MAX_EXTENDED_RUN = 64


class _Unreadable(Exception):
    """A header tar cannot use and cannot skip: the message of its Fatal error."""


class _BoundedHeader(tarfile.TarInfo):
    """tarfile's header reader, with the size and run of extended headers bounded and the
    budget checked at each one (its private methods for them are not in typeshed)."""

    def _proc_gnulong(self, archive):
        _check_extended(self, archive)
        return super()._proc_gnulong(archive)  # type: ignore[misc]

    def _proc_pax(self, archive):
        _check_extended(self, archive)
        return super()._proc_pax(archive)  # type: ignore[misc]


def _check_extended(header, archive: "_BoundedTarFile"):
    archive.budget.check_clock()
    archive.extended_run += 1
    if archive.extended_run > MAX_EXTENDED_RUN:
        raise _Unreadable(f"More than {MAX_EXTENDED_RUN} extended headers in a row")
    if header.size > MAX_EXTENDED_BYTES:
        raise _Unreadable(f"Extended header of {header.size} bytes: more than the "
                          f"{MAX_EXTENDED_BYTES} allowed")


class _BoundedTarFile(tarfile.TarFile):
    tarinfo = _BoundedHeader
    extended_run = 0            # extended headers read since the last member

    def __init__(self, budget: Budget, **options):
        self.budget = budget    # (before tarfile's __init__ reads the first header)
        super().__init__(**options)


def _open_tarfile(stream: ForwardFile, budget: Budget) -> _BoundedTarFile:
    """tarfile over `stream` in random-access mode; the first header is read."""
    with _header_errors():
        return _BoundedTarFile(budget, fileobj=stream, mode="r")


def _next_member(archive: _BoundedTarFile):
    """The next member, or None at the end or at a header tarfile cannot read."""
    archive.extended_run = 0
    with _header_errors():
        return archive.next()


@contextlib.contextmanager
def _header_errors():
    """What tarfile's header parsing raises on damaged bytes (beside ReadError, which means
    the input ended): a header tar cannot use."""
    try:
        yield
    except (ValueError, IndexError, OverflowError):
        raise _Unreadable("Damaged extended header") from None


def _damaged_header(stream: ForwardFile, offset: int) -> bool:
    """tarfile saw no member at `offset`: True if a damaged header is there (GNU tar skips it),
    False at the end of the archive (zeros, the end of the input or a last block cut short,
    which GNU tar passes over in silence)."""
    stream.seek(offset)
    block = stream.read(tarfile.BLOCKSIZE)
    return len(block) == tarfile.BLOCKSIZE and bool(block.strip(b"\0"))


def _owner(option, default: str) -> tuple[str, int]:
    """--owner=NAME[:ID] (or a bare number), else the filesystem's user (id 1000)."""
    if not option:
        return default, 1000
    name, _, number = option.partition(":")
    if name.isdigit() and not number:
        return "", int(name)
    return name, int(number) if number.isdigit() else 1000


def _strip_count(text) -> int:
    """--strip-components=N as GNU tar reads it: ASCII digits (blanks and + before)."""
    if text is None:
        return 0
    if re.fullmatch(r"\s*\+?[0-9]{1,18}", text):
        return int(text)
    raise _bad(f"{text}: Invalid number of elements")


def _member_data(archive: tarfile.TarFile, member: tarfile.TarInfo):
    """The member's bytes in chunks of at most CHUNK; tarfile.ReadError after the bytes there
    are when the input ends before the member's size (tarfile's own reader drops those)."""
    if member.issparse():
        stream = archive.extractfile(member)
        assert stream is not None                # (a regular file's)
        while chunk := stream.read(CHUNK):
            yield chunk
        return
    source = archive.fileobj
    assert source is not None                    # (an archive being read)
    source.seek(member.offset_data)
    left = member.size
    while left > 0:
        want = min(CHUNK, left)
        chunk = source.read(want)
        if chunk:
            yield chunk
        if len(chunk) < want:
            raise tarfile.ReadError("unexpected end of data")
        left -= want


def _listed_time(mtime: int) -> str:
    """The time of a long listing; one the C library cannot break down (past the year 2**31)
    is the number of seconds, right-aligned in the width of the date, as GNU tar's tartime."""
    try:
        return time.strftime("%Y-%m-%d %H:%M", time.localtime(mtime))
    except (OverflowError, OSError, ValueError):
        return str(mtime).rjust(len("YYYY-MM-DD HH:MM"))


def _display_name(m) -> str:
    return m.name + "/" if m.isdir() and not m.name.endswith("/") else m.name


def _quote(name: str) -> str:
    """GNU tar's escape quoting of names: backslash escapes for control characters."""
    if name.isprintable() and "\\" not in name:
        return name
    out = []
    for c in name:
        if c == "\\":
            out.append("\\\\")
        elif c in "\a\b\f\n\r\t\v":
            out.append("\\" + "abfnrtv"["\a\b\f\n\r\t\v".index(c)])
        elif ord(c) < 32 or ord(c) == 127:
            out.append(f"\\{ord(c):03o}")
        else:
            out.append(c)
    return "".join(out)


def _byte_order(name: str) -> bytes:
    return name.encode("utf-8", "surrogateescape")


USAGE = Usage("[OPTION...] [FILE]...",
              "GNU 'tar' saves many files together into a single tape or disk archive, and can "
              "restore individual files from the archive.",
              ("-c, --create               create a new archive",
               "-x, --extract, --get       extract files from an archive",
               "-t, --list                 list the contents of an archive",
               "-r, --append               append files to the end of an archive",
               "-u, --update               only append files newer than copy in archive",
               "    --delete               delete from the archive",
               "-f, --file=ARCHIVE         use archive file or device ARCHIVE",
               "-C, --directory=DIR        change to directory DIR",
               "-z, --gzip  -j, --bzip2  -J, --xz   filter the archive through a compressor",
               "-v, --verbose              verbosely list files processed",
               "-O, --to-stdout            extract files to standard output",
               "    --exclude=PATTERN      exclude files, given as a PATTERN",
               "    --strip-components=NUMBER   strip NUMBER leading components from file names",
               "    --transform=EXPRESSION, --xform=EXPRESSION",
               "                           use sed replace EXPRESSION to transform file names"))


@command("tar", usage=USAGE, needs_files=True)
def tar(ctx, argv):
    cmd = Command(argv)
    mode = cmd.opts.get("mode")
    if mode is None:
        raise UsageError(f"tar: You must specify one of the '-Acdtrux', '--delete' or "
                         f"'--test-label' options\n{TRY}", 2)
    if mode in ("append", "update", "delete"):
        _check_updatable(cmd)
    run = Tar(ctx, cmd)
    try:
        return {"create": run.create, "list": run.list, "extract": run.extract, "append": run.append,
                "update": run.append, "delete": run.delete}[mode]()
    except Fatal as e:
        _say(ctx, ("" if e.raw else "tar: ") + f"{e}\ntar: Error is not recoverable: exiting now\n")
        return 2


def _ended(members: bytes) -> bytes:
    """Members, then the end of the archive (two zero blocks), padded to a whole record."""
    out = members + bytes(2 * tarfile.BLOCKSIZE)
    return out + bytes(-len(out) % tarfile.RECORDSIZE)


def _check_updatable(cmd: Command):
    """GNU tar changes an archive in place: never a compressed one, nor (for -r and -u) one
    it reads from standard input."""
    if any(cmd.opts.get(flag) for flag in (*CODEC_FLAGS, "auto-compress")):
        raise _bad("Cannot update compressed archives")
    if cmd.opts.get("mode") != "delete" and (cmd.opts.get("file") or "-") == "-":
        raise _bad("Options '-Aru' are incompatible with '-f -'")


def _say(ctx, text: str):
    """A diagnostic to standard error, an operand in it quoted at most 4 KiB (base/errors.py)."""
    ctx.err(bounded(text))
