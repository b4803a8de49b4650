"""rev: reverse the characters of each line."""
from __future__ import annotations

from ._options import read_input, parse
from .registry import Usage, command



USAGE = Usage("[file ...]", "Reverse lines characterwise.")


@command("rev", usage=USAGE)
def run(ctx, argv):
    _, ops = parse("rev", argv)
    text, status = read_input(ctx, "rev", ops)
    lines = text.split("\n")
    ctx.out("\n".join(line[::-1] for line in lines))
    return status
