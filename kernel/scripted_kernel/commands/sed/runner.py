"""A parsed sed script run over one input stream, as GNU sed runs it: the pattern and hold
spaces, ranges, branches, the automatic print, appends (a, r, R) after the cycle, q and Q, and
the files of r, R, w, W and s///w through the filesystem layer. The budget is checked as the
script cycles (a branch back can loop for ever, and `s/.*/&&/` doubles the space each time).
"""
from __future__ import annotations

from typing import Any, Optional

from ...base.limits import Budget
from ...base.regexes import DEFAULT_TIMEOUT, RegexTimeout, matcher, risky, substitute
from ...fs import FsError, access
from .._options import UsageError
from .parser import Address, Command, SedError, Substitution


class _Quit(Exception):
    def __init__(self, status: int, autoprint: bool, space: str, by_q: bool = False):
        self.status = status
        self.autoprint = autoprint
        self.space = space          # the pattern space when it quit
        self.by_q = by_q


class _Runner:
    def __init__(self, commands: list, lines: list, quiet: bool, sep: str, out: list,
                 files: SedFiles, budget: Budget, missing_newline: bool = False):
        self.commands = commands
        self.budget = budget
        self.lines = lines
        self.missing_newline = missing_newline   # the last input line has no terminator
        self.unterminated_at = -1                # len(out) after printing that line's pattern space
        self.quiet = quiet
        self.sep = sep
        self.out = out
        self.finders: dict = {}
        self.index = 0           # next input line
        self.lineno = 0
        self.hold = ""
        # Whether the pattern (hold) space's text had a line terminator: only the last line can
        # lack one, and h/H/g/G/x carry the state along as GNU sed does.
        self.chomped = True
        self.hold_chomped = True
        self.last_rx: Any = None     # the last pattern used, for an empty one (s//x/)
        self.append_queue: list[str] = []
        self.files = files        # r R w W targets
        self.substituted = False
        self.labels = {c.arg: k for k, c in enumerate(commands) if c.name == ":"}
        self.steps = 0
        for c in commands:
            if c.name in "btT" and c.arg and c.arg not in self.labels:
                raise SedError(f"sed: can't find label for jump to `{c.arg}'")

    def read_line(self) -> Optional[str]:
        if self.index >= len(self.lines):
            return None
        line = self.lines[self.index]
        self.index += 1
        self.lineno += 1
        self.chomped = not (self.missing_newline and self.index >= len(self.lines))
        return line

    def is_last(self) -> bool:
        return self.index >= len(self.lines)

    def _next_line(self) -> str:
        """The next input line, for n and N (which first check that there is one)."""
        line = self.read_line()
        assert line is not None
        return line

    def pattern(self, rx):
        """`rx`, now the last regex used; for an empty one (None), the last regex used."""
        if rx is None:
            if self.last_rx is None:
                raise SedError("sed: no previous regular expression")
            return self.last_rx
        self.last_rx = rx
        return rx

    def search(self, rx, text: str):
        return self.finder(self.pattern(rx))(text)

    def finder(self, rx):
        """rx.search, paying for the timeout only where the pattern can backtrack badly."""
        find = self.finders.get(rx)
        if find is None:
            find = self.finders[rx] = matcher(rx, DEFAULT_TIMEOUT)
        return find

    def matches(self, addr: Address, space: str) -> bool:
        kind = addr.kind
        if kind == "line":
            return self.lineno == addr.value
        if kind == "last":
            return self.is_last()
        if kind == "regex":
            return self.search(addr.value, space) is not None
        if kind == "step":
            first, step = addr.value, addr.step
            return self.lineno == first if step <= 0 else (self.lineno >= first and (self.lineno - first) % step == 0)
        return False

    def selected(self, cmd: Command, space: str) -> bool:
        if cmd.addr1 is None:
            return not cmd.negate
        if cmd.addr2 is None:
            return self.matches(cmd.addr1, space) != cmd.negate
        if not cmd.in_range:
            if cmd.addr1.kind == "zero":
                start, cmd.range_spent = not cmd.range_spent, True
            elif cmd.addr1.kind == "line" and cmd.addr2.kind in ("line", "plus"):
                # N,M and N,+K open once on any line of their span, even if n, N or c went
                # past line N before this command saw it
                first = cmd.addr1.value
                last = cmd.addr2.value if cmd.addr2.kind == "line" else first + cmd.addr2.value
                start = not cmd.range_spent and first <= self.lineno <= max(first, last)
                cmd.range_spent = cmd.range_spent or start
            else:
                start = self.matches(cmd.addr1, space)
            if not start:
                return cmd.negate
            a2 = cmd.addr2
            if a2.kind == "line":
                cmd.in_range = a2.value > self.lineno
                cmd.range_end = a2.value
            elif a2.kind == "plus":
                cmd.range_end = self.lineno + a2.value
                cmd.in_range = a2.value > 0
            elif a2.kind == "tilde":
                cmd.in_range = a2.value > 0 and self.lineno % a2.value != 0
            elif a2.kind == "last":
                cmd.in_range = not self.is_last()
            else:          # regex: checked from the next line (or this one after 0,)
                cmd.in_range = not (cmd.addr1.kind == "zero" and self.matches(a2, space))
            return not cmd.negate
        a2 = cmd.addr2
        if a2.kind == "line":
            if self.lineno >= cmd.range_end:
                cmd.in_range = False
            if self.lineno > cmd.range_end:      # n or N read past the end line
                return cmd.negate
        elif a2.kind == "plus":
            if self.lineno >= cmd.range_end:     # the last line, or the first one past it
                cmd.in_range = False
        elif a2.kind == "tilde":
            if self.lineno % a2.value == 0:
                cmd.in_range = False
        elif a2.kind == "last":
            if self.is_last():
                cmd.in_range = False
        elif self.matches(a2, space):
            cmd.in_range = False
        return not cmd.negate

    def emit(self, text: str, whole_line: bool = True):
        """Print text and a line terminator. GNU sed leaves the terminator off the last input
        line's pattern space if that line had none and nothing is printed after it."""
        self.out.append(text + self.sep)
        if whole_line and not self.chomped:
            self.unterminated_at = len(self.out)

    def flush_appends(self):
        if self.append_queue:
            for text in self.append_queue:
                self.out.append(text + "\n")
            self.append_queue.clear()

    def run(self) -> int:
        space = self.read_line()
        while space is not None:
            try:
                space, deleted = self.cycle(space)
            except _Quit as q:
                if q.by_q:           # GNU's q ends the output's last line, a missing newline too
                    self.unterminated_at = -1
                if q.autoprint and not self.quiet:
                    self.emit(q.space, whole_line=not q.by_q)
                self.flush_appends()
                return q.status
            if not deleted and not self.quiet:
                self.emit(space)
            self.flush_appends()
            space = self.read_line()
        return 0

    def cycle(self, space: str):
        """Run the script once over `space`: (space, deleted). A deleted cycle ends without
        the automatic print; D restarts the script inside this call."""
        self.substituted = False
        k = 0
        commands = self.commands
        n = len(commands)
        limit = self.budget.string_limit()
        while k < n:
            cmd = commands[k]
            k += 1
            self.steps += 1
            if not self.steps & 1023:       # a branch back (`:a; ...; ba`) can loop for ever
                self.budget.check_clock()
            if len(space) > limit:          # and `s/.*/&&/` in such a loop doubles the space
                self.budget.check_length(len(space), "sed")
            if cmd.name == ":":
                continue
            if not self.selected(cmd, space):
                if cmd.name == "{":
                    k = cmd.block_end
                continue
            name = cmd.name
            if name == "{":
                continue
            if name == "s":
                space = self.substitute(cmd.arg, space)
            elif name == "p":
                self.emit(space)
            elif name == "d":
                return space, True
            elif name == "D":
                if "\n" not in space:
                    return space, True
                space = space.split("\n", 1)[1]
                self.flush_appends()
                k = 0
                self.substituted = False
                continue
            elif name == "n":
                if self.is_last():
                    raise _Quit(0, True, space)
                if not self.quiet:
                    self.emit(space)
                self.flush_appends()
                space = self._next_line()
            elif name == "N":
                if self.is_last():
                    raise _Quit(0, True, space)
                self.flush_appends()
                space = space + "\n" + self._next_line()
            elif name == "P":
                first, newline, _ = space.partition("\n")
                self.emit(first, whole_line=not newline)
            elif name == "h":
                self.hold, self.hold_chomped = space, self.chomped
            elif name == "H":
                self.hold, self.hold_chomped = self.hold + "\n" + space, self.chomped
            elif name == "g":
                space, self.chomped = self.hold, self.hold_chomped
            elif name == "G":
                space, self.chomped = space + "\n" + self.hold, self.hold_chomped
            elif name == "x":
                space, self.hold = self.hold, space
                self.chomped, self.hold_chomped = self.hold_chomped, self.chomped
            elif name == "z":
                space = ""
            elif name == "=":
                self.out.append(f"{self.lineno}\n")
            elif name == "l":
                self.out.append(_unambiguous(space, 70 if cmd.arg is None else cmd.arg))
            elif name == "a":
                self.append_queue.append(cmd.arg)
            elif name in "rR":
                text = self.files.read_all(cmd.arg) if name == "r" else self.files.read_line(cmd.arg)
                if text:
                    self.append_queue.append(text[:-1] if text.endswith("\n") else text)
            elif name in "wW":
                self.files.write(cmd.arg, (space if name == "w" else space.split("\n", 1)[0]) + "\n")
            elif name == "i":
                self.out.append(cmd.arg + "\n")
            elif name == "c":
                if cmd.addr2 is None or not cmd.in_range or cmd.negate:
                    self.out.append(cmd.arg + "\n")
                return space, True
            elif name == "y":
                space = "".join(cmd.arg.get(ch, ch) for ch in space)
            elif name in "qQ":
                raise _Quit(cmd.arg or 0, name == "q", space, by_q=True)
            elif name == "b":
                k = self.labels[cmd.arg] if cmd.arg else n
            elif name == "t":
                if self.substituted:
                    self.substituted = False
                    k = self.labels[cmd.arg] if cmd.arg else n
            elif name == "T":
                if not self.substituted:
                    k = self.labels[cmd.arg] if cmd.arg else n
                else:
                    self.substituted = False
        return space, False

    def substitute(self, sub: Substitution, space: str) -> str:
        rx = self.pattern(sub.rx)
        try:
            result, count = substitute(rx, space, sub.replace, sub.occurrence, sub.global_,
                                       DEFAULT_TIMEOUT if risky(rx) else None)
        except TimeoutError:
            raise RegexTimeout() from None
        if not count:
            return space
        self.substituted = True
        if sub.print_:
            self.emit(result)
        if sub.write_to:
            self.files.write(sub.write_to, result + "\n")
        return result



def _unambiguous(space: str, width: int) -> str:
    escapes = {"\\": "\\\\", "\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r",
               "\t": "\\t", "\v": "\\v"}
    pieces = []
    for ch in space:
        if ch in escapes:
            pieces.append(escapes[ch])
        elif ord(ch) < 32 or ord(ch) == 127:
            pieces.append("\\%03o" % ord(ch))
        elif ord(ch) > 127:
            pieces.extend("\\%03o" % b for b in ch.encode("utf-8", "surrogateescape"))
        else:
            pieces.append(ch)
    lines, cur = [], ""
    for p in pieces:
        if width > 1 and len(cur) + len(p) > width - 1:
            lines.append(cur + "\\")
            cur = ""
        cur += p
    lines.append(cur + "$")
    return "\n".join(lines) + "\n"



class SedFiles:
    """The files of r, R, w, W and s///w, through the filesystem layer. GNU sed creates (and
    empties) every w file before reading input; /dev/stdout goes with sed's own output."""

    def __init__(self, ctx, files: list):
        self.ctx = ctx
        self.out: list = []           # the output of the stream being edited (for /dev/stdout)
        self.writers: dict = {}
        self.lines: dict = {}
        for kind, name in files:
            if kind in ("w", "W") and name not in self.writers:
                try:
                    self.writers[name] = (lambda text: self.out.append(text)) if name == "/dev/stdout" \
                        else access.writer(ctx, name)
                except FsError as e:
                    raise UsageError(f"sed: couldn't open file {name}: {e.strerror}", 4) from None

    def write(self, name: str, text: str):
        self.writers[name](text)

    def read_all(self, name: str) -> str:
        try:
            return access.read_text(self.ctx, name)
        except FsError:
            return ""                 # GNU sed: a file r cannot read is silently skipped

    def read_line(self, name: str) -> str:
        if name not in self.lines:
            self.lines[name] = iter(self.read_all(name).splitlines(keepends=True))
        return next(self.lines[name], "")



def run_commands(ctx, commands, data: str, quiet: bool, sep: str, files: SedFiles) -> str:
    """The output of a parsed sed script over one input stream."""
    lines = data.split(sep)
    missing_newline = lines[-1] != ""
    if not missing_newline:
        lines.pop()
    out: list[str] = []
    try:                          # a jump to a missing label fails before any input is read
        runner = _Runner(commands, lines, quiet, sep, out, files, ctx.budget, missing_newline)
    except SedError as e:
        raise UsageError(str(e), 1) from None
    files.out = out
    try:
        status = runner.run()
    except SedError as e:
        ctx.out("".join(out))
        raise UsageError(str(e), 4) from None
    except RegexTimeout:
        ctx.out("".join(out))
        raise UsageError("sed: regular expression too complex", 4) from None
    if runner.unterminated_at == len(out):
        out[-1] = out[-1][:-1]
    if status:
        ctx.out("".join(out))
        raise _ExitWith(status)
    return "".join(out)


class _ExitWith(UsageError):
    """`q N` / `Q N`: the output so far is written, the command exits N."""

    def __init__(self, status: int):
        super().__init__("", status)
