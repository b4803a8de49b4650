"""tree: list directories as an indented tree, as the `tree` program (2.x) prints them."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

from ..fs import FsError
from ..base.patterns import glob_match
from ._options import UsageError
from .registry import Usage, command

# tree's UTF-8 lines pad with no-break spaces, its ASCII ones (--charset ascii) with spaces
UTF8_LINES = ("\u251c\u2500\u2500 ", "\u2514\u2500\u2500 ", "\u2502\u00a0\u00a0 ", "    ")
ASCII_LINES = ("|-- ", "`-- ", "|   ", "    ")

SYNOPSIS = """\
usage: tree [-acdfghilnpqrstuvxACDFJQNSUX] [-L level [-R]] [-H  baseHREF]
\t[-T title] [-o filename] [-P pattern] [-I pattern] [--gitignore]
\t[--gitfile[=]file] [--matchdirs] [--metafirst] [--ignore-case]
\t[--nolinks] [--hintro[=]file] [--houtro[=]file] [--inodes] [--device]
\t[--sort[=]<name>] [--dirsfirst] [--filesfirst] [--filelimit #] [--si]
\t[--du] [--prune] [--charset[=]X] [--timefmt[=]format] [--fromfile]
\t[--fflinks] [--info] [--infofile[=]file] [--noreport] [--version]
\t[--help] [--] [directory ...]"""

USAGE = Usage("[-adfilrFU] [-L level] [-P pattern] [-I pattern] [--noreport] [directory ...]",
              "List contents of directories in a tree-like format.",
              ("-a            All files are listed.",
               "-d            List directories only.",
               "-l            Follow symbolic links like directories.",
               "-f            Print the full path prefix for each file.",
               "-L level      Descend only level directories deep.",
               "-P pattern    List only those files that match the pattern given.",
               "-I pattern    Do not list files that match the given pattern.",
               "-i            Don't print indentation lines.",
               "-F            Appends '/', '=', '*', '@', '|' or '>' as per ls -F.",
               "-r            Reverse the order of the sort.",
               "-U            Leave files unsorted.",
               "--noreport    Turn off file/directory count at end of tree listing.",
               "--dirsfirst   List directories before files.",
               "--filesfirst  List files before directories.",
               "--prune       Prune empty directories from the output.",
               "--ignore-case Ignore case when pattern matching.",
               "--charset X   Use charset X for the lines (ascii or utf-8)."))


@dataclass
class TreeOptions:
    all: bool = False
    dirs_only: bool = False
    full_path: bool = False
    follow_links: bool = False
    classify: bool = False
    no_indent: bool = False
    noreport: bool = False
    reverse: bool = False
    unsorted: bool = False
    dirs_first: Optional[bool] = None     # True --dirsfirst, False --filesfirst
    prune: bool = False
    ignore_case: bool = False
    level: Optional[int] = None           # deepest level listed (1: the roots' entries)
    only: Optional[str] = None            # -P
    ignore: list = field(default_factory=list)   # -I
    lines: tuple = UTF8_LINES
    roots: list = field(default_factory=list)


_FLAGS = {"a": "all", "d": "dirs_only", "f": "full_path", "l": "follow_links", "F": "classify",
          "i": "no_indent", "r": "reverse", "U": "unsorted"}
_IGNORED_FLAGS = set("cgnpqstuvxACDhJNQSX")      # metadata and colour columns: not shown here
_LONG_FLAGS = {"noreport": ("noreport", True), "dirsfirst": ("dirs_first", True),
               "filesfirst": ("dirs_first", False), "prune": ("prune", True),
               "ignore-case": ("ignore_case", True)}


def _invalid(argument: str) -> UsageError:
    return UsageError(f"tree: Invalid argument {argument}.\n{SYNOPSIS}")


def parse_arguments(argv: list) -> TreeOptions:
    """tree's own command line: options anywhere before `--`, values attached or following."""
    o = TreeOptions()
    args, i = argv[1:], 0
    while i < len(args):
        a = args[i]
        i += 1
        if a == "--":
            o.roots.extend(args[i:])
            break
        if a.startswith("--"):
            name, eq, value = a[2:].partition("=")
            if name in _LONG_FLAGS:
                setattr(o, *_LONG_FLAGS[name])
            elif name == "charset":
                if not eq:
                    if i >= len(args):
                        raise UsageError("tree: Missing argument to --charset option.")
                    value, i = args[i], i + 1
                o.lines = ASCII_LINES if value.lower() in ("ascii", "us-ascii") else UTF8_LINES
            else:
                raise _invalid(f"`{a}'")
            continue
        if a.startswith("-") and len(a) > 1:
            j = 1
            while j < len(a):
                c = a[j]
                if c in "LPI":
                    value = a[j + 1:]
                    if not value:
                        if i >= len(args):
                            raise UsageError(f"tree: Missing argument to -{c} option.")
                        value, i = args[i], i + 1
                    _set_value(o, c, value)
                    break
                if c in _FLAGS:
                    setattr(o, _FLAGS[c], True)
                elif c not in _IGNORED_FLAGS:
                    raise _invalid(f"-`{c}'")
                j += 1
            continue
        o.roots.append(a)
    return o


def _set_value(o: TreeOptions, letter: str, value: str):
    if letter == "L":
        # tree's Level = strtoul(value, NULL, 0) - 1, kept in an int
        level = (_strtoul(value) - 1) & 0xFFFFFFFF
        if level >= 1 << 31:
            raise UsageError("tree: Invalid level, must be greater than 0.")
        o.level = level + 1
    elif letter == "P":
        o.only = value
    else:
        o.ignore.append(value)


_NUMBER = re.compile(r"\s*([-+]?)(0[xX](?=[0-9a-fA-F])|0)?([0-9a-fA-F]*)")
_DIGITS = {8: "01234567", 10: "0123456789", 16: "0123456789abcdefABCDEF"}
ULONG = 1 << 64


def _strtoul(text: str) -> int:
    """C's strtoul(text, NULL, 0): blanks, a sign, 0x for hexadecimal or 0 for octal, the
    digits that fit the base; past ULONG_MAX it is ULONG_MAX, a minus sign negates modulo 2**64."""
    match = _NUMBER.match(text)
    assert match is not None                      # (every part of it may be empty)
    sign, prefix, digits = match.groups()
    base = 16 if prefix and len(prefix) == 2 else 8 if prefix else 10
    digits = digits[:len(digits) - len(digits.lstrip(_DIGITS[base]))].lstrip("0")
    value = int(digits, base) if len(digits) <= 64 and digits else (ULONG if digits else 0)
    if value >= ULONG:
        return ULONG - 1
    return (-value) % ULONG if sign == "-" else value


# ------------------------------------------------------------------ reading directories

@dataclass
class Entry:
    name: str
    path: str                   # as shown with -f: the root as given, then /name...
    is_dir: bool                # following a symbolic link
    target: Optional[str]       # a symbolic link's target
    executable: bool
    inode: int = 0
    children: Optional[list] = None   # the listing of a directory to descend into
    error: Optional[str] = None


class Walker:
    def __init__(self, ctx, o: TreeOptions):
        self.ctx = ctx
        self.o = o
        self.seen_inodes: set = set()      # every directory listed: a followed link loop stops
        self.errors = 0

    def matches(self, pattern: str, name: str) -> bool:
        return any(glob_match(alt, name, self.o.ignore_case) for alt in pattern.split("|"))

    def entry(self, directory: Optional[str], name: str) -> Entry:
        shown = name if directory is None else (directory + name if directory.endswith("/")
                                                else f"{directory}/{name}")
        full = self.ctx.path(shown)
        st = self.ctx.fs.stat(full, follow=False)
        target, is_dir, inode = None, st.is_dir, st.ino
        if st.is_link:
            target = st.target
            try:
                followed = self.ctx.fs.stat(full)
                is_dir, inode = followed.is_dir, followed.ino
            except FsError:
                pass
        executable = st.kind == "-" and bool(st.mode & 0o111)
        return Entry(name, shown, is_dir, target, executable, inode)

    def listing(self, entry: Entry) -> list:
        """The entries of a directory that tree shows, sorted; raises FsError."""
        names = self.ctx.fs.listdir(self.ctx.path(entry.path))
        found = []
        for name in names:
            self.ctx.budget.check_clock()
            if name.startswith(".") and not self.o.all:
                continue
            child = self.entry(entry.path, name)
            if self.keeps(child):
                found.append(child)
        return self.sort(found)

    def keeps(self, e: Entry) -> bool:
        if self.o.dirs_only and not e.is_dir:
            return False
        if any(self.matches(p, e.name) for p in self.o.ignore):
            return False
        # -P filters what is not a directory itself (a link to one is filtered, yet counted
        # and shown as a directory when it passes)
        if self.o.only is not None and not (e.is_dir and e.target is None):
            return self.matches(self.o.only, e.name)
        return True

    def sort(self, entries: list) -> list:
        if self.o.unsorted:
            return entries
        entries.sort(key=lambda e: e.name, reverse=self.o.reverse)
        if self.o.dirs_first is not None:
            entries.sort(key=lambda e: e.is_dir != self.o.dirs_first)
        return entries

    def descend(self, e: Entry, level: int):
        """Read e's children into it when tree goes into it (e.children stays None when not).
        `level`: e's own depth, 1 for the entries of a root."""
        if not e.is_dir:
            return
        known = e.inode in self.seen_inodes
        self.seen_inodes.add(e.inode)
        if e.target is not None and not self.o.follow_links:
            return
        if self.o.level is not None and level >= self.o.level:
            return
        if e.target is not None and known:
            e.error = "recursive, not followed"
            return
        try:
            e.children = self.listing(e)
        except FsError:
            e.error = "error opening dir"
            self.errors += 1
            return
        for child in e.children:
            self.descend(child, level + 1)
        if self.o.prune:
            e.children = pruned(e.children)


def pruned(entries: list) -> list:
    """--prune: without the directories that show nothing below them."""
    return [e for e in entries if not (e.is_dir and not e.children)]


# ------------------------------------------------------------------ printing

class Printer:
    def __init__(self, ctx, o: TreeOptions):
        self.out = ctx.out
        self.o = o
        self.dirs = 0
        self.files = 0

    def label(self, e: Entry, shown: str, root: bool = False) -> str:
        text = shown
        if e.target is not None and not root:
            text += f" -> {e.target}"
        if self.o.classify:
            text += "/" if e.is_dir else ("*" if e.executable else "")
        return text

    def children(self, entries: list, indent: str):
        tee, corner, bar, blank = self.o.lines
        for k, e in enumerate(entries):
            last = k == len(entries) - 1
            if e.is_dir:
                self.dirs += 1
            else:
                self.files += 1
            lead = "" if self.o.no_indent else indent + (corner if last else tee)
            line = lead + self.label(e, e.path if self.o.full_path else e.name)
            if e.error:
                line += f"  [{e.error}]"
            self.out(line + "\n")
            if e.children:
                self.children(e.children, indent + (blank if last else bar))

    def report(self):
        dirs = f"{self.dirs} director{'y' if self.dirs == 1 else 'ies'}"
        if self.o.dirs_only:
            self.out(f"\n{dirs}\n")
        else:
            self.out(f"\n{dirs}, {self.files} file{'' if self.files == 1 else 's'}\n")


@command("tree", usage=USAGE, needs_files=True)
def run(ctx, argv):
    o = parse_arguments(argv)
    walker, printer = Walker(ctx, o), Printer(ctx, o)
    for given in o.roots or ["."]:
        root_name = (given.rstrip("/") or "/") if o.full_path else given
        try:
            root = walker.entry(None, root_name)
        except FsError:
            walker.errors += 1
            ctx.out(f"{given}  [error opening dir]\n")
            continue
        try:
            walker.seen_inodes.add(root.inode)
            root.children = walker.listing(root) if root.is_dir else None
        except FsError:
            root.children = None
        if root.children is None:
            printer.files += 1
            ctx.out(f"{printer.label(root, root_name)}  [error opening dir]\n")
            continue
        for child in root.children:
            walker.descend(child, 1)
        if o.prune:
            root.children = pruned(root.children)
        ctx.out(printer.label(root, root_name, root=True) + "\n")
        if root.children:
            printer.dirs += 1
            printer.children(root.children, "")
    if not o.noreport:
        printer.report()
    return 2 if walker.errors else 0
