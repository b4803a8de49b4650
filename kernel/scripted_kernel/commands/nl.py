"""nl, paste, fold: line numbering, merging and wrapping of standard input."""
from __future__ import annotations

from ._options import Inputs, read_input, UsageError, integer, parse, split_lines
from .registry import Usage, command

_MAX_WIDTH = 1 << 20            # GNU nl allows up to INT_MAX; a wider field is only a memory bomb


def _nl(ctx, argv):
    opts, ops = parse("nl", argv, short_values="bwsvinf", long_values={
        "body-numbering": "b", "number-width": "w", "number-separator": "s", "starting-line-number": "v",
        "line-increment": "i", "number-format": "n"})
    style = opts.get("b", "t")
    width = integer(opts.get("w", "6"), "nl: invalid line number field width: ‘{}’")
    if not 0 < width <= _MAX_WIDTH:
        raise UsageError(f"nl: invalid line number field width: ‘{width}’: Numerical result out of range")
    sep = opts.get("s", "\t")
    number = integer(opts.get("v", "1"), "nl: invalid starting line number: ‘{}’")
    step = integer(opts.get("i", "1"), "nl: invalid line number increment: ‘{}’")
    fmt = opts.get("n", "rn")
    out = []
    text, status = read_input(ctx, "nl", ops)
    for line in split_lines(text):
        if style == "a" or (style == "t" and line):
            text = str(number)
            text = text.ljust(width) if fmt == "ln" else (text.zfill(width) if fmt == "rz" else text.rjust(width))
            out.append(f"{text}{sep}{line}\n")
            number += step
        else:
            out.append(" " * (width + len(sep)) + line + "\n")
    ctx.out("".join(out))
    return status


def _paste(ctx, argv):
    opts, ops = parse("paste", argv, short_flags="sz", short_values="d",
                      long_flags={"serial": "s", "zero-terminated": "z"}, long_values={"delimiters": "d"})
    delims = opts.get("d", "\t").replace("\\n", "\n").replace("\\t", "\t").replace("\\0", "")
    sep = "\0" if opts.has("z") else "\n"
    if any(op != "-" for op in ops):
        return _paste_files(ctx, ops, delims, sep, opts.has("s"))
    lines = split_lines(ctx.stdin.read_all(), sep)
    columns = max(1, len(ops))
    if opts.has("s"):
        if not lines:
            ctx.out(sep)
            return 0
        out = [lines[0]]
        for k, line in enumerate(lines[1:]):
            out.append((delims[k % len(delims)] if delims else "") + line)
        ctx.out("".join(out) + sep)
        return 0
    rows = [lines[i:i + columns] for i in range(0, len(lines), columns)]
    out = []
    for row in rows:
        row += [""] * (columns - len(row))
        text = row[0]
        for k, cell in enumerate(row[1:]):
            text += (delims[k % len(delims)] if delims else "") + cell
        out.append(text + sep)
    ctx.out("".join(out))
    return 0


def _paste_files(ctx, ops: list, delims: str, sep: str, serial: bool) -> int:
    """paste FILE...: line k of every file on one line (-s: each file on one line)."""
    inputs = Inputs(ctx, "paste", ops)
    columns = [split_lines(text, sep) for _, text in inputs]
    if inputs.status:
        return inputs.status

    def joined(cells):
        text = cells[0] if cells else ""
        for k, cell in enumerate(cells[1:]):
            text += (delims[k % len(delims)] if delims else "") + cell
        return text + sep
    if serial:
        ctx.out("".join(joined(lines) for lines in columns))
        return 0
    rows = max((len(lines) for lines in columns), default=0)
    ctx.out("".join(joined([lines[r] if r < len(lines) else "" for lines in columns])
                   for r in range(rows)))
    return 0


def _fold(ctx, argv):
    opts, ops = parse("fold", argv, short_flags="bs", short_values="w",
                      long_flags={"bytes": "b", "spaces": "s"}, long_values={"width": "w"},
                      numeric_short="w")
    width = integer(opts.get("w", "80"), "fold: invalid number of columns: ‘{}’")
    text, status = read_input(ctx, "fold", ops)
    if opts.has("b"):
        ctx.out(_fold_text(text.encode("utf-8", "surrogateescape"), width, opts.has("s"), True))
    else:
        ctx.out("\n".join(_fold_line(line, width, opts.has("s")) for line in text.split("\n")))
    return status


def _fold_line(line: str, width: int, at_blanks: bool) -> str:
    """One line folded; where every character is one column wide (no tab, backspace or
    carriage return) by slicing, else by GNU fold's column-counting loop."""
    if len(line) <= width:
        return line
    if "\t" in line or "\b" in line or "\r" in line or width < 1:
        return _fold_text(line, width, at_blanks, False)
    pieces = []
    while len(line) > width:
        cut = width
        if at_blanks:
            blank = line.rfind(" ", 0, width)
            if blank >= 0:
                cut = blank + 1
        pieces.append(line[:cut])
        line = line[cut:]
    pieces.append(line)
    return "\n".join(pieces)


def _next_column(column: int, c, by_bytes: bool) -> int:
    """GNU fold's column after c: a tab goes to the next multiple of 8, a backspace back one,
    a carriage return to 0 (with -b every byte is one column)."""
    if by_bytes:
        return column + 1
    if c == "\t":
        return column + 8 - column % 8
    if c == "\b":
        return max(0, column - 1)
    if c == "\r":
        return 0
    return column + 1


def _fold_text(text, width: int, at_blanks: bool, by_bytes: bool) -> str:
    """GNU fold's loop: a line breaks before the character that would pass `width`; with -s,
    after the last blank before it when there is one."""
    if by_bytes:
        text = [text[i:i + 1] for i in range(len(text))]
    newline, blanks = (b"\n", (b" ", b"\t")) if by_bytes else ("\n", (" ", "\t"))
    out: list = []                      # characters, or bytes of one byte with -b
    line: list = []
    column = 0
    for c in text:
        if c == newline:
            out.extend(line)
            out.append(newline)
            line, column = [], 0
            continue
        while True:
            column = _next_column(column, c, by_bytes)
            if column <= width:
                break
            if at_blanks:
                blank = max((k for k, ch in enumerate(line) if ch in blanks), default=-1)
                if blank >= 0:
                    out.extend(line[:blank + 1])
                    out.append(newline)
                    line = line[blank + 1:]
                    column = 0
                    for ch in line:
                        column = _next_column(column, ch, by_bytes)
                    continue
            if not line:        # a single character wider than the line: it goes out alone
                break
            out.extend(line)
            out.append(newline)
            line, column = [], 0
        line.append(c)
    out.extend(line)
    if by_bytes:
        return b"".join(out).decode("utf-8", "surrogateescape")
    return "".join(out)


USAGES = {
    "nl": Usage("[OPTION]... [FILE]...", "Write each FILE to standard output, with line numbers added.", (
        "-b, --body-numbering=STYLE      use STYLE for numbering body lines (a, t, n, pBRE)",
        "-i, --line-increment=NUMBER     line number increment at each line",
        "-n, --number-format=FORMAT      insert line numbers according to FORMAT (ln, rn, rz)",
        "-s, --number-separator=STRING   add STRING after (possible) line number",
        "-v, --starting-line-number=NUMBER  first line number for each section",
        "-w, --number-width=NUMBER       use NUMBER columns for line numbers")),
    "paste": Usage("[OPTION]... [FILE]...",
                   "Write lines consisting of the sequentially corresponding lines from each FILE.", (
        "-d, --delimiters=LIST   reuse characters from LIST instead of TABs",
        "-s, --serial            paste one file at a time instead of in parallel",
        "-z, --zero-terminated   line delimiter is NUL, not newline")),
    "fold": Usage("[OPTION]... [FILE]...", "Wrap input lines in each FILE, writing to standard output.", (
        "-b, --bytes         count bytes rather than columns",
        "-s, --spaces        break at spaces",
        "-w, --width=WIDTH   use WIDTH columns instead of 80")),
}


@command("nl", "paste", "fold", usage=USAGES)
def run(ctx, argv):
    impl = {"nl": _nl, "paste": _paste, "fold": _fold}[argv[0]]
    return impl(ctx, argv)
