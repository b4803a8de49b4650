"""An in-memory filesystem: directories, regular files (bytes), symbolic links, hard links,
mode bits and mtimes, a few devices, bounded by size limits; plus read-only host mounts.

The script runs as the owner of every file, an ordinary user (not root): mode bits are
enforced as the kernel would for the owner (`chmod 000 f; cat f` is Permission denied). The
directories the filesystem starts with (/tmp, /home, the home directory, /dev) and the devices
belong to root: they cannot be removed, renamed or replaced, and nothing is created in /dev.

Everything the filesystem keeps is bounded, whatever route made it: every name (a directory
entry, hard links included) counts in `max_file_count` and its bytes, with symbolic links'
targets, in `max_fs_bytes` beside the contents; a name is at most NAME_MAX bytes, a path or a
link's target under PATH_MAX, and no file lies deeper than `max_path_depth` components or has
an absolute path of PATH_MAX bytes or more, so every file can be named and removed.
"""
from __future__ import annotations

from typing import Optional

from ..base.limits import ExecutionLimits, check_stop, wall_clock
from .host import HostMount
from .inode import Inode
from .base import (EACCES, EEXIST, EFBIG, EINVAL, EISDIR, ELOOP, ENAMETOOLONG, ENOENT, ENOSPC,
                   ENOTDIR, ENOTEMPTY, EPERM, EROFS, EXDEV, FileSystem, FsError, Stat)

MAX_SYMLINKS = 40          # the kernel's limit on links followed while resolving one path
NAME_MAX = 255             # bytes of one name (Linux's)
PATH_MAX = 4096            # bytes of a path or a link's target, its terminating NUL included
_CHECK_EVERY = 256         # directory entries visited between two looks at the clock
DEVICES = ("null", "zero", "stdin", "stdout", "stderr", "tty")


def _nbytes(text: str) -> int:
    """The bytes of a name or path as the kernel counts them (UTF-8)."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogateescape"))


_SURELY_SHORT = PATH_MAX // 4      # characters: any character is at most 4 bytes


def _too_long(path: str) -> bool:
    """Is `path` PATH_MAX bytes or more? (Callers first compare its length with _SURELY_SHORT.)"""
    return _nbytes(path) >= PATH_MAX


def _entries(directory: Inode) -> dict[str, Inode]:
    """The names in a directory held in memory (only a host mount's directories have none)."""
    entries = directory.entries
    assert entries is not None, "not a directory held in memory"
    return entries


def _data(node: Inode) -> bytearray:
    """The bytes of a regular file held in memory (a host mount's files have none)."""
    data = node.data
    assert data is not None, "not a regular file held in memory"
    return data


class Writer:
    """An open file for writing: a callable taking text, as the shell's file descriptors are.
    While it is open, a file whose last name was removed keeps its bytes (counted in
    max_fs_bytes, as the kernel keeps an unlinked open file); they are freed when the last
    Writer on it goes (the shell closes a descriptor by dropping it)."""
    __slots__ = ("fs", "node")

    def __init__(self, fs: "MemoryFs", node: Optional[Inode]):
        self.fs = fs
        self.node = node          # None: a sink (/dev/null)
        if node is not None:
            node.opened += 1

    def __call__(self, text: str):
        if text and self.node is not None:
            self.fs._append(self.node, text.encode("utf-8", "surrogateescape"))

    def write_bytes(self, data: bytes):
        if data and self.node is not None:
            self.fs._append(self.node, data)

    def __del__(self):
        if self.node is not None:
            self.node.opened -= 1
            self.fs._release(self.node)


class MemoryFs(FileSystem):
    """A filesystem held in memory, with `/`, `/tmp` (sticky, world-writable), `/dev` and the
    home directory of `user`. Bounded by `limits` (total bytes, file count, path depth, bytes
    of one file): going past them fails the operation with the C library's error (ENOSPC,
    EFBIG, ENAMETOOLONG) and keeps everything written before."""

    def __init__(self, files: Optional[dict] = None, user: str = "user",
                 limits: Optional[ExecutionLimits] = None):
        self.limits = limits or ExecutionLimits()
        self.user = user
        self.home = f"/home/{user}"
        self._clock = 0.0
        self._next_ino = 1
        self.used_bytes = 0
        self.file_count = 0
        self.root = self._new("d", 0o755)
        self._mkdirs("/tmp", 0o1777)
        self._mkdirs(self.home, 0o755)
        self._dev = self._mkdirs("/dev", 0o755)
        for name in DEVICES:
            node = self._new("c", 0o666)
            node.target = name
            _entries(self._dev)[name] = node
        self._system = {self._dev, _entries(self.root)["tmp"], _entries(self.root)["home"],
                        self._existing(self.home)}
        for path, content in (files or {}).items():
            self.add_file(path, content)

    # ------------------------------------------------------------ building

    def add_file(self, path: str, content, mode: int = 0o644):
        """Create `path` (and its directories) holding `content` (str or bytes)."""
        data = content.encode("utf-8", "surrogateescape") if isinstance(content, str) else bytes(content)
        path = path if path.startswith("/") else self.home + "/" + path
        self._mkdirs(path.rsplit("/", 1)[0] or "/", 0o755)
        self.write_bytes(path, data, mode=mode)

    def mount(self, at: str, host_dir: str, read_only: bool = True) -> "MemoryFs":
        """Show the host directory `host_dir` at `at`, read-only: reads are confined to it (no
        `..`, no symlink or hard-link escape, no devices) and size-limited."""
        if not read_only:
            raise ValueError("only read-only host mounts are supported")
        host = HostMount(host_dir, self.limits.max_file_bytes)
        node = self._mkdirs(at, 0o555)
        if node.entries:
            raise ValueError(f"mount point {at} is not empty")
        node.host = (host, ())
        node.mode = host.root_mode()
        return self

    def _new(self, kind: str, mode: int) -> Inode:
        node = Inode(kind, mode, self._tick(), self._next_ino)
        self._next_ino += 1
        return node

    def _tick(self) -> float:
        """The time now, strictly later than any mtime given before, so that files written
        one after the other compare as newer (-nt) on any clock."""
        now = wall_clock()
        self._clock = now if now > self._clock else self._clock + 1e-6
        return self._clock

    def _mkdirs(self, path: str, mode: int) -> Inode:
        node = self.root
        for name in (p for p in path.split("/") if p):
            child = _entries(node).get(name)
            if child is None:
                child = self._new("d", mode)
                self._attach(node, name, child)
            node = child
        return node

    # ------------------------------------------------------------ resolving paths

    def _walk(self, path: str, follow_last: bool = True):
        """Resolve `path`: (parent directory, last name, node or None if it does not exist).
        The parent is None when the last component is `.` or `..` or the path is `/`.
        Raises ENOENT/ENOTDIR/EACCES/ELOOP/ENAMETOOLONG on the way, as the kernel would.
        A path and each link's target are under PATH_MAX, so the components between two
        links followed are few: the clock is looked at per link."""
        if not path:
            raise FsError(ENOENT)
        if len(path) >= _SURELY_SHORT and _too_long(path):
            raise FsError(ENAMETOOLONG)
        parts = [p for p in path.split("/") if p]
        if path.endswith("/") and parts:
            parts.append(".")
        stack = [self.root]
        links = 0
        parts.reverse()                 # a stack of names still to resolve
        if not parts:
            return None, "/", self.root
        while parts:
            name = parts.pop()
            last = not parts
            cur = stack[-1]
            if not cur.mode & 0o100:
                raise FsError(EACCES)
            if name == ".":
                if last:
                    return None, name, cur
                continue
            if name == "..":
                if len(stack) > 1:
                    stack.pop()
                if last:
                    return None, name, stack[-1]
                continue
            node = self._child(cur, name)
            if node is None:
                if _nbytes(name) > NAME_MAX:
                    raise FsError(ENAMETOOLONG)
                if last:
                    return cur, name, None
                raise FsError(ENOENT)
            if node.kind == "l" and (not last or follow_last):
                links += 1
                if links > MAX_SYMLINKS:
                    raise FsError(ELOOP)
                check_stop()
                target = node.target
                if not target:
                    raise FsError(ENOENT)
                if target.startswith("/"):
                    stack = [self.root]
                names = [p for p in target.split("/") if p]
                if target.endswith("/") and names:
                    names.append(".")
                parts.extend(reversed(names or ["."]))
                continue
            if last:
                return cur, name, node
            if node.kind != "d":
                raise FsError(ENOTDIR)
            stack.append(node)
        return None, ".", stack[-1]

    @staticmethod
    def _child(directory: Inode, name: str) -> Optional[Inode]:
        if directory.host is not None:
            host, rel = directory.host
            node = host.lookup(rel, name)
            if node is not None and node.kind == "d":
                node.parent, node.name = directory, name
            return node
        entries = directory.entries
        assert entries is not None
        return entries.get(name)

    def _existing(self, path: str, follow: bool = True) -> Inode:
        _, _, node = self._walk(path, follow)
        if node is None:
            raise FsError(ENOENT)
        return node

    @staticmethod
    def _names_from_root(directory: Inode) -> list:
        """The names leading from `/` to `directory` (a walk up its parents)."""
        names = []
        while directory.parent is not None:
            names.append(directory.name)
            directory = directory.parent
        names.reverse()
        return names

    def _writable_dir(self, directory: Inode):
        if directory.host is not None:
            raise FsError(EROFS)
        if directory.mode & 0o300 != 0o300 or directory is self._dev:
            raise FsError(EACCES)

    # ------------------------------------------------------------ names and their budgets

    def _check_name(self, parent: Inode, name: str, below: tuple = (0, 0)) -> int:
        """Refuse a new name `name` in `parent` that would break a limit: the name over
        NAME_MAX, or a file (or, `below` = (levels, bytes), the deepest and longest path under a
        directory moved there) deeper than max_path_depth or with a path of PATH_MAX bytes.
        Returns the name's bytes."""
        size = _nbytes(name)
        if size > NAME_MAX:
            raise FsError(ENAMETOOLONG)
        names = self._names_from_root(parent)
        length = (_nbytes("/".join(names)) + 1 if names else 0) + 1 + size + below[1]
        if len(names) + 1 + below[0] > self.limits.max_path_depth or length >= PATH_MAX:
            raise FsError(ENAMETOOLONG)
        return size

    def _charge(self, size: int):
        if size > 0 and self.used_bytes + size > self.limits.max_fs_bytes:
            raise FsError(ENOSPC)
        self.used_bytes += size

    def _attach(self, parent: Inode, name: str, node: Inode, extra: int = 0):
        """Give `node` a new name in `parent`: the one place a name is made (create, mkdir,
        link, symlink), counted in max_file_count and, with `extra` bytes (a new link's
        target), in max_fs_bytes."""
        size = self._check_name(parent, name)
        if self.file_count >= self.limits.max_file_count:
            raise FsError(ENOSPC)
        self._charge(size + extra)
        self.file_count += 1
        _entries(parent)[name] = node
        if node.kind == "d":
            node.parent, node.name = parent, name
            parent.nlink += 1
        parent.mtime = self._tick()

    def _detach(self, parent: Inode, name: str):
        """Remove the name `name` from `parent`; the file goes with its last name."""
        node = _entries(parent).pop(name)
        self.file_count -= 1
        self.used_bytes -= _nbytes(name)
        if node.kind == "d":
            parent.nlink -= 1
            node.parent = None
        else:
            node.nlink -= 1
            self._release(node)
        parent.mtime = self._tick()

    def _release(self, node: Inode):
        """Free a file's bytes once it has no name and no Writer open on it."""
        if node.nlink > 0 or node.opened > 0 or node.host is not None:
            return
        if node.kind == "-":
            self.used_bytes -= len(_data(node))
            node.data = bytearray()
        elif node.kind == "l" and node.target:
            self.used_bytes -= _nbytes(node.target)
            node.target = ""

    def _reach(self, directory: Inode) -> tuple:
        """(levels, bytes): how much deeper and longer than `directory`'s own path the deepest
        and the longest path below it are (a directory moved takes them along)."""
        levels = length = 0
        stack = [(directory, 0, 0)]
        seen = 0
        while stack:
            node, depth, size = stack.pop()
            for name, child in _entries(node).items():
                seen += 1
                if not seen % _CHECK_EVERY:
                    check_stop()
                below = (depth + 1, size + 1 + _nbytes(name))
                levels, length = max(levels, below[0]), max(length, below[1])
                if child.kind == "d" and child.host is None:
                    stack.append((child, *below))
        return levels, length

    def _append(self, node: Inode, data: bytes):
        if node.kind == "c":
            return
        if node.host is not None:
            raise FsError(EROFS)
        content = _data(node)
        if len(content) + len(data) > self.limits.max_file_bytes:
            raise FsError(EFBIG)
        self._charge(len(data))
        content += data
        node.mtime = self._tick()

    # ------------------------------------------------------------ the interface

    def stat(self, path: str, follow: bool = True) -> Stat:
        node = self._existing(path, follow)
        return Stat(node.kind, node.mode, node.size, node.mtime, node.ino, node.nlink, node.target)

    def read_bytes(self, path: str) -> bytes:
        node = self._existing(path)
        if node.kind == "d":
            raise FsError(EISDIR)
        if not node.mode & 0o400:
            raise FsError(EACCES)
        if node.kind == "c":
            return b""
        if node.host is not None:
            host, rel = node.host
            return host.read(rel)
        return bytes(_data(node))

    def open_write(self, path: str, append: bool = False, exclusive: bool = False,
                   mode: int = 0o644) -> Writer:
        parent, name, node = self._walk(path)
        if node is None:
            if path.endswith("/"):
                raise FsError(EISDIR)
            self._writable_dir(parent)
            node = self._new("-", mode)
            self._attach(parent, name, node)
            return Writer(self, node)
        if node.kind == "d":
            raise FsError(EISDIR)
        if node.kind == "c":
            return Writer(self, None)
        if exclusive:
            raise FsError("cannot overwrite existing file")
        if node.host is not None:
            raise FsError(EROFS)
        if not node.mode & 0o200:
            raise FsError(EACCES)
        if not append:
            self.used_bytes -= len(_data(node))
            node.data = bytearray()
            node.mtime = self._tick()
        return Writer(self, node)

    def listdir(self, path: str) -> list[str]:
        node = self._existing(path)
        if node.kind != "d":
            raise FsError(ENOTDIR)
        if not node.mode & 0o400:
            raise FsError(EACCES)
        if node.host is not None:
            host, rel = node.host
            return host.listdir(rel)
        return list(_entries(node))

    def mkdir(self, path: str, mode: int = 0o755):
        parent, name, node = self._walk(path.rstrip("/") or "/", follow_last=False)
        if node is not None:
            raise FsError(EEXIST)
        self._writable_dir(parent)
        self._attach(parent, name, self._new("d", mode))

    def _removable(self, path: str):
        parent, name, node = self._walk(path.rstrip("/") or "/", follow_last=False)
        if node is None:
            raise FsError(ENOENT)
        if parent is None:
            raise FsError(EINVAL if name == "." else "Device or resource busy")
        self._writable_dir(parent)
        self._not_system(node)
        return parent, name, node

    def _not_system(self, node: Inode):
        """The directories the filesystem starts with and the devices are root's: a name of
        theirs cannot be removed or replaced (an ordinary user's Permission denied)."""
        if node.kind == "c" or node in self._system:
            raise FsError(EACCES)

    def unlink(self, path: str):
        parent, name, node = self._removable(path)
        if node.kind == "d":
            raise FsError(EISDIR)
        self._detach(parent, name)

    def rmdir(self, path: str):
        parent, name, node = self._removable(path)
        if node.kind != "d":
            raise FsError(ENOTDIR)
        if node.host is not None or node.entries:
            raise FsError(ENOTEMPTY if node.entries else "Device or resource busy")
        self._detach(parent, name)

    def rename(self, src: str, dst: str):
        sparent, sname, snode = self._removable(src)
        dparent, dname, dnode = self._walk(dst.rstrip("/") or "/", follow_last=False)
        if dparent is None:
            raise FsError("Device or resource busy")
        self._writable_dir(dparent)
        if dnode is snode:
            return
        if snode.kind == "d" and self._inside(dparent, snode):
            raise FsError(EINVAL)
        if dnode is not None:
            self._not_system(dnode)
            if dnode.kind == "d":
                if snode.kind != "d":
                    raise FsError(EISDIR)
                if dnode.entries or dnode.host is not None:
                    raise FsError(ENOTEMPTY)
            elif snode.kind == "d":
                raise FsError(ENOTDIR)
        size = self._check_name(dparent, dname, self._reach(snode) if snode.kind == "d" else (0, 0))
        if dnode is not None:
            self._detach(dparent, dname)
        self._charge(size - _nbytes(sname))
        self._move(sparent, sname, snode, dparent, dname)

    def _move(self, sparent: Inode, sname: str, node: Inode, dparent: Inode, dname: str):
        """The name `sname` in `sparent` becomes `dname` in `dparent` (paid for: one name
        for another, the count unchanged)."""
        del _entries(sparent)[sname]
        if node.kind == "d":
            sparent.nlink -= 1
            dparent.nlink += 1
            node.parent, node.name = dparent, dname
        _entries(dparent)[dname] = node
        sparent.mtime = dparent.mtime = self._tick()

    @staticmethod
    def _inside(directory: Optional[Inode], ancestor: Inode) -> bool:
        """Is `directory` `ancestor` or below it? (a directory cannot move into itself)"""
        while directory is not None:
            if directory is ancestor:
                return True
            directory = directory.parent
        return False

    def symlink(self, target: str, path: str):
        if not target:
            raise FsError(ENOENT)
        if len(target) >= _SURELY_SHORT and _too_long(target):
            raise FsError(ENAMETOOLONG)
        parent, name, node = self._walk(path, follow_last=False)
        if node is not None or parent is None:
            raise FsError(EEXIST)
        self._writable_dir(parent)
        link = self._new("l", 0o777)
        link.target = target
        self._attach(parent, name, link, _nbytes(target))

    def link(self, src: str, dst: str):
        node = self._existing(src, follow=False)
        if node.kind == "d":
            raise FsError(EPERM)
        if node.host is not None:
            raise FsError(EROFS)
        if node.kind == "c":
            raise FsError(EXDEV)         # the devices are on another filesystem
        parent, name, existing = self._walk(dst, follow_last=False)
        if existing is not None or parent is None:
            raise FsError(EEXIST)
        self._writable_dir(parent)
        self._attach(parent, name, node)
        node.nlink += 1

    def readlink(self, path: str) -> str:
        node = self._existing(path, follow=False)
        if node.kind != "l":
            raise FsError(EINVAL)
        return node.target

    def chmod(self, path: str, mode: int):
        node = self._existing(path)
        if node.host is not None:
            raise FsError(EROFS)
        if node.kind == "c" or node is self._dev:
            raise FsError(EPERM)
        node.mode = mode & 0o7777

    def utime(self, path: str, mtime: float, follow: bool = True):
        node = self._existing(path, follow)
        if node.host is not None:
            raise FsError(EROFS)
        node.mtime = mtime

    def realpath(self, path: str, strict: bool = True) -> str:
        """The canonical path (symbolic links, `.` and `..` resolved). `strict`: every part
        must exist; otherwise only the parent of the last part must."""
        parent, name, node = self._walk(path)
        if node is None and strict:
            raise FsError(ENOENT)
        if node is not None and node.kind == "d":
            names = self._names_from_root(node)
        else:
            names = self._names_from_root(parent) + [name]
        return "/" + "/".join(names)

    def access(self, path: str, want: str) -> bool:
        try:
            node = self._existing(path)
        except FsError:
            return False
        if want == "w" and node.host is not None:
            return False
        return bool(node.mode & {"r": 0o400, "w": 0o200, "x": 0o100}[want])

    # ------------------------------------------------------------ for the notebook

    def tree(self) -> dict:
        """{absolute path: Stat} of every file below `/` except /dev, in path order. Walked
        node by node (never by path), so a tree of any depth is listed; a host directory that
        cannot be read is shown empty."""
        out = {}
        stack = [(f"/{name}", child) for name, child in reversed(self._children(self.root))
                 if child is not self._dev]
        while stack:
            path, node = stack.pop()
            out[path] = Stat(node.kind, node.mode, self._quiet_size(node), node.mtime, node.ino,
                             node.nlink, node.target)
            if node.kind == "d":
                stack.extend((f"{path}/{name}", child) for name, child in reversed(self._children(node)))
        return out

    def _children(self, directory: Inode) -> list:
        """(name, node) of a directory's entries in name order, leaving out what cannot be read."""
        try:
            names = list(_entries(directory)) if directory.host is None else \
                directory.host[0].listdir(directory.host[1])
        except (FsError, OSError):
            return []
        out = []
        for name in sorted(names):
            try:
                child = self._child(directory, name)
            except FsError:
                continue
            if child is not None:
                out.append((name, child))
        return out

    @staticmethod
    def _quiet_size(node: Inode) -> int:
        try:
            return node.size
        except (FsError, OSError):
            return 0

    # ------------------------------------------------------------ for snapshots (tools/snapshot.py)

    def snapshot_parts(self) -> tuple:
        """(root, the directories the filesystem starts with, /dev, the clock, the next inode
        number): what a snapshot walks and records. Read-only: a snapshot never changes them."""
        return self.root, frozenset(self._system), self._dev, self._clock, self._next_ino

    def restore_name(self, parent: Inode, name: str, node: Inode, first: bool = True, data: bytes = b""):
        """A snapshot's restore gives `node` the name `name` in `parent` (`first`: its first
        name; a regular file's `data` then with it), checked and charged as a name a script
        makes: NAME_MAX, depth, PATH_MAX, max_file_count, max_fs_bytes, max_file_bytes."""
        extra = 0
        if first and node.kind == "l":
            if not node.target or _nbytes(node.target) >= PATH_MAX:
                raise FsError(ENAMETOOLONG if node.target else ENOENT)
            extra = _nbytes(node.target)
        if first and data:
            if len(data) > self.limits.max_file_bytes:
                raise FsError(EFBIG)
            self._charge(len(data))
            node.data = bytearray(data)
        self._attach(parent, name, node, extra)
        if not first:
            node.nlink += 1

    def restore_counters(self, clock: float, next_ino: int):
        """After a restore: the clock and the next inode number as the snapshot had them."""
        self._clock = clock
        self._next_ino = next_ino
