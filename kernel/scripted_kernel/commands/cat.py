"""cat: copies standard input (logic mode has no files; `-` is standard input)."""
from __future__ import annotations

NAMES = ("cat",)


def run(sh, argv) -> int:
    number = False
    for arg in argv[1:]:
        if arg == "-":
            continue
        if arg in ("-n", "--number"):
            number = True
            continue
        if arg.startswith("-") and arg not in ("-u",):
            sh.err(f"cat: invalid option -- '{arg.lstrip('-')[:1]}'\n")
            return 1
        if not arg.startswith("-"):
            sh.err(f"cat: {arg}: file access is disabled in logic mode\n")
            return 1
    text = sh.stdin.read_all()
    if number:
        lines = text.splitlines(keepends=True)
        text = "".join(f"{k:6d}\t{line}" for k, line in enumerate(lines, 1))
    sh.out(text)
    return 0
