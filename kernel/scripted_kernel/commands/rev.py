"""rev: reverse the characters of each line."""
from __future__ import annotations

from ._options import no_files, parse, run_guarded

NAMES = ("rev",)


def run(sh, argv):
    def body():
        _, ops = parse("rev", argv)
        no_files("rev", ops)
        text = sh.stdin.read_all()
        lines = text.split("\n")
        sh.out("\n".join(line[::-1] for line in lines))
        return 0
    return run_guarded("rev", sh, body)
