"""rev: reverse the characters of each line."""
from __future__ import annotations

from ._options import read_input, parse, run_guarded

NAMES = ("rev",)


def run(sh, argv):
    def body():
        _, ops = parse("rev", argv)
        text, status = read_input(sh, "rev", ops)
        lines = text.split("\n")
        sh.out("\n".join(line[::-1] for line in lines))
        return status
    return run_guarded("rev", sh, body)
