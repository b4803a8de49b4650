"""Pathname expansion (`*.txt`, `d/*/f`, `**` under globstar) over a FileSystem.

Patterns arrive escaped as the expander builds them (a backslash quotes the next character),
so quoted parts of a word never match as wildcards.
"""
from __future__ import annotations

from ..base import patterns
from ..base.errors import LimitExceeded
from ..base.limits import ExecutionLimits, active_budget, check_stop
from ..fs.base import FileSystem, FsError

_CHECK_EVERY = 256           # entries read or paths looked at between two looks at the clock

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
    """The paths matching `pattern`, sorted; [] when none does. Under the execution's clock
    and `max_glob_matches` (paths held after any one component): a pattern such as
    `*/../*/../*/../*` multiplies them at every step."""
    walk = _Walk(fs, cwd, dotglob, nocase, skipdots)
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
                        if walk.is_dir(p)] if last else prefixes
            continue
        matched: list[str] = []
        for prefix in prefixes:
            if globstar and component == "**":
                matched.extend(walk.descend(prefix, include_files=last))
            elif is_pattern(component):
                matched.extend(walk.matches(prefix, component))
            else:
                matched.append(_join(prefix, patterns.unescape_glob(component)))
            walk.hold(len(matched))
        if not last:
            matched = [m for m in matched if walk.is_dir(m)]
        prefixes = matched
        if not prefixes:
            return []
    return sorted({p for p in prefixes if walk.exists(p)})


def _join(prefix: str, name: str) -> str:
    if not prefix:
        return name
    return prefix + name if prefix.endswith("/") else prefix + "/" + name


class _Walk:
    """The filesystem as one expansion reads it: every directory entry read and every path
    looked at is counted, the clock looked at every _CHECK_EVERY of them, and the paths held
    bounded by max_glob_matches."""

    def __init__(self, fs: FileSystem, cwd: str, dotglob: bool, nocase: bool, skipdots: bool):
        self.fs, self.cwd = fs, cwd
        self.dotglob, self.nocase, self.skipdots = dotglob, nocase, skipdots
        budget = active_budget()
        self.limits = budget.limits if budget is not None else ExecutionLimits()
        self.steps = 0

    def step(self, n: int = 1):
        """`n` more entries read or paths looked at: look at the clock now and then."""
        before = self.steps
        self.steps += n
        if before // _CHECK_EVERY != self.steps // _CHECK_EVERY:
            check_stop()

    def hold(self, count: int):
        """The expansion holds `count` paths at this step: stop it past max_glob_matches."""
        cap = self.limits.max_glob_matches
        if count > cap:
            raise LimitExceeded("max_glob_matches",
                                f"glob limit exceeded: a pattern matched more than {cap} paths "
                                f"(max_glob_matches)")

    def path(self, path: str) -> str:
        if path.startswith("/"):
            return path
        return self.cwd.rstrip("/") + "/" + path if path else self.cwd

    def names(self, prefix: str) -> list[str]:
        try:
            names = self.fs.listdir(self.path(prefix))
        except FsError:
            return []
        self.step(len(names) + 1)
        return names

    def is_dir(self, path: str) -> bool:
        self.step()
        try:
            return self.fs.stat(self.path(path)).is_dir
        except FsError:
            return False

    def exists(self, path: str) -> bool:
        self.step()
        return self.fs.exists(self.path(path), follow=False)

    def matches(self, prefix: str, component: str) -> list[str]:
        rx = patterns.compile_glob(component, self.nocase)
        hidden = self.dotglob or component.startswith(".") or component.startswith("\\.")
        names = self.names(prefix)
        if not self.skipdots and (component.startswith(".") or component.startswith("\\.")):
            names += [".", ".."]              # shopt -u globskipdots: `.*` matches . and ..
        return [_join(prefix, name) for name in names
                if (hidden or not name.startswith(".")) and rx.fullmatch(name)]

    def descend(self, prefix: str, include_files: bool) -> list[str]:
        """`**`: the directory itself and everything below it (files too when it is the last
        component), not following symbolic links to directories."""
        out: list[str]
        if not prefix:
            out = [] if include_files else [prefix]
        else:                   # `d/**` lists d/ itself first, as a directory
            out = [prefix + "/" if include_files else prefix]
        stack = [prefix]
        while stack:
            here = stack.pop()
            for name in sorted(self.names(here)):
                if name.startswith(".") and not self.dotglob:
                    continue
                path = _join(here, name)
                try:
                    st = self.fs.stat(self.path(path), follow=False)
                except FsError:
                    continue
                if st.is_dir:
                    out.append(path)
                    stack.append(path)
                elif include_files:
                    out.append(path)
            self.hold(len(out))
        return out
