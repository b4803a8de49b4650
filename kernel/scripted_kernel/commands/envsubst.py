"""envsubst: substitute the values of environment variables ($VAR and ${VAR}) in standard
input, as GNU gettext's envsubst does; a SHELL-FORMAT argument limits which variables are
substituted, and -v lists the variables it names."""
from __future__ import annotations

import re

from ._options import UsageError, parse
from .registry import Usage, command

# $NAME or ${NAME}: nothing else (no ${NAME:-default}, no $1) is a reference for envsubst
REFERENCE = re.compile(r"\$(?:([A-Za-z_][A-Za-z0-9_]*)|\{([A-Za-z_][A-Za-z0-9_]*)\})")


def referenced_names(shell_format: str) -> list:
    """The variables a SHELL-FORMAT names, in order, repeats included (as -v prints them)."""
    return [m.group(1) or m.group(2) for m in REFERENCE.finditer(shell_format)]


def substitute(text: str, env: dict, only=None) -> str:
    def value(m: re.Match) -> str:
        name = m.group(1) or m.group(2)
        if only is not None and name not in only:
            return m.group(0)
        return env.get(name, "")
    return REFERENCE.sub(value, text)


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
    ctx.out(substitute(ctx.stdin.read_all(), ctx.env(), only))
    return 0


__all__ = ["substitute", "referenced_names"]
