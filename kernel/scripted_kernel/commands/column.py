"""column: align whitespace- (or -s) separated input into a table (-t), or fill columns."""
from __future__ import annotations

from ._options import read_input, parse, split_lines
from .registry import Usage, command



def _split_any(line: str, separators: str) -> list:
    cells, start = [], 0
    for k, ch in enumerate(line):
        if ch in separators:
            cells.append(line[start:k])
            start = k + 1
    cells.append(line[start:])
    return cells


USAGE = Usage("[options] [file ...]", "Columnate lists.", (
    "-t, --table                  create a table",
    "-s, --separator <string>     possible table delimiters",
    "-o, --output-separator <string>  columns separator for table output (default is two spaces)",
    "-c, --output-width <width>   width of output in number of characters",
    "-n, -x, -e                   (accepted)"))


@command("column", usage=USAGE)
def run(ctx, argv):
    opts, ops = parse("column", argv, short_flags="tnxe", short_values="sco",
                      long_flags={"table": "t"},
                      long_values={"separator": "s", "output-separator": "o", "output-width": "c"})
    text, status = read_input(ctx, "column", ops)
    lines = [ln for ln in split_lines(text) if ln.strip()]
    if not opts.has("t"):
        ctx.out("".join(ln + "\n" for ln in lines))
        return status
    seps = opts.get("s")
    # util-linux 2.38: -s splits at every separator character (empty cells stay), a short
    # row gets empty cells, and every column but the last is padded
    rows = [ln.split() if seps is None else _split_any(ln, seps) for ln in lines]
    width = max((len(r) for r in rows), default=0)
    widths = [0] * width
    for r in rows:
        for k, cell in enumerate(r):
            widths[k] = max(widths[k], len(cell))
    gap = opts.get("o", "  ")
    pending, size = [], 0
    for count, r in enumerate(rows, 1):
        # a row is padded here, as it goes out: one row of a million cells above ten thousand
        # short rows made them all a million cells wide in memory
        cells = [r[k].ljust(widths[k]) if k < len(r) else " " * widths[k] for k in range(width - 1)]
        line = gap.join(cells + [r[width - 1] if len(r) == width else ""]) + "\n"
        pending.append(line)
        size += len(line)
        if size >= 1 << 20 or not count & 0xFFF:
            ctx.out("".join(pending))
            pending, size = [], 0
            ctx.budget.check_clock()
    ctx.out("".join(pending))
    return 0
