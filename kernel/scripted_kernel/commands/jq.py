"""jq: libjq (the library inside PyPI `jq`) driven as jq's command line drives it, guarded for
logic mode, with a direct evaluator (jq_fast) in front for the common programs.

Guards: `import`, `include`, `modulemeta` and `get_search_list` are refused; `$ENV` and `env`
show the script's exported variables only; `input_filename` is null (the input is read from
an in-memory file whose name would show); `debug` and `stderr` write to the script's stderr.
"""
from __future__ import annotations

import functools
import json
import re
from decimal import Decimal

from ..fs import FsError, access
from . import jq_fast, jq_libjq
from ._options import UsageError
from .jq_worker import MEMORY_LIMIT, POOL, WorkerCrashed, WorkerTimeout
from ..shell.limits import timeout_error
from .registry import command


# module directives, and the builtins that read the module search path (object keys may use
# the same words: {import: 1} is fine)
_REFUSED = re.compile(r'(?<![\w.$])(?:(import|include)\s*"|(modulemeta|get_search_list)\b(?!\s*:))')
_BLANKS = re.compile(r"[ \t\r\n]*")

# On line 1 before the user's program, which therefore keeps its line numbers. Each input
# comes wrapped with the command line's context (see jq_libjq.Run).
PRELUDE = ('.a as $__a | $__a.env as $ENV | def env: $ENV; def input_filename: null; '
           '{"positional": $__a.positional, "named": $__a.named} as $ARGS | '
           # removed from jq 1.8 but still written by models (jq 1.6/1.7 defined it so)
           'def leaf_paths: paths(scalars); ')


def _prelude(names) -> str:
    """The prelude, binding each --arg, --argjson, --slurpfile and --rawfile name, then the
    input itself (the binding before the program takes the whole rest: no parentheses)."""
    return PRELUDE + "".join(f"$__a.named[{json.dumps(n)}] as ${n} | " for n in names) + ".v | "


class JqFailure(Exception):
    def __init__(self, message: str, status: int):
        super().__init__(message)
        self.message = message
        self.status = status


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
    its arithmetic makes doubles); otherwise a large one may stand for a double."""
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


def _watching_decoder():
    """A JSON decoder, and a list that gets the text of a number jq 1.7+ would print as it was
    written (`jq_fast.special_number`): input with such a number goes to libjq."""
    special = []

    def parse_float(number: str) -> float:
        if not special and jq_fast.special_number(number):
            special.append(number)
        return float(number)
    return json.JSONDecoder(parse_float=parse_float), special


def _has_negative_zero(text: str) -> bool:
    return "-0" in text and _NEGATIVE_ZERO.search(text) is not None


def _values(text: str):
    """The JSON values of a text stream, for jq_fast; None where libjq must read it: text
    Python's parser refuses, or a number whose text jq keeps (`special_number`, `-0`)."""
    decoder, special = _watching_decoder()
    pos, n = 0, len(text)
    values = []
    try:
        while True:
            pos = _BLANKS.match(text, pos).end()
            if pos >= n:
                break
            value, pos = decoder.raw_decode(text, pos)
            values.append(value)
    except json.JSONDecodeError:
        return None
    if special or _has_negative_zero(text):
        return None
    return values


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


def _read_files(ctx, named: dict, filter_text, program_file, files: list, file_args: list):
    """Through the filesystem: the program of -f, the values of --slurpfile and --rawfile, and
    the input files joined (None: standard input). Returns (filter, input text, status)."""
    def read(name: str) -> str:
        try:
            return access.read_text(ctx, name)
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
            ctx.err(e.message + "\n")
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


@command("jq", own_help=True)
def run(ctx, argv):
    try:
        parsed = _parse_args(argv)
    except _VersionAsked:
        ctx.out(bundled_version() + "\n")
        return 0
    opts, named, positional, text, program_file, files, file_args = parsed
    text, raw, read_status = _read_files(ctx, named, text, program_file, files, file_args)
    if read_status and not raw:
        return read_status
    try:
        _check_guards(text)
        env = ctx.env()
        if raw is None:
            raw = ctx.stdin.read_all()
        if _PATH_ONLY.fullmatch(text) and len(raw) <= IN_PROCESS_INPUT:
            status = run_program(_InProcess(ctx, raw), opts, named, positional, text, env)
        else:
            status = _in_worker(ctx, (text, opts, named, positional, env, raw, ctx.limits.max_output_bytes))
        return max(status, read_status)
    except JqFailure as e:
        ctx.err(e.message + "\n")
        return e.status


class _InProcess:
    """The script's shell as jq's runner sees it, with its input already read."""
    __slots__ = ("out", "err", "raw")

    def __init__(self, ctx, raw: str):
        self.out, self.err, self.raw = ctx.out, ctx.err, raw

    def read_all(self) -> str:
        return self.raw


def _in_worker(ctx, request) -> int:
    """Run the program in a worker process, within the script's deadline and cancel flag."""
    budget = ctx.budget
    try:
        _, out, err, status = POOL.run(request, budget.deadline, lambda: budget.cancel.cancelled)
    except WorkerTimeout:         # the worker stopped on the cancel flag or the deadline
        budget.check_stop()
        raise timeout_error(ctx.limits) from None
    except WorkerCrashed:
        raise JqFailure(f"jq: error: jq ran out of memory (jq values are limited to "
                        f"{MEMORY_LIMIT >> 20} MiB in all)", 5) from None
    ctx.out(out)
    if err:
        ctx.err(err)
    return status


def run_program(io, opts, named, positional, text, env) -> int:
    """Run one jq command line: `io` gives the input (`read_all`) and takes the output
    (`out`, `err`); returns jq's exit status. jq_fast takes what it models; libjq the rest."""
    raw = io.read_all()
    # jq_fast reads its input as JSON values, one run each (and refuses input, inputs, $ARGS)
    if not (opts["n"] or opts["s"] or opts["R"] or opts["seq"]):
        done = _stream(raw, opts, text, named) or _evaluate_directly(raw, opts, text, named)
        if done is not None:
            output, produced, last = done
            io.out(output)
            return _exit_status(opts, produced, last is None or last is False)
    head = _prelude(sorted(named))
    context = {"named": named, "positional": positional, "env": env}
    try:
        halted, status, produced, last_falsy = jq_libjq.Run(io.out, io.err, opts)(
            head + (text if text.strip() else "."), context, raw)
    except jq_libjq.CompileError as e:
        raise JqFailure(_compile_message("\n".join(e.messages), len(head), text), 3) from None
    if halted is not None:
        return halted
    return status or _exit_status(opts, produced, last_falsy)


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
    if shape is None or _has_negative_zero(raw):
        return None
    each, count_only = shape
    decoder, special = _watching_decoder()
    scan = decoder.scan_once              # one value at pos (C)
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


def _evaluate_directly(raw: str, opts, text: str, named: dict):
    """(output, whether a result came, the last result) from jq_fast, or None when libjq must
    run the program (input or syntax jq_fast does not model, or an error whose message libjq
    words). Every input is evaluated before anything is written, so falling back to libjq
    repeats no output."""
    program = jq_fast.compile_program(text, named)
    if program is None:
        return None
    values = _values(raw)
    if values is None:
        return None
    indent = None if opts["c"] else opts["indent"]
    out, produced, last = [], False, None
    try:
        for value in values:
            for result in program(value):
                produced, last = True, result
                out.append(_format(result, opts, indent))
    except Exception:        # Unsupported, or a corner (deep values, overflow) libjq handles
        return None
    return "".join(out), produced, last


def _format(result, opts, indent) -> str:
    """A result of jq_fast, whose integers are all ones it was handed as text."""
    if (opts["r"] or opts["j"]) and isinstance(result, str):
        text = result
    else:
        text = dump(result, indent, opts["S"], opts["a"], 0, True)
    if opts["seq"]:
        text = "\x1e" + text
    return text if opts["j"] else text + "\n"
