"""Logic mode: no filesystem. Every operation fails with the one message logic mode gives."""
from __future__ import annotations

from .base import FileSystem, FsDisabled

DISABLED = "file access is disabled in logic mode"


class NoFs(FileSystem):
    """The default of `ScriptedTool`: files, directories and paths do not exist for a script.
    Only the devices the shell itself provides (/dev/null, /dev/stdin, /dev/stdout,
    /dev/stderr) are usable, and those never reach a filesystem."""

    enabled = False

    def _refuse(self, *args, **kwargs):
        raise FsDisabled(DISABLED)

    stat = read_bytes = open_write = listdir = mkdir = unlink = rmdir = rename = _refuse
    symlink = link = readlink = chmod = utime = realpath = _refuse

    def exists(self, path: str, follow: bool = True) -> bool:
        return False

    def access(self, path: str, want: str) -> bool:
        return False


NO_FS = NoFs()
