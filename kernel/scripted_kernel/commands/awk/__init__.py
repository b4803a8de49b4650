"""awk: the POSIX awk language (plus gensub and length(array)) on standard input.

Program text → tokens → syntax tree (syntax) → Python source (codegen) → run against the
state in runtime. Values follow POSIX: numbers (float), strings (str) and strnums
(input-derived strings that look numeric, compared as numbers). Files, commands and the host
environment are out of reach: `getline < file`, `cmd | getline`, `print > file` and `system()`
are refused; ENVIRON holds the script's exported variables.
"""
from __future__ import annotations

import re

from .._options import UsageError, run_guarded
from .codegen import compile_program
from .runtime import Runtime, run_program
from .syntax import Parser, tokenize
from .values import AwkError
from ...shell.regexes import RegexTimeout

NAMES = ("awk", "gawk", "mawk", "nawk")


def _program_and_args(argv):
    """(program, -F value, -v assignments, operand assignments)."""
    field_sep = None
    assigns = []
    operand_assigns = []
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
            raise UsageError("awk: -f progfile: file access is disabled in logic mode", 2)
        if a in ("--posix", "--traditional", "-W") or a.startswith("--"):
            i += 1
            continue
        if a.startswith("-") and len(a) > 1:
            raise UsageError(f"awk: not an option: {a}", 2)
        break
    if i >= len(argv):
        raise UsageError("usage: awk [-F value] [-v var=value] [--] 'program text' [file ...]", 2)
    program = argv[i]
    operands = argv[i + 1:]
    for op in operands:
        if re.match(r"[A-Za-z_][A-Za-z0-9_]*=", op):
            name, _, val = op.partition("=")
            operand_assigns.append((name, _unescape(val)))
        elif op != "-":
            raise UsageError(f"awk: {op}: file access is disabled in logic mode", 2)
    return program, field_sep, assigns, operand_assigns


def _unescape(value: str) -> str:
    """-v and operand values get the escapes of string literals."""
    return tokenize('"' + value.replace('"', '\\"') + '"')[0].value if "\\" in value else value


def run(sh, argv):
    def body():
        program, field_sep, assigns, operand_assigns = _program_and_args(argv)
        rt = None
        try:
            parsed = Parser(program).parse()
            rt = Runtime(sh, assigns, field_sep)
            rt.operand_assigns = operand_assigns
            compiled = compile_program(parsed, rt)
            text = sh.stdin.read_all() if (compiled.reads_input or "getline" in program) else ""
            return run_program(compiled, rt, text)
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
    return run_guarded(argv[0], sh, body)
