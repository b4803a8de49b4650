"""The one guard between an archive's member names and the filesystem, shared by tar and unzip.

Member names are data from anywhere: `../../etc/x`, `/etc/x`, or a path through a symbolic
link that an earlier member (or an earlier run) planted. Names are first cleaned the way each
tool cleans them (GNU tar strips the unsafe prefix and refuses `..`; unzip drops `..`
components and the leading `/`), then `Destination` creates every member strictly below the
target directory: each directory on the way is resolved (symbolic links included) and must lie
inside it, and the member itself is replaced, never written through if it is a link.
"""
from __future__ import annotations

from ...fs import FsError
from ...fs.base import EEXIST, ENOTDIR

OUTSIDE = "Path leads outside the extraction directory"


def unsafe_prefix(name: str) -> str:
    """What GNU tar strips from a member name (safer_name_suffix): the leading slashes and
    everything up to the last `..` component. "" when the name is safe as it is."""
    cut = len(name) - len(name.lstrip("/"))
    pos = cut
    for part in name[cut:].split("/"):
        end = pos + len(part)
        if part == "..":
            cut = min(end + 1, len(name))
        pos = end + 1
    return name[:cut]


def has_dotdot(name: str) -> bool:
    return ".." in name.split("/")


def drop_dotdot(name: str) -> tuple[str, bool, bool]:
    """unzip's cleaning: (name without `..` components and leading `/`, whether `..` was
    dropped, whether a leading `/` was)."""
    absolute = name.startswith("/")
    parts = [p for p in name.split("/") if p != ".."]
    dotdot = len(parts) != len(name.split("/"))
    cleaned = "/".join(parts).lstrip("/")
    if name.endswith("/") and cleaned and not cleaned.endswith("/"):
        cleaned += "/"
    return cleaned, dotdot, absolute


class Destination:
    """Creates members below `base` (an absolute path of an existing directory)."""

    def __init__(self, ctx, base: str):
        self.ctx, self.fs = ctx, ctx.fs
        self.base = self.fs.realpath(base)
        self.inside = self.base.rstrip("/") + "/"

    def _contains(self, real: str) -> bool:
        return real == self.base or real.startswith(self.inside)

    def path(self, rel: str) -> str:
        """The absolute path of the member `rel` (already cleaned), its parent directories
        made, each checked to lie inside the base. Raises FsError."""
        parts = [p for p in rel.split("/") if p not in ("", ".")]
        here = self.base
        for part in parts[:-1]:
            here = here.rstrip("/") + "/" + part
            try:
                st = self.fs.stat(here, follow=False)
            except FsError:
                self.fs.mkdir(here, 0o777 & ~self.ctx.umask)
                continue
            if st.is_link:
                real = self.fs.realpath(here, strict=False)
                if not self._contains(real):
                    raise FsError(OUTSIDE)
                st = self.fs.stat(real)
            if not st.is_dir:
                raise FsError(ENOTDIR)
        return here.rstrip("/") + "/" + parts[-1] if parts else self.base

    def clear(self, path: str, keep_old: bool = False):
        """Make room for a new non-directory at `path`: an existing file or link is removed
        (so a link is replaced, not written through); `keep_old` refuses instead."""
        try:
            st = self.fs.stat(path, follow=False)
        except FsError:
            return
        if keep_old:
            raise FsError(EEXIST)
        if st.is_dir:
            self.fs.rmdir(path)
        else:
            self.fs.unlink(path)

    def directory(self, path: str) -> bool:
        """Make the directory `path` unless one is there; False when a link stands there
        (its attributes are then left alone)."""
        try:
            st = self.fs.stat(path, follow=False)
        except FsError:
            self.fs.mkdir(path, 0o777 & ~self.ctx.umask)
            return True
        if st.is_dir:
            return True
        if st.is_link:
            real = self.fs.realpath(path, strict=False)
            if self._contains(real) and self.fs.exists(real) and self.fs.stat(real).is_dir:
                return False
            raise FsError(OUTSIDE)
        self.fs.unlink(path)
        self.fs.mkdir(path, 0o777 & ~self.ctx.umask)
        return True

    def link_source(self, rel: str) -> str:
        """The existing member a hard link points at, which must lie inside the base."""
        path = self.base.rstrip("/") + "/" + rel.lstrip("/")
        real = self.fs.realpath(path)
        if not self._contains(real):
            raise FsError(OUTSIDE)
        return path

    def write(self, path: str, chunks, mode: int):
        """A regular file from an iterable of byte chunks (the fs counts each against its
        size limits: a bomb stops with File too large or No space left on device)."""
        out = self.fs.open_write(path, mode=mode)
        for chunk in chunks:
            out.write_bytes(chunk)
