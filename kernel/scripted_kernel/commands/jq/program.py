"""One jq command line run on its input: the guards, the prelude that binds the command
line's arguments, the direct evaluator (fast.py) for the programs it models and libjq for the
rest. Runs in the script's process or in a worker (worker.py)."""
from __future__ import annotations

import json
import re

from . import fast, libjq
from .values import dump, has_negative_zero, parse_values, skip_blanks, watching_decoder


# module directives, and the builtins that read the module search path (object keys may use
# the same words: {import: 1} is fine)
_REFUSED = re.compile(r'(?<![\w.$])(?:(import|include)\s*"|(modulemeta|get_search_list)\b(?!\s*:))')

# On line 1 before the user's program, which therefore keeps its line numbers. Each input
# comes wrapped with the command line's context (see libjq.Run).
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


def check_guards(text: str):
    m = _REFUSED.search(text)
    if m:
        raise JqFailure(f"jq: error: {m.group(1) or m.group(2)} is disabled in logic mode "
                        f"(no files or modules)\njq: 1 compile error", 3)




def run_program(io, opts, named, positional, text, env) -> int:
    """Run one jq command line: `io` gives the input (`read_all`) and takes the output
    (`out`, `err`); returns jq's exit status. fast.py takes what it models; libjq the rest."""
    raw = io.read_all()
    # fast.py reads its input as JSON values, one run each (and refuses input, inputs, $ARGS)
    if not (opts["n"] or opts["s"] or opts["R"] or opts["seq"]):
        done = _stream(raw, opts, text, named) or _evaluate_directly(raw, opts, text, named)
        if done is not None:
            output, produced, last = done
            io.out(output)
            return _exit_status(opts, produced, last is None or last is False)
    head = _prelude(sorted(named))
    context = {"named": named, "positional": positional, "env": env}
    try:
        halted, status, produced, last_falsy = libjq.Run(io.out, io.err, opts)(
            head + (text if text.strip() else "."), context, raw)
    except libjq.CompileError as e:
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
    whose text matters, an error, more documents, syntax fast.py does not model): nothing has
    been written then, and the usual path runs from the start."""
    if len(raw) < STREAM_FROM:
        return None
    pos = skip_blanks(raw)
    if not raw.startswith("[", pos):
        return None
    shape = fast.compile_stream(text, named)
    if shape is None or has_negative_zero(raw):
        return None
    each, count_only = shape
    decoder, special = watching_decoder()
    scan = decoder.scan_once              # one value at pos (C)
    indent = None if opts["c"] else opts["indent"]
    out, count, last = [], 0, None
    blank = " \t\r\n"
    try:
        pos = skip_blanks(raw, pos + 1)
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
                pos = skip_blanks(raw, pos)
                c = raw[pos]
            if c == ",":
                pos += 1
                if raw[pos] in blank:
                    pos = skip_blanks(raw, pos)
            elif c != "]":
                return None
        if skip_blanks(raw, pos + 1) != len(raw):
            return None                       # more documents follow
    except Exception:        # bad JSON, Unsupported, a corner libjq handles: the usual path
        return None
    if count_only:
        return _format(count, opts, indent), True, count
    return "".join(out), count > 0, last


def _evaluate_directly(raw: str, opts, text: str, named: dict):
    """(output, whether a result came, the last result) from fast.py, or None when libjq must
    run the program (input or syntax fast.py does not model, or an error whose message libjq
    words). Every input is evaluated before anything is written, so falling back to libjq
    repeats no output."""
    program = fast.compile_program(text, named)
    if program is None:
        return None
    values = parse_values(raw)
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
    """A result of fast.py, whose integers are all ones it was handed as text."""
    if (opts["r"] or opts["j"]) and isinstance(result, str):
        text = result
    else:
        text = dump(result, indent, opts["S"], opts["a"], 0, True)
    if opts["seq"]:
        text = "\x1e" + text
    return text if opts["j"] else text + "\n"
