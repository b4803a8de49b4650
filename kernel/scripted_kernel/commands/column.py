"""column: align whitespace- (or -s) separated input into a table (-t), or fill columns."""
from __future__ import annotations

from ._options import no_files, parse, run_guarded, split_lines

NAMES = ("column",)


def run(sh, argv):
    def body():
        opts, ops = parse("column", argv, short_flags="tnxe", short_values="sco",
                          long_flags={"table": "t"},
                          long_values={"separator": "s", "output-separator": "o", "output-width": "c"})
        no_files("column", ops)
        lines = [ln for ln in split_lines(sh.stdin.read_all()) if ln.strip()]
        if not opts.has("t"):
            sh.out("".join(ln + "\n" for ln in lines))
            return 0
        seps = opts.get("s")
        rows = []
        for ln in lines:
            if seps is None:
                rows.append(ln.split())
            else:
                cells, cur = [], []
                for ch in ln:
                    if ch in seps:
                        cells.append("".join(cur))
                        cur = []
                    else:
                        cur.append(ch)
                cells.append("".join(cur))
                if not opts.has("n"):
                    cells = [c for c in cells if c != ""] or [""]
                rows.append(cells)
        width = max((len(r) for r in rows), default=0)
        widths = [max((len(r[k]) for r in rows if k < len(r)), default=0) for k in range(width)]
        gap = opts.get("o", "  ")
        out = []
        for r in rows:
            cells = [c.ljust(widths[k]) if k < len(r) - 1 else c for k, c in enumerate(r)]
            out.append(gap.join(cells).rstrip() + "\n" if opts.get("o") is None else gap.join(cells) + "\n")
        sh.out("".join(out))
        return 0
    return run_guarded("column", sh, body)
