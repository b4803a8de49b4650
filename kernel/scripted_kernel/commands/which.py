"""which: where a program is on $PATH, as Debian's `which` (debianutils) prints it.

The engine's own commands are programs installed in /usr/bin and, through Debian's merged
/usr, in /bin: `which ls` prints /usr/bin/ls where a real system does, and an executable script
of the filesystem earlier on $PATH comes first, as it does when the script runs the name
(dispatch: `shadowing_program`)."""
from __future__ import annotations

from ..fs import FsError
from .registry import Usage, command

# Where the engine's commands are installed (Debian: /bin is a link to /usr/bin).
INSTALLED_IN = ("/usr/bin", "/bin")
# Builtins the shell runs itself that Debian also installs as programs (coreutils, procps, bash).
ALSO_PROGRAMS = frozenset(("echo", "printf", "test", "[", "true", "false", "kill", "pwd",
                           "timeout", "bash", "sh"))


def _executable_file(ctx, path: str) -> bool:
    try:
        return ctx.fs.stat(ctx.path(path)).is_file and ctx.fs.access(ctx.path(path), "x")
    except FsError:
        return False


def _provided(ctx, name: str) -> bool:
    return ctx.is_command(name) or name in ALSO_PROGRAMS


def _path_entries(path: str) -> list:
    """$PATH's directories as the script's `IFS=: for ELEMENT in $PATH` splits them once it has
    doubled a final colon: an empty entry (the current directory) survives at the end."""
    if not path:
        return []
    entries = path.split(":")
    if path.endswith("::"):
        entries.pop()
    return entries


def locations(ctx, name: str, every: bool) -> list:
    """The paths `which` prints for `name`: the first (or, with -a, every) executable file of
    that name in a directory of $PATH, the engine's commands included."""
    if "/" in name:
        return [name] if _executable_file(ctx, name) else []
    found = []
    for directory in _path_entries(ctx.getenv("PATH", "") or ""):
        candidate = f"{directory or '.'}/{name}"
        if _executable_file(ctx, candidate) or (directory in INSTALLED_IN and _provided(ctx, name)):
            found.append(candidate)
            if not every:
                break
    return found


@command("which", usage=Usage("[-a] args", "Locate a command on $PATH.",
                              ("-a  print all matching pathnames of each argument",)),
         needs_files=True)
def run(ctx, argv):
    args, every = argv[1:], False
    while args and args[0].startswith("-") and args[0] != "-":
        option = args.pop(0)
        if option == "--":
            break
        for letter in option[1:]:
            if letter != "a":
                ctx.err(f"Illegal option -{letter}\n")
                ctx.out("Usage: /usr/bin/which [-a] args\n")       # on stdout, as the script does
                return 2
            every = True
    status = 0 if args else 1
    for name in args:
        found = locations(ctx, name, every)
        for path in found:
            ctx.out(path + "\n")
        if not found:
            status = 1
    return status
