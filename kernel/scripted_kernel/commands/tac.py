"""tac: standard input with its lines in reverse order."""
from __future__ import annotations

from ._options import Inputs, parse, run_guarded

NAMES = ("tac",)


def run(sh, argv):
    def body():
        opts, ops = parse("tac", argv, short_values="s", long_values={"separator": "s"})
        sep = opts.get("s", "\n")
        inputs = Inputs(sh, "tac", ops, message="tac: failed to open '{name}' for reading: {reason}")
        for _, text in inputs:
            if not text:
                continue
            records = text.split(sep)
            tail = records.pop()        # text after the last separator (no separator of its own)
            sh.out(tail + "".join(r + sep for r in reversed(records)))
        return inputs.status
    return run_guarded("tac", sh, body)
