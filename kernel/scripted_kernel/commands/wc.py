"""wc: line, word, character and byte counts of standard input."""
from __future__ import annotations

from ._options import no_files, parse, run_guarded

NAMES = ("wc",)


def run(sh, argv):
    def body():
        opts, ops = parse("wc", argv, short_flags="lwcmL",
                          long_flags={"lines": "l", "words": "w", "bytes": "c", "chars": "m",
                                      "max-line-length": "L"})
        no_files("wc", ops)
        text = sh.stdin.read_all()
        wanted = [f for f in "lwmcL" if opts.has(f)] or ["l", "w", "c"]
        counts = {
            "l": text.count("\n"),
            "w": len(text.split()),
            "m": len(text),
            "c": len(text.encode("utf-8", "surrogateescape")),
            "L": max((len(line.expandtabs(8)) for line in text.split("\n")), default=0),
        }
        values = [str(counts[f]) for f in wanted]
        if len(values) == 1:
            sh.out(values[0] + "\n")
        else:
            sh.out(" ".join(v.rjust(7) for v in values) + "\n")
        return 0
    return run_guarded("wc", sh, body)
