"""envsubst: substitute the values of environment variables ($VAR and ${VAR}) in standard
input, as GNU gettext's envsubst does; a SHELL-FORMAT argument limits which variables are
substituted, and -v lists the variables it names."""
from __future__ import annotations

import re
from typing import Iterator

from ._options import UsageError, parse
from .registry import Usage, command

# $NAME or ${NAME}: nothing else (no ${NAME:-default}, no $1) is a reference for envsubst
REFERENCE = re.compile(r"\$(?:([A-Za-z_][A-Za-z0-9_]*)|\{([A-Za-z_][A-Za-z0-9_]*)\})")


def referenced_names(shell_format: str) -> list:
    """The variables a SHELL-FORMAT names, in order, repeats included (as -v prints them)."""
    return [m.group(1) or m.group(2) for m in REFERENCE.finditer(shell_format)]


def substituted(text: str, env: dict, only=None) -> Iterator[str]:
    """The text with its references replaced, a piece at a time (a value may be 16 MB and be
    referenced a thousand times: the whole result was built before it went out)."""
    at = 0
    for m in REFERENCE.finditer(text):
        name = m.group(1) or m.group(2)
        yield text[at:m.start()]
        yield m.group(0) if only is not None and name not in only else env.get(name, "")
        at = m.end()
    yield text[at:]


def substitute(text: str, env: dict, only=None) -> str:
    return "".join(substituted(text, env, only))


@command("envsubst", usage=Usage("[OPTION] [SHELL-FORMAT]",
                                 "Substitutes the values of environment variables.",
                                 ("-v, --variables     output the variables occurring in SHELL-FORMAT",)))
def run(ctx, argv):
    opts, operands = parse("envsubst", argv, short_flags="v", long_flags={"variables": "v"})
    if len(operands) > 1:
        raise UsageError("envsubst: too many arguments")
    if opts.has("v"):
        if not operands:
            raise UsageError("envsubst: missing arguments")
        for name in referenced_names(operands[0]):
            ctx.out(name + "\n")
        return 0
    only = set(referenced_names(operands[0])) if operands else None
    pending, size = [], 0
    for piece in substituted(ctx.stdin.read_all(), ctx.env(), only):
        pending.append(piece)
        size += len(piece)
        if size >= 1 << 20:
            ctx.out("".join(pending))
            pending, size = [], 0
            ctx.budget.check_clock()
    ctx.out("".join(pending))
    return 0


__all__ = ["substitute", "referenced_names"]
