"""tac: standard input with its lines in reverse order."""
from __future__ import annotations

from ._options import no_files, parse, run_guarded

NAMES = ("tac",)


def run(sh, argv):
    def body():
        opts, ops = parse("tac", argv, short_values="s", long_values={"separator": "s"})
        no_files("tac", ops)
        sep = opts.get("s", "\n")
        text = sh.stdin.read_all()
        if not text:
            return 0
        records = text.split(sep)
        tail = records.pop()            # text after the last separator (no separator of its own)
        out = [r + sep for r in reversed(records)]
        sh.out((tail if tail else "") + "".join(out))
        return 0
    return run_guarded("tac", sh, body)
