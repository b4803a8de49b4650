"""ls: list directory contents, in GNU's format for output that is not a terminal. The open
descriptors /dev/fd/N are described here for ls and stat alike (`descriptor_stat`)."""
from __future__ import annotations

import stat as st_mod
import time

from ..fs import FsError, Stat
from ..fs.base import ENOENT
from ._options import parse, shown as shown_operand
from .registry import Usage, command

_SIX_MONTHS = 182.5 * 24 * 3600


def mode_string(s: Stat) -> str:
    """`-rw-r--r--` as ls -l and stat %A show it."""
    kinds = {"-": st_mod.S_IFREG, "d": st_mod.S_IFDIR, "l": st_mod.S_IFLNK, "c": st_mod.S_IFCHR,
             "p": st_mod.S_IFIFO}
    return st_mod.filemode(kinds[s.kind] | s.mode)


_LINK_SIZE = 64                     # what Linux gives as the size of a /dev/fd/N link
_DESCRIPTOR_INODE = 40000           # the made-up inode of descriptor N is this + N


def descriptor_stat(ctx, name: str, follow: bool):
    """/dev/fd/N as Linux shows it: a symbolic link (readable `lr-x------` or writable
    `l-wx------`) to the open descriptor, `pipe:[INODE]` for a pipe; followed, the pipe (a
    fifo: standard input, output and error, which the tool's caller reads and writes through
    pipes, and `<( )`, `>( )`) or the file opened with `exec N<`/`N>` (its size known for
    reading only: the descriptor keeps the text, not the file's name). None when `name` is not
    /dev/fd/N; FsError(ENOENT) when N is not open."""
    path = ctx.path(name)
    number = path[len("/dev/fd/"):] if path.startswith("/dev/fd/") else ""
    if not (number.isascii() and number.isdigit()) or len(number) > 9:     # (no such descriptor)
        return None
    fd = int(number)
    descriptor = ctx.descriptor(fd)
    if descriptor is None:
        raise FsError(ENOENT)
    ino, now = _DESCRIPTOR_INODE + fd, ctx.budget.now()
    if not follow:
        target = f"pipe:[{ino}]" if descriptor.pipe else f"file:[{ino}]"
        return Stat("l", 0o500 if descriptor.readable else 0o300, _LINK_SIZE, now, ino, target=target)
    if descriptor.pipe:
        return Stat("p", 0o600, 0, now, ino)
    return Stat("-", 0o666 & ~ctx.umask, descriptor.size, now, ino)


def human(size: int) -> str:
    """GNU's -h: sizes in K, M, G... rounded up, with one decimal below 10."""
    if size < 1024:
        return str(size)
    value, unit = float(size), ""
    for unit in "KMGTPE":  # noqa: B007 (the unit the loop stops at is the one printed)
        value /= 1024
        if value < 1024:
            break
    if value < 10:
        tenths = int(-(-value * 10 // 1))
        if tenths < 100:
            return f"{tenths // 10}.{tenths % 10}{unit}"
        value = tenths / 10
    return f"{int(-(-value // 1))}{unit}"


def blocks(s: Stat) -> int:
    """1K blocks a file takes (4K allocation units), as `total` and du count them."""
    if s.kind in ("l", "c", "p"):
        return 0
    return -(-s.size // 4096) * 4


class _Lister:
    def __init__(self, ctx, opts):
        self.ctx = ctx
        self.opts = opts
        self.long = opts.has("l") or opts.has("n") or opts.has("g") or opts.has("o")
        self.all = opts.has("a")
        self.almost_all = opts.has("A") and not self.all
        self.user = getattr(ctx.fs, "user", "user")
        self.status = 0
        self.now = ctx.budget.now()

    def stat(self, path: str, follow: bool):
        follow = follow or self.opts.has("L")
        found = descriptor_stat(self.ctx, path, follow)
        return found if found is not None else self.ctx.fs.stat(self.ctx.path(path), follow=follow)

    def sort(self, items: list) -> list:
        """items: (name, Stat). Name order (C locale), or by -t / -S; -r reverses."""
        items = sorted(items, key=lambda it: it[0].encode("utf-8", "surrogateescape"))
        if self.opts.has("t"):
            items.sort(key=lambda it: -it[1].mtime)
        elif self.opts.has("S"):
            items.sort(key=lambda it: -it[1].size)
        if self.opts.has("r"):
            items.reverse()
        return items

    def suffix(self, s: Stat) -> str:
        if not self.opts.has("F") and not self.opts.has("p"):
            return ""
        if s.kind == "d":
            return "/"
        if self.opts.has("p"):
            return ""
        if s.kind == "l":
            return "@"
        if s.kind == "p":
            return "|"
        return "*" if s.kind == "-" and s.mode & 0o111 else ""

    def render(self, items: list) -> str:
        if not items:
            return ""
        if not self.long:
            return "".join(name + self.suffix(s) + "\n" for name, s in items)
        rows = []
        for name, s in items:
            size = human(s.size) if self.opts.has("h") else str(s.size)
            when = time.localtime(s.mtime)
            recent = self.now - _SIX_MONTHS < s.mtime <= self.now + 3600
            date = time.strftime("%b %e %H:%M" if recent else "%b %e  %Y", when)
            shown = name + (f" -> {s.target}" if s.kind == "l" else self.suffix(s))
            owner = "1000" if self.opts.has("n") else self.user
            who = [] if self.opts.has("g") else [owner]
            if not self.opts.has("o"):
                who.append(owner)
            rows.append((mode_string(s), str(s.nlink), who, size, date, shown))
        links = max(len(r[1]) for r in rows)
        sizes = max(len(r[3]) for r in rows)
        widths = [max(len(r[2][k]) for r in rows) for k in range(len(rows[0][2]))]
        return "".join(" ".join([r[0], r[1].rjust(links)] + [w.ljust(widths[k]) for k, w in enumerate(r[2])]
                                + [r[3].rjust(sizes), r[4], r[5]]) + "\n" for r in rows)

    def directory(self, path: str) -> tuple[str, list]:
        """The listing of one directory (with `total` under -l) and its subdirectories (-R)."""
        try:
            names = self.ctx.fs.listdir(self.ctx.path(path))
        except FsError as e:
            self.ctx.err(f"ls: cannot open directory '{shown_operand(path)}': {e.strerror}\n")
            self.status = 2
            return "", []
        if not self.all and not self.almost_all:
            names = [n for n in names if not n.startswith(".")]
        items = []
        if self.all:
            for dot in (".", ".."):
                items.append((dot, self.stat(path.rstrip("/") + "/" + dot if path != "/" else "/" + dot, True)))
        for name in names:
            self.ctx.budget.check_stop()
            try:
                items.append((name, self.stat(_join(path, name), False)))
            except FsError:
                continue
        items = self.sort(items)
        text = self.render(items)
        if self.long:
            total = sum(blocks(s) for _, s in items)
            shown = human(total * 1024) if self.opts.has("h") and total else str(total)
            text = f"total {shown}\n" + text
        subdirs = [_join(path, n) for n, s in items if s.kind == "d" and n not in (".", "..")]
        return text, subdirs


def _join(directory: str, name: str) -> str:
    return directory + name if directory.endswith("/") else directory + "/" + name


USAGE = Usage("[OPTION]... [FILE]...", "List information about the FILEs (the current directory by default).", (
    "-a, --all               do not ignore entries starting with .",
    "-A, --almost-all        do not list implied . and ..",
    "-d, --directory         list directories themselves, not their contents",
    "-F, --classify          append indicator (one of */=>@|) to entries",
    "-h, --human-readable    with -l, print sizes like 1K 234M 2G",
    "-L, --dereference       show information for the file a symbolic link references",
    "-l                      use a long listing format",
    "-n, -g, -o              long listing with numeric ids, without owner, without group",
    "-p                      append / indicator to directories",
    "-r, --reverse           reverse order while sorting",
    "-R, --recursive         list subdirectories recursively",
    "-S                      sort by file size, largest first",
    "-t                      sort by time, newest first",
    "-U                      do not sort",
    "-1                      list one file per line"))


@command("ls", needs_files=True, usage=USAGE)
def run(ctx, argv):
    opts, ops = parse("ls", argv, short_flags="laAR1tSrhdFpngoUL",
                      long_flags={"all": "a", "almost-all": "A", "recursive": "R",
                                  "reverse": "r", "human-readable": "h", "directory": "d",
                                  "classify": "F", "dereference": "L"})
    lister = _Lister(ctx, opts)
    files, dirs = [], []
    for op in ops or ["."]:
        try:
            # (GNU ls names a link given on the command line itself under -l, -d and -F)
            itself = lister.long or opts.has("d") or opts.has("F")
            s = lister.stat(op, follow=not itself or op.endswith("/"))
        except FsError as e:
            ctx.err(f"ls: cannot access '{shown_operand(op)}': {e.strerror}\n")
            lister.status = 2
            continue
        if s.kind == "d" and not opts.has("d"):
            dirs.append((op, s))
        else:
            files.append((op, s))
    out = []
    if files:
        out.append(lister.render(lister.sort(files)))
    queue = [name for name, _ in lister.sort(dirs)]
    headers = len(ops) > 1 or opts.has("R") or bool(files)
    while queue:
        path = queue.pop(0)
        text, subdirs = lister.directory(path)
        out.append((f"{path}:\n" if headers else "") + text)
        if opts.has("R"):
            queue[0:0] = subdirs
    ctx.out("\n".join(out))
    return lister.status
