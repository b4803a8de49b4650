"""tac: standard input with its lines in reverse order."""
from __future__ import annotations

from ._options import Inputs, parse
from .registry import Usage, command



USAGE = Usage("[OPTION]... [FILE]...", "Write each FILE to standard output, last line first.", (
    "-s, --separator=STRING   use STRING as the separator instead of newline",))


@command("tac", usage=USAGE)
def run(ctx, argv):
    opts, ops = parse("tac", argv, short_values="s", long_values={"separator": "s"})
    sep = opts.get("s", "\n")
    inputs = Inputs(ctx, "tac", ops, message="tac: failed to open '{name}' for reading: {reason}")
    for _, text in inputs:
        if not text:
            continue
        records = text.split(sep)
        tail = records.pop()        # text after the last separator (no separator of its own)
        ctx.out(tail + "".join(r + sep for r in reversed(records)))
    return inputs.status
