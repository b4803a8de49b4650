"""One filesystem layer for the engine: `NoFs` (logic mode), `MemoryFs` (an in-memory tree,
with opt-in read-only host mounts). See base.FileSystem for the interface."""
from .base import FileSystem, FsDisabled, FsError, Stat, absolute, lexical
from .memory import MemoryFs
from .nofs import NO_FS, NoFs

__all__ = ["FileSystem", "FsDisabled", "FsError", "MemoryFs", "NO_FS", "NoFs", "Stat",
           "absolute", "lexical"]
