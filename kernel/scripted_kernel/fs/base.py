"""The filesystem interface every file access in the engine goes through, and its errors.

Paths given to a `FileSystem` are absolute; the shell makes them so against its working
directory (`absolute`). Errors are `FsError`s carrying the C library's wording (strerror), so
that a command prints `cmd: PATH: No such file or directory` exactly as GNU's would.
"""
from __future__ import annotations

import posixpath
from dataclasses import dataclass

ENOENT = "No such file or directory"
ENOTDIR = "Not a directory"
EISDIR = "Is a directory"
EACCES = "Permission denied"
EEXIST = "File exists"
ENOTEMPTY = "Directory not empty"
ELOOP = "Too many levels of symbolic links"
ENOSPC = "No space left on device"
ENAMETOOLONG = "File name too long"
EROFS = "Read-only file system"
EINVAL = "Invalid argument"
EXDEV = "Invalid cross-device link"
EFBIG = "File too large"
EPERM = "Operation not permitted"


class FsError(Exception):
    """A failed file operation. `strerror` is the C library's message for it."""

    def __init__(self, strerror: str, path: str = ""):
        super().__init__(strerror)
        self.strerror = strerror
        self.path = path

    def __str__(self):
        return self.strerror


class FsDisabled(FsError):
    """Logic mode: the operation needs a filesystem and there is none."""


@dataclass(slots=True)
class Stat:
    """What stat says of a file."""
    kind: str          # "-" regular file, "d" directory, "l" symbolic link, "c" character device
    mode: int          # permission bits (0o7777)
    size: int
    mtime: float
    ino: int
    nlink: int = 1
    target: str = ""   # a symbolic link's target

    @property
    def is_dir(self) -> bool:
        return self.kind == "d"

    @property
    def is_file(self) -> bool:
        return self.kind == "-"

    @property
    def is_link(self) -> bool:
        return self.kind == "l"


def absolute(cwd: str, path: str) -> str:
    """`path` against the working directory, without resolving `.` and `..` (the filesystem
    resolves them, following symbolic links as the kernel does)."""
    if path.startswith("/"):
        return path
    if not path:
        return cwd
    return cwd.rstrip("/") + "/" + path


def lexical(path: str) -> str:
    """A path normalised by text alone (`a/b/../c` is `a/c`): how `cd` without -P keeps $PWD."""
    p = posixpath.normpath(path)
    return "/" + p.lstrip("/") if p.startswith("/") else p


class FileSystem:
    """What the engine needs from a filesystem. `enabled` is False only for logic mode."""

    enabled = True
    home = "/home/user"

    def stat(self, path: str, follow: bool = True) -> Stat:
        raise NotImplementedError

    def exists(self, path: str, follow: bool = True) -> bool:
        try:
            self.stat(path, follow)
            return True
        except FsError:
            return False

    def read_bytes(self, path: str) -> bytes:
        raise NotImplementedError

    def read_text(self, path: str) -> str:
        return self.read_bytes(path).decode("utf-8", "surrogateescape")

    def open_write(self, path: str, append: bool = False, exclusive: bool = False,
                   mode: int = 0o644):
        """A `Writer` for `path`, created (with `mode`) or truncated, or appended to.
        `exclusive`: fail with File exists if it is an existing regular file (noclobber)."""
        raise NotImplementedError

    def write_bytes(self, path: str, data: bytes, append: bool = False, mode: int = 0o644):
        self.open_write(path, append, mode=mode).write_bytes(data)

    def listdir(self, path: str) -> list[str]:
        raise NotImplementedError

    def mkdir(self, path: str, mode: int = 0o755):
        raise NotImplementedError

    def unlink(self, path: str):
        raise NotImplementedError

    def rmdir(self, path: str):
        raise NotImplementedError

    def rename(self, src: str, dst: str):
        raise NotImplementedError

    def symlink(self, target: str, path: str):
        raise NotImplementedError

    def link(self, src: str, dst: str):
        raise NotImplementedError

    def readlink(self, path: str) -> str:
        raise NotImplementedError

    def chmod(self, path: str, mode: int):
        raise NotImplementedError

    def utime(self, path: str, mtime: float, follow: bool = True):
        raise NotImplementedError

    def realpath(self, path: str, strict: bool = True) -> str:
        raise NotImplementedError

    def access(self, path: str, want: str) -> bool:
        """`want` one of "r", "w", "x": what `test -r/-w/-x` asks."""
        raise NotImplementedError
