"""which: where a program is on $PATH, as Debian's `which` (debianutils) prints it.

The engine's own commands are programs installed in /usr/bin and, through Debian's merged
/usr, in /bin: `which ls` prints /usr/bin/ls where a real system does, and an executable script
of the filesystem earlier on $PATH comes first, as it does when the script runs the name
(dispatch: `shadowing_program`)."""
from __future__ import annotations

from .registry import Usage, command


def locations(ctx, name: str, every: bool) -> list:
    """The paths `which` prints for `name` (the lookup `type -a` shares: shell/builtins/files.py)."""
    return ctx.program_locations(name, every)


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
