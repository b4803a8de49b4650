"""wc: line, word, character and byte counts of standard input."""
from __future__ import annotations

import re

from ..fs import FsError
from ._options import Inputs, parse
from .registry import Usage, command


_WORD = re.compile(r"\S+")


USAGE = Usage("[OPTION]... [FILE]...", "Print newline, word, and byte counts for each FILE.", (
    "-c, --bytes            print the byte counts",
    "-m, --chars            print the character counts",
    "-l, --lines            print the newline counts",
    "-L, --max-line-length  print the maximum display width",
    "-w, --words            print the word counts"))


@command("wc", usage=USAGE)
def run(ctx, argv):
    opts, ops = parse("wc", argv, short_flags="lwcmL",
                      long_flags={"lines": "l", "words": "w", "bytes": "c", "chars": "m",
                                  "max-line-length": "L"})
    wanted = [f for f in "lwmcL" if opts.has(f)] or ["l", "w", "c"]
    inputs = Inputs(ctx, "wc", ops)
    rows = [(_counts(text, wanted), "" if name == "-" and not ops else name) for name, text in inputs]
    if len(ops) > 1:
        rows.append(({f: (max if f == "L" else sum)(r[0][f] for r in rows) if rows else 0
                      for f in wanted}, "total"))
    single = len(wanted) == 1 and len(ops) <= 1
    width = 1 if single else max([len(str(r[0][f])) for r in rows for f in wanted] +
                                 [7 if not ops or "-" in ops else _size_width(ctx, ops)])
    for counts, name in rows:
        cells = [str(counts[f]).rjust(width) for f in wanted]
        ctx.out(" ".join(cells) + (" " + name if name else "") + "\n")
    return inputs.status


def _size_width(ctx, ops: list) -> int:
    """GNU's column width for regular files: the digits of their total size."""
    total = 0
    for name in ops:
        try:
            total += ctx.fs.stat(ctx.path(name)).size
        except FsError:
            pass
    return len(str(total))


_COUNTERS = {
    "l": lambda text: text.count("\n"),
    "w": lambda text: sum(1 for _ in _WORD.finditer(text)),    # no list of every word
    "m": len,
    "c": lambda text: len(text) if text.isascii() else len(text.encode("utf-8", "surrogateescape")),
    "L": lambda text: max((len(line.expandtabs(8)) for line in text.split("\n")), default=0),
}


def _counts(text: str, wanted: list) -> dict:
    return {f: _COUNTERS[f](text) for f in wanted}
