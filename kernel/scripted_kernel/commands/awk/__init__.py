"""awk: the POSIX awk language (plus gensub and length(array)) on standard input.

Program text → tokens → syntax tree (syntax) → Python source (codegen) → run against the
state in runtime. Values follow POSIX: numbers (float), strings (str) and strnums
(input-derived strings that look numeric, compared as numbers). Files, commands and the host
environment are out of reach: `getline < file`, `cmd | getline`, `print > file` and `system()`
are refused; ENVIRON holds the script's exported variables.
"""
from __future__ import annotations

import re

from ...fs import FsError, access
from .._options import UsageError
from .codegen import compile_program
from .runtime import Runtime, run_program
from .syntax import Parser, tokenize
from .values import AwkError
from ...base.regexes import RegexTimeout
from ..registry import Usage, command



def _program_and_args(argv):
    """(program, -F value, -v assignments, operand assignments)."""
    field_sep = None
    assigns = []
    operand_assigns = []
    program_files: list = []
    i = 1
    while i < len(argv):
        a = argv[i]
        if a == "--":
            i += 1
            break
        if a.startswith("-F"):
            value = a[2:] if len(a) > 2 else (argv[i + 1] if i + 1 < len(argv) else None)
            if value is None:
                raise UsageError("awk: option requires an argument -- F", 2)
            i += 1 if len(a) > 2 else 2
            field_sep = "\t" if value == "t" else _unescape(value)
            continue
        if a.startswith("-v"):
            value = a[2:] if len(a) > 2 else (argv[i + 1] if i + 1 < len(argv) else None)
            if value is None or "=" not in value:
                raise UsageError(f"awk: improper assignment: -v {value or ''}", 2)
            i += 1 if len(a) > 2 else 2
            name, _, val = value.partition("=")
            assigns.append((name, _unescape(val)))
            continue
        if a.startswith("-f") or a == "--file":
            value = a[2:] if a.startswith("-f") and len(a) > 2 else (argv[i + 1] if i + 1 < len(argv) else None)
            if value is None:
                raise UsageError("awk: option requires an argument -- f", 2)
            i += 1 if a.startswith("-f") and len(a) > 2 else 2
            program_files.append(value)
            continue
        if a in ("--posix", "--traditional", "-W") or a.startswith("--"):
            i += 1
            continue
        if a.startswith("-") and len(a) > 1:
            raise UsageError(f"awk: not an option: {a}", 2)
        break
    if program_files:
        program = None
    elif i >= len(argv):
        raise UsageError("usage: awk [-F value] [-v var=value] [--] 'program text' [file ...]", 2)
    else:
        program = argv[i]
        i += 1
    files = []
    for op in argv[i:]:
        if re.match(r"[A-Za-z_][A-Za-z0-9_]*=", op):
            name, _, val = op.partition("=")
            operand_assigns.append((name, _unescape(val)))
        else:
            files.append(op)
    return program, program_files, field_sep, assigns, operand_assigns, files


def _program_file(ctx, name: str) -> str:
    try:
        return access.read_text(ctx, name)
    except FsError as e:
        raise UsageError(f"awk: couldn't open file {name}: {e.strerror}", 2) from None


def _unescape(value: str) -> str:
    """-v and operand values get the escapes of string literals."""
    return tokenize('"' + value.replace('"', '\\"') + '"')[0].value if "\\" in value else value


USAGE = Usage("[-F fs] [-v var=value] [-f progfile | 'prog'] [file ...]",
              "Scan each line of the input for patterns and run their actions (POSIX awk).", (
    "-F fs             the input field separator",
    "-v var=value      assign a variable before the program runs",
    "-f progfile       read the program from progfile"))


@command("awk", "gawk", "mawk", "nawk", usage=USAGE)
def run(ctx, argv):
    program, program_files, field_sep, assigns, operand_assigns, files = _program_and_args(argv)
    if program is None:
        program = "\n".join(_program_file(ctx, name) for name in program_files)
    rt = None
    try:
        parsed = Parser(program).parse()
        rt = Runtime(ctx, assigns, field_sep)
        rt.operand_assigns = operand_assigns
        compiled = compile_program(parsed, rt)
        if not (compiled.reads_input or "getline" in program):
            files = []
        elif not files:
            files = ["-"]
        return run_program(compiled, rt, files)
    except AwkError as e:
        if rt is not None:
            rt.flush()
        raise UsageError(e.message, e.status) from None
    except RegexTimeout:          # a regex literal's guarded search (see regexes.matcher)
        if rt is not None:
            rt.flush()
        raise UsageError("awk: regular expression too complex", 2) from None
    except RecursionError:
        raise UsageError("awk: expression or function nesting too deep", 2) from None
