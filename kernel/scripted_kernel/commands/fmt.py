"""fmt: simple optimal paragraph formatting (GNU coreutils), ported from GNU fmt.c: the same
paragraphs, the same cost function (short lines, raggedness, sentence ends, widows and
orphans), so the same line breaks."""
from __future__ import annotations

from ._bytes import ByteInputs, gnu_number, quote_always
from ._options import parse
from .registry import Usage, command
from ..base.limits import Budget

USAGE = Usage("[-WIDTH] [OPTION]... [FILE]...", "Reformat each paragraph in the FILE(s), "
              "writing to standard output.", (
    "-c, --crown-margin        preserve indentation of first two lines",
    "-p, --prefix=STRING       reformat only lines beginning with STRING",
    "-s, --split-only          split long lines, but do not refill",
    "-t, --tagged-paragraph    indentation of first line different from second",
    "-u, --uniform-spacing     one space between words, two after sentences",
    "-w, --width=WIDTH         maximum line width (default of 75 columns)",
    "-g, --goal=WIDTH          goal width (default of 93% of width)"))

WIDTH, LEEWAY, DEF_INDENT, TABWIDTH = 75, 7, 3, 8
MAXWORDS, MAXCHARS = 1000, 5000
MAXCOST = (1 << 63) - 1
EOF = -1


def _equiv(n: int) -> int:
    return n * n


def _short_cost(n: int) -> int:
    return _equiv(n * 10)


def _ragged_cost(n: int) -> int:
    return _short_cost(n) // 2 if _short_cost(n) >= 0 else -((-_short_cost(n)) // 2)


LINE_COST, SENTENCE_BONUS, NOBREAK_COST = _equiv(70), _equiv(50), _equiv(600)
PAREN_BONUS, PUNCT_BONUS, LINE_CREDIT = _equiv(40), _equiv(40), _equiv(3)


def _c_div(a: int, b: int) -> int:
    """C integer division (toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


class Word:
    __slots__ = ("text", "length", "space", "paren", "period", "punct", "final",
                 "line_length", "best_cost", "next_break")

    def __init__(self):
        self.text = b""
        self.length = self.space = self.line_length = self.best_cost = 0
        self.paren = self.period = self.punct = self.final = False
        self.next_break = 0


class Fmt:
    """One fmt run over one input (the state GNU keeps in globals)."""

    def __init__(self, budget: Budget, width: int, goal: int, crown: bool, tagged: bool, split: bool,
                 uniform: bool, prefix: str):
        self.budget = budget
        self.max_width, self.goal_width = width, goal
        self.crown, self.tagged, self.split, self.uniform = crown, tagged, split, uniform
        raw = prefix.encode("utf-8", "surrogateescape")
        stripped = raw.lstrip(b" ")
        self.prefix_lead_space = len(raw) - len(stripped)
        self.prefix_full_length = len(stripped)
        self.prefix = stripped.rstrip(b" ")
        self.prefix_length = len(self.prefix)
        self.out = bytearray()
        self.other_indent = 0

    # ---- input
    def getc(self) -> int:
        if self.pos >= len(self.data):
            return EOF
        c = self.data[self.pos]
        self.pos += 1
        if not self.pos & 0xFFFF:
            self.budget.check_clock()       # a byte at a time: a 16 MB input is seconds
        return c

    def run(self, data: bytes) -> bytes:
        self.data, self.pos = data, 0
        self.tabs = False
        self.other_indent = 0
        self.words = [Word() for _ in range(MAXWORDS)]
        self.next_char = self.get_prefix()
        while self.get_paragraph():
            self.fmt_paragraph()
            self.put_paragraph(self.word_limit)
        return bytes(self.out)

    def set_other_indent(self, same: bool):
        if self.split:
            self.other_indent = self.first_indent
        elif self.crown:
            self.other_indent = self.in_column if same else self.first_indent
        elif self.tagged:
            if same and self.in_column != self.first_indent:
                self.other_indent = self.in_column
            elif self.other_indent == self.first_indent:
                self.other_indent = DEF_INDENT if self.first_indent == 0 else 0
        else:
            self.other_indent = self.first_indent

    def get_paragraph(self) -> bool:
        self.last_line_length = 0
        c = self.next_char
        while (c in (10, EOF) or self.next_prefix_indent < self.prefix_lead_space
               or self.in_column < self.next_prefix_indent + self.prefix_full_length):
            c = self.copy_rest(c)
            if c == EOF:
                self.next_char = EOF
                return False
            self.out.append(10)
            c = self.get_prefix()
        self.prefix_indent = self.next_prefix_indent
        self.first_indent = self.in_column
        self.chars = 0
        self.word_limit = 0
        c = self.get_line(c)
        self.set_other_indent(self.same_para(c))
        if self.split:
            pass
        elif self.crown or self.tagged:
            if self.same_para(c) and (self.crown or self.in_column != self.first_indent):
                c = self.get_line(c)
                while self.same_para(c) and self.in_column == self.other_indent:
                    c = self.get_line(c)
        else:
            while self.same_para(c) and self.in_column == self.other_indent:
                c = self.get_line(c)
        last = self.words[self.word_limit - 1]
        last.period = last.final = True
        self.next_char = c
        return True

    def copy_rest(self, c: int) -> int:
        self.out_column = 0
        if self.in_column > self.next_prefix_indent or c not in (10, EOF):
            self.put_space(self.next_prefix_indent)
            for byte in self.prefix:
                if self.out_column == self.in_column:
                    break
                self.out.append(byte)
                self.out_column += 1
            if c not in (EOF, 10):
                self.put_space(self.in_column - self.out_column)
            if c == EOF and self.in_column >= self.next_prefix_indent + self.prefix_length:
                self.out.append(10)
        while c not in (10, EOF):
            self.out.append(c)
            c = self.getc()
        return c

    def same_para(self, c: int) -> bool:
        return (self.next_prefix_indent == self.prefix_indent
                and self.in_column >= self.next_prefix_indent + self.prefix_full_length
                and c not in (10, EOF))

    def get_line(self, c: int) -> int:
        while True:
            text = bytearray()
            while True:
                text.append(c)
                c = self.getc()
                if c == EOF or c in b" \t\n\v\f\r":
                    break
            if self.chars + len(text) >= MAXCHARS:      # GNU's buffer is full: flush
                self.set_other_indent(True)
                self.flush_paragraph()
            w = self.words[self.word_limit]
            w.text = bytes(text)
            w.length = len(text)
            self.chars += len(text)
            self.in_column += w.length
            self.check_punctuation(w)
            start = self.in_column
            c = self.get_space(c)
            w.space = self.in_column - start
            w.final = c == EOF or (w.period and (c == 10 or w.space > 1))
            if c in (10, EOF) or self.uniform:
                w.space = 2 if w.final else 1
            if self.word_limit == MAXWORDS - 2:
                self.set_other_indent(True)
                self.flush_paragraph()
            self.word_limit += 1
            if c in (10, EOF):
                break
        return self.get_prefix()

    def get_prefix(self) -> int:
        self.in_column = 0
        c = self.get_space(self.getc())
        if self.prefix_length == 0:
            self.next_prefix_indent = min(self.prefix_lead_space, self.in_column)
        else:
            self.next_prefix_indent = self.in_column
            for byte in self.prefix:
                if c != byte:
                    return c
                self.in_column += 1
                c = self.getc()
            c = self.get_space(c)
        return c

    def get_space(self, c: int) -> int:
        while True:
            if c == 32:
                self.in_column += 1
            elif c == 9:
                self.tabs = True
                self.in_column = (self.in_column // TABWIDTH + 1) * TABWIDTH
            else:
                return c
            c = self.getc()

    @staticmethod
    def check_punctuation(w: Word):
        text = w.text
        w.paren = text[:1] in (b"(", b"[", b"'", b"`", b'"')
        w.punct = chr(text[-1]).isascii() and not chr(text[-1]).isalnum() and 33 <= text[-1] <= 126
        finish = len(text) - 1
        while finish > 0 and text[finish:finish + 1] in (b")", b"]", b"'", b'"'):
            finish -= 1
        w.period = text[finish:finish + 1] in (b".", b"?", b"!")

    def flush_paragraph(self):
        """Out of room: format what is there and output up to a good break near its end."""
        if self.word_limit == 0:
            return
        self.fmt_paragraph()
        words = self.words
        split_point, best_break = self.word_limit, MAXCOST
        w = words[0].next_break
        while w != self.word_limit:
            diff = words[w].best_cost - words[words[w].next_break].best_cost
            if diff < best_break:
                split_point, best_break = w, diff
            if best_break <= MAXCOST - LINE_CREDIT:
                best_break += LINE_CREDIT
            w = words[w].next_break
        self.put_paragraph(split_point)
        moved = words[split_point:self.word_limit + 1]
        self.words = moved + [Word() for _ in range(MAXWORDS - len(moved))]
        self.word_limit -= split_point
        self.chars = sum(x.length for x in self.words[:self.word_limit])

    def fmt_paragraph(self):
        words, limit = self.words, self.word_limit
        words[limit].best_cost = 0
        saved = words[limit].length
        words[limit].length = self.max_width
        for start in range(limit - 1, -1, -1):
            best = MAXCOST
            length = self.first_indent if start == 0 else self.other_indent
            w = start
            length += words[w].length
            while True:
                w += 1
                cost = self.line_cost(w, length) + words[w].best_cost
                if start == 0 and self.last_line_length > 0:
                    cost += _ragged_cost(length - self.last_line_length)
                if cost < best:
                    best = cost
                    words[start].next_break = w
                    words[start].line_length = length
                if w == limit:
                    break
                length += words[w - 1].space + words[w].length
                if length >= self.max_width:
                    break
            words[start].best_cost = best + self.base_cost(start)
        words[limit].length = saved

    def base_cost(self, k: int) -> int:
        words = self.words
        cost = LINE_COST
        if k > 0:
            prev = words[k - 1]
            if prev.period:
                cost += -SENTENCE_BONUS if prev.final else NOBREAK_COST
            elif prev.punct:
                cost -= PUNCT_BONUS
            elif k > 1 and words[k - 2].final:
                cost += _c_div(_equiv(200), prev.length + 2)
        if words[k].paren:
            cost -= PAREN_BONUS
        elif words[k].final:
            cost += _c_div(_equiv(150), words[k].length + 2)
        return cost

    def line_cost(self, nxt: int, length: int) -> int:
        if nxt == self.word_limit:
            return 0
        cost = _short_cost(self.goal_width - length)
        if self.words[nxt].next_break != self.word_limit:
            cost += _ragged_cost(length - self.words[nxt].line_length)
        return cost

    def put_paragraph(self, finish: int):
        self.put_line(0, self.first_indent)
        w = self.words[0].next_break
        while w != finish:
            self.put_line(w, self.other_indent)
            w = self.words[w].next_break

    def put_line(self, w: int, indent: int):
        self.out_column = 0
        self.put_space(self.prefix_indent)
        self.out += self.prefix
        self.out_column += self.prefix_length
        self.put_space(indent - self.out_column)
        end = self.words[w].next_break - 1
        while w != end:
            self.put_word(self.words[w])
            self.put_space(self.words[w].space)
            w += 1
        self.put_word(self.words[w])
        self.last_line_length = self.out_column
        self.out.append(10)

    def put_word(self, w: Word):
        self.out += w.text
        self.out_column += w.length

    def put_space(self, space: int):
        target = self.out_column + space
        if self.tabs:
            tab_target = target // TABWIDTH * TABWIDTH
            if self.out_column + 1 < tab_target:
                while self.out_column < tab_target:
                    self.out.append(9)
                    self.out_column = (self.out_column // TABWIDTH + 1) * TABWIDTH
        while self.out_column < target:
            self.out.append(32)
            self.out_column += 1


def _width(text: str, limit: int) -> int:
    """GNU's xdectoumax of a width, from 0 to `limit` (its words, its reasons)."""
    return gnu_number(text, 0, limit, "fmt: invalid width", unsigned=True)


@command("fmt", usage=USAGE)
def run(ctx, argv):
    args = list(argv)
    width_text = None
    if len(args) > 1 and args[1][:1] == "-" and args[1][1:2].isdigit():
        width_text = args.pop(1)[1:]
    opts, ops = parse("fmt", args, short_flags="cstu", short_values="wpg", long_flags={
        "crown-margin": "c", "split-only": "s", "tagged-paragraph": "t", "uniform-spacing": "u"},
        long_values={"width": "w", "prefix": "p", "goal": "g"})
    width_text = opts.get("w", width_text)
    width = _width(width_text, MAXCHARS // 2) if width_text is not None else WIDTH
    if opts.has("g"):
        goal = _width(opts.get("g"), width)
        if width_text is None:
            width = goal + 10
    else:
        goal = width * (2 * (100 - LEEWAY) + 1) // 200
    inputs = ByteInputs(ctx, "fmt", ops, "{cmd}: cannot open {name} for reading: {reason}", quote_always)
    for _, data in inputs:
        job = Fmt(ctx.budget, width, goal, opts.has("c"), opts.has("t"), opts.has("s"), opts.has("u"),
                  opts.get("p", ""))
        ctx.write_bytes(job.run(data))
    return inputs.status
