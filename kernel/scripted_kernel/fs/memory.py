"""An in-memory filesystem: directories, regular files (bytes), symbolic links, hard links,
mode bits and mtimes, a few devices, bounded by size limits; plus read-only host mounts.

The script runs as the owner of every file, an ordinary user (not root): mode bits are
enforced as the kernel would for the owner (`chmod 000 f; cat f` is Permission denied).
"""
from __future__ import annotations

import time
from typing import Optional

from ..shell.limits import ExecutionLimits
from .base import (EACCES, EEXIST, EFBIG, EINVAL, EISDIR, ELOOP, ENAMETOOLONG, ENOENT, ENOSPC,
                   ENOTDIR, ENOTEMPTY, EPERM, EROFS, FileSystem, FsError, Stat)

MAX_SYMLINKS = 40          # the kernel's limit on links followed while resolving one path
DEVICES = ("null", "zero", "stdin", "stdout", "stderr", "tty")


class Inode:
    """One file. `data` (regular file), `entries` (directory), `target` (symlink, or a device's
    name); `host` is (HostMount, relative path parts) for files of a host mount."""
    __slots__ = ("kind", "mode", "mtime", "data", "entries", "target", "ino", "nlink", "host")

    def __init__(self, kind: str, mode: int, mtime: float, ino: int):
        self.kind = kind
        self.mode = mode
        self.mtime = mtime
        self.ino = ino
        self.nlink = 2 if kind == "d" else 1
        self.data = bytearray() if kind == "-" else None
        self.entries: Optional[dict] = {} if kind == "d" else None
        self.target = ""
        self.host = None

    @property
    def size(self) -> int:
        if self.kind == "-":
            return self.host[0].size(self.host[1]) if self.host else len(self.data)
        if self.kind == "l":
            return len(self.target.encode("utf-8", "surrogateescape"))
        return 4096 if self.kind == "d" else 0


class Writer:
    """An open file for writing: a callable taking text, as the shell's file descriptors are."""
    __slots__ = ("fs", "node")

    def __init__(self, fs: "MemoryFs", node: Optional[Inode]):
        self.fs = fs
        self.node = node          # None: a sink (/dev/null)

    def __call__(self, text: str):
        if text and self.node is not None:
            self.fs._append(self.node, text.encode("utf-8", "surrogateescape"))

    def write_bytes(self, data: bytes):
        if data and self.node is not None:
            self.fs._append(self.node, data)


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
        dev = self._mkdirs("/dev", 0o755)
        for name in DEVICES:
            node = self._new("c", 0o666)
            node.target = name
            dev.entries[name] = node
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
        from .host import HostMount
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
        now = time.time()
        self._clock = now if now > self._clock else self._clock + 1e-6
        return self._clock

    def _mkdirs(self, path: str, mode: int) -> Inode:
        node = self.root
        for name in (p for p in path.split("/") if p):
            child = node.entries.get(name)
            if child is None:
                self._count_new()
                child = self._new("d", mode)
                node.entries[name] = child
                node.nlink += 1
            node = child
        return node

    # ------------------------------------------------------------ resolving paths

    def _walk(self, path: str, follow_last: bool = True):
        """Resolve `path`: (parent directory, last name, node or None if it does not exist).
        The parent is None when the last component is `.` or `..` or the path is `/`.
        Raises ENOENT/ENOTDIR/EACCES/ELOOP on the way, as the kernel would."""
        if not path:
            raise FsError(ENOENT)
        parts = [p for p in path.split("/") if p]
        if len(parts) > self.limits.max_path_depth:
            raise FsError(ENAMETOOLONG)
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
                if last:
                    return cur, name, None
                raise FsError(ENOENT)
            if node.kind == "l" and (not last or follow_last):
                links += 1
                if links > MAX_SYMLINKS:
                    raise FsError(ELOOP)
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
            return host.lookup(rel, name)
        return directory.entries.get(name)

    def _existing(self, path: str, follow: bool = True) -> Inode:
        _, _, node = self._walk(path, follow)
        if node is None:
            raise FsError(ENOENT)
        return node

    def _entries(self, directory: Inode) -> dict:
        if directory.host is not None:
            raise FsError(EROFS)
        return directory.entries

    def _writable_dir(self, directory: Inode):
        if directory.host is not None:
            raise FsError(EROFS)
        if directory.mode & 0o300 != 0o300:
            raise FsError(EACCES)

    def _count_new(self):
        if self.file_count >= self.limits.max_file_count:
            raise FsError(ENOSPC)
        self.file_count += 1

    def _append(self, node: Inode, data: bytes):
        if node.kind == "c":
            return
        if node.host is not None:
            raise FsError(EROFS)
        if len(node.data) + len(data) > self.limits.max_file_bytes:
            raise FsError(EFBIG)
        if self.used_bytes + len(data) > self.limits.max_fs_bytes:
            raise FsError(ENOSPC)
        self.used_bytes += len(data)
        node.data += data
        node.mtime = self._tick()

    def _drop(self, node: Inode):
        """One name of `node` is gone; its bytes are freed with its last name."""
        node.nlink -= 1
        if node.nlink <= 0 or node.kind == "d":
            self.file_count -= 1
            if node.kind == "-" and node.host is None:
                self.used_bytes -= len(node.data)

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
        return bytes(node.data)

    def open_write(self, path: str, append: bool = False, exclusive: bool = False,
                   mode: int = 0o644) -> Writer:
        parent, name, node = self._walk(path)
        if node is None:
            if path.endswith("/"):
                raise FsError(EISDIR)
            self._writable_dir(parent)
            self._count_new()
            node = self._new("-", mode)
            parent.entries[name] = node
            parent.mtime = node.mtime
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
            self.used_bytes -= len(node.data)
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
        return list(node.entries)

    def mkdir(self, path: str, mode: int = 0o755):
        parent, name, node = self._walk(path.rstrip("/") or "/", follow_last=False)
        if node is not None:
            raise FsError(EEXIST)
        self._writable_dir(parent)
        if len([p for p in path.split("/") if p]) >= self.limits.max_path_depth:
            raise FsError(ENAMETOOLONG)
        self._count_new()
        child = self._new("d", mode)
        parent.entries[name] = child
        parent.nlink += 1
        parent.mtime = child.mtime

    def _removable(self, path: str):
        parent, name, node = self._walk(path.rstrip("/") or "/", follow_last=False)
        if node is None:
            raise FsError(ENOENT)
        if parent is None:
            raise FsError(EINVAL if name == "." else "Device or resource busy")
        self._writable_dir(parent)
        return parent, name, node

    def unlink(self, path: str):
        parent, name, node = self._removable(path)
        if node.kind == "d":
            raise FsError(EISDIR)
        del parent.entries[name]
        parent.mtime = self._tick()
        self._drop(node)

    def rmdir(self, path: str):
        parent, name, node = self._removable(path)
        if node.kind != "d":
            raise FsError(ENOTDIR)
        if node.host is not None or node.entries:
            raise FsError(ENOTEMPTY if node.entries else "Device or resource busy")
        del parent.entries[name]
        parent.nlink -= 1
        parent.mtime = self._tick()
        self._drop(node)

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
            if dnode.kind == "d":
                if snode.kind != "d":
                    raise FsError(EISDIR)
                if dnode.entries:
                    raise FsError(ENOTEMPTY)
                dparent.nlink -= 1
            elif snode.kind == "d":
                raise FsError(ENOTDIR)
            self._drop(dnode)
        del sparent.entries[sname]
        if snode.kind == "d":
            sparent.nlink -= 1
            dparent.nlink += 1
        dparent.entries[dname] = snode
        sparent.mtime = dparent.mtime = self._tick()

    def _inside(self, directory: Inode, ancestor: Inode) -> bool:
        """Is `directory` `ancestor` or below it? (a directory cannot move into itself)"""
        if directory is ancestor:
            return True
        return any(child.kind == "d" and self._inside(directory, child)
                   for child in (ancestor.entries or {}).values())

    def symlink(self, target: str, path: str):
        parent, name, node = self._walk(path, follow_last=False)
        if node is not None or parent is None:
            raise FsError(EEXIST)
        self._writable_dir(parent)
        self._count_new()
        link = self._new("l", 0o777)
        link.target = target
        parent.entries[name] = link
        parent.mtime = link.mtime

    def link(self, src: str, dst: str):
        node = self._existing(src, follow=False)
        if node.kind == "d":
            raise FsError(EPERM)
        if node.host is not None:
            raise FsError(EROFS)
        parent, name, existing = self._walk(dst, follow_last=False)
        if existing is not None or parent is None:
            raise FsError(EEXIST)
        self._writable_dir(parent)
        parent.entries[name] = node
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
        node.mode = mode & 0o7777

    def utime(self, path: str, mtime: float, follow: bool = True):
        node = self._existing(path, follow)
        if node.host is not None:
            raise FsError(EROFS)
        node.mtime = mtime

    def realpath(self, path: str, strict: bool = True) -> str:
        """The canonical path (symbolic links, `.` and `..` resolved). `strict`: every part
        must exist; otherwise only the parent of the last part must."""
        resolved: list[str] = []
        parts = [p for p in path.split("/") if p]
        parts.reverse()
        links = 0
        while parts:
            name = parts.pop()
            if name == ".":
                continue
            if name == "..":
                if resolved:
                    resolved.pop()
                continue
            here = "/" + "/".join(resolved + [name])
            _, _, node = self._walk(here, follow_last=False)
            if node is None:
                if strict or parts:
                    raise FsError(ENOENT)
                resolved.append(name)
                continue
            if node.kind == "l":
                links += 1
                if links > MAX_SYMLINKS:
                    raise FsError(ELOOP)
                if node.target.startswith("/"):
                    resolved = []
                parts.extend(reversed([p for p in node.target.split("/") if p]))
                continue
            if parts and node.kind != "d":
                raise FsError(ENOTDIR)
            resolved.append(name)
        return "/" + "/".join(resolved)

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
        """{absolute path: Stat} of every file below `/` except /dev, in path order."""
        out = {}

        def visit(prefix: str, node: Inode):
            for name in sorted(self.listdir(prefix or "/")):
                path = f"{prefix}/{name}"
                if path == "/dev":
                    continue
                st = self.stat(path, follow=False)
                out[path] = st
                if st.kind == "d":
                    visit(path, self._existing(path))
        visit("", self.root)
        return out
