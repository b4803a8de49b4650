"""A failed file operation as the OSError CPython raises for it: the errno and the exception
class of the C library's message (FileNotFoundError for ENOENT, ...); logic mode's refusal is a
PermissionError."""
from __future__ import annotations

import errno

from ...fs import FsDisabled, FsError, base

_ERRORS: dict[str, tuple[int, type]] = {
    base.ENOENT: (errno.ENOENT, FileNotFoundError),
    base.ENOTDIR: (errno.ENOTDIR, NotADirectoryError),
    base.EISDIR: (errno.EISDIR, IsADirectoryError),
    base.EEXIST: (errno.EEXIST, FileExistsError),
    base.EACCES: (errno.EACCES, PermissionError),
    base.EPERM: (errno.EPERM, PermissionError),
    base.ENOTEMPTY: (errno.ENOTEMPTY, OSError),
    base.ELOOP: (errno.ELOOP, OSError),
    base.ENOSPC: (errno.ENOSPC, OSError),
    base.ENAMETOOLONG: (errno.ENAMETOOLONG, OSError),
    base.EROFS: (errno.EROFS, OSError),
    base.EINVAL: (errno.EINVAL, OSError),
    base.EXDEV: (errno.EXDEV, OSError),
    base.EFBIG: (errno.EFBIG, OSError),
}


def os_error(e: FsError, path: str) -> OSError:
    """The OSError CPython raises for the failure `e` on `path`."""
    if isinstance(e, FsDisabled):
        return PermissionError(errno.EACCES, e.strerror, path)
    number, kind = _ERRORS.get(e.strerror, (errno.EIO, OSError))
    return kind(number, e.strerror, path)
