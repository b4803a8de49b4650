"""The one place that decides how a script reaches a file: the devices the shell provides
itself (/dev/null, /dev/stdin, /dev/stdout, /dev/stderr, /dev/fd/N), then the shell's
filesystem (`sh.fs`), and in logic mode (NoFs) the one refusal for each kind of access.

Shell redirections, builtins and text commands all come here; none of them tests paths or
writes refusal messages of its own.
"""
from __future__ import annotations

from .base import FsDisabled, FsError
from .nofs import DISABLED

REDIRECT_DISABLED = "file redirection is disabled in logic mode (only /dev/null, /dev/stdout and /dev/stderr)"
DIRECTORIES_DISABLED = "changing directories is disabled in logic mode (there is no file system)"
SCRIPTS_DISABLED = "reading script files is disabled in logic mode"
PROGRAMS_DISABLED = "running programs by path is disabled in logic mode"
WRITE_DEVICES = ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/fd/1", "/dev/fd/2")


def _fd_number(path: str):
    if path.startswith("/dev/fd/") and path[8:].isascii() and path[8:].isdigit():
        return int(path[8:])
    return {"/dev/stdin": 0, "/dev/stdout": 1, "/dev/stderr": 2}.get(path)


def is_descriptor(name: str) -> bool:
    """/dev/stdin, /dev/stdout, /dev/stderr or /dev/fd/N: the shell's own, no file."""
    return _fd_number(name) is not None


def read_text(sh, name: str) -> str:
    """The contents of the file `name` (a text command's operand, `source`, `< name`);
    `-` is not special here. Raises FsError."""
    fd = _fd_number(name)
    if fd == 0:
        return sh.stdin.read_all()
    if fd is not None:
        stream = sh.extra_fds.get(fd)
        if stream is not None and hasattr(stream, "read_all"):
            return stream.read_all()
        raise FsError("No such device or address" if fd in (1, 2) else "Bad file descriptor")
    if name == "/dev/null":
        return ""
    if name in ENDLESS_DEVICES:
        return endless_device(sh, name)
    return sh.fs.read_text(sh.path(name))


# Devices that never end. Nothing here streams (a pipeline's stages run one after another), so
# one read gives DEVICE_CHUNK bytes: enough for what scripts take from them (`head -c 16
# /dev/urandom`, `tr -dc a-z < /dev/urandom | head -c 8`, `head -c 1M /dev/zero`), bounded where
# bash would read forever.
ENDLESS_DEVICES = ("/dev/zero", "/dev/urandom", "/dev/random")
DEVICE_CHUNK = 1 << 20


def endless_device(sh, name: str) -> str:
    if name == "/dev/zero":
        return "\0" * DEVICE_CHUNK
    generator = getattr(sh, "random", None)         # a command's context: $RANDOM's generator
    if generator is not None:
        data = generator.randbytes(DEVICE_CHUNK)
    else:
        import os
        data = os.urandom(DEVICE_CHUNK)
    return data.decode("utf-8", "surrogateescape")


def writer(sh, name: str, append: bool = False, exclusive: bool = False):
    """A writer (callable taking text) for the file `name`, the devices included. Raises
    FsError."""
    if name == "/dev/null":
        return _discard
    fd = _fd_number(name)
    if fd is not None:
        if fd == 1:
            return sh.out
        if fd == 2:
            return sh.err
        target = sh.extra_fds.get(fd)
        if callable(target):
            return target
        raise FsError("Bad file descriptor")
    return sh.fs.open_write(sh.path(name), append, exclusive, mode=0o666 & ~sh.umask)


def _discard(_text: str):
    pass


def redirect_message(e: FsError) -> str:
    """A redirection's failure, worded for logic mode when there is no filesystem."""
    return REDIRECT_DISABLED if isinstance(e, FsDisabled) else e.strerror


def read_operands(sh, operands: list, report):
    """(name, text) for each operand (`-` is standard input). A file that cannot be read is
    given to `report(name, reason)` and yields (name, None)."""
    for name in operands:
        if name == "-":
            yield name, sh.stdin.read_all()
            continue
        try:
            yield name, read_text(sh, name)
        except FsError as e:
            report(name, e.strerror)
            yield name, None


__all__ = ["DISABLED", "REDIRECT_DISABLED", "read_text", "writer", "read_operands"]
