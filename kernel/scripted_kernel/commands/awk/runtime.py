"""The state an awk run works on (variables, the current record, output) and the builtins that
need it. The compiled program (see codegen) reads and writes this state directly."""
from __future__ import annotations

import itertools
import math
import random
import re
from typing import Iterator, Optional

import regex

from ...fs import FsDisabled, FsError, access
from .._options import split_lines
from .values import EMPTY, AwkError, is_num, num_to_str, strnum, to_num
from ...base.errors import LimitExceeded
from ...base.limits import MAX_FIELD_WIDTH
from ...base.regexes import DEFAULT_TIMEOUT, RegexError, risky, substitute, translate

# Variables whose string form the runtime keeps ready, because every print or subscript uses it.
CACHED_STRINGS = {"OFS": "ofs", "ORS": "ors", "SUBSEP": "subsep", "CONVFMT": "convfmt", "OFMT": "ofmt"}
_FORMAT = re.compile(r"%([-+ #0]*)(\*|\d+)?(?:\.(\*|\d*))?(?:hh|h|ll|l|L|q|j|z|t)?([cdiouxXeEfFgGaAs%])")


class Next(Exception):
    """`next` inside a function: ends the rules for this record."""


class Exit(Exception):
    def __init__(self, status):
        super().__init__(status)
        self.status = status


class Runtime:
    def __init__(self, ctx, assigns: list, field_sep: Optional[str]):
        self.ctx = ctx
        self.globals: dict = {
            "FS": " ", "OFS": " ", "ORS": "\n", "RS": "\n", "NR": 0.0, "FNR": 0.0,
            "SUBSEP": "\x1c", "RSTART": 0.0, "RLENGTH": -1.0, "CONVFMT": "%.6g", "OFMT": "%.6g",
            "FILENAME": "", "ARGC": 1.0,
        }
        self.ofs, self.ors, self.subsep, self.convfmt, self.ofmt = " ", "\n", "\x1c", "%.6g", "%.6g"
        # value → text through CONVFMT (strings, keys) or OFMT (print); the compiled code calls these
        self.to_str, self.to_output = _number_text(self, "convfmt"), _number_text(self, "ofmt")
        env = {k: strnum(v) for k, v in ctx.env().items()}
        self.array_class = dict       # MawkArray when the program loops over arrays
        self.arrays: dict = {"ENVIRON": env, "ARGV": {"0": "awk"}}
        self.parts: Optional[list[str]] = None     # $0's fields as read (None: not split yet)
        self.values: Optional[list] = None         # their values (None: not made yet)
        self.set_record("")
        if field_sep is not None:
            self.set_var("FS", field_sep)
        for name, value in assigns:
            self.set_var(name, strnum(value))
        self.operand_assigns: list = []      # `var=value` operands: done when input is first read
        self.out: list = []           # output not yet handed to the shell (see tick)
        self.random = random.Random(0)
        self.seed = 0.0
        self.records: Iterator[str] = iter(())
        self.outputs: dict = {}       # print > FILE: open files by name, until close()
        self.inputs: dict = {}        # getline < FILE: records left, by name
        self.steps = 0

    # -- output
    def write_to(self, redirect: tuple, text: str):
        """print > FILE, >> FILE (the file stays open until close(FILE)); commands are refused."""
        op, dest = redirect
        if op in (">", ">>") and dest in ("/dev/stdout", "-"):
            self.out.append(text)
            return
        if op == "|":
            raise AwkError(f"awk: print | \"{dest}\": running commands is disabled in logic mode")
        write = self.outputs.get(dest)
        if write is None:
            self.flush()
            try:
                write = self.ctx.err if dest == "/dev/stderr" else \
                    access.writer(self.ctx, dest, append=op == ">>")
            except FsError as e:
                raise AwkError(f"awk: cannot open \"{dest}\" for output ({e.strerror})", 2) from None
            self.outputs[dest] = write
        if dest == "/dev/stderr":
            self.flush()
        write(text)

    def getline_file(self, name) -> "str | float | None":
        """`getline < FILE`: its next record; None at its end; -1.0 if it cannot be read."""
        name = self.to_str(name)
        records = self.inputs.get(name)
        if records is None:
            try:
                text = self.ctx.stdin.read_all() if name in ("-", "/dev/stdin") else access.read_text(self.ctx, name)
            except FsDisabled as e:      # logic mode says so rather than reading nothing
                raise AwkError(f"awk: getline < \"{name}\": {e}", 2) from None
            except FsError:
                return -1.0
            records = self.inputs[name] = _records(text, self)
        return next(records, None)

    def close(self, name) -> float:
        name = self.to_str(name)
        found = self.outputs.pop(name, None) is not None
        found = self.inputs.pop(name, None) is not None or found
        return 0.0 if found else -1.0

    def flush(self):
        if self.out:
            text = "".join(self.out)
            self.out.clear()          # the same list: compiled code holds its append
            self.ctx.out(text)

    def fail(self, message: str):
        raise AwkError(message)

    def tick(self):
        """Once per loop iteration: the wall-clock limit, and output handed on as it grows."""
        self.steps += 1
        if not self.steps & 1023:
            self.ctx.budget.check_clock()
            self.flush()

    # -- variables
    def get_var(self, name):
        """A global read the compiled code could not do directly (a name also used as an array)."""
        v = self.globals.get(name)
        if v is None:
            if name in self.arrays:
                raise AwkError(f"awk: can't use array {name} in scalar context")
            return EMPTY
        return v

    def set_var(self, name, value):
        if name in self.arrays:
            raise AwkError(f"awk: can't assign to {name}; it's an array name.")
        if name == "NF":
            self.set_nf(int(to_num(value)))
            return value
        self.globals[name] = value
        attr = CACHED_STRINGS.get(name)
        if attr:
            setattr(self, attr, self.to_str(value))
        return value

    def array(self, name) -> dict:
        arr = self.arrays.get(name)
        if type(arr) is not self.array_class:
            if arr is None and name in self.globals:
                raise AwkError(f"awk: can't use scalar {name} as array")
            arr = self.arrays[name] = self.array_class(arr or ())
        return arr

    def subscript(self, *subs) -> str:
        return self.subsep.join([self.to_str(s) for s in subs])

    def assign_operands(self):
        for name, value in self.operand_assigns:
            self.set_var(name, strnum(value))
        self.operand_assigns = []

    # -- records and fields: $0 is split (lazily) with the FS in force when it was read
    def set_record(self, text: str, split: bool = False):
        """A new $0; `split`: its fields are wanted anyway, so split it now with the default
        FS (saves the rules a call per record)."""
        self.record = text
        self.record_typed = False
        self.values = None           # the fields' values (strnums), made as they are used (a
                                     # list made at the first: most records never need one)
        fs = self.record_fs = self.globals["FS"]
        if split and fs == " ":
            parts = self.parts = text.split()
            self.nf = len(parts)
        else:
            self.parts = None        # the fields as read, once split
            self.nf = 0

    def split_record(self) -> list:
        fs = self.record_fs
        parts = self.parts = self.record.split() if fs == " " else self.split(self.record, fs)
        self.nf = len(parts)
        self.values = None
        return parts

    def _slots(self) -> list:
        """The list of field values (None: not made yet), made at the first use."""
        values = self.values
        if values is None:
            values = self.values = [None] * self.nf
        return values

    def field(self, i):
        if i == 0:
            if not self.record_typed:
                self.record = strnum(self.record)
                self.record_typed = True
            return self.record
        parts = self.parts
        if parts is None:
            parts = self.split_record()
        if 0 < i <= self.nf:
            values = self._slots()
            v = values[i - 1]
            if v is None:
                v = values[i - 1] = strnum(parts[i - 1])
            return v
        if i < 0:
            raise AwkError(f"awk: trying to access out of range field {i}")
        return ""                    # a field past NF is the empty string, not unset

    # Where the compiled code needs a field only as text or only as a number, these skip
    # making its strnum.
    def field_text(self, i: int, output: bool = False) -> str:
        if i == 0:
            return self.record
        parts = self.parts
        if parts is None:
            parts = self.split_record()
        if 0 < i <= self.nf:
            v = None if self.values is None else self.values[i - 1]
            if v is None:
                return parts[i - 1]
            return self.to_output(v) if output else self.to_str(v)
        return self.field(i)         # "" past NF, or the out-of-range error

    def field_number(self, i: int) -> float:
        if i == 0:
            return to_num(self.record)
        parts = self.parts
        if parts is None:
            parts = self.split_record()
        if 0 < i <= self.nf:
            v = None if self.values is None else self.values[i - 1]
            if v is None:
                text = parts[i - 1]
                if text.isdigit() and text.isascii():     # the common case, without to_num
                    return float(text)
                return to_num(text)
            return to_num(v)
        return to_num(self.field(i))

    def field_at(self, index) -> object:
        return self.field(int(to_num(index)))

    def get_nf(self) -> float:
        if self.parts is None:
            self.split_record()
        return float(self.nf)

    def set_field(self, index, value):
        i = int(to_num(index))
        if i == 0:
            self.set_record(self.to_str(value))
            return value
        if i < 0:
            raise AwkError(f"awk: trying to access out of range field {i}")
        if self.parts is None:
            self.split_record()
        if i > self.nf:
            self._resize(i)
        self._slots()[i - 1] = value
        self.rebuild()
        return value

    def set_nf(self, n: int):
        if self.parts is None:
            self.split_record()
        self._resize(n)
        self.rebuild()

    def _resize(self, n: int):
        if n > self.ctx.limits.max_array_length:
            raise LimitExceeded("max_array_length", f"awk: NF={n}: more fields than "
                                f"{self.ctx.limits.max_array_length} (max_array_length)")
        values = self._slots()
        parts = self.parts
        assert parts is not None            # the callers split the record first
        if n < self.nf:
            del parts[n:], values[n:]
        else:
            parts.extend([""] * (n - self.nf))
            values.extend([""] * (n - self.nf))     # new fields are empty strings, not unset
        self.nf = n

    def rebuild(self):
        values = self._slots()
        parts = self.parts
        assert parts is not None            # the callers split the record first
        texts = [p if v is None else self.to_str(v) for p, v in zip(parts, values)]
        self.record = self.ofs.join(texts)
        self.record_typed = False

    def split(self, text: str, fs) -> list:
        fs = self.to_str(fs)
        if fs == " ":
            return text.split()
        if text == "":
            return []
        if fs == "":
            return list(text)
        if len(fs) == 1 and fs != "\\":
            return text.split(fs)
        return timed(self.regex(fs, longest=True).split, text)

    # -- conversions
    def regex(self, pattern: str, longest: bool = False):
        """The compiled ERE; `longest` where the matched text itself is used (sub, gsub, match,
        split, FS, RS), which POSIX wants leftmost-longest."""
        try:
            return compile_ere(pattern, longest)
        except (RegexError, regex.error) as e:
            raise AwkError(f"awk: regular expression compile failed ({e})\n{pattern}") from None

    def dynamic_regex(self, value):
        return self.regex(self.to_str(value), longest=True)

    def dynamic_match(self, pattern, text: str) -> bool:
        """`text ~ pattern` with a pattern made at run time."""
        return timed(self.regex(self.to_str(pattern)).search, text) is not None

    # -- input
    def next_record(self) -> Optional[str]:
        if self.operand_assigns:
            self.assign_operands()
        return next(self.records, None)

    def getline(self) -> float:
        """`getline`: the next record becomes $0."""
        rec = self.next_record()
        if rec is None:
            return 0.0
        self.count_record()
        self.set_record(rec)
        return 1.0

    def getline_value(self):
        """`getline var`: the next record as a value for var (None at the end of input)."""
        rec = self.next_record()
        if rec is None:
            return None
        self.count_record()
        return strnum(rec)

    def count_record(self):
        g = self.globals
        g["NR"] = to_num(g["NR"]) + 1.0
        g["FNR"] = to_num(g["FNR"]) + 1.0

    def read_input(self, text: str, fixed_rs: bool):
        """Records of text; all at once when RS is a newline and nothing can change it."""
        if fixed_rs and self.globals["RS"] == "\n" and not self.operand_assigns:
            self.records = _lines_in_blocks(text)
        else:
            self.records = _records(text, self)

    # -- builtins
    def substr(self, s, start, length=None) -> str:
        s = self.to_str(s)
        start = _round(to_num(start))
        if length is not None:
            length = to_num(length)
            if length != length:
                return ""
            end = start + _round(length)
        else:
            end = len(s) + 1
        start = max(start, 1)
        end = min(end, len(s) + 1)
        return s[start - 1:end - 1] if end > start else ""

    def index(self, s, t) -> float:
        return float(self.to_str(s).find(self.to_str(t)) + 1)

    def split_into(self, s, arr: dict, sep=None, sep_regex=None) -> float:
        s = self.to_str(s)
        if sep_regex is not None:
            parts = timed(sep_regex.split, s) if s else []
        else:
            parts = self.split(s, self.globals["FS"] if sep is None else sep)
        arr.clear()
        for k, part in enumerate(parts, 1):
            arr[str(k)] = strnum(part)
        return float(len(parts))

    def match(self, s, rx, arr: Optional[dict] = None) -> float:
        m = timed(rx.search, self.to_str(s))
        if arr is not None:
            arr.clear()
            if m:
                for k in range(0, (m.re.groups or 0) + 1):
                    if m.group(k) is not None:
                        arr[str(k)] = m.group(k)
        g = self.globals
        if m:
            g["RSTART"] = float(m.start() + 1)
            g["RLENGTH"] = float(m.end() - m.start())
            return float(m.start() + 1)
        g["RSTART"] = 0.0
        g["RLENGTH"] = -1.0
        return 0.0

    def math(self, name: str, x) -> float:
        x = to_num(x)
        if name == "int":
            return float(math.trunc(x)) if math.isfinite(x) else x
        try:
            return float(getattr(math, name)(x))
        except (ValueError, OverflowError):
            if name == "exp":
                return math.inf
            if name == "log" and x == 0:
                return -math.inf
            # glibc's log and sqrt of a negative number give a NaN with the sign bit set
            return -math.nan

    def srand(self, seed=None) -> float:
        old = self.seed
        self.seed = to_num(seed) if seed is not None else 0.0
        self.random.seed(self.seed)
        return old

    def substitute(self, rx, repl, text, global_: bool) -> tuple[float, str]:
        """sub/gsub: (number of replacements, new text)."""
        repl = self.to_str(repl)
        replace = (lambda m: repl) if "&" not in repl and "\\" not in repl else (
            lambda m: _awk_replacement(repl, m.group()))
        try:
            new, count = substitute(rx, self.to_str(text), replace, 1, global_,
                                    DEFAULT_TIMEOUT if risky(rx) else None)
        except TimeoutError:
            raise AwkError("awk: regular expression too complex") from None
        return float(count), new

    def gensub(self, rx, repl, how, text=None) -> str:
        repl = self.to_str(repl)
        how = self.to_str(how)
        text = self.to_str(self.field(0) if text is None else text)
        which = 0 if how[:1] in ("g", "G") else max(1, int(to_num(how) or 1))
        count = 0

        def replace(m):
            nonlocal count
            count += 1
            if which and count != which:
                return m.group()
            out, i = [], 0
            while i < len(repl):
                c = repl[i]
                if c == "\\" and i + 1 < len(repl):
                    d = repl[i + 1]
                    out.append((m.group(int(d)) or "") if d.isascii() and d.isdigit() else d)
                    i += 2
                    continue
                out.append(m.group() if c == "&" else c)
                i += 1
            return "".join(out)
        return timed(rx.sub, replace, text)

    def cat(self, text: str) -> str:
        """A concatenation's result, within max_string_length."""
        if len(text) > 4096:
            self.ctx.budget.check_length(len(text), "awk")
            self.ctx.budget.note(len(text))
        return text

    def sprintf(self, fmt, *args) -> str:
        out = []
        k = 0
        for piece in _format_pieces(self.to_str(fmt)):
            if type(piece) is str:
                out.append(piece)
                continue
            flags, width, prec, conv = piece
            if width == "*":
                width = str(int(to_num(args[k]))) if k < len(args) else "0"
                k += 1
            if prec == "*":
                prec = str(int(to_num(args[k]))) if k < len(args) else "0"
                k += 1
            arg = args[k] if k < len(args) else EMPTY
            k += 1
            if (width and width != "-" and abs(int(width)) > MAX_FIELD_WIDTH) or \
                    (prec and int(prec) > MAX_FIELD_WIDTH):
                raise LimitExceeded("max_string_length", "awk: printf: field width or precision "
                                    "too large (max_string_length)")
            out.append(self._format_one("%" + flags + (width or "") + ("." + prec if prec is not None else ""),
                                        conv, arg))
        return "".join(out)

    def _format_one(self, spec: str, conv: str, arg) -> str:
        if conv == "c":
            ch = _char(to_num(arg)) if is_num(arg) and type(arg) is not str else self.to_str(arg)[:1]
            return (spec.split(".")[0] + "s") % ch
        if conv == "s":
            return (spec + "s") % self.to_str(arg)
        if conv in "di":
            v = to_num(arg)
            return (spec + "d") % (int(v) if math.isfinite(v) else 0)
        if conv in "ouxX":
            v = int(to_num(arg))
            if v < 0:
                v += 1 << 64
            return (spec + ("d" if conv == "u" else conv)) % v
        if conv in "aA":
            return _hex_float(to_num(arg), conv == "A")
        return (spec + conv) % to_num(arg)


_2_63 = float(2 ** 63)


def _number_text(rt, format_name: str):
    """str() of an awk value; numbers that are not integers go through rt's CONVFMT or OFMT
    (the common integral case is done here, without num_to_str's call)."""
    def convert(v) -> str:
        if type(v) is not float:
            return v
        if v.is_integer() and -_2_63 < v < _2_63:
            return str(int(v))
        return num_to_str(v, getattr(rt, format_name))
    return convert


_format_cache: dict = {}


def _format_pieces(fmt: str) -> list:
    """A printf format as literal strings and (flags, width, precision, conversion) tuples,
    parsed once per format."""
    pieces = _format_cache.get(fmt)
    if pieces is not None:
        return pieces
    pieces = []
    i, n = 0, len(fmt)
    while i < n:
        if fmt[i] != "%":
            j = fmt.find("%", i)
            j = n if j < 0 else j
            pieces.append(fmt[i:j])
            i = j
            continue
        m = _FORMAT.match(fmt, i)
        if not m:
            pieces.append(fmt[i:])
            break
        i = m.end()
        pieces.append("%" if m.group(4) == "%" else m.groups())
    if len(_format_cache) > 256:
        _format_cache.clear()
    _format_cache[fmt] = pieces
    return pieces


def timed(method, *args):
    """A regex operation; patterns that can backtrack exponentially run under the per-call
    budget and fail cleanly (the timeout costs ~10x a plain match, so only those pay it)."""
    if not risky(method.__self__):
        return method(*args)
    try:
        return method(*args, timeout=DEFAULT_TIMEOUT)
    except TimeoutError:
        raise AwkError("awk: regular expression too complex") from None


_ere_cache: dict = {}


def compile_ere(pattern: str, longest: bool = False):
    key = (pattern, longest)
    rx = _ere_cache.get(key)
    if rx is None:
        # awk strings and regex literals share escapes such as \/ and \"
        flags = regex.V0 | regex.DOTALL | (regex.POSIX if longest else 0)
        rx = regex.compile(translate(pattern, extended=True, awk=True), flags)
        if len(_ere_cache) > 512:
            _ere_cache.clear()
        _ere_cache[key] = rx
    return rx


def _hex_float(x: float, upper: bool) -> str:
    """C's %a: 42 -> 0x1.5p+5."""
    text = x.hex()
    mantissa, _, exp = text.partition("p")
    if "." in mantissa:
        mantissa = mantissa.rstrip("0").rstrip(".")
    text = f"{mantissa}p{exp if exp.startswith('-') else '+' + exp.lstrip('+')}"
    return text.upper() if upper else text


def _round(x: float) -> int:
    if x != x:
        return 0
    if x in (math.inf, -math.inf):
        return 1 << 62 if x > 0 else -(1 << 62)
    return int(math.floor(x + 0.5)) if x >= 0 else -int(math.floor(-x + 0.5))


def _awk_replacement(repl: str, matched: str) -> str:
    out, i = [], 0
    while i < len(repl):
        c = repl[i]
        if c == "\\" and i + 1 < len(repl) and repl[i + 1] in "&\\":
            out.append(repl[i + 1])
            i += 2
            continue
        out.append(matched if c == "&" else c)
        i += 1
    return "".join(out)


def _file_records(rt: Runtime, files: list):
    """The records of each file in turn, with FILENAME and FNR following the file; a file
    that cannot be opened ends the program (status 2), as in mawk."""
    g = rt.globals
    for name in files:
        try:
            text = rt.ctx.stdin.read_all() if name == "-" else access.read_text(rt.ctx, name)
        except FsError as e:
            rt.flush()
            raise AwkError(f"awk: cannot open {name} ({e.strerror})", 2) from None
        g["FILENAME"] = name
        g["FNR"] = 0.0
        yield from _records(text, rt)


def _lines_in_blocks(text: str, block: int = 1 << 20):
    """The lines of text, split about a megabyte at a time: str.split's speed without a
    string for every line of a large input held at once (chained in C: no generator frame to
    resume for every line)."""
    return itertools.chain.from_iterable(_line_blocks(text, block))


def _line_blocks(text: str, block: int):
    pos, n = 0, len(text)
    while pos < n:
        cut = text.find("\n", pos + block)
        if cut < 0:
            yield split_lines(text[pos:])
            return
        yield text[pos:cut].split("\n")
        pos = cut + 1


def _records(text: str, rt: Runtime):
    """Records of the input by RS, read lazily so that RS may change in BEGIN."""
    pos = 0
    n = len(text)
    while pos < n:
        rs = rt.to_str(rt.globals["RS"])
        if rs == "\n":
            end = text.find("\n", pos)
            if end < 0:
                yield text[pos:]
                return
            yield text[pos:end]
            pos = end + 1
        elif rs == "":
            while pos < n and text[pos] == "\n":
                pos += 1
            if pos >= n:
                return
            m = re.compile(r"\n\n+").search(text, pos)
            if m is None:
                yield text[pos:].rstrip("\n")
                return
            yield text[pos:m.start()]
            pos = m.end()
        elif len(rs) == 1:
            end = text.find(rs, pos)
            if end < 0:
                yield text[pos:]
                return
            yield text[pos:end]
            pos = end + 1
        else:
            m = timed(rt.regex(rs, longest=True).search, text, pos)
            if m is None or m.end() == m.start():
                yield text[pos:]
                return
            yield text[pos:m.start()]
            pos = m.end()


def run_program(program, rt: Runtime, files: list) -> int:
    """BEGIN, then the rules for every record of the input files (`-`: standard input), then
    END; `exit` skips to END (or out of it)."""
    if len(files) == 1 and files[0] == "-":
        rt.read_input(rt.ctx.stdin.read_all(), not program.uses_rs)
    else:
        rt.records = _file_records(rt, files)
    status = 0
    try:
        try:
            program.begin()
            if program.main is not None or program.reads_input:
                _each_record(program.main, rt, program.counts_records, program.reads_fields)
        except Exit as e:
            if e.status is not None:
                status = e.status
        try:
            program.end()
        except Exit as e:
            if e.status is not None:
                status = e.status
    except Next:
        pass
    rt.flush()
    return status & 0xFF


def _each_record(main, rt: Runtime, counts_records: bool, reads_fields: bool):
    """The rules for each record. NR and FNR are kept only where the program reads them
    (nothing else can see them)."""
    g = rt.globals
    if rt.operand_assigns:
        rt.assign_operands()
    count = 0
    for rec in rt.records:
        if counts_records:
            nr, fnr = g["NR"], g["FNR"]
            g["NR"] = (nr if type(nr) is float else to_num(nr)) + 1.0
            g["FNR"] = (fnr if type(fnr) is float else to_num(fnr)) + 1.0
        rt.set_record(rec, reads_fields)
        if main is not None:
            try:
                main()
            except Next:
                pass
        count += 1
        if not count & 1023:
            rt.ctx.budget.check_clock()
            rt.flush()


def _char(number: float) -> str:
    """printf %c of a number: that character; past Unicode's range, the low byte (mawk's C
    cast), an infinity or NaN printing nothing."""
    if number != number or number in (float("inf"), float("-inf")):
        return ""
    code = int(number)
    return chr(code) if 0 <= code < 0x110000 else chr(code & 0xFF)
