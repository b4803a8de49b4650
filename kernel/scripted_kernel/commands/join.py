"""join: join lines of two sorted files on a common field (GNU coreutils, C locale), ported
from GNU join's merge loop so that unpaired lines, repeated keys and order warnings come out
where GNU puts them."""
from __future__ import annotations

import re
from typing import Optional

from ._bytes import UINTMAX, bounded_decimal, lines_of, locale_quote, text
from ._options import UsageError, parse
from .comm import CHECK_OFF, Disordered, OrderCheck, order_check_mode, read_two, two_operands
from .registry import Usage, command

USAGE = Usage("[OPTION]... FILE1 FILE2", "For each pair of input lines with identical join fields, "
              "write a line to standard output.", (
    "-a FILENUM        also print unpairable lines from file FILENUM",
    "-e STRING         replace missing (empty) input fields with STRING",
    "-i, --ignore-case  ignore differences in case when comparing fields",
    "-j FIELD          equivalent to '-1 FIELD -2 FIELD'",
    "-o FORMAT         obey FORMAT while constructing output line",
    "-t CHAR           use CHAR as input and output field separator",
    "-v FILENUM        like -a FILENUM, but suppress joined output lines",
    "-1 FIELD          join on this FIELD of file 1",
    "-2 FIELD          join on this FIELD of file 2",
    "--check-order     check that the input is correctly sorted",
    "--nocheck-order   do not check that the input is correctly sorted",
    "--header          treat the first line in each file as field headers",
    "-z, --zero-terminated  line delimiter is NUL, not newline"))

_CHUNK = 4096
_BLANKS = re.compile(rb"[^ \t\n]+")


class Line:
    """One input line and its fields (bytes)."""
    __slots__ = ("raw", "fields")

    def __init__(self, raw: bytes, tab):
        self.raw = raw
        if tab is None:
            self.fields = _BLANKS.findall(raw)
            if self.fields and raw[-1:] in b" \t\n":
                self.fields.append(b"")    # GNU: trailing blanks end in one empty field
        elif tab == b"\n" or not raw:
            self.fields = [raw] if raw else []
        else:
            self.fields = raw.split(tab)


BLANK = Line(b"", None)          # GNU's uni_blank: the missing side of an unpaired line


class Join:
    """One join: the options, the two inputs as read so far, and the output."""

    def __init__(self, ctx, opts, names):
        self.names = names
        self.tab = _tab(opts)
        self.fields = _join_fields(opts)
        self.ignore_case = opts.has("i")
        self.empty = opts.get("e")
        self.unpaired = {int(_file_number(v)) for v in opts.all("a") + opts.all("v")}
        self.pairs = not opts.all("v")
        self.auto = False
        self.outlist = _outlist(opts.all("o"))
        if self.outlist == "auto":
            self.auto, self.outlist = True, []
        self.autocount = [0, 0]
        self.sep = text(self.tab) if self.tab not in (None, b"\n") else " "
        self.end = "\0" if opts.has("z") else "\n"
        self.check = OrderCheck(ctx, "join", order_check_mode(opts))
        self.ctx = ctx
        self.out: list[str] = []

    def compare(self, a: Line, b: Line, fa: int, fb: int) -> int:
        ka, kb = self.key_at(a, fa), self.key_at(b, fb)
        if not ka:
            return 0 if not kb else -1
        if not kb:
            return 1
        return (ka > kb) - (ka < kb)

    def key_at(self, line: Line, field: int) -> bytes:
        key = line.fields[field] if field < len(line.fields) else b""
        return key.upper() if self.ignore_case else key

    # ---- output: GNU's prjoin, prfield, prfields

    def wrote(self):
        """A large output (a cross product of repeated keys) goes out a chunk at a time."""
        if len(self.out) >= _CHUNK:
            self.ctx.out("".join(self.out))
            self.out.clear()
            self.ctx.budget.check_clock()

    def field(self, n: int, line: Line) -> str:
        if n < len(line.fields) and line.fields[n]:
            return text(line.fields[n])
        return self.empty or ""

    def emit(self, one: Line, two: Line):
        if self.outlist:
            cells = []
            for file_index, n in self.outlist:
                if file_index == 0:
                    line, n = (two, self.fields[1]) if one is BLANK else (one, self.fields[0])
                else:
                    line = one if file_index == 1 else two
                cells.append(self.field(n, line))
            self.out.append(self.sep.join(cells) + self.end)
            self.wrote()
            return
        line, n = (two, self.fields[1]) if one is BLANK else (one, self.fields[0])
        cells = [self.field(n, line)]
        for which, side in ((0, one), (1, two)):
            count = self.autocount[which] if self.auto else len(side.fields)
            cells += [self.field(i, side) for i in range(count) if i != self.fields[which]]
        self.out.append(self.sep.join(cells) + self.end)
        self.wrote()


class Reader:
    """One file's lines, read one at a time with GNU's order check (get_line)."""

    def __init__(self, job: Join, lines: list, which: int):
        self.job, self.lines, self.which = job, lines, which
        self.pos = 0
        self.prev: Optional[Line] = None

    def get(self) -> Optional[Line]:
        if self.pos >= len(self.lines):
            return None
        line = Line(self.lines[self.pos], self.job.tab)
        self.pos += 1
        if not self.pos & 0xFFF:
            self.job.ctx.budget.check_clock()   # (files with no key in common print nothing)
        check, field = self.job.check, self.job.fields[self.which]
        if self.prev is not None and check.active(self.which):
            if self.job.compare(self.prev, line, field, field) > 0:
                name = self.job.names[self.which]
                check.disorder(self.which, f"{name}:{self.pos}: is not sorted: {text(line.raw)}")
        self.prev = line
        return line


def _tab(opts):
    value = opts.get("t")
    if value is None:
        return None
    raw = value.encode("utf-8", "surrogateescape")
    if not raw:
        return b"\n"                      # -t '': the whole line is the field
    if raw == b"\\0":
        return b"\0"
    if len(value) > 1:
        raise UsageError(f"join: multi-character tab {locale_quote(value)}")
    return raw


def _field_number(value: str) -> int:
    """GNU's string_to_join_field: 1 and up, any past SIZE_MAX read as SIZE_MAX."""
    if not (value.isascii() and value.isdigit()) or not bounded_decimal(value):
        raise UsageError(f"join: invalid field number: {locale_quote(value)}")
    return min(bounded_decimal(value), UINTMAX) - 1


def _file_number(value: str) -> str:
    if value not in ("1", "2"):
        raise UsageError(f"join: invalid field number: {locale_quote(value)}")
    return value


def _join_fields(opts) -> list:
    fields = [0, 0]
    for flag in opts.flags:
        if flag in ("1", "2", "j"):
            value = opts.values[flag].pop(0)
            n = _field_number(value)
            if flag == "j":
                fields = [n, n]
            else:
                fields[int(flag) - 1] = n
    return fields


def _outlist(specs: list):
    if specs == ["auto"]:
        return "auto"
    out = []
    for spec in specs:
        for item in re.split(r"[, \t]+", spec.strip(", \t")):
            if item == "0":
                out.append((0, 0))
            elif item[:1] in ("1", "2") and item[1:2] == ".":
                out.append((int(item[0]), _field_number(item[2:])))
            elif item[:1] in ("0", "1", "2"):
                raise UsageError(f"join: invalid field specifier: {locale_quote(item)}")
            else:
                raise UsageError(f"join: invalid file number in field spec: {locale_quote(item)}")
    return out


@command("join", usage=USAGE)
def run(ctx, argv):
    opts, ops = parse("join", argv, short_flags="iz", short_values="aejot12v", long_flags={
        "ignore-case": "i", "check-order": "check-order", "nocheck-order": "nocheck-order",
        "header": "header", "zero-terminated": "z"})
    job = Join(ctx, opts, ops)
    two_operands("join", ops)
    delim = b"\0" if opts.has("z") else b"\n"
    contents = read_two(ctx, "join", ops)
    readers = [Reader(job, lines_of(data, delim), k) for k, data in enumerate(contents)]
    try:
        _join(job, readers, opts.has("header"))
    except Disordered:
        ctx.out("".join(job.out))
        return 1
    ctx.out("".join(job.out))
    return job.check.finish()


def _join(job: Join, readers: list, header: bool):
    """GNU join(): walk both files; runs of equal keys make their cross product."""
    seqs: list[list[Line]] = [[], []]
    for k in (0, 1):
        line = readers[k].get()
        if line is not None:
            seqs[k].append(line)
    if job.auto:
        job.autocount = [len(seqs[k][0].fields) if seqs[k] else 0 for k in (0, 1)]
    if header and (seqs[0] or seqs[1]):
        job.emit(seqs[0][0] if seqs[0] else BLANK, seqs[1][0] if seqs[1] else BLANK)
        for k in (0, 1):
            readers[k].prev = None
            if seqs[k]:
                _advance(readers[k], seqs[k], True)
    f1, f2 = job.fields
    while seqs[0] and seqs[1]:
        diff = job.compare(seqs[0][0], seqs[1][0], f1, f2)
        if diff:
            k = 0 if diff < 0 else 1
            if k + 1 in job.unpaired:
                job.emit(seqs[0][0], BLANK) if k == 0 else job.emit(BLANK, seqs[1][0])
            _advance(readers[k], seqs[k], True)
            job.check.seen_unpairable = True
            continue
        eof = [False, False]
        while True:
            if not _advance(readers[0], seqs[0], False):
                eof[0] = True
                break
            if job.compare(seqs[0][-1], seqs[1][0], f1, f2):
                break
        while True:
            if not _advance(readers[1], seqs[1], False):
                eof[1] = True
                break
            if job.compare(seqs[0][0], seqs[1][-1], f1, f2):
                break
        if job.pairs:
            run1 = seqs[0] if eof[0] else seqs[0][:-1]
            run2 = seqs[1] if eof[1] else seqs[1][:-1]
            for one in run1:
                for two in run2:
                    job.emit(one, two)
        for k in (0, 1):
            seqs[k][:] = [] if eof[k] else seqs[k][-1:]
    _drain(job, readers, seqs)


def _drain(job: Join, readers: list, seqs: list):
    """The tail of each file: printed with -a, else read only to check its order."""
    for k in (0, 1):
        wanted = k + 1 in job.unpaired
        if not seqs[k] or not (wanted or job.check.mode != CHECK_OFF):
            continue
        if wanted:
            _emit_unpaired(job, k, seqs[k][0])
        if seqs[1 - k]:
            job.check.seen_unpairable = True
        while True:
            line = readers[k].get()
            if line is None:
                break
            if wanted:
                _emit_unpaired(job, k, line)
            if job.check.warned[k] and not wanted:
                break


def _emit_unpaired(job: Join, k: int, line: Line):
    job.emit(line, BLANK) if k == 0 else job.emit(BLANK, line)


def _advance(reader: Reader, seq: list, replace: bool) -> bool:
    """GNU advance_seq: read the next line into the run (replacing it when `replace`)."""
    if replace:
        seq.clear()
    line = reader.get()
    if line is None:
        return False
    seq.append(line)
    return True
