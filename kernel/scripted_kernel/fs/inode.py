"""One file of a MemoryFs, whether it lives in memory or is a host mount's file."""
from __future__ import annotations

from typing import Optional


class Inode:
    """One file. `data` (regular file), `entries` (directory), `target` (symlink, or a device's
    name); `host` is (HostMount, relative path parts) for files of a host mount. A directory
    knows its `parent` and `name` (it has one name), so its depth and path are a walk up;
    `opened`: Writers open on a regular file, which keep its bytes after its last name goes."""
    __slots__ = ("kind", "mode", "mtime", "data", "entries", "target", "ino", "nlink", "host",
                 "parent", "name", "opened")

    def __init__(self, kind: str, mode: int, mtime: float, ino: int):
        self.kind = kind
        self.mode = mode
        self.mtime = mtime
        self.ino = ino
        self.nlink = 2 if kind == "d" else 1
        self.data: Optional[bytearray] = bytearray() if kind == "-" else None
        self.entries: Optional[dict[str, Inode]] = {} if kind == "d" else None
        self.target = ""
        # (HostMount, the path's parts below the mount): typed loosely, host.py imports this module
        self.host: Optional[tuple] = None
        self.parent: Optional[Inode] = None
        self.name = ""
        self.opened = 0

    @property
    def size(self) -> int:
        if self.kind == "-":
            if self.host:
                return self.host[0].size(self.host[1])
            assert self.data is not None          # a regular file in memory has its bytes
            return len(self.data)
        if self.kind == "l":
            return len(self.target.encode("utf-8", "surrogateescape"))
        return 4096 if self.kind == "d" else 0
