"""stat, du, realpath, readlink, mktemp: facts about files."""
from __future__ import annotations

import random
import time

from ..fs import FsError
from ._options import UsageError, bad_usage, parse, shown
from .ls import blocks, descriptor_stat, human, mode_string
from .registry import Usage, command

_KIND_NAMES = {"-": "regular file", "d": "directory", "l": "symbolic link", "c": "character special file",
               "p": "fifo"}


def _stat_format(fmt: str, name: str, s, user: str) -> str:
    out, i = [], 0
    while i < len(fmt):
        c = fmt[i]
        if c == "%" and i + 1 < len(fmt):
            j = i + 1                   # flags and width, as printf's: %-5s %05a
            while j < len(fmt) - 1 and fmt[j] in "-0123456789":
                j += 1
            spec, d = fmt[i + 1:j], fmt[j]
            value = {
                "n": name, "N": f"'{name}'" + (f" -> '{s.target}'" if s.kind == "l" else ""),
                "s": str(s.size), "a": f"{s.mode & 0o7777:o}", "A": mode_string(s),
                "F": _KIND_NAMES[s.kind] if not (s.kind == "-" and s.size == 0) else "regular empty file",
                "U": user, "G": user, "u": "1000", "g": "1000", "h": str(s.nlink), "i": str(s.ino),
                "Y": str(int(s.mtime)), "y": time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(s.mtime))
                + f".{int(s.mtime % 1 * 1e9):09d} " + time.strftime("%z", time.localtime(s.mtime)),
                "b": str(blocks(s) * 2), "B": "512", "o": "4096", "%": "%",
                "f": f"{_raw_mode(s):x}", "t": "0", "T": "0", "d": "0", "D": "0",
            }.get(d)
            out.append(_padded(value, spec) if value is not None else "?")
            i = j + 1
            continue
        if c == "\\" and i + 1 < len(fmt):
            out.append({"n": "\n", "t": "\t", "\\": "\\"}.get(fmt[i + 1], "\\" + fmt[i + 1]))
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _padded(value: str, spec: str) -> str:
    """A directive's value in the width of its spec: left-aligned with `-`, zero-filled with
    a leading `0`, else right-aligned."""
    width = spec.lstrip("-0")
    if not width:
        return value
    if spec.startswith("-"):
        return value.ljust(int(width))
    return value.rjust(int(width), "0" if spec.startswith("0") else " ")


def _raw_mode(s) -> int:
    return {"-": 0o100000, "d": 0o040000, "l": 0o120000, "c": 0o020000, "p": 0o010000}[s.kind] | s.mode


def _stat(ctx, argv):
    opts, ops = parse("stat", argv, short_flags="Lt", short_values="c",
                      long_flags={"dereference": "L", "terse": "t"},
                      long_values={"format": "c", "printf": "printf"})
    if not ops:
        raise bad_usage("stat", "missing operand")
    fmt = opts.get("c") or opts.get("printf")
    status = 0
    for name in ops:
        try:
            s = descriptor_stat(ctx, name, opts.has("L")) or ctx.fs.stat(ctx.path(name), follow=opts.has("L"))
        except FsError as e:
            ctx.err(f"stat: cannot statx '{shown(name)}': {e.strerror}\n")
            status = 1
            continue
        user = getattr(ctx.fs, "user", "user")
        if fmt is not None:
            ctx.out(_stat_format(fmt, name, s, user) + ("\n" if opts.has("c") else ""))
            continue
        ctx.out(_stat_format(
            "  File: %N\n  Size: %s\tBlocks: %b          IO Block: 4096   %F\n"
            "Device: 0h/0d\tInode: %i    Links: %h\n"
            "Access: (%04a/%A)  Uid: ( 1000/    %U)   Gid: ( 1000/    %G)\n"
            "Modify: %y\n", name, s, user))
    return status


def _du(ctx, argv):
    opts, ops = parse("du", argv, short_flags="shacbkm", short_values="d",
                      long_flags={"summarize": "s", "human-readable": "h", "all": "a", "total": "c",
                                  "bytes": "b"},
                      long_values={"max-depth": "d"})
    max_depth = 0 if opts.has("s") else (int(opts.get("d")) if opts.has("d") else None)
    status, grand = 0, 0

    def show(size_kb: int, size_bytes: int, name: str):
        if opts.has("b"):
            text = str(size_bytes)
        elif opts.has("h"):
            text = human(size_kb * 1024) if size_kb else "0"
        elif opts.has("m"):
            text = str(-(-size_kb // 1024))
        else:
            text = str(size_kb)
        ctx.out(f"{text}\t{name}\n")

    def walk(name: str, depth: int) -> tuple[int, int]:
        s = ctx.fs.stat(ctx.path(name), follow=False)
        kb, by = blocks(s), s.size
        if s.kind == "d":
            for entry in sorted(ctx.fs.listdir(ctx.path(name))):
                ctx.budget.check_stop()
                child = name.rstrip("/") + "/" + entry
                ckb, cby = walk(child, depth + 1)
                kb += ckb
                by += cby
            if max_depth is None or depth <= max_depth:
                show(kb, by, name)
        elif opts.has("a") and (max_depth is None or depth <= max_depth) or depth == 0:
            show(kb, by, name)
        return kb, by

    for name in ops or ["."]:
        try:
            kb, _ = walk(name, 0)
            grand += kb
        except FsError as e:
            ctx.err(f"du: cannot access '{shown(name)}': {e.strerror}\n")
            status = 1
    if opts.has("c"):
        show(grand, grand * 1024, "total")
    return status


def _realpath(ctx, argv):
    cmd = argv[0]
    if cmd == "readlink":
        opts, ops = parse(cmd, argv, short_flags="femnqsvz",
                          long_flags={"canonicalize": "f", "canonicalize-existing": "e",
                                      "canonicalize-missing": "m", "no-newline": "n"})
    else:
        opts, ops = parse(cmd, argv, short_flags="emqsLPz", short_values="",
                          long_flags={"canonicalize-existing": "e", "canonicalize-missing": "m",
                                      "quiet": "q", "no-symlinks": "s", "strip": "s"},
                          long_values={"relative-to": "relative-to"})
    if not ops:
        raise bad_usage(cmd, "missing operand")
    status = 0
    end = "" if opts.has("n") and len(ops) == 1 else ("\0" if opts.has("z") else "\n")
    for name in ops:
        try:
            if cmd == "readlink" and not (opts.has("f") or opts.has("e") or opts.has("m")):
                ctx.out(ctx.fs.readlink(ctx.path(name)) + end)
                continue
            if opts.has("s"):
                from ..fs import lexical
                ctx.out(lexical(ctx.path(name)) + end)
                continue
            strict = opts.has("e")
            if opts.has("m"):
                from ..fs import lexical
                result = _canonical_missing(ctx, lexical(ctx.path(name)))
            else:
                result = ctx.fs.realpath(ctx.path(name), strict=strict)
            ctx.out(result + end)
        except FsError as e:
            status = 1
            if cmd == "realpath" and not opts.has("q"):
                ctx.err(f"realpath: {shown(name)}: {e.strerror}\n")
    return status


def _canonical_missing(ctx, path: str) -> str:
    """realpath -m: resolve what exists, keep the missing rest as text."""
    parts = [p for p in path.split("/") if p]
    for k in range(len(parts), -1, -1):
        head = "/" + "/".join(parts[:k])
        try:
            resolved = ctx.fs.realpath(head)
        except FsError:
            continue
        return (resolved.rstrip("/") + "/" + "/".join(parts[k:])).rstrip("/") or "/"
    return path


def _mktemp(ctx, argv):
    opts, ops = parse("mktemp", argv, short_flags="dqutp", short_values="p",
                      long_flags={"directory": "d", "quiet": "q", "dry-run": "u"},
                      long_values={"tmpdir": "p", "suffix": "suffix"})
    template = ops[0] if ops else "tmp.XXXXXXXXXX"
    if "XXX" not in template:
        raise UsageError(f"mktemp: too few X's in template ‘{template}’")
    directory = opts.get("p") or ("/tmp" if not ops or opts.has("t") or "/" not in template else "")
    rng = random.Random()
    letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    stem = template.rstrip("X")
    count = len(template) - len(stem)
    for _ in range(100):
        name = stem + "".join(rng.choice(letters) for _ in range(count)) + (opts.get("suffix") or "")
        path = (directory.rstrip("/") + "/" + name) if directory else name
        try:
            if opts.has("d"):
                ctx.fs.mkdir(ctx.path(path), 0o700)
            elif not opts.has("u"):
                if ctx.fs.exists(ctx.path(path)):
                    continue
                ctx.fs.open_write(ctx.path(path), mode=0o600)
        except FsError as e:
            if e.strerror == "File exists":
                continue
            if not opts.has("q"):
                ctx.err(f"mktemp: failed to create {'directory' if opts.has('d') else 'file'} via "
                       f"template ‘{path[:len(path) - count] + 'X' * count}’: {e.strerror}\n")
            return 1
        ctx.out(path + "\n")
        return 0
    return 1


_IMPLS = {"stat": _stat, "du": _du, "realpath": _realpath, "readlink": _realpath, "mktemp": _mktemp}


USAGES = {
    "stat": Usage("[OPTION]... FILE...", "Display file or file system status.", (
        "-L, --dereference     follow links",
        "-c  --format=FORMAT   use the specified FORMAT instead of the default",
        "    --printf=FORMAT   like --format, but interpret backslash escapes",
        "-t, --terse           print the information in terse form")),
    "du": Usage("[OPTION]... [FILE]...", "Summarize device usage of the set of FILEs, recursively for directories.", (
        "-a, --all             write counts for all files, not just directories",
        "-b, --bytes           apparent sizes in bytes",
        "-c, --total           produce a grand total",
        "-d, --max-depth=N     print the total for a directory only if it is N or fewer levels deep",
        "-h, --human-readable  print sizes in human readable format",
        "-k, -m                block sizes of 1K / 1M",
        "-s, --summarize       display only a total for each argument")),
    "realpath": Usage("[OPTION]... FILE...", "Print the resolved absolute file name.", (
        "-e, --canonicalize-existing  all components of the path must exist",
        "-m, --canonicalize-missing   no path components need exist or be a directory",
        "-L, -P                       resolve '..' before / after symlinks",
        "-q, --quiet                  suppress most error messages",
        "    --relative-to=DIR        print the resolved path relative to DIR",
        "-s, --strip, --no-symlinks   don't expand symlinks",
        "-z, --zero                   end each output line with NUL, not newline")),
    "readlink": Usage("[OPTION]... FILE...", "Print value of a symbolic link or canonical file name.", (
        "-f, --canonicalize           follow every symlink; all but the last component must exist",
        "-e, --canonicalize-existing  follow every symlink; all components must exist",
        "-m, --canonicalize-missing   follow every symlink; no component need exist",
        "-n, --no-newline             do not output the trailing delimiter",
        "-q, -s, -v                   quiet / silent / verbose",
        "-z, --zero                   end each output line with NUL, not newline")),
    "mktemp": Usage("[OPTION]... [TEMPLATE]", "Create a temporary file or directory, safely, and print its name.", (
        "-d, --directory     create a directory, not a file",
        "-u, --dry-run       do not create anything; merely print a name",
        "-q, --quiet         suppress diagnostics about file/dir-creation failure",
        "    --suffix=SUFF   append SUFF to TEMPLATE",
        "-p DIR, --tmpdir[=DIR]  interpret TEMPLATE relative to DIR",
        "-t                  interpret TEMPLATE as a single file name component")),
}


@command("stat", "du", "realpath", "readlink", "mktemp", needs_files=True, usage=USAGES)
def run(ctx, argv):
    return _IMPLS[argv[0]](ctx, argv)
