"""Builtins about the filesystem: cd, pwd, pushd, popd, dirs, umask, source, and running
scripts (`bash FILE`, `sh -c TEXT`, `./x.sh`). In logic mode (NoFs) they refuse as before."""
from __future__ import annotations

from ...fs import FsError, access, lexical
from ...base.errors import ExitSignal, FatalError, ReturnSignal
from ..state import EXPORT, Var
from .registry import BUILTINS, builtin


def _refuse_without_fs(sh, argv) -> bool:
    if sh.fs.enabled:
        return False
    sh.error(f"{argv[0]}: {access.DIRECTORIES_DISABLED}")
    return True


def change_directory(sh, cmd: str, target: str, physical: bool = False) -> bool:
    """Make `target` the working directory (logically, as bash's default -L, unless
    `physical`); report a failure as `cmd: target: reason`."""
    here = sh.get_value("PWD") or sh.cwd
    if not here.startswith("/"):
        here = sh.cwd
    joined = target if target.startswith("/") else here.rstrip("/") + "/" + target
    try:
        if not physical:
            _check_dotdot(sh, joined)
        new = sh.fs.realpath(joined) if physical else lexical(joined)
        st = sh.fs.stat(new)
        if not st.is_dir:
            raise FsError("Not a directory")
        if not sh.fs.access(new, "x"):
            raise FsError("Permission denied")
    except FsError as e:
        sh.error(f"{cmd}: {target}: {e.strerror}")
        return False
    sh.set_var("OLDPWD", sh.get_value("PWD") or sh.cwd)
    sh.cwd = new
    sh.set_var("PWD", new)
    return True


def _check_dotdot(sh, path: str):
    """bash's logical `cd a/..` still needs `a` to be a directory."""
    parts = path.split("/")
    for k, part in enumerate(parts):
        if part == ".." and k:
            before = lexical("/".join(parts[:k]) or "/")
            if not sh.fs.stat(before).is_dir:
                raise FsError("Not a directory")


def _cdpath_candidates(sh, target: str) -> list:
    """(directory, found through CDPATH) to try for `cd target`."""
    if target.startswith(("/", "./", "../")) or target in (".", ".."):
        return [(target, False)]
    cdpath = sh.get_value("CDPATH")
    if not cdpath:
        return [(target, False)]
    out = []
    for entry in cdpath.split(":"):
        if entry:
            out.append((entry.rstrip("/") + "/" + target, True))
        else:
            out.append((target, False))
    out.append((target, False))
    return out


@builtin("cd")
def cd(sh, argv):
    if _refuse_without_fs(sh, argv):
        return 1
    args, physical = argv[1:], False
    while args and args[0].startswith("-") and len(args[0]) > 1 and args[0] != "-":
        if args[0] == "--":
            args = args[1:]
            break
        for flag in args[0][1:]:
            if flag not in "LPe@":
                sh.error(f"cd: -{flag}: invalid option")
                sh.err("cd: usage: cd [-L|[-P [-e]] [-@]] [dir]\n")
                return 2
            physical = flag == "P" or (physical and flag != "L")
        args = args[1:]
    if len(args) > 1:
        sh.error("cd: too many arguments")
        return 1
    if not args or args[0] == "":
        if not args:
            home = sh.get_value("HOME")
            if home is None:
                sh.error("cd: HOME not set")
                return 1
            args = [home]
        else:
            return 0
    target = args[0]
    if target == "-":
        old = sh.get_value("OLDPWD")
        if old is None:
            sh.error("cd: OLDPWD not set")
            return 1
        if not change_directory(sh, "cd", old, physical):
            return 1
        sh.out(sh.cwd + "\n")
        return 0
    for candidate, via_cdpath in _cdpath_candidates(sh, target):
        if via_cdpath or len(_cdpath_candidates(sh, target)) > 1:
            if not _is_directory(sh, candidate):
                continue
        if change_directory(sh, "cd", candidate, physical):
            if via_cdpath:
                sh.out(sh.cwd + "\n")
            return 0
        return 1
    return 1 if change_directory(sh, "cd", target, physical) is False else 0


def _is_directory(sh, name: str) -> bool:
    try:
        return sh.fs.stat(sh.path(name)).is_dir
    except FsError:
        return False


@builtin("pwd")
def pwd(sh, argv):
    args = argv[1:]
    physical = False
    for a in args:
        if a in ("-P", "-L"):
            physical = a == "-P"
        elif a.startswith("-") and len(a) > 1:
            sh.error(f"pwd: {a[:2]}: invalid option")
            sh.err("pwd: usage: pwd [-LP]\n")
            return 2
    here = sh.cwd
    if physical and sh.fs.enabled:
        try:
            here = sh.fs.realpath(here)
        except FsError as e:
            sh.error(f"pwd: error retrieving current directory: {e.strerror}")
            return 1
    sh.out(here + "\n")
    return 0


def _tilde_form(sh, path: str) -> str:
    home = sh.get_value("HOME")
    if home and home != "/" and (path == home or path.startswith(home.rstrip("/") + "/")):
        return "~" + path[len(home.rstrip("/")):]
    return path


def _print_stack(sh, long: bool = False, per_line: bool = False, numbered: bool = False):
    entries = [sh.cwd] + sh.dirstack
    shown = [e if long else _tilde_form(sh, e) for e in entries]
    if numbered:
        sh.out("".join(f"{i:2d}  {e}\n" for i, e in enumerate(shown)))
    elif per_line:
        sh.out("".join(e + "\n" for e in shown))
    else:
        sh.out(" ".join(shown) + "\n")


def _stack_index(sh, cmd: str, arg: str):
    """+N / -N of pushd, popd and dirs: an index into [cwd] + stack, or None (reported)."""
    size = len(sh.dirstack) + 1
    digits = arg[1:]
    if not (digits.isascii() and digits.isdigit()):
        sh.error(f"{cmd}: {arg}: invalid number")
        return None
    n = int(digits)
    if n >= size:
        sh.error(f"{cmd}: {arg}: directory stack index out of range")
        return None
    return n if arg[0] == "+" else size - 1 - n


@builtin("pushd")
def pushd(sh, argv):
    if _refuse_without_fs(sh, argv):
        return 1
    args = [a for a in argv[1:] if a != "--"]
    if len(args) > 1:
        sh.error("pushd: too many arguments")
        return 1
    if not args:
        if not sh.dirstack:
            sh.error("pushd: no other directory")
            return 1
        top = sh.dirstack[0]
        old = sh.cwd
        if not change_directory(sh, "pushd", top):
            return 1
        sh.dirstack[0] = old
    elif args[0][:1] in "+-" and len(args[0]) > 1:
        index = _stack_index(sh, "pushd", args[0])
        if index is None:
            return 1
        entries = [sh.cwd] + sh.dirstack
        rotated = entries[index:] + entries[:index]
        if not change_directory(sh, "pushd", rotated[0]):
            return 1
        sh.dirstack = rotated[1:]
    else:
        old = sh.cwd
        if not change_directory(sh, "pushd", args[0]):
            return 1
        sh.dirstack.insert(0, old)
    _print_stack(sh)
    return 0


@builtin("popd")
def popd(sh, argv):
    if _refuse_without_fs(sh, argv):
        return 1
    args = [a for a in argv[1:] if a != "--"]
    if not sh.dirstack:
        sh.error("popd: directory stack empty")
        return 1
    if args and args[0][:1] in "+-" and len(args[0]) > 1:
        index = _stack_index(sh, "popd", args[0])
        if index is None:
            return 1
        if index == 0:
            if not change_directory(sh, "popd", sh.dirstack[0]):
                return 1
            sh.dirstack.pop(0)
        else:
            sh.dirstack.pop(index - 1)
    else:
        if not change_directory(sh, "popd", sh.dirstack[0]):
            return 1
        sh.dirstack.pop(0)
    _print_stack(sh)
    return 0


@builtin("dirs")
def dirs(sh, argv):
    if _refuse_without_fs(sh, argv):
        return 1
    long = per_line = numbered = False
    for a in argv[1:]:
        if a == "-c":
            sh.dirstack = []
            return 0
        if a.startswith("-") and len(a) > 1 and not a[1:].isdigit():
            for flag in a[1:]:
                if flag not in "lpv":
                    sh.error(f"dirs: -{flag}: invalid option")
                    sh.err("dirs: usage: dirs [-clpv] [+N] [-N]\n")
                    return 2
            long, per_line, numbered = long or "l" in a, per_line or "p" in a, numbered or "v" in a
        elif a[:1] not in "+-" or len(a) == 1:
            sh.error(f"dirs: {a}: invalid option")
            sh.err("dirs: usage: dirs [-clpv] [+N] [-N]\n")
            return 2
        else:
            index = _stack_index(sh, "dirs", a)
            if index is None:
                return 1
            entry = ([sh.cwd] + sh.dirstack)[index]
            sh.out((entry if long else _tilde_form(sh, entry)) + "\n")
            return 0
    _print_stack(sh, long, per_line, numbered)
    return 0


_UMASK_WHO = {"u": 0o700, "g": 0o070, "o": 0o007, "a": 0o777}
_UMASK_PERM = {"r": 0o444, "w": 0o222, "x": 0o111}


@builtin("umask")
def umask(sh, argv):
    args = argv[1:]
    symbolic = printable = False
    while args and args[0].startswith("-") and len(args[0]) > 1:
        if args[0] == "--":
            args = args[1:]
            break
        bad = [c for c in args[0][1:] if c not in "Sp"]
        if bad:
            sh.error(f"umask: -{bad[0]}: invalid option")
            sh.err("umask: usage: umask [-p] [-S] [mode]\n")
            return 2
        symbolic = symbolic or "S" in args[0]
        printable = printable or "p" in args[0]
        args = args[1:]
    if not args:
        mask = sh.umask
        if symbolic:
            allowed = ~mask & 0o777
            text = ",".join(f"{who}=" + "".join(c for c, bit in (("r", 4), ("w", 2), ("x", 1))
                                                 if allowed >> shift & bit)
                            for who, shift in (("u", 6), ("g", 3), ("o", 0)))
            sh.out(("umask -S " if printable else "") + text + "\n")
        else:
            sh.out(("umask " if printable else "") + f"{mask:04o}\n")
        return 0
    spec = args[0]
    if spec[:1].isdigit():
        if any(c not in "01234567" for c in spec) or int(spec, 8) > 0o777:
            sh.error(f"umask: {spec}: octal number out of range")
            return 1
        sh.umask = int(spec, 8) & 0o777
        return 0
    allowed = ~sh.umask & 0o777
    for clause in spec.split(","):
        who_part = ""
        while clause and clause[0] in "ugoa":
            who_part += clause[0]
            clause = clause[1:]
        if not clause or clause[0] not in "+-=":
            sh.error(f"umask: `{clause[:1]}': invalid symbolic mode operator")
            return 1
        who = 0
        for c in who_part or "a":
            who |= _UMASK_WHO[c]
        op, perms = clause[0], clause[1:]
        bits = 0
        for c in perms:
            if c not in _UMASK_PERM:
                sh.error(f"umask: `{c}': invalid symbolic mode character")
                return 1
            bits |= _UMASK_PERM[c]
        bits &= who
        if op == "+":
            allowed |= bits
        elif op == "-":
            allowed &= ~bits
        else:
            allowed = (allowed & ~who) | bits
    sh.umask = ~allowed & 0o777
    return 0


def _find_in_path(sh, name: str):
    """The first file `name` in a directory of $PATH (inside the filesystem), or None."""
    for directory in (sh.get_value("PATH") or "").split(":"):
        candidate = (directory or ".").rstrip("/") + "/" + name
        try:
            if sh.fs.stat(sh.path(candidate)).is_file:
                return candidate
        except FsError:
            continue
    return None


@builtin("source", ".")
def source(sh, argv):
    args = argv[1:]
    if args and args[0] == "--":
        args = args[1:]
    if not args or not args[0]:
        sh.error(f"{argv[0]}: filename argument required")
        sh.err(f"{argv[0]}: usage: {argv[0]} filename [arguments]\n")
        return 2
    target = args[0]
    if not sh.fs.enabled and not access.is_descriptor(target):     # `source <(...)` needs no files
        sh.error(f"{argv[0]}: {target}: {access.SCRIPTS_DISABLED}")
        return 1
    found = target if "/" in target else (_find_in_path(sh, target) or target)
    try:
        text = access.read_text(sh, found)
    except FsError as e:
        sh.error(f"{target}: {e.strerror}")
        return 1
    fn = sh.compile_script(text)
    saved_positional = sh.positional
    if len(args) > 1:
        sh.positional = args[1:]
    saved_line = sh.lineno
    try:
        return fn(sh)
    except ReturnSignal as r:
        return r.status
    finally:
        sh.lineno = saved_line
        if len(args) > 1:
            sh.positional = saved_positional


def run_child_bash(sh, name: str, text: str, args: list, options: tuple = (),
               where: str = "", shopts: tuple = ()) -> int:
    """Run `text` as bash would run a script file or `bash -c`: a fresh shell inheriting the
    exported variables, the working directory and the filesystem; $0 is `name`, which also
    begins its error messages (`s.sh: line 3: x: command not found`). `options`: `set`
    arguments applied first (`bash -eux`); `where`: how a syntax error names the text
    (`bash: -c`, or the script's path)."""
    child = sh.script_shell()
    child.globals["PWD"] = Var(sh.get_value("PWD") or sh.cwd, EXPORT)
    child.subshell_level = sh.subshell_level + 1
    child.script_name = name
    child.positional = list(args)
    for fname, func in sh.functions.items():
        if fname in sh.exported_functions:
            child.functions[fname] = func
            child.exported_functions.add(fname)
    if options:
        status = BUILTINS["set"](child, ["set", *options])     # the shell's own, whatever a tool shadows
        if status:
            return 2
    for sign, name in shopts:
        BUILTINS["shopt"](child, ["shopt", "-s" if sign == "-" else "-u", name])
    try:
        fn = sh.compile_script(text)
    except FatalError as e:
        sh.error(e.message)
        return 2
    where = where or name
    status = child.run_subshell(lambda shell: fn.run_as_script(shell, where))
    if fn.syntax_error is not None and status == 2:
        return 2
    return status


# bash's single-letter options that `set` takes too (-l, -i, -s, -c are bash's own)
_SHELL_FLAGS = set("euxvfnaCBhTkmpPtbH")
_BASH_USAGE = ("Usage:\t{0} [GNU long option] [option] ...\n\t{0} [GNU long option] [option] "
               "script-file ...\n")


@builtin("bash", "sh")
def bash(sh, argv):
    """`bash [-eux] [-o opt] [-l] -c TEXT [NAME [ARGS]]`, `bash [options] FILE [ARGS]`,
    `bash < FILE`, `bash <<EOF`; option letters combine (`-lc`, `-euo pipefail`)."""
    args = argv[1:]
    options: list = []
    shopts: list = []
    command = False
    read_stdin = False
    while args and args[0][:1] in "-+" and len(args[0]) > 1:
        a = args.pop(0)
        if a in ("--", "-"):
            break
        if a.startswith("--"):
            if a in ("--norc", "--noprofile", "--posix", "--login", "--noediting", "--restricted",
                     "--verbose", "--debugger", "--dump-strings", "--wordexp", "--protected"):
                if a == "--verbose":
                    options.append("-v")
                continue
            if a in ("--rcfile", "--init-file") and args:
                args.pop(0)
                continue
            if a == "--version":
                sh.out(_VERSION_TEXT)
                return 0
            if a == "--help":
                sh.out(_BASH_USAGE.format(argv[0]))
                return 0
            sh.err(f"{argv[0]}: {a}: invalid option\n" + _BASH_USAGE.format(argv[0]))
            return 2
        sign = a[0]
        for c in a[1:]:
            if c == "c" and sign == "-":
                command = True
            elif c in "lirsD":
                read_stdin = read_stdin or c == "s"
            elif c == "o":
                if not args:            # bash -o alone lists the options, as `set -o`
                    options.append(sign + "o")
                    continue
                options.extend((sign + "o", args.pop(0)))
            elif c == "O":
                if args:
                    shopts.append((sign, args.pop(0)))
            elif c in _SHELL_FLAGS:
                options.append(sign + c)
            else:
                sh.err(f"{argv[0]}: {sign}{c}: invalid option\n" + _BASH_USAGE.format(argv[0]))
                return 2
    if command:
        if not args:
            sh.err(f"{argv[0]}: -c: option requires an argument\n")
            return 2
        text = args.pop(0)
        name = args[0] if args else argv[0]
        return run_child_bash(sh, name, text, args[1:], tuple(options), f"{name}: -c", tuple(shopts))
    if not args or read_stdin:
        return run_child_bash(sh, argv[0], sh.stdin.read_all(), args, tuple(options), argv[0],
                          tuple(shopts))
    target = args[0]
    if not sh.fs.enabled and not access.is_descriptor(target):
        sh.err(f"{argv[0]}: {target}: {access.SCRIPTS_DISABLED}\n")
        return 127
    try:
        text = access.read_text(sh, target)
    except FsError as e:
        sh.err(f"{argv[0]}: {target}: {e.strerror}\n")
        return 126 if e.strerror == "Is a directory" else 127
    return run_child_bash(sh, target, text, args[1:], tuple(options), "", tuple(shopts))


_VERSION_TEXT = """GNU bash, version 5.2.15(1)-release (x86_64-pc-linux-gnu)
Copyright (C) 2022 Free Software Foundation, Inc.
License GPLv3+: GNU GPL version 3 or later <http://gnu.org/licenses/gpl.html>

This is free software; you are free to change and redistribute it.
There is NO WARRANTY, to the extent permitted by law.
"""


def run_path(sh, name: str, argv: list):
    """Run the file `name` (a command with a slash, or found on $PATH) as a script: it must
    be a regular file with the execute bit. Returns its status, or None if it is not there."""
    try:
        st = sh.fs.stat(sh.path(name))
    except FsError as e:
        if e.strerror == "No such file or directory" and "/" not in name:
            return None
        sh.error(f"{name}: {e.strerror}")
        return 127
    if st.is_dir:
        sh.error(f"{name}: Is a directory")
        return 126
    if not sh.fs.access(sh.path(name), "x") or not sh.fs.access(sh.path(name), "r"):
        sh.error(f"{name}: Permission denied")
        return 126
    try:
        text = access.read_text(sh, name)
    except FsError as e:
        sh.error(f"{name}: {e.strerror}")
        return 126
    return run_child_bash(sh, name, text, argv[1:])


# Where the engine's commands live, as far as $PATH order goes: a script file of the same name
# in a directory listed before these runs instead (as a program earlier on $PATH would).
COMMAND_DIRS = frozenset(("/usr/local/bin", "/usr/bin", "/bin", "/usr/local/sbin", "/usr/sbin", "/sbin"))
DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"


# Where the engine's commands are installed (Debian: /bin is a link to /usr/bin), and the
# builtins the shell runs itself that Debian also installs as programs (coreutils, bash).
INSTALLED_IN = ("/usr/bin", "/bin")
ALSO_PROGRAMS = frozenset(("echo", "printf", "test", "[", "true", "false", "kill", "pwd",
                           "timeout", "bash", "sh"))


def path_entries(path: str) -> list:
    """$PATH's directories as the script's `IFS=: for ELEMENT in $PATH` splits them once it has
    doubled a final colon: an empty entry (the current directory) survives at the end."""
    if not path:
        return []
    entries = path.split(":")
    if path.endswith("::"):
        entries.pop()
    return entries


def program_locations(sh, name: str, every: bool, path: str, provided) -> list:
    """Where `name` is as a program, as `which`, `type -a` and `command -v` find it: the first
    (or, with `every`, each) executable file of that name in a directory of `path` ($PATH),
    the engine's commands (`provided(name)`) counting as installed in /usr/bin and /bin.
    `sh` is a shell or a command's context (its `fs` and `path`)."""
    def executable(candidate: str) -> bool:
        try:
            full = sh.path(candidate)
            return sh.fs.stat(full).is_file and sh.fs.access(full, "x")
        except FsError:
            return False
    if "/" in name:
        return [name] if executable(name) else []
    found = []
    for directory in path_entries(path):
        candidate = f"{directory or '.'}/{name}"
        if (directory in INSTALLED_IN and provided(name)) or executable(candidate):
            found.append(candidate)
            if not every:
                break
    return found


def shadowing_program(sh, name: str):
    """An executable file `name` in a $PATH directory listed before the engine's commands."""
    for directory in (sh.get_value("PATH") or "").split(":"):
        if directory in COMMAND_DIRS:
            return None
        candidate = (directory or ".").rstrip("/") + "/" + name
        try:
            if sh.fs.stat(sh.path(candidate)).is_file and sh.fs.access(sh.path(candidate), "x"):
                return candidate
        except FsError:
            continue
    return None


def find_program(sh, name: str):
    """`name` as a file to run: itself if it has a slash, else the first executable file of
    that name in a directory of $PATH, or failing that the first file of that name (which
    bash then reports as Permission denied)."""
    if not sh.fs.enabled or not name:
        return None
    if "/" in name:
        return name if sh.fs.exists(sh.path(name)) else None
    fallback = None
    for directory in (sh.get_value("PATH") or "").split(":"):
        candidate = (directory or ".").rstrip("/") + "/" + name
        try:
            if not sh.fs.stat(sh.path(candidate)).is_file:
                continue
        except FsError:
            continue
        if sh.fs.access(sh.path(candidate), "x"):
            return candidate
        fallback = fallback or candidate
    return fallback


__all__ = ["change_directory", "run_path", "run_child_bash", "find_program", "ExitSignal"]
