"""pr: paginate or columnate files for printing (GNU coreutils): pages of 66 lines with a
5-line header (date, file name, page number) and a 5-line trailer, -t without them; -COLUMN
down (balanced on the last page) or -a across, -n numbers, -s separators, -d double spacing,
-o margins, padding written with tabs as GNU's print_white_space writes it."""
from __future__ import annotations

import re
import time
from typing import Iterator

from ..fs import FsError
from ._bytes import ByteInputs, lines_of, locale_quote, text
from ._options import UsageError, parse
from .registry import Usage, command
from ..base.limits import Budget

USAGE = Usage("[OPTION]... [FILE]...", "Paginate or columnate FILE(s) for printing.", (
    "+FIRST_PAGE[:LAST_PAGE]  begin [stop] printing with page FIRST_[LAST_]PAGE",
    "-COLUMN, --columns=COLUMN  output COLUMN columns",
    "-a, --across              print columns across rather than down",
    "-d, --double-space        double space the output",
    "-h, --header=HEADER       use a centered HEADER instead of filename in page header",
    "-l, --length=PAGE_LENGTH  set the page length to PAGE_LENGTH (66) lines",
    "-n, --number-lines[=SEP[DIGITS]]  number lines",
    "-o, --indent=MARGIN       offset each line with MARGIN (zero) spaces",
    "-s[CHAR], --separator[=CHAR]  separate columns by a single character",
    "-t, --omit-header         omit page headers and trailers",
    "-T, --omit-pagination     omit page headers and trailers, eliminate any pagination",
    "-w, --width=PAGE_WIDTH    set page width to PAGE_WIDTH (72) characters"))

HEADER_LINES = TRAILER_LINES = 5


_INT_MAX = 2 ** 31 - 1


class Page:
    """The layout options of one pr, checked as GNU's init_parameters checks them."""

    def __init__(self, opts, columns: int, budget: Budget):
        self.columns = columns
        self.across = opts.has("a")
        self.double = opts.has("d")
        self.header = opts.get("h")
        self.length = _number(opts.get("l", "66"), 1, "'-l PAGE_LENGTH' invalid number of lines")
        self.width = _number(opts.get("w", "72"), 1, "'-w PAGE_WIDTH' invalid number of characters")
        if opts.has("W"):
            _number(opts.get("W"), 1, "'-W PAGE_WIDTH' invalid number of characters")
        self.margin = _number(opts.get("o", "0"), 0, "'-o MARGIN' invalid line offset")
        self.omit = opts.has("t") or opts.has("T") or self.length <= HEADER_LINES + TRAILER_LINES
        self.separator = opts.get("s") if opts.has("s") else None
        self.number_sep, self.number_digits = None, 5
        if opts.has("n"):
            spec = opts.get("n") or ""
            self.number_sep = "\t"
            if spec and not spec[0].isdigit():
                self.number_sep, spec = spec[0], spec[1:]
            if spec:
                self.number_digits = _number(spec, 1, "'-n' extra characters or invalid number in "
                                             "the argument", usage=True)
        self.body = self.length if self.omit else self.length - HEADER_LINES - TRAILER_LINES
        if self.double:
            self.body = max(1, self.body // 2) if not self.omit else self.body // 2 or 1
        sep_length = len(self.separator) if self.separator is not None else 1
        self.column_width = (self.width - (columns - 1) * sep_length) // columns
        if self.column_width < 1:
            raise UsageError("pr: page width too narrow")
        if columns > 1 and not self.across and (self.column_width + 1) * self.body * columns > _INT_MAX:
            raise UsageError("pr: integer overflow")       # GNU's buffer of a page's columns
        for value, what in ((self.width, "page width"), (self.margin, "margin"),
                            (self.length, "page length"), (self.number_digits, "number width")):
            budget.check_length(value, f"pr: {what}")


def _number(value: str, minimum: int, problem: str, usage: bool = False) -> int:
    """GNU pr's getoptnum: a decimal int from `minimum` to INT_MAX, else its complaint (-n's,
    with `usage`, gives the reason only for an overflow)."""
    m = re.fullmatch(r"\s*([-+]?)0*(\d+)", value)
    reason = ""
    if m is None:
        number = None
    elif len(m.group(2)) > 10 or int(m.group(2)) > _INT_MAX:
        number, reason = None, (": Numerical result out of range" if m.group(1) == "-"
                                else ": Value too large for defined data type")
    else:
        number = -int(m.group(2)) if m.group(1) == "-" else int(m.group(2))
        if number < minimum:
            number, reason = None, "" if usage else ": Numerical result out of range"
    if number is None:
        message = f"pr: {problem}: {locale_quote(value)}{reason}"
        raise UsageError(message + "\nTry 'pr --help' for more information." if usage else message)
    return number


def _args(argv: list):
    """-3 is --columns=3; -s, -n take an optional value glued on."""
    out, columns, value_next = [], "1", False
    for a in argv[1:]:
        if value_next:                          # -w -5: the width -5, not five columns
            out.append(a)
            value_next = False
            continue
        value_next = a in _TAKING_VALUES
        if re.fullmatch(r"-\d+", a):
            columns = a[1:]
            continue
        if a.startswith("--columns="):
            columns = a.split("=", 1)[1]
            continue
        if a.startswith("-s") and not a.startswith("--"):
            out.append("--separator=" + (a[2:] or "\t"))
            continue
        if a.startswith("-n") and not a.startswith("--"):
            out.append("--number-lines=" + a[2:])
            continue
        if a in ("--separator", "--number-lines"):
            out.append(a + ("=\t" if a == "--separator" else "="))
            continue
        out.append(a)
    return [argv[0]] + out, columns


@command("pr", usage=USAGE)
def run(ctx, argv):
    args, columns = _args(argv)
    opts, ops = parse("pr", args, short_flags="adtTJ", short_values="hlowW", long_flags={
        "across": "a", "double-space": "d", "omit-header": "t", "omit-pagination": "T",
        "join-lines": "J"}, long_values={"header": "h", "length": "l", "indent": "o",
                                         "width": "w", "page-width": "W", "separator": "s",
                                         "number-lines": "n"})
    page = Page(opts, _number(columns, 1, "invalid number of columns"), ctx.budget)
    inputs = ByteInputs(ctx, "pr", ops)
    for name, data in inputs:
        lines = [text(line) for line in lines_of(data)]
        stamp = _date(ctx, name)
        title = page.header if page.header is not None else ("" if name == "-" else name)
        pending, size = [], 0
        for piece in _paginate(lines, page, stamp, title):     # out a MiB at a time: -o 1000000
            pending.append(piece)
            size += len(piece)
            if size >= _CHUNK_CHARS:
                ctx.out("".join(pending))
                pending, size = [], 0
                ctx.budget.check_clock()
        ctx.out("".join(pending))
    return inputs.status


_CHUNK_CHARS = 1 << 20
_TAKING_VALUES = {"-h", "-l", "-o", "-w", "-W", "--header", "--length", "--indent", "--width",
                  "--page-width"}


def _date(ctx, name: str) -> str:
    moment = ctx.budget.now()
    if name != "-":
        try:
            moment = ctx.fs.stat(ctx.path(name)).mtime
        except FsError:
            pass
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(moment))


def _paginate(lines: list, page: Page, stamp: str, title: str) -> Iterator[str]:
    """The output, a line (or a page's blank lines) at a time."""
    per_page = page.body * page.columns
    number = 1
    for page_no, start in enumerate(range(0, len(lines), per_page), 1):
        chunk = lines[start:start + per_page]
        if not page.omit:
            yield _header(page, stamp, title, page_no)
        shown = 0
        for row in _rows(chunk, page, number):     # one at a time: a row may be a margin of millions
            yield row + ("\n\n" if page.double else "\n")
            shown += 1
        number += len(chunk)
        if not page.omit:
            yield "\n" * (page.body * (2 if page.double else 1) - shown * (1 + page.double))
            yield "\n" * TRAILER_LINES


def _header(page: Page, stamp: str, title: str, page_no: int) -> str:
    page_text = f"Page {page_no}"
    available = max(0, page.width - len(stamp) - len(title) - len(page_text))
    left = available >> 1
    right = available - left
    return (f"\n\n{' ' * page.margin}{stamp}{' ' * max(left, 1)}{title}{' ' * max(right, 1)}"
            f"{page_text}\n\n\n")


def _rows(chunk: list, page: Page, first_number: int) -> Iterator[str]:
    """The lines of one page's body: single column as is, else columns laid out down
    (balanced) or across."""
    numbered = [(first_number + k, line) for k, line in enumerate(chunk)]
    if page.columns == 1:
        yield from (" " * page.margin + _numbered(page, n, line) for n, line in numbered)
        return
    if page.across:
        grid = [numbered[k:k + page.columns] for k in range(0, len(numbered), page.columns)]
    else:
        cols, start = [], 0
        for k in range(min(page.columns, len(numbered))):  # balanced: the first take the extra lines
            size = len(numbered) // page.columns + (1 if k < len(numbered) % page.columns else 0)
            cols.append(numbered[start:start + size])
            start += size
        height = len(cols[0])
        grid = [[col[r] for col in cols if r < len(col)] for r in range(height)]
    yield from (_columns_line(page, row) for row in grid)


def _numbered(page: Page, n: int, line: str) -> str:
    if page.number_sep is None:
        return line
    shown = n % 10 ** page.number_digits if page.number_digits < 20 else n      # (its last digits)
    return f"{shown:>{page.number_digits}}{page.number_sep}{line}"


def _number_width(page: Page) -> int:
    if page.number_sep is None:
        return 0
    if page.number_sep == "\t":
        return page.number_digits + 8 - page.number_digits % 8
    return page.number_digits + 1


def _columns_line(page: Page, row: list) -> str:
    """One output line of several columns; padding as GNU print_white_space (tabs first)."""
    out, position = [" " * page.margin], page.margin
    text_width = page.column_width - _number_width(page)
    for k, (n, line) in enumerate(row):
        start = page.margin + k * (page.column_width + (len(page.separator) if page.separator is not None else 1))
        if k:
            if page.separator is not None:
                out.append(page.separator)
                position += len(page.separator)
            else:
                out.append(_white_space(position, start))
                position = start
        cell = _numbered(page, n, line[:text_width])
        out.append(cell)
        position = _advance(position, cell)
    return "".join(out)


def _advance(position: int, cell: str) -> int:
    for c in cell:
        position = (position // 8 + 1) * 8 if c == "\t" else position + 1
    return position


def _white_space(position: int, goal: int) -> str:
    out = []
    while goal - position > 1 and (position // 8 + 1) * 8 <= goal:
        out.append("\t")
        position = (position // 8 + 1) * 8
    out.append(" " * max(0, goal - position))
    return "".join(out)
