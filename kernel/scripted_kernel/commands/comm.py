"""comm: compare two sorted files line by line (GNU coreutils, C locale byte order)."""
from __future__ import annotations

from ._bytes import FsError, lines_of, locale_quote, read_bytes, shell_quote, text
from ._options import UsageError, bad_usage, parse
from .registry import Usage, command
from ..base.limits import Budget

USAGE = Usage("[OPTION]... FILE1 FILE2", "Compare sorted files FILE1 and FILE2 line by line.", (
    "-1                      suppress column 1 (lines unique to FILE1)",
    "-2                      suppress column 2 (lines unique to FILE2)",
    "-3                      suppress column 3 (lines that appear in both files)",
    "--check-order           check that the input is correctly sorted",
    "--nocheck-order         do not check that the input is correctly sorted",
    "--output-delimiter=STR  separate columns with STR",
    "--total                 output a summary",
    "-z, --zero-terminated   line delimiter is NUL, not newline"))

CHECK_DEFAULT, CHECK_ON, CHECK_OFF = "default", "on", "off"


def two_operands(cmd: str, ops: list):
    """GNU's complaints about the number of file operands of comm and join."""
    if not ops:
        raise bad_usage(cmd, "missing operand")
    if len(ops) == 1:
        raise bad_usage(cmd, f"missing operand after {locale_quote(ops[0])}")
    if len(ops) > 2:
        raise bad_usage(cmd, f"extra operand {locale_quote(ops[2])}")


def read_two(ctx, cmd: str, ops: list) -> list:
    """Both files' bytes; a file that cannot be read ends the command, as GNU's open does."""
    contents = []
    for name in ops:
        try:
            contents.append(read_bytes(ctx, name))
        except FsError as e:
            raise UsageError(f"{cmd}: {shell_quote(name)}: {e.strerror}") from None
    return contents


def order_check_mode(opts) -> str:
    """CHECK_ON or CHECK_OFF by the last of --check-order and --nocheck-order, else the default."""
    mode = CHECK_DEFAULT
    for flag in opts.flags:
        if flag in ("check-order", "nocheck-order"):
            mode = CHECK_ON if flag == "check-order" else CHECK_OFF
    return mode


class OrderCheck:
    """GNU's disorder warning: by default only once an unpairable line has been seen and only
    a warning (the status becomes 1 at the end); with --check-order, fatal at once."""

    def __init__(self, ctx, cmd: str, mode: str):
        self.ctx, self.cmd, self.mode = ctx, cmd, mode
        self.seen_unpairable = False
        self.warned = [False, False]

    def active(self, which: int) -> bool:
        return (self.mode != CHECK_OFF and not self.warned[which]
                and (self.mode == CHECK_ON or self.seen_unpairable))

    def disorder(self, which: int, message: str):
        """Report the first disorder of a file; with --check-order it ends the command."""
        self.ctx.err(f"{self.cmd}: {message}\n")
        if self.mode == CHECK_ON:
            raise Disordered()
        self.warned[which] = True

    def finish(self) -> int:
        if any(self.warned):
            self.ctx.err(f"{self.cmd}: input is not in sorted order\n")
            return 1
        return 0


class Disordered(Exception):
    """--check-order found a line out of order: the output so far goes out after the message
    (as stdio flushes it at exit) and the status is 1."""


@command("comm", usage=USAGE)
def run(ctx, argv):
    opts, ops = parse("comm", argv, short_flags="123z", long_flags={
        "check-order": "check-order", "nocheck-order": "nocheck-order", "total": "total",
        "zero-terminated": "z"}, long_values={"output-delimiter": "output-delimiter"})
    two_operands("comm", ops)
    mode = order_check_mode(opts)
    sep = opts.get("output-delimiter", "\t") or "\0"
    delim = b"\0" if opts.has("z") else b"\n"
    show = [not opts.has("1"), not opts.has("2"), not opts.has("3")]
    files = [lines_of(data, delim) for data in read_two(ctx, "comm", ops)]
    check = OrderCheck(ctx, "comm", mode)
    out: list[str] = []
    try:
        totals = _merge(ctx.budget, files, show, sep, text(delim), check, out)
    except Disordered:
        ctx.out("".join(out))
        return 1
    if opts.has("total"):
        out.append(f"{totals[0]}{sep}{totals[1]}{sep}{totals[2]}{sep}total{text(delim)}")
    ctx.out("".join(out))
    return check.finish()


def _merge(budget: Budget, files: list, show: list, sep: str, end: str, check: OrderCheck, out: list) -> list:
    """GNU comm's loop: the lesser line goes out in its column; equal lines in column 3."""
    prefix = ["", sep if show[0] else "", (sep if show[0] else "") + (sep if show[1] else "")]
    totals = [0, 0, 0]
    pos = [0, 0]
    steps = 0
    while pos[0] < len(files[0]) or pos[1] < len(files[1]):
        steps += 1
        if not steps & 0xFFF:
            budget.check_clock()
        a = files[0][pos[0]] if pos[0] < len(files[0]) else None
        b = files[1][pos[1]] if pos[1] < len(files[1]) else None
        order = 1 if a is None else -1 if b is None else (a > b) - (a < b)
        column = 2 if order == 0 else 0 if order < 0 else 1
        if order:
            check.seen_unpairable = True
        totals[column] += 1
        if show[column]:
            line = a if order <= 0 else b
            assert line is not None         # order <= 0 only when a is there, > 0 only when b is
            out.append(prefix[column] + text(line) + end)
        for which in (0, 1):
            if (which == 0 and order <= 0) or (which == 1 and order >= 0):
                _step(files, pos, which, check)
    return totals


def _step(files: list, pos: list, which: int, check: OrderCheck):
    pos[which] += 1
    lines, k = files[which], pos[which]
    if k < len(lines) and check.active(which) and lines[k - 1] > lines[k]:
        check.disorder(which, f"file {which + 1} is not in sorted order")
