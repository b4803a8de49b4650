"""nl, paste, fold: line numbering, merging and wrapping of standard input."""
from __future__ import annotations

from ._options import UsageError, no_files, parse, run_guarded, split_lines

NAMES = ("nl", "paste", "fold")


def _nl(sh, argv):
    opts, ops = parse("nl", argv, short_values="bwsvinf", long_values={
        "body-numbering": "b", "number-width": "w", "number-separator": "s", "starting-line-number": "v",
        "line-increment": "i", "number-format": "n"})
    no_files("nl", ops)
    style = opts.get("b", "t")
    width = int(opts.get("w", "6"))
    sep = opts.get("s", "\t")
    number = int(opts.get("v", "1"))
    step = int(opts.get("i", "1"))
    fmt = opts.get("n", "rn")
    out = []
    for line in split_lines(sh.stdin.read_all()):
        if style == "a" or (style == "t" and line.strip()):
            text = str(number)
            text = text.ljust(width) if fmt == "ln" else (text.zfill(width) if fmt == "rz" else text.rjust(width))
            out.append(f"{text}{sep}{line}\n")
            number += step
        else:
            out.append(" " * (width + len(sep)) + line + "\n" if style != "n" else " " * (width + len(sep)) + line + "\n")
    sh.out("".join(out))
    return 0


def _paste(sh, argv):
    opts, ops = parse("paste", argv, short_flags="sz", short_values="d",
                      long_flags={"serial": "s", "zero-terminated": "z"}, long_values={"delimiters": "d"})
    no_files("paste", ops)
    delims = opts.get("d", "\t").replace("\\n", "\n").replace("\\t", "\t").replace("\\0", "")
    sep = "\0" if opts.has("z") else "\n"
    lines = split_lines(sh.stdin.read_all(), sep)
    columns = max(1, len(ops))
    if opts.has("s"):
        if not lines:
            sh.out(sep)
            return 0
        out = [lines[0]]
        for k, line in enumerate(lines[1:]):
            out.append((delims[k % len(delims)] if delims else "") + line)
        sh.out("".join(out) + sep)
        return 0
    rows = [lines[i:i + columns] for i in range(0, len(lines), columns)]
    out = []
    for row in rows:
        row += [""] * (columns - len(row))
        text = row[0]
        for k, cell in enumerate(row[1:]):
            text += (delims[k % len(delims)] if delims else "") + cell
        out.append(text + sep)
    sh.out("".join(out))
    return 0


def _fold(sh, argv):
    opts, ops = parse("fold", argv, short_flags="bs", short_values="w",
                      long_flags={"bytes": "b", "spaces": "s"}, long_values={"width": "w"},
                      numeric_short="w")
    no_files("fold", ops)
    try:
        width = int(opts.get("w", "80"))
    except ValueError:
        raise UsageError(f"fold: invalid number of columns: '{opts.get('w')}'") from None
    out = []
    for line in sh.stdin.read_all().split("\n"):
        pieces = []
        while len(line) > width:
            cut = width
            if opts.has("s"):
                space = line.rfind(" ", 0, width)
                if space >= 0:
                    cut = space + 1
            pieces.append(line[:cut])
            line = line[cut:]
        pieces.append(line)
        out.append("\n".join(pieces))
    sh.out("\n".join(out))
    return 0


def run(sh, argv):
    impl = {"nl": _nl, "paste": _paste, "fold": _fold}[argv[0]]
    return run_guarded(argv[0], sh, lambda: impl(sh, argv))
