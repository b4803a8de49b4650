"""Redirections at run time: the descriptors of a command in place while it runs (`> f`,
`2>&1`, `<&-`, `&> f`, `<>`), and put back after it. The compile stage (compile.py) makes
each redirection's closure; this is what those closures and the commands they wrap call."""
from __future__ import annotations

from ..base.errors import ErrexitSignal
from ..fs import FsError, access
from .expand import Disabled
from .runtime import InputStream, discard


class RedirectError(Exception):
    pass


def with_redirects(sh, redirects, body, *args) -> int:
    """body(*args) with the redirections in place. (Not a closure made at each call: the cells
    of its variables would be made at every call of the closure that makes it.)"""
    saved = (sh.out, sh.err, sh.stdin, sh.extra_fds)
    sh.extra_fds = dict(sh.extra_fds)
    try:
        try:
            for r in redirects:
                r(sh)
        except (RedirectError, Disabled) as e:
            sh.out, sh.err, sh.stdin, sh.extra_fds = saved
            sh.error(str(e))
            sh.status = 1
            if sh.errexit and not sh.errexit_suppressed:
                raise ErrexitSignal(1) from None
            return 1
        return body(*args)
    finally:
        sh.out, sh.err, sh.stdin, sh.extra_fds = saved


def get_fd(sh, n: int):
    if n == 1:
        return sh.out
    if n == 2:
        return sh.err
    if n == 0:
        return sh.stdin
    w = sh.extra_fds.get(n)
    if w is None:
        raise RedirectError(f"{n}: Bad file descriptor")
    return w


def set_fd(sh, n: int, writer):
    if n == 1:
        sh.out = writer if writer is not None else discard
    elif n == 2:
        sh.err = writer if writer is not None else discard
    elif n == 0:
        sh.stdin = writer if isinstance(writer, InputStream) else InputStream("")
    elif writer is None:
        sh.extra_fds.pop(n, None)
    else:
        sh.extra_fds[n] = writer


def redirect_both(sh, path: str, op: str):
    """`&> path`: standard output and error to one open file."""
    redirect_file(sh, path, 1, op)
    set_fd(sh, 2, sh.out)


def redirect_file(sh, path: str, fd: int, op: str):
    """Point `fd` at the file `path` for `op` (`<`, `<>`, `>`, `>|`, `>>`)."""
    if path == "":
        raise RedirectError(": No such file or directory")
    try:
        if op == "<>" and fd != 0:      # read-write on another descriptor: writes go to the file
            set_fd(sh, fd, access.writer(sh, path, append=True))
        elif op == "<" or op == "<>":
            if op == "<>" and not sh.fs.exists(sh.path(path)) and path not in access.WRITE_DEVICES:
                access.writer(sh, path)
            if fd == 0 and path in ("/dev/stdin", "/dev/fd/0"):
                return
            set_fd(sh, fd, InputStream(access.read_text(sh, path)))
        else:
            set_fd(sh, fd, access.writer(sh, path, append=op == ">>",
                                          exclusive=op == ">" and sh.noclobber))
    except FsError as e:
        raise RedirectError(f"{path}: {access.redirect_message(e)}") from None
