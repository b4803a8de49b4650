"""jq, through libjq (PyPI `jq`): the reference implementation, guarded for logic mode.

Guards: `import`, `include`, `modulemeta` and `get_search_list` are refused; `$ENV` and `env`
show the script's exported variables only; `halt`/`halt_error` (which would end the host
process inside libjq) and `debug`/`stderr` (which would write to the host's stderr) are
redefined. Compiled programs are cached: compiling costs ~1.5 ms, running ~15 µs, so
`--arg` values travel with the input instead of being compiled in.
"""
from __future__ import annotations

import functools
import json
import re
from decimal import Decimal
from collections import OrderedDict

from ..fs import FsError, access
from . import jq_fast
from ._options import UsageError, run_guarded
from .jq_worker import MEMORY_LIMIT, POOL, WorkerCrashed, WorkerTimeout
from ..shell.limits import timeout_error

NAMES = ("jq",)

# module directives, and the builtins that read the module search path (object keys may use
# the same words: {import: 1} is fine)
_REFUSED = re.compile(r'(?<![\w.$])(?:(import|include)\s*"|(modulemeta|get_search_list)\b(?!\s*:))')
_USES_INPUT = re.compile(r"\binputs?\b")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_HALT_KEY = "__scripted_halt"

PRELUDE = (
    'def halt: error({"%(k)s": 0, "value": null}); '
    'def halt_error($code): if ($code | type) != "number" '
    'then error("halt_error/1: number required") else error({"%(k)s": $code, "value": .}) end; '
    'def halt_error: halt_error(5); '
    'def debug: .; def debug(msg): .; def stderr: .; def input_filename: null; '
    'def env: $ENV; '
    # removed from jq 1.8 but still written by models (jq 1.6/1.7 defined it so)
    'def leaf_paths: paths(scalars); ' % {"k": _HALT_KEY}
)

_cache: "OrderedDict[tuple, object]" = OrderedDict()
_CACHE_SIZE = 256


class JqFailure(Exception):
    def __init__(self, message: str, status: int):
        super().__init__(message)
        self.message = message
        self.status = status


def _program(text: str, arg_names: tuple, env: dict, with_inputs: bool, sort_keys: bool):
    """The compiled program (cached) and whether it writes JSON text. With arg names or inputs,
    each input is wrapped as {"v": value, "a": named, "p": positional, "i": inputs} and
    unwrapped by the prelude. Each result is turned into text by libjq's own `tojson`, which
    keeps a number it was handed as text by that text (jq 1.7+: `1.000`, `1E+2`, big integers);
    a program that compiles only bare hands back values instead."""
    import jq as libjq
    key = (text, arg_names, tuple(sorted(env.items())), with_inputs, sort_keys)
    cached = _cache.get(key)
    if cached is not None:
        _cache.move_to_end(key)
        return cached
    wrapped = bool(arg_names) or with_inputs
    head = "$__scripted_env as $ENV | " + PRELUDE
    if wrapped:
        head += ('.a as $__named | .p as $__positional | .i as $__inputs | .l as $__line | '
                 'def input_line_number: $__line; '
                 '{"positional": $__positional, "named": $__named} as $ARGS | '
                 'def inputs: $__inputs[]; '
                 'def input: if ($__inputs | length) > 0 then $__inputs[0] '
                 'else error("break") end; ')
        head += "".join(f"$__named[{json.dumps(n)}] as ${n} | " for n in arg_names)
        head += ".v | "
    else:
        head += '{"positional": [], "named": {}} as $ARGS | '
    # the user's program starts on line 1 (after the prelude), so $__loc__ and errors agree
    body = text if text.strip() else "."
    # a newline before the closing parenthesis, so that a trailing comment stays one
    tail = "\n) | " + (_SORT_KEYS if sort_keys else "") + "tojson"
    # the bare program first: its errors are the user's, and a program that would close the
    # added parenthesis itself (`1) | (2`) is refused as jq refuses it
    try:
        entry = (libjq.compile(head + body, args={"__scripted_env": env}), False)
    except ValueError as e:
        raise JqFailure(_compile_message(str(e), len(head), text), 3) from None
    try:
        entry = (libjq.compile(head + "(" + body + tail, args={"__scripted_env": env}), True)
    except ValueError:
        pass
    _cache[key] = entry
    if len(_cache) > _CACHE_SIZE:
        _cache.popitem(last=False)
    return entry


# --sort-keys: jq sorts keys when it prints; `tojson` does not, so the keys are sorted first
_SORT_KEYS = ('def __scripted_sorted: if type == "object" then . as $o | reduce keys[] as $k '
              '({}; .[$k] = ($o[$k] | __scripted_sorted)) elif type == "array" '
              'then map(__scripted_sorted) else . end; __scripted_sorted | ')

def _compile_message(message: str, shift: int, text: str) -> str:
    """libjq's compile error about the user's program: on line 1 the prelude precedes it, so
    the column is shifted back and the quoted source line and caret show the user's line."""
    lines = message.split("\n")
    for k, line in enumerate(lines):
        m = re.search(r"line 1, column (\d+)", line)
        if not m:
            continue
        column = max(1, int(m.group(1)) - shift)
        lines[k] = line[:m.start()] + f"line 1, column {column}" + line[m.end():]
        if k + 2 < len(lines) and lines[k + 1].startswith("    ") and lines[k + 2].lstrip().startswith("^"):
            lines[k + 1] = "    " + text.split("\n", 1)[0]
            carets = lines[k + 2].strip()
            lines[k + 2] = "    " + " " * (column - 1) + carets
        break
    message = "\n".join(lines)
    if not message.startswith("jq: error"):
        message = "jq: error: " + message
    if "compile error" not in message:
        message += "\njq: 1 compile error"
    return message


def _check_guards(text: str):
    m = _REFUSED.search(text)
    if m:
        raise JqFailure(f"jq: error: {m.group(1) or m.group(2)} is disabled in logic mode "
                        f"(no files or modules)\njq: 1 compile error", 3)


# ---------------------------------------------------------------- output

def _number(v, literal_ints: bool = False) -> str:
    """jq's number format: the shortest digits of the double, in decimal notation unless the
    exponent is far out (jv_dtoa_fmt: decpt <= -4 or decpt > ndigits + 15). `literal_ints`:
    every integer is one jq was handed as text, whose digits jq 1.7+ keeps (jq_fast's results:
    its arithmetic makes doubles); libjq's results come back with every whole double as an
    integer."""
    if type(v) is int and (literal_ints or -10 ** 17 < v < 10 ** 17):
        return str(v)
    x = float(v)
    if x != x:
        return "null"
    if x in (float("inf"), float("-inf")):
        return "1.7976931348623157e+308" if x > 0 else "-1.7976931348623157e+308"
    if x == 0:
        return "-0" if str(x).startswith("-") else "0"
    sign, digit_tuple, exponent = Decimal(repr(x)).normalize().as_tuple()
    digits = "".join(map(str, digit_tuple))
    decpt = len(digits) + exponent
    text = "-" if sign else ""
    if decpt <= -4 or decpt > len(digits) + 15:
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        e = decpt - 1
        return f"{text}{mantissa}e{'-' if e < 0 else '+'}{abs(e):02d}"
    if decpt <= 0:
        return f"{text}0.{'0' * -decpt}{digits}"
    if decpt >= len(digits):
        return text + digits + "0" * (decpt - len(digits))
    return f"{text}{digits[:decpt]}.{digits[decpt:]}"


def dump(v, indent, sort_keys: bool, ascii_only: bool, level: int = 0,
         literal_ints: bool = False) -> str:
    """A JSON value as jq prints it (indent: None for compact, else the indent string)."""
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, (int, float)):
        return _number(v, literal_ints)
    if isinstance(v, str):
        text = json.dumps(v, ensure_ascii=ascii_only)
        return text.replace("\x7f", "\\u007f")
    if isinstance(v, list):
        if not v:
            return "[]"
        if indent is None:
            return "[" + ",".join(dump(x, None, sort_keys, ascii_only, 0, literal_ints) for x in v) + "]"
        inner = indent * (level + 1)
        items = (",\n" + inner).join(dump(x, indent, sort_keys, ascii_only, level + 1, literal_ints)
                                     for x in v)
        return "[\n" + inner + items + "\n" + indent * level + "]"
    if isinstance(v, dict):
        if not v:
            return "{}"
        keys = sorted(v) if sort_keys else list(v)
        if indent is None:
            return "{" + ",".join(dump(k, None, False, ascii_only) + ":" +
                                  dump(v[k], None, sort_keys, ascii_only, 0, literal_ints)
                                  for k in keys) + "}"
        inner = indent * (level + 1)
        items = (",\n" + inner).join(dump(k, None, False, ascii_only) + ": " +
                                     dump(v[k], indent, sort_keys, ascii_only, level + 1, literal_ints)
                                     for k in keys)
        return "{\n" + inner + items + "\n" + indent * level + "}"
    return json.dumps(v)


# ---------------------------------------------------------------- input

# -0 as a JSON number (not `-0.5`, not inside `SKU-001`): jq prints it so, Python's int cannot
# (starting with the literal `-` lets the regex engine skip ahead quickly)
_NEGATIVE_ZERO = re.compile(r"-0(?![\d.eE])(?<![\w.-]-0)")


def _values(text: str):
    """The JSON values of a text stream, each as (value, input line jq would report, start, end
    of its text, -1 when it has none), and whether some number's text matters (`special_float`,
    `-0`: such input goes to libjq, which keeps it). A parse failure ends the list. Python's
    parser keeps big integers exact (libjq 1.7+ keeps their digits too); what it rejects (NaN,
    Infinity, a byte-order mark) goes to jq's own parser."""
    special = []

    def parse_float(number: str) -> float:
        if not special and jq_fast.special_number(number):
            special.append(number)
        return float(number)
    decoder = json.JSONDecoder(parse_float=parse_float)
    pos, n = 0, len(text)
    out = []
    lines_read, read_to = 0, 0      # jq reads whole lines (fgets): the count up to read_to
    try:
        while True:
            while pos < n and text[pos] in " \t\r\n":
                pos += 1
            if pos >= n:
                break
            value, end = decoder.raw_decode(text, pos)
            if end > read_to:
                # the line holding the value's last character has been read whole
                line_end = text.find("\n", end - 1)
                line_end = n if line_end < 0 else line_end + 1
                lines_read += text.count("\n", read_to, line_end)
                read_to = line_end
            out.append((value, lines_read, pos, end))
            pos = end
        return out, bool(special) or ("-0" in text and _NEGATIVE_ZERO.search(text) is not None)
    except json.JSONDecodeError:
        pass
    import jq as libjq
    out = []
    lines = text.count("\n")
    try:
        for value in libjq.compile(".").input_text(text):
            out.append((value, lines, -1, -1))
    except ValueError as e:
        out.append(JqFailure(f"jq: error (at <stdin>:{lines}): {e}", 2))
    if len(out) == 1 and not isinstance(out[0], JqFailure):
        out[0] = (out[0][0], lines, 0, n)     # one document: libjq reads it as it came (nan)
    return out, True


def _json_text(raw: str, value, start: int, end: int) -> str:
    """An input's JSON text for libjq: as it came (numbers keep their spelling), else made."""
    return raw[start:end] if start >= 0 else json.dumps(value)


# ---------------------------------------------------------------- command

def _parse_args(argv):
    opts = {"r": False, "j": False, "c": False, "n": False, "s": False, "e": False, "a": False,
            "S": False, "R": False, "indent": "  ", "seq": False, "raw0": False}
    named: dict = {}
    positional: list = []
    filter_text = program_file = None
    files: list = []
    file_args: list = []      # (--slurpfile or --rawfile, name, path)
    rest_mode = None          # "args" or "jsonargs" after --args / --jsonargs
    i = 1
    short = {"r": "r", "j": "j", "c": "c", "n": "n", "s": "s", "e": "e", "a": "a", "S": "S",
             "R": "R", "C": None, "M": None}
    longs = {"--raw-output": "r", "--join-output": "j", "--compact-output": "c",
             "--null-input": "n", "--slurp": "s", "--exit-status": "e", "--ascii-output": "a",
             "--sort-keys": "S", "--raw-input": "R", "--color-output": None,
             "--monochrome-output": None, "--unbuffered": None}
    while i < len(argv):
        a = argv[i]
        i += 1
        if filter_text is not None and rest_mode and not a.startswith("-"):
            positional.append(a if rest_mode == "args" else _json_arg(a, "--jsonargs"))
            continue
        if a in ("--arg", "--argjson", "--slurpfile", "--rawfile"):
            if i + 1 >= len(argv):
                raise UsageError(f"jq: {a} takes two parameters (e.g. {a} varname value)", 2)
            name, value = argv[i], argv[i + 1]
            i += 2
            if a in ("--slurpfile", "--rawfile"):
                file_args.append((a, name, value))
                continue
            named[name] = value if a == "--arg" else _json_arg(value, a)
            continue
        if a in ("--version", "-V"):
            raise _VersionAsked()
        if a in ("--args", "--jsonargs"):
            rest_mode = a[2:]
            continue
        if a == "--tab":
            opts["indent"] = "\t"
            continue
        if a == "--indent":
            if i >= len(argv) or not (argv[i].isascii() and argv[i].isdigit()):
                raise UsageError("jq: --indent takes one parameter", 2)
            n = int(argv[i])
            i += 1
            if n > 7:
                raise UsageError("jq: Cannot indent more than 7 characters", 2)
            opts["indent"] = " " * n if n else None
            continue
        if a == "--seq":
            opts["seq"] = True
            continue
        if a in longs:
            if longs[a]:
                opts[longs[a]] = True
            continue
        if a in ("-f", "--from-file"):
            if i >= len(argv):
                raise UsageError(f"jq: {a} takes a parameter", 2)
            program_file = argv[i]
            i += 1
            continue
        if a == "-L" or a.startswith("-L"):
            raise UsageError(f"jq: {a}: modules are not available", 2)
        if a == "--":
            rest_mode = rest_mode or "files"
            continue
        if a.startswith("-") and len(a) > 1 and not a.startswith("--"):
            for c in a[1:]:
                if c not in short:
                    raise UsageError(f"jq: Unknown option: {a}\nUse jq --help for help with command-line options,\n"
                                     f"or see the jq manpage, or online docs  at https://jqlang.github.io/jq", 2)
                if short[c]:
                    opts[short[c]] = True
            continue
        if a.startswith("--"):
            raise UsageError(f"jq: Unknown option: {a}\nUse jq --help for help with command-line options,\n"
                             f"or see the jq manpage, or online docs  at https://jqlang.github.io/jq", 2)
        if filter_text is None and program_file is None:
            filter_text = a
        elif rest_mode in ("args", "jsonargs"):
            positional.append(a if rest_mode == "args" else _json_arg(a, "--jsonargs"))
        else:
            files.append(a)
    if filter_text is None and program_file is None:
        raise UsageError("Usage:\tjq [OPTIONS] FILTER [FILES...]", 2)
    return opts, named, positional, filter_text, program_file, files, file_args


def _read_files(sh, named: dict, filter_text, program_file, files: list, file_args: list):
    """Through the filesystem: the program of -f, the values of --slurpfile and --rawfile, and
    the input files joined (None: standard input). Returns (filter, input text, status)."""
    def read(name: str) -> str:
        try:
            return access.read_text(sh, name)
        except FsError as e:
            raise UsageError(f"jq: error: Could not open {name}: {e.strerror}", 2) from None
    if program_file is not None:
        filter_text = read(program_file)
    for option, name, path in file_args:
        text = read(path)
        named[name] = text if option == "--rawfile" else _json_values(text, path)
    if not files:
        return filter_text, None, 0
    status, texts = 0, []
    for name in files:
        try:
            texts.append(read(name))
        except UsageError as e:
            sh.err(e.message + "\n")
            status = 2
    return filter_text, "".join(texts), status


def _json_values(text: str, path: str) -> list:
    decoder, values, pos = json.JSONDecoder(), [], 0
    while True:
        while pos < len(text) and text[pos] in " \t\r\n":
            pos += 1
        if pos >= len(text):
            return values
        try:
            value, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError:
            raise UsageError(f"jq: Bad JSON in --slurpfile {path}", 2) from None
        values.append(value)


class _VersionAsked(Exception):
    """jq --version / -V: print the version of the bundled libjq and stop."""


@functools.lru_cache(maxsize=1)
def bundled_version() -> str:
    """The libjq version compiled into PyPI `jq` (its binary carries the string jq-X.Y.Z)."""
    import jq as libjq
    try:
        with open(libjq.__file__, "rb") as f:
            found = re.search(rb"jq-1\.\d+(?:\.\d+)?", f.read())
    except OSError:
        found = None
    return found.group().decode() if found else "jq-1.8"


def _json_arg(value: str, option: str):
    try:
        return json.loads(value)
    except json.JSONDecodeError:
        raise UsageError(f"jq: Invalid JSON text passed to {option}", 2) from None


# A program that only selects parts of its input (`.name`, `.items[0].id`, `.[]`, joined by `|`
# or `,`) cannot loop or build values larger than its input, so on a small input it runs in
# this process (~15 µs); every other program runs in a worker process (one pipe round trip).
_SEGMENT = r'(?:\.[A-Za-z_][A-Za-z0-9_]*|\.?\[(?:-?\d{1,9}|"[^"\\]*"|)\]|\."[^"\\]*")\??'
_TERM = r'\s*(?:(?=\.)(?:' + _SEGMENT + r')+|\.)\s*'
_PATH_ONLY = re.compile(_TERM + r'(?:[|,]' + _TERM + r')*')
IN_PROCESS_INPUT = 1 << 20


def run(sh, argv):
    def body():
        try:
            parsed = _parse_args(argv)
        except _VersionAsked:
            sh.out(bundled_version() + "\n")
            return 0
        opts, named, positional, text, program_file, files, file_args = parsed
        text, raw, read_status = _read_files(sh, named, text, program_file, files, file_args)
        if read_status and not raw:
            return read_status
        try:
            _check_guards(text)
            env = sh.exported_env()
            if raw is None:
                raw = sh.stdin.read_all()
            if _PATH_ONLY.fullmatch(text) and len(raw) <= IN_PROCESS_INPUT:
                status = run_program(_InProcess(sh, raw), opts, named, positional, text, env)
            else:
                status = _in_worker(sh, (text, opts, named, positional, env, raw, sh.limits.max_output_bytes))
            return max(status, read_status)
        except JqFailure as e:
            sh.err(e.message + "\n")
            return e.status
    return run_guarded("jq", sh, body)


class _InProcess:
    """The script's shell as jq's runner sees it, with its input already read."""
    __slots__ = ("out", "err", "raw")

    def __init__(self, sh, raw: str):
        self.out, self.err, self.raw = sh.out, sh.err, raw

    def read_all(self) -> str:
        return self.raw


def _in_worker(sh, request) -> int:
    """Run the program in a worker process, within the script's deadline and cancel flag."""
    budget = sh.budget
    try:
        _, out, err, status = POOL.run(request, budget.deadline, lambda: budget.cancel.cancelled)
    except WorkerTimeout:         # the worker stopped on the cancel flag or the deadline
        budget.check_stop()
        raise timeout_error(sh.limits) from None
    except WorkerCrashed:
        raise JqFailure(f"jq: error: jq ran out of memory (jq values are limited to "
                        f"{MEMORY_LIMIT >> 20} MiB in all)", 5) from None
    sh.out(out)
    if err:
        sh.err(err)
    return status


def run_program(io, opts, named, positional, text, env) -> int:
    """Run one jq command line: `io` gives the input (`read_all`) and takes the output
    (`out`, `err`); returns jq's exit status."""
    outside_strings = _STRING.sub('""', text)
    uses_input = bool(_USES_INPUT.search(outside_strings))
    # input_line_number: the lines read so far, which only this side knows (0 under -n)
    uses_line = "input_line_number" in outside_strings
    with_inputs = uses_input or uses_line or bool(positional)
    raw = io.read_all()
    if not (with_inputs or opts["n"] or opts["s"] or opts["R"]):
        streamed = _stream(raw, opts, text, named)
        if streamed is not None:
            output, produced, last = streamed
            io.out(output)
            return _exit_status(opts, produced, last in (None, False))
    inputs, special = _inputs(raw, opts, uses_input)
    # each run of the program: (input value, input line, start, end of its text)
    runs = [(None, 0, -1, -1)] if opts["n"] else inputs
    if uses_input and not opts["n"] and runs:
        runs = runs[:1]                       # input/inputs consume the rest of the stream
        rest = [item for item in inputs[1:] if not isinstance(item, JqFailure)]
    else:
        rest = [item for item in inputs if not isinstance(item, JqFailure)] if opts["n"] else []
    failure = next((item for item in runs if isinstance(item, JqFailure)), None)
    good = [item for item in runs if not isinstance(item, JqFailure)]
    streams = None
    if not (with_inputs or special):
        streams = _evaluate_directly(text, named, good)
    format_result = _format
    if streams is None:
        program, textual = _program(text, tuple(sorted(named)), env, with_inputs, opts["S"])
        payload = _payloads(raw, named, positional, rest, bool(named) or with_inputs)
        if textual:
            format_result = _format_text
            streams = (program.input_text(payload(item)) for item in good)
        else:
            format_result = functools.partial(_format, literal_ints=False)
            streams = (program.input_value(json.loads(payload(item))) for item in good)
    halted, status, produced, last = _write_results(io, opts, good, streams, format_result)
    if halted is not None:
        return halted
    if failure is not None and not status:
        raise failure
    if status:
        return status
    falsy = ("null", "false") if format_result is _format_text else (None, False)
    return _exit_status(opts, produced, last in falsy)


def _exit_status(opts, produced: bool, last_falsy: bool) -> int:
    """jq's status when all went well: with -e, 4 without output, 1 if the last was false or
    null."""
    if opts["e"]:
        if not produced:
            return 4
        return 1 if last_falsy else 0
    return 0


# Inputs from this size on go element by element where the program allows: about 5x less
# memory (values of a whole array take some six times its text), at about twice the time
STREAM_FROM = 8 << 20
_BLANKS = re.compile(r"[ \t\r\n]*")


def _stream(raw: str, opts, text: str, named: dict):
    """A program that only goes through the elements of one large array (`.[] | F`,
    `[.[] | F] | length`), run on each element as it is parsed: the array is never held as
    values, only its text and the output. Returns (output, whether any result came, the last
    result), or None where this does not apply or something needs the usual path (a number
    whose text matters, an error, more documents, syntax jq_fast does not model): nothing has
    been written then, and the usual path runs from the start."""
    if len(raw) < STREAM_FROM:
        return None
    pos = _BLANKS.match(raw).end()
    if not raw.startswith("[", pos):
        return None
    shape = jq_fast.compile_stream(text, named)
    if shape is None or ("-0" in raw and _NEGATIVE_ZERO.search(raw)):
        return None
    each, count_only = shape
    special = []

    def parse_float(number: str) -> float:
        if jq_fast.special_number(number):
            special.append(number)
        return float(number)
    scan = json.JSONDecoder(parse_float=parse_float).scan_once    # one value at pos (C)
    indent = None if opts["c"] else opts["indent"]
    out, count, last = [], 0, None
    blank = " \t\r\n"
    try:
        pos = _BLANKS.match(raw, pos + 1).end()
        c = raw[pos]
        while c != "]":
            value, pos = scan(raw, pos)
            if special:
                return None
            for result in each(value):
                count += 1
                if not count_only:
                    last = result
                    out.append(_format(result, opts, indent))
            c = raw[pos]
            if c in blank:
                pos = _BLANKS.match(raw, pos).end()
                c = raw[pos]
            if c == ",":
                pos += 1
                if raw[pos] in blank:
                    pos = _BLANKS.match(raw, pos).end()
            elif c != "]":
                return None
        if _BLANKS.match(raw, pos + 1).end() != len(raw):
            return None                       # more documents follow
    except Exception:        # bad JSON, Unsupported, a corner libjq handles: the usual path
        return None
    if count_only:
        return _format(count, opts, indent), True, count
    return "".join(out), count > 0, last


def _inputs(raw: str, opts, uses_input: bool):
    """The inputs as (value, line, start, end) (or a JqFailure where the text stops parsing),
    and whether some number's text must reach libjq as it is."""
    if opts["R"]:
        lines = raw.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        if opts["s"]:
            return [(raw, raw.count("\n"), -1, -1)], False
        return [(ln, k + 1, -1, -1) for k, ln in enumerate(lines)], False
    if opts["n"] and not uses_input:
        return [], False
    inputs, special = _values(raw)
    if not opts["s"]:
        return inputs, special
    failure = next((v for v in inputs if isinstance(v, JqFailure)), None)
    if failure is not None:
        raise failure
    # one array of every value; its text joins theirs
    slurped = "[" + ",".join(_json_text(raw, value, start, end)
                             for value, _, start, end in inputs) + "]"
    return [([item[0] for item in inputs], raw.count("\n"), 0, len(slurped), slurped)], special


def _payloads(raw: str, named: dict, positional: list, rest: list, wrapped: bool):
    """The function giving the JSON text libjq runs the program on, for one input."""
    def text_of(item) -> str:
        if len(item) == 5:                   # slurped: the text is made, not cut from raw
            return item[4]
        value, _, start, end = item
        return _json_text(raw, value, start, end)
    if not wrapped:
        return text_of
    fixed = (',"a":' + json.dumps(named) + ',"p":' + json.dumps(positional) + ',"i":['
             + ",".join(text_of(item) for item in rest) + '],"l":')
    return lambda item: '{"v":' + text_of(item) + fixed + str(item[1]) + "}"


def _write_results(io, opts, inputs: list, streams, format_result):
    """Write each input's results as they come. Returns (a halt's exit status or None, 5 after
    a runtime error or 0, whether any result came, the last result)."""
    indent = None if opts["c"] else opts["indent"]
    out = []
    last = None
    produced = False
    status = 0
    for item, results in zip(inputs, streams):
        try:
            for result in results:
                produced = True
                last = result
                out.append(format_result(result, opts, indent))
        except ValueError as e:
            io.out("".join(out))
            out = []
            halted = _halt(str(e))
            if halted is not None:
                code, value = halted
                if value is not None:
                    io.err(value if isinstance(value, str) else dump(value, None, False, False) + "\n")
                return code, status, produced, last
            where = f"<stdin>:{item[1]}" if not opts["n"] else "<unknown>"
            io.err(f"jq: error (at {where}): {_runtime_message(str(e))}\n")
            status = 5
        if len(out) > 256:
            io.out("".join(out))
            out = []
    io.out("".join(out))
    return None, status, produced, last


def _evaluate_directly(text: str, named: dict, inputs: list):
    """Each input's results from jq_fast, or None when libjq must run the program (syntax
    jq_fast does not model, or an error whose message libjq words). All inputs are evaluated
    first, so falling back to libjq repeats no output."""
    program = jq_fast.compile_program(text, named)
    if program is None:
        return None
    try:
        return [list(program(item[0])) for item in inputs]
    except Exception:        # Unsupported, or a corner (deep values, overflow) libjq handles
        return None


def _format(result, opts, indent, literal_ints: bool = True) -> str:
    """A result value (jq_fast's, whose integers are all literals, unless told otherwise)."""
    if (opts["r"] or opts["j"]) and isinstance(result, str):
        text = result
    else:
        text = dump(result, indent, opts["S"], opts["a"], 0, literal_ints)
    if opts["seq"]:
        text = "\x1e" + text
    return text if opts["j"] else text + "\n"


def _format_text(result: str, opts, indent) -> str:
    """A result libjq wrote as compact JSON text (keys already sorted under -S)."""
    if (opts["r"] or opts["j"]) and result.startswith('"'):
        text = json.loads(result)
    else:
        if opts["a"]:
            result = _NON_ASCII.sub(_ascii_escape, result)
        text = result if indent is None else _pretty(result, indent)
    if opts["seq"]:
        text = "\x1e" + text
    return text if opts["j"] else text + "\n"


_NON_ASCII = re.compile(r"[^\x00-\x7f]")
_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{},:]|[^"\[\]{},:]+')


def _ascii_escape(m) -> str:
    """jq -a: a character outside ASCII as \\uXXXX (two, a surrogate pair, beyond the BMP)."""
    code = ord(m.group())
    if code < 0x10000:
        return "\\u%04x" % code
    code -= 0x10000
    return "\\u%04x\\u%04x" % (0xD800 + (code >> 10), 0xDC00 + (code & 0x3FF))


def _pretty(compact: str, indent: str) -> str:
    """Compact JSON text laid out as jq prints it: one member or element a line, `: ` after a
    key, empty arrays and objects kept as `[]` and `{}`."""
    if compact[0] not in "[{":
        return compact
    tokens = _JSON_TOKEN.findall(compact)
    out = []
    level = 0
    k, n = 0, len(tokens)
    while k < n:
        t = tokens[k]
        if t == "[" or t == "{":
            if k + 1 < n and tokens[k + 1] in ("]", "}"):
                out.append(t + tokens[k + 1])
                k += 2
                continue
            level += 1
            out.append(t + "\n" + indent * level)
        elif t == "]" or t == "}":
            level -= 1
            out.append("\n" + indent * level + t)
        elif t == ",":
            out.append(",\n" + indent * level)
        elif t == ":":
            out.append(": ")
        else:
            out.append(t)
        k += 1
    return "".join(out)


def _halt(message: str):
    """(exit code, value) when the error is a halt/halt_error from the prelude."""
    if _HALT_KEY not in message:
        return None
    try:
        obj = json.loads(message)
    except json.JSONDecodeError:
        return None
    if not isinstance(obj, dict) or _HALT_KEY not in obj:
        return None
    return int(obj[_HALT_KEY]), obj.get("value")


def _runtime_message(message: str) -> str:
    if message.startswith("{") or message.startswith("["):
        return f"(not a string): {message}"
    return message
