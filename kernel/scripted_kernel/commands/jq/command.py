"""jq: libjq (the library inside PyPI `jq`) driven as jq's command line drives it, guarded for
logic mode, with a direct evaluator (the direct evaluator (fast.py)) in front for the common programs.

Guards: `import`, `include`, `modulemeta` and `get_search_list` are refused; `$ENV` and `env`
show the script's exported variables only; `input_filename` is null (the input is read from
an in-memory file whose name would show); `debug` and `stderr` write to the script's stderr.
"""
from __future__ import annotations

import functools
import json
import re

from ...fs import FsError, access
from ...base.limits import timeout_error
from .._options import UsageError
from ..registry import Usage, command
from .program import JqFailure, check_guards, run_program
from .worker import MEMORY_LIMIT, POOL, BadReply, Request, WorkerCrashed, WorkerTimeout


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
            option = longs[a]
            if option:
                opts[option] = True
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
                option = short[c]
                if option:
                    opts[option] = True
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
    decoder, pos = json.JSONDecoder(), 0
    values: list = []
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


@command("jq", own_version=True, usage=Usage(
    "[OPTIONS] FILTER [FILES...]", "Process each JSON input with FILTER and print its results.", (
        "-n, --null-input          use null as the single input",
        "-r, --raw-output          output strings without quotes",
        "-j, --join-output         no newline after each output",
        "-c, --compact-output      compact instead of pretty output",
        "-s, --slurp               read all inputs into one array",
        "-e, --exit-status         status from the last output",
        "-S, --sort-keys           sort the keys of objects",
        "--arg name value           set $name to the string value",
        "--argjson name value       set $name to the JSON value",
        "--tab / --indent n        indentation")))
def run(ctx, argv):
    return run_command_line(ctx, argv)


def run_command_line(ctx, argv, stdin_text=None, out=None) -> int:
    """jq's command line `argv` with this command's context; `stdin_text` stands for standard
    input and `out` for standard output when given (yq hands jq its documents as JSON text and
    takes jq's output back to write it as YAML)."""
    out = out or ctx.out
    try:
        parsed = _parse_args(argv)
    except _VersionAsked:
        out(bundled_version() + "\n")
        return 0
    opts, named, positional, text, program_file, files, file_args = parsed
    text, raw, read_status = _read_files(ctx, named, text, program_file, files, file_args)
    if read_status and not raw:
        return read_status
    try:
        check_guards(text)
        env = ctx.env()
        if raw is None:
            raw = ctx.stdin.read_all() if stdin_text is None else stdin_text
        if _PATH_ONLY.fullmatch(text) and len(raw) <= IN_PROCESS_INPUT:
            status = run_program(_InProcess(out, ctx.err, raw), opts, named, positional, text, env)
        else:
            status = _in_worker(ctx, out, Request(text, opts, named, positional, env, raw,
                                                  ctx.limits.max_output_bytes))
        return max(status, read_status)
    except JqFailure as e:
        ctx.err(e.message + "\n")
        return e.status


class _InProcess:
    """The script's shell as jq's runner sees it, with its input already read."""
    __slots__ = ("out", "err", "raw")

    def __init__(self, out, err, raw: str):
        self.out, self.err, self.raw = out, err, raw

    def read_all(self) -> str:
        return self.raw


def _in_worker(ctx, write, request: Request) -> int:
    """Run the program in a worker process, within the script's deadline and cancel flag; a
    `jq` span around it when the host traces (ctx.observer)."""
    if ctx.observer is None:
        return _worker_call(ctx, write, request)
    attributes = {"scripted.jq.program.bytes": len(request.filter), "scripted.jq.input.bytes": len(request.input)}
    with ctx.observer.span("jq", attributes) as span:
        status = _worker_call(ctx, write, request)
        span.set("scripted.exit_code", status)
        if status:
            span.fail("exit_status", f"exit status {status}")
        return status


def _worker_call(ctx, write, request: Request) -> int:
    budget = ctx.budget
    try:
        out, err, status = POOL.run(request, budget.deadline, lambda: budget.cancel.cancelled)
    except WorkerTimeout:         # the worker stopped on the cancel flag or the deadline
        budget.check_stop()
        raise timeout_error(ctx.limits) from None
    except WorkerCrashed:
        raise JqFailure(f"jq: error: jq ran out of memory (jq values are limited to "
                        f"{MEMORY_LIMIT >> 20} MiB in all)", 5) from None
    except BadReply as e:         # the worker may have been taken over: nothing of it is used
        raise JqFailure(f"jq: error: the jq worker process sent an invalid reply ({e}) and was stopped", 5) from None
    write(out)
    if err:
        ctx.err(err)
    return status
