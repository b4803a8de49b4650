"""Pathname expansion (`*.txt`, `d/*/f`, `**` under globstar) over a FileSystem.

Patterns arrive escaped as the expander builds them (a backslash quotes the next character),
so quoted parts of a word never match as wildcards.
"""
from __future__ import annotations

from ..shell import patterns
from .base import FileSystem, FsError

_EXTGLOB_OPENERS = ("?(", "*(", "+(", "@(", "!(")


def is_pattern(text: str) -> bool:
    """Does `text` contain a wildcard that is not backslash-quoted?"""
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c in "*?[" or (c in "+@!" and text.startswith("(", i + 1)):
            if c != "[" or _closes(text, i):
                return True
        i += 1
    return False


def _closes(text: str, i: int) -> bool:
    """A `[` is a wildcard only when a `]` closes it (`[` alone is an ordinary character)."""
    j = i + 1
    if j < len(text) and text[j] in "!^":
        j += 1
    if j < len(text) and text[j] == "]":
        j += 1
    return "]" in text[j:]


def expand(fs: FileSystem, cwd: str, pattern: str, dotglob: bool = False,
           nocase: bool = False, globstar: bool = False, skipdots: bool = True) -> list[str]:
    """The paths matching `pattern`, sorted; [] when none does."""
    absolute = pattern.startswith("/")
    components = pattern.split("/")
    if absolute:
        components = components[1:]
        prefixes = ["/"]
    else:
        prefixes = [""]
    for index, component in enumerate(components):
        last = index == len(components) - 1
        if component == "":               # a trailing slash or `//`: keep it, directories only
            prefixes = [p + "/" if not p.endswith("/") else p for p in prefixes
                        if _is_dir(fs, cwd, p)] if last else prefixes
            continue
        matched: list[str] = []
        for prefix in prefixes:
            if globstar and component == "**":
                matched.extend(_descend(fs, cwd, prefix, dotglob, include_files=last))
            elif is_pattern(component):
                matched.extend(_matches(fs, cwd, prefix, component, dotglob, nocase, skipdots))
            else:
                matched.append(_join(prefix, patterns.unescape_glob(component)))
        if not last:
            matched = [m for m in matched if _is_dir(fs, cwd, m)]
        prefixes = matched
        if not prefixes:
            return []
    return sorted({p for p in prefixes if _exists(fs, cwd, p)})


def _join(prefix: str, name: str) -> str:
    if not prefix:
        return name
    return prefix + name if prefix.endswith("/") else prefix + "/" + name


def _fs_path(cwd: str, path: str) -> str:
    if path.startswith("/"):
        return path
    return cwd.rstrip("/") + "/" + path if path else cwd


def _list(fs: FileSystem, cwd: str, prefix: str) -> list[str]:
    try:
        return fs.listdir(_fs_path(cwd, prefix))
    except FsError:
        return []


def _is_dir(fs: FileSystem, cwd: str, path: str) -> bool:
    try:
        return fs.stat(_fs_path(cwd, path)).is_dir
    except FsError:
        return False


def _exists(fs: FileSystem, cwd: str, path: str) -> bool:
    return fs.exists(_fs_path(cwd, path), follow=False)


def _hidden_ok(component: str, dotglob: bool) -> bool:
    return dotglob or component.startswith(".") or component.startswith("\\.")


def _matches(fs, cwd, prefix, component, dotglob, nocase, skipdots) -> list[str]:
    rx = patterns.compile_glob(component, nocase)
    hidden = _hidden_ok(component, dotglob)
    names = _list(fs, cwd, prefix)
    if not skipdots and (component.startswith(".") or component.startswith("\\.")):
        names += [".", ".."]              # shopt -u globskipdots: `.*` matches . and ..
    return [_join(prefix, name) for name in names
            if (hidden or not name.startswith(".")) and rx.fullmatch(name)]


def _descend(fs, cwd, prefix, dotglob, include_files) -> list[str]:
    """`**`: the directory itself and everything below it (files too when it is the last
    component), not following symbolic links to directories."""
    if not prefix:
        out = [] if include_files else [prefix]
    else:                   # `d/**` lists d/ itself first, as a directory
        out = [prefix + "/" if include_files else prefix]
    stack = [prefix]
    while stack:
        here = stack.pop()
        for name in sorted(_list(fs, cwd, here)):
            if name.startswith(".") and not dotglob:
                continue
            path = _join(here, name)
            try:
                st = fs.stat(_fs_path(cwd, path), follow=False)
            except FsError:
                continue
            if st.is_dir:
                out.append(path)
                stack.append(path)
            elif include_files:
                out.append(path)
    return out
