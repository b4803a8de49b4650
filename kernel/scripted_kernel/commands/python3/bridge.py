"""What a Python program reaches outside its worker: Monty hands every file operation, the
environment and sleep to this AbstractOS, which serves them from the command's context, so the
script's filesystem and its limits (MemoryFs, read-only mounts, logic mode's refusal), its
devices (/dev/stdin, /dev/stdout, /dev/null, ...) and its exported variables are what Python sees.

A failed file operation becomes the OSError CPython would raise (FileNotFoundError with errno 2,
...), naming the path as the program gave it. Anything else raised here (the run's deadline or
cancel seen during a sleep, the output limit, a fault of ours) stops the program: `stop` kills
its worker and keeps the error for the command to raise once the worker is gone."""
from __future__ import annotations

import posixpath
import time
from pathlib import PurePosixPath
from typing import Any, Callable, Optional

import pydantic_monty
from pydantic_monty import MontyFileHandle, StatResult
from pydantic_monty.os_access import path_from_arg

from ...fs import FsError, access, base
from .oserror import os_error

_KINDS = {"-": 0o100000, "d": 0o040000, "l": 0o120000, "c": 0o020000}
_UID = 1000                           # the sandbox's user, as `ls -n` shows it
_SLEEP_SLICE = 0.05                   # seconds between checks of the deadline while sleeping
# What a program may raise through this bridge: Python's own errors for a file or a value. The
# rest stops the program.
_PROGRAM_ERRORS = (OSError, UnicodeError, MemoryError, NotImplementedError)


class Bridge(pydantic_monty.AbstractOS):
    """The command context (`ctx`) as Monty's operating system. `stop(error)` ends the program."""

    max_sleep = None                  # a sleep ends at the run's deadline instead

    def __init__(self, ctx, stop: Callable[[BaseException], None]):
        self.ctx = ctx
        self.stop = stop

    def dispatch(self, function_name, args: tuple, kwargs: Optional[dict] = None, *,
                 is_async: bool = False) -> Any:
        try:
            return super().dispatch(function_name, args, kwargs, is_async=is_async)
        except FsError as e:
            raise os_error(e, _path_of(args)) from None
        except _PROGRAM_ERRORS:
            raise
        except BaseException as e:
            self.stop(e)
            raise RuntimeError("the program was stopped") from None

    def _name(self, path) -> str:
        return self.ctx.path(str(path_from_arg(path)))

    # ------------------------------------------------------------ reading

    def path_open(self, path, mode: str) -> MontyFileHandle:
        name = self._name(path)
        if mode.startswith("r"):
            self._check_readable(name)
        else:                         # w truncates or creates, a creates
            access.writer(self.ctx, name, append=mode.startswith("a"))
        return MontyFileHandle(str(path), mode)

    def _check_readable(self, name: str):
        if access.is_descriptor(name) or name in ("/dev/null", *access.ENDLESS_DEVICES):
            return
        if self.ctx.fs.stat(name).is_dir:
            raise FsError(base.EISDIR)
        if not self.ctx.fs.access(name, "r"):
            raise FsError(base.EACCES)

    def path_read_bytes(self, path) -> bytes:
        return access.read_text(self.ctx, self._name(path)).encode("utf-8", "surrogateescape")

    def path_read_text(self, path) -> str:
        text = access.read_text(self.ctx, self._name(path))
        if not text.isascii():        # bytes that are not UTF-8: CPython's UnicodeDecodeError
            text = text.encode("utf-8", "surrogateescape").decode("utf-8")
        return text

    # ------------------------------------------------------------ writing

    def _write(self, path, text: str, append: bool) -> None:
        access.writer(self.ctx, self._name(path), append=append)(text)

    def path_write_text(self, path, data: str) -> int:
        self._write(path, data, append=False)
        return len(data)

    def path_append_text(self, path, data: str) -> int:
        self._write(path, data, append=True)
        return len(data)

    def path_write_bytes(self, path, data: bytes) -> int:
        self._write(path, data.decode("utf-8", "surrogateescape"), append=False)
        return len(data)

    def path_append_bytes(self, path, data: bytes) -> int:
        self._write(path, data.decode("utf-8", "surrogateescape"), append=True)
        return len(data)

    # ------------------------------------------------------------ the tree

    def path_exists(self, path) -> bool:
        return self.ctx.fs.exists(self._name(path))

    def _kind_is(self, path, kind: str, follow: bool = True) -> bool:
        try:
            return self.ctx.fs.stat(self._name(path), follow).kind == kind
        except FsError:
            return False

    def path_is_file(self, path) -> bool:
        return self._kind_is(path, "-")

    def path_is_dir(self, path) -> bool:
        return self._kind_is(path, "d")

    def path_is_symlink(self, path) -> bool:
        return self._kind_is(path, "l", follow=False)

    def path_stat(self, path) -> StatResult:
        st = self.ctx.fs.stat(self._name(path))
        mode = _KINDS.get(st.kind, 0) | st.mode
        return StatResult(mode, st.ino, 0, st.nlink, _UID, _UID, st.size, st.mtime, st.mtime, st.mtime)

    def path_iterdir(self, path) -> list:
        directory = PurePosixPath(str(path))
        return [directory / entry for entry in self.ctx.fs.listdir(self._name(path))]

    def path_mkdir(self, path, parents: bool, exist_ok: bool) -> None:
        name = self._name(path).rstrip("/") or "/"
        if parents and name != "/":
            parent = posixpath.dirname(name)
            if not self.ctx.fs.exists(parent):
                self.path_mkdir(parent, parents=True, exist_ok=True)
        try:
            self.ctx.fs.mkdir(name, 0o777 & ~self.ctx.umask)
        except FsError as e:
            if not (exist_ok and e.strerror == base.EEXIST and self._kind_is(name, "d")):
                raise

    def path_unlink(self, path) -> None:
        self.ctx.fs.unlink(self._name(path))

    def path_rmdir(self, path) -> None:
        self.ctx.fs.rmdir(self._name(path))

    def path_rename(self, path, target) -> None:
        self.ctx.fs.rename(self._name(path), self._name(target))

    def path_resolve(self, path) -> str:
        name = self._name(path)
        try:
            return self.ctx.fs.realpath(name, strict=False)
        except FsError:               # a path resolves by its text where there is no tree to follow
            return posixpath.normpath(name)

    def path_absolute(self, path) -> str:
        return self._name(path)

    # ------------------------------------------------------------ environment and time

    def getenv(self, key: str, default: Optional[str] = None) -> Optional[str]:
        return self.ctx.getenv(key, default)

    def get_environ(self) -> dict:
        return self.ctx.env()

    def sleep(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while True:
            self.ctx.budget.check_clock()
            left = end - time.monotonic()
            if left <= 0:
                return
            time.sleep(min(left, _SLEEP_SLICE))


def _path_of(args: tuple) -> str:
    """The path an operation was given, as the program named it (for its error message)."""
    return str(path_from_arg(args[0])) if args else ""
