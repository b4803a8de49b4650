"""mkdir, rmdir, rm, cp, mv, touch, chmod, ln: changing files, with GNU coreutils' messages
and exit statuses (1 when any operand failed, the others still done)."""
from __future__ import annotations

import datetime as dt
import re

from ..fs import FsError
from ..fs.base import EEXIST, ENAMETOOLONG, ENOSPC, EPERM, EROFS
from ._options import UsageError, bad_usage, bounded, parse
from .registry import Usage, command



class _Run:
    """One command's state: the shell, its name and whether an operand failed."""

    def __init__(self, ctx, cmd: str):
        self.ctx, self.cmd, self.fs, self.status = ctx, cmd, ctx.fs, 0

    def path(self, name: str) -> str:
        return self.ctx.path(name)

    def fail(self, message: str):
        self.ctx.err(f"{self.cmd}: {bounded(message)}\n")
        self.status = 1

    def stat(self, name: str, follow: bool = True):
        try:
            return self.fs.stat(self.path(name), follow)
        except FsError:
            return None


def _need_operands(cmd: str, ops: list, n: int = 1):
    if len(ops) < n:
        raise bad_usage(cmd, "missing operand" if not ops else
                        f"missing destination file operand after '{ops[0]}'")


def _mkdir(r: _Run, opts, ops):
    _need_operands("mkdir", ops)
    mode = _parse_mode(opts.get("m"), 0o777 & ~r.ctx.umask, r.ctx.umask) if opts.has("m") else None
    for name in ops:
        if opts.has("p"):
            parts = [p for p in name.split("/") if p]
            prefix = "/" if name.startswith("/") else ""
            for k in range(len(parts)):
                here = prefix + "/".join(parts[:k + 1])
                st = r.stat(here)
                if st is not None and st.is_dir:
                    continue
                try:
                    r.fs.mkdir(r.path(here), (mode if k == len(parts) - 1 and mode is not None
                                              else 0o777 & ~r.ctx.umask))
                    if opts.has("v"):
                        r.ctx.out(f"mkdir: created directory '{here}'\n")
                except FsError as e:
                    r.fail(f"cannot create directory '{here}': {e.strerror}")
                    break
            continue
        try:
            r.fs.mkdir(r.path(name), mode if mode is not None else 0o777 & ~r.ctx.umask)
            if opts.has("v"):
                r.ctx.out(f"mkdir: created directory '{name}'\n")
        except FsError as e:
            r.fail(f"cannot create directory '{name}': {e.strerror}")


def _rmdir(r: _Run, opts, ops):
    _need_operands("rmdir", ops)
    for name in ops:
        targets = [name]
        if opts.has("p"):
            parts = name.rstrip("/").split("/")
            targets = ["/".join(parts[:k]) for k in range(len(parts), 0, -1) if parts[:k] != [""]]
        for target in targets:
            try:
                r.fs.rmdir(r.path(target))
            except FsError as e:
                r.fail(f"failed to remove '{target}': {e.strerror}")
                break


def _rm(r: _Run, opts, ops):
    force, recursive = opts.has("f"), opts.has("r") or opts.has("R")
    if not ops:
        if not force:
            _need_operands("rm", ops)
        return
    root = r.fs.stat("/") if recursive else None
    for name in ops:
        base = name.rstrip("/").rsplit("/", 1)[-1]
        if base in (".", ".."):
            r.fail(f"refusing to remove '.' or '..' directory: skipping '{name}'")
            continue
        st = r.stat(name, follow=False)
        if st is None:
            if not force:
                r.fail(f"cannot remove '{name}': No such file or directory")
            continue
        if st.is_dir:
            if root is not None and st.ino == root.ino and not opts.has("no-preserve-root"):
                same = "" if name == "/" else " (same as '/')"
                r.fail(f"it is dangerous to operate recursively on '{name}'{same}")
                r.fail("use --no-preserve-root to override this failsafe")
            elif recursive:
                _remove_tree(r, name, opts.has("v"))
            elif opts.has("d"):
                try:
                    r.fs.rmdir(r.path(name))
                except FsError as e:
                    r.fail(f"cannot remove '{name}': {e.strerror}")
            else:
                r.fail(f"cannot remove '{name}': Is a directory")
            continue
        try:
            r.fs.unlink(r.path(name))
            if opts.has("v"):
                r.ctx.out(f"removed '{name}'\n")
        except FsError as e:
            r.fail(f"cannot remove '{name}': {e.strerror}")


def _remove_tree(r: _Run, name: str, verbose: bool):
    try:
        entries = r.fs.listdir(r.path(name))
    except FsError as e:
        r.fail(f"cannot remove '{name}': {e.strerror}")
        return
    for entry in sorted(entries):
        r.ctx.budget.check_stop()
        child = name.rstrip("/") + "/" + entry
        st = r.stat(child, follow=False)
        if st is not None and st.is_dir:
            _remove_tree(r, child, verbose)
        else:
            try:
                r.fs.unlink(r.path(child))
                if verbose:
                    r.ctx.out(f"removed '{child}'\n")
            except FsError as e:
                r.fail(f"cannot remove '{child}': {e.strerror}")
    try:
        r.fs.rmdir(r.path(name))
        if verbose:
            r.ctx.out(f"removed directory '{name}'\n")
    except FsError as e:
        r.fail(f"cannot remove '{name}': {e.strerror}")


def _destination(r: _Run, cmd: str, ops: list, target_dir):
    """[(source, destination)] for cp/mv/ln: into a directory (the last operand or -t), or
    one source to one destination."""
    if target_dir is not None:
        sources, directory = ops, target_dir
    else:
        _need_operands(cmd, ops, 2)
        sources, last = ops[:-1], ops[-1]
        st = r.stat(last)
        if st is not None and st.is_dir:
            directory = last
        elif len(sources) > 1:
            raise UsageError(f"{cmd}: target '{last}' is not a directory")
        else:
            return [(sources[0], last)]
    return [(src, directory.rstrip("/") + "/" + src.rstrip("/").rsplit("/", 1)[-1]) for src in sources]


def _cp(r: _Run, opts, ops):
    recursive = opts.has("r") or opts.has("R") or opts.has("a")
    keep = opts.has("p") or opts.has("a")
    for src, dst in _destination(r, "cp", ops, opts.get("t")):
        st = r.stat(src, follow=not (opts.has("P") or opts.has("a") or opts.has("d")) or not recursive)
        if st is None:
            r.fail(f"cannot stat '{src}': No such file or directory")
            continue
        if st.is_dir and not recursive:
            r.fail(f"-r not specified; omitting directory '{src}'")
            continue
        _copy(r, src, dst, st, keep, opts.has("n"), opts.has("v"))


def _copy(r: _Run, src: str, dst: str, st, keep: bool, no_clobber: bool, verbose: bool):
    existing = r.stat(dst)
    if existing is not None and no_clobber:
        return
    try:
        if st.is_dir:
            if existing is None:
                r.fs.mkdir(r.path(dst), st.mode if keep else st.mode & ~r.ctx.umask)
            elif not existing.is_dir:
                r.fail(f"cannot overwrite non-directory '{dst}' with directory '{src}'")
                return
            if r.path(dst).startswith(r.fs.realpath(r.path(src)).rstrip("/") + "/"):
                r.fail(f"cannot copy a directory, '{src}', into itself, '{dst}'")
                return
            for entry in sorted(r.fs.listdir(r.path(src))):
                r.ctx.budget.check_stop()
                child = r.stat(src.rstrip("/") + "/" + entry, follow=False)
                if child is not None:
                    _copy(r, src.rstrip("/") + "/" + entry, dst.rstrip("/") + "/" + entry, child,
                          keep, no_clobber, verbose)
        elif st.is_link:
            r.fs.symlink(st.target, r.path(dst))
        else:
            if existing is not None and existing.ino == st.ino:
                r.fail(f"'{src}' and '{dst}' are the same file")
                return
            data = r.fs.read_bytes(r.path(src))
            r.fs.open_write(r.path(dst), mode=st.mode & ~r.ctx.umask).write_bytes(data)
        if keep:
            r.fs.chmod(r.path(dst), st.mode)
            r.fs.utime(r.path(dst), st.mtime)
        if verbose:
            r.ctx.out(f"'{src}' -> '{dst}'\n")
    except FsError as e:
        r.fail(f"cannot create regular file '{dst}': {e.strerror}" if not st.is_dir
               else f"cannot copy '{src}': {e.strerror}")


def _mv(r: _Run, opts, ops):
    for src, dst in _destination(r, "mv", ops, opts.get("t")):
        if r.stat(src, follow=False) is None:
            r.fail(f"cannot stat '{src}': No such file or directory")
            continue
        if opts.has("n") and r.stat(dst, follow=False) is not None:
            continue
        try:
            r.fs.rename(r.path(src), r.path(dst))
            if opts.has("v"):
                r.ctx.out(f"renamed '{src}' -> '{dst}'\n")
        except FsError as e:
            if e.strerror == "Invalid argument":
                r.fail(f"cannot move '{src}' to a subdirectory of itself, '{dst}'")
            else:
                r.fail(f"cannot move '{src}' to '{dst}': {e.strerror}")


def _touch(r: _Run, opts, ops):
    _need_operands("touch", ops)
    when = None
    if opts.has("d"):
        when = _parse_date(opts.get("d"), r.ctx.budget.now())
    elif opts.has("r"):
        ref = r.stat(opts.get("r"))
        if ref is None:
            raise UsageError(f"touch: failed to get attributes of '{opts.get('r')}': No such file or directory")
        when = ref.mtime
    elif opts.has("t"):
        when = _parse_stamp(opts.get("t"), r.ctx.budget.now())
    for name in ops:
        try:
            if r.stat(name) is None:
                if opts.has("c"):
                    continue
                r.fs.open_write(r.path(name), append=True, mode=0o666 & ~r.ctx.umask)
                if when is None:
                    continue
            r.fs.utime(r.path(name), when if when is not None else _now(r))
        except FsError as e:
            r.fail(f"cannot touch '{name}': {e.strerror}")


def _now(r: _Run) -> float:
    tick = getattr(r.fs, "_tick", None)
    return tick() if tick else r.ctx.budget.now()


def _parse_date(text: str, clock: float) -> float:
    """touch -d's time; `clock` is the script's time now (Budget.now())."""
    from .date import _parse_when
    return _parse_when(text, None, clock).timestamp()


def _parse_stamp(text: str, clock: float) -> float:
    """touch -t's [[CC]YY]MMDDhhmm[.ss]; the year defaults to that of `clock` (Budget.now())."""
    m = re.fullmatch(r"(\d{2,4})?(\d{2})(\d{2})(\d{2})(\d{2})(?:\.(\d{2}))?", text)
    if not m:
        raise UsageError(f"touch: invalid date format '{text}'")
    year = m.group(1)
    now = dt.datetime.fromtimestamp(clock)
    year = int(year) + (2000 if year and len(year) == 2 else 0) if year else now.year
    when = dt.datetime(year, int(m.group(2)), int(m.group(3)), int(m.group(4)), int(m.group(5)),
                       int(m.group(6) or 0))
    return when.timestamp()


_WHO = {"u": 0o4700, "g": 0o2070, "o": 0o1007, "a": 0o7777}
_PERM_BITS = {"r": 0o444, "w": 0o222, "x": 0o111, "s": 0o6000, "t": 0o1000}


def _parse_mode(spec: str, current: int, umask: int, is_dir: bool = False) -> int:
    """An octal mode or chmod's symbolic clauses (`u+x,go-w`, `a=r`, `+X`) applied to `current`."""
    if re.fullmatch(r"[0-7]{1,4}", spec):
        return int(spec, 8)
    mode = current
    for clause in spec.split(","):
        m = re.fullmatch(r"([ugoa]*)((?:[-+=][rwxXst]*|[-+=][ugo])+)", clause)
        if not m:
            raise UsageError(f"invalid mode: '{spec}'")
        who = 0
        for c in m.group(1):
            who |= _WHO[c]
        for op, perms in re.findall(r"([-+=])([rwxXstugo]*)", m.group(2)):
            bits = 0
            for c in perms:
                if c in "ugo":
                    shift = {"u": 6, "g": 3, "o": 0}[c]
                    bits |= ((mode >> shift) & 7) * 0o111
                elif c == "X":
                    if is_dir or mode & 0o111:
                        bits |= 0o111
                else:
                    bits |= _PERM_BITS[c]
            mask = who or (0o7777 & ~umask if op != "=" else 0o7777)
            bits &= who if who else ~umask & 0o7777 | 0o7000
            if op == "+":
                mode |= bits & mask
            elif op == "-":
                mode &= ~(bits & mask)
            else:
                mode = (mode & ~(who or 0o7777) & ~(0o6000 if not who else 0)) | (bits & (who or 0o7777))
    return mode & 0o7777


def _chmod(r: _Run, opts, ops):
    _need_operands("chmod", ops, 2)
    spec, names = ops[0], ops[1:]
    for name in names:
        _chmod_one(r, spec, name, opts.has("R"), opts.has("v"))


def _chmod_one(r: _Run, spec: str, name: str, recursive: bool, verbose: bool):
    st = r.stat(name)
    if st is None:
        r.fail(f"cannot access '{name}': No such file or directory")
        return
    try:
        new = _parse_mode(spec, st.mode, r.ctx.umask, st.is_dir)
        r.fs.chmod(r.path(name), new)
        if verbose:
            r.ctx.out(f"mode of '{name}' changed from {st.mode:04o} to {new:04o}\n")
    except FsError as e:
        r.fail(f"changing permissions of '{name}': {e.strerror}")
        return
    if recursive and st.is_dir:
        try:
            entries = sorted(r.fs.listdir(r.path(name)))
        except FsError as e:
            r.fail(f"cannot read directory '{name}': {e.strerror}")
            return
        for entry in entries:
            r.ctx.budget.check_stop()
            child = name.rstrip("/") + "/" + entry
            child_st = r.stat(child, follow=False)
            if child_st is not None and not child_st.is_link:
                _chmod_one(r, spec, child, True, verbose)


def _ln(r: _Run, opts, ops):
    if len(ops) == 1:
        ops = ops + ["."]
    for src, dst in _destination(r, "ln", ops, opts.get("t")):
        existing = r.stat(dst, follow=False)
        if existing is not None and (opts.has("f") or opts.has("F")):
            if existing.is_dir and not existing.is_link:
                r.fail(f"cannot overwrite directory '{dst}'")
                continue
            r.fs.unlink(r.path(dst))
        try:
            if opts.has("s"):
                r.fs.symlink(src, r.path(dst))
            else:
                r.fs.link(r.path(src), r.path(dst))
            if opts.has("v"):
                r.ctx.out(f"'{dst}' -> '{src}'\n")
        except FsError as e:
            r.fail(_link_failure(r, src, dst, opts.has("s"), e.strerror))


def _link_failure(r: _Run, src: str, dst: str, symbolic: bool, reason: str) -> str:
    """ln's complaint, worded as GNU words it: the target is named with the link when it
    may be the cause (a name too long, an empty target), or for a hard link unless the
    destination alone is at fault."""
    if symbolic:
        arrow = reason == ENAMETOOLONG or not src
        return f"failed to create symbolic link '{dst}'" + (f" -> '{src}'" if arrow else "") + f": {reason}"
    if reason == EPERM:
        return f"{src}: hard link not allowed for directory"
    if r.stat(src, follow=False) is None:
        return f"failed to access '{src}': {reason}"
    if reason in (EEXIST, ENOSPC, EROFS):
        return f"failed to create hard link '{dst}': {reason}"
    return f"failed to create hard link '{dst}' => '{src}': {reason}"


_COMMANDS = {
    "mkdir": (_mkdir, "pv", "m", {"parents": "p", "verbose": "v"}, {"mode": "m"}),
    "rmdir": (_rmdir, "pv", "", {"parents": "p", "ignore-fail-on-non-empty": "i"}, {}),
    "rm": (_rm, "rRfdvi", "", {"recursive": "r", "force": "f", "dir": "d", "verbose": "v",
                               "no-preserve-root": "no-preserve-root", "preserve-root": "preserve-root"},
           {}),
    "cp": (_cp, "rRapnvPdfLHu", "t", {"recursive": "r", "archive": "a", "no-clobber": "n",
                                     "verbose": "v", "force": "f", "preserve": "p"},
           {"target-directory": "t"}),
    "mv": (_mv, "nvfiu", "t", {"no-clobber": "n", "verbose": "v", "force": "f"}, {"target-directory": "t"}),
    "touch": (_touch, "acmh", "drt", {"no-create": "c"}, {"date": "d", "reference": "r"}),
    "chmod": (_chmod, "Rvcf", "", {"recursive": "R", "verbose": "v"}, {}),
    "ln": (_ln, "sfvnFTr", "t", {"symbolic": "s", "force": "f", "verbose": "v", "no-dereference": "n"},
           {"target-directory": "t"}),
}


USAGES = {
    "mkdir": Usage("[OPTION]... DIRECTORY...", "Create the DIRECTORY(ies), if they do not already exist.", (
        "-m, --mode=MODE   set file mode (as in chmod)",
        "-p, --parents     no error if existing, make parent directories as needed",
        "-v, --verbose     print a message for each created directory")),
    "rmdir": Usage("[OPTION]... DIRECTORY...", "Remove the DIRECTORY(ies), if they are empty.", (
        "    --ignore-fail-on-non-empty  ignore each failure to remove a non-empty directory",
        "-p, --parents   remove DIRECTORY and its ancestors",
        "-v, --verbose   output a diagnostic for every directory processed")),
    "rm": Usage("[OPTION]... [FILE]...", "Remove (unlink) the FILE(s).", (
        "-f, --force           ignore nonexistent files and arguments, never prompt",
        "-i                    (accepted; there is no prompt)",
        "-d, --dir             remove empty directories",
        "-r, -R, --recursive   remove directories and their contents recursively",
        "    --no-preserve-root  do not treat '/' specially",
        "-v, --verbose         explain what is being done")),
    "cp": Usage("[OPTION]... SOURCE... DIRECTORY", "Copy SOURCE to DEST, or multiple SOURCE(s) to DIRECTORY.", (
        "-a, --archive                same as -dR --preserve=all",
        "-d                           same as --no-dereference --preserve=links",
        "-f, --force                  remove a destination that cannot be opened, and try again",
        "-L, -H, -P                   follow symbolic links (always, on the command line, never)",
        "-n, --no-clobber             do not overwrite an existing file",
        "-p, --preserve               preserve mode and timestamps",
        "-R, -r, --recursive          copy directories recursively",
        "-t, --target-directory=DIRECTORY  copy all SOURCE arguments into DIRECTORY",
        "-u                           copy only when the SOURCE file is newer",
        "-v, --verbose                explain what is being done")),
    "mv": Usage("[OPTION]... SOURCE... DIRECTORY", "Rename SOURCE to DEST, or move SOURCE(s) to DIRECTORY.", (
        "-f, --force                  do not prompt before overwriting",
        "-i                           (accepted; there is no prompt)",
        "-n, --no-clobber             do not overwrite an existing file",
        "-t, --target-directory=DIRECTORY  move all SOURCE arguments into DIRECTORY",
        "-u                           move only when the SOURCE file is newer",
        "-v, --verbose                explain what is being done")),
    "touch": Usage("[OPTION]... FILE...",
                   "Update the access and modification times of each FILE to the current time.", (
        "-a, -m, -h            change only the access time / modification time / a link itself",
        "-c, --no-create       do not create any files",
        "-d, --date=STRING     parse STRING and use it instead of current time",
        "-r, --reference=FILE  use this file's times instead of current time",
        "-t STAMP              use [[CC]YY]MMDDhhmm[.ss] instead of current time")),
    "chmod": Usage("[OPTION]... MODE[,MODE]... FILE...", "Change the mode of each FILE to MODE.", (
        "-c, -f                like verbose but report only changes / suppress most errors",
        "-v, --verbose         output a diagnostic for every file processed",
        "-R, --recursive       change files and directories recursively")),
    "ln": Usage("[OPTION]... TARGET LINK_NAME", "Create a link to TARGET with the name LINK_NAME.", (
        "-f, --force                 remove existing destination files",
        "-n, --no-dereference        treat LINK_NAME as a normal file if it is a symbolic link to a directory",
        "-r, -F, -T                  (relative, directory, no-target-directory)",
        "-s, --symbolic              make symbolic links instead of hard links",
        "-t, --target-directory=DIRECTORY  the DIRECTORY in which to create the links",
        "-v, --verbose               print name of each linked file")),
}


@command("mkdir", "rmdir", "rm", "cp", "mv", "touch", "chmod", "ln", needs_files=True, usage=USAGES)
def run(ctx, argv):
    cmd = argv[0]
    impl, flags, values, longs, long_values = _COMMANDS[cmd]

    args = argv
    if cmd == "chmod":          # chmod -w f: a mode that looks like an option
        args = [a if not re.fullmatch(r"-[rwxXst]+", a) else "\0" + a for a in argv]
    opts, ops = parse(cmd, args, short_flags=flags, short_values=values,
                      long_flags=longs, long_values=long_values)
    ops = [op[1:] if op.startswith("\0") else op for op in ops]
    r = _Run(ctx, cmd)
    impl(r, opts, ops)
    return r.status
