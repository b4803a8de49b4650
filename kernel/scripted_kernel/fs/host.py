"""A host directory shown read-only inside a MemoryFs.

Every access walks from a descriptor of the mount's root, one component at a time, with
O_NOFOLLOW: the kernel never follows a host symbolic link for us (links are shown as links and
resolved inside the virtual tree), so a link or a `..` cannot leave the directory, and swapping
a directory for a link while a script runs (a race) finds O_NOFOLLOW refusing it. Only
directories, regular files with one name (a second hard link could be a file from anywhere)
and symbolic links are visible; devices, sockets and fifos are refused.
"""
from __future__ import annotations

import os
import stat as st

from .base import EACCES, EFBIG, ENOENT, FsError
from .inode import Inode

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


class HostMount:
    def __init__(self, host_dir: str, max_read: int):
        if not os.path.isdir(host_dir):
            raise ValueError(f"{host_dir} is not a directory")
        self.root_fd = os.open(os.path.realpath(host_dir), _DIR_FLAGS)
        self.max_read = max_read

    def root_mode(self) -> int:
        return os.fstat(self.root_fd).st_mode & 0o7777

    def _open_dir(self, rel: tuple) -> int:
        """A new descriptor of the directory `rel` below the root; the caller closes it."""
        fd = os.dup(self.root_fd)
        try:
            for name in rel:
                nxt = os.open(name, _DIR_FLAGS, dir_fd=fd)
                os.close(fd)
                fd = nxt
        except OSError as e:
            os.close(fd)
            raise _error(e) from None
        return fd

    def lookup(self, rel: tuple, name: str):
        fd = self._open_dir(rel)
        try:
            info = os.stat(name, dir_fd=fd, follow_symlinks=False)
            target = os.readlink(name, dir_fd=fd) if st.S_ISLNK(info.st_mode) else ""
        except FileNotFoundError:
            return None
        except OSError as e:
            raise _error(e) from None
        finally:
            os.close(fd)
        if st.S_ISDIR(info.st_mode):
            kind = "d"
        elif st.S_ISREG(info.st_mode):
            kind = "-"
        elif st.S_ISLNK(info.st_mode):
            kind = "l"
        else:
            raise FsError(EACCES)
        node = Inode(kind, info.st_mode & 0o7777, info.st_mtime, info.st_ino)
        node.nlink = info.st_nlink
        node.target = target
        if kind != "l":
            node.host = (self, rel + (name,))
            node.entries = None
            node.data = None
        return node

    def listdir(self, rel: tuple) -> list[str]:
        fd = self._open_dir(rel)
        try:
            return os.listdir(fd)
        finally:
            os.close(fd)

    def _open_file(self, rel: tuple) -> int:
        dfd = self._open_dir(rel[:-1])
        try:
            fd = os.open(rel[-1], _FILE_FLAGS, dir_fd=dfd)
        except OSError as e:
            raise _error(e) from None
        finally:
            os.close(dfd)
        info = os.fstat(fd)
        if not st.S_ISREG(info.st_mode) or info.st_nlink != 1:
            os.close(fd)
            raise FsError(EACCES)
        return fd

    def size(self, rel: tuple) -> int:
        fd = self._open_file(rel)
        try:
            return os.fstat(fd).st_size
        finally:
            os.close(fd)

    def read(self, rel: tuple) -> bytes:
        fd = self._open_file(rel)
        try:
            chunks: list[bytes] = []
            total = 0
            while True:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    return b"".join(chunks)
                total += len(chunk)
                if total > self.max_read:
                    raise FsError(EFBIG)
                chunks.append(chunk)
        finally:
            os.close(fd)


def _error(e: OSError) -> FsError:
    """The host's error as the script sees it: its wording, never the host path."""
    if e.errno is not None and e.errno == getattr(os, "ELOOP", -1):
        return FsError(EACCES)      # a symbolic link where a directory was (O_NOFOLLOW)
    return FsError(os.strerror(e.errno) if e.errno else ENOENT)
