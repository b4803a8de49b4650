"""The program as Monty runs it.

Monty's own `sys` has no `exit`, no `stdin`, an `argv` of the script's name alone, and
`sys.stdout`/`sys.stderr` that only `print(file=...)` accepts (no `.write`), and its `print`
writes to nothing else. PRELUDE, run first in the program's session, makes the `sys` a program
expects: argv, exit (the status travels to the host through `_scripted_host.exit_message`),
stdin/stdout/stderr as files of the bridge's /dev/stdin, /dev/stdout and /dev/stderr; and a
`print` that writes to any object with a `write` method. `monty_source` then points the program's
`import sys`, `from sys import ...` and `print(..., file=...)` at them: an edit of the text, each
within its own line(s), found with CPython's `ast` (it only reads the text), so that every line
keeps its number and a traceback quotes the program's own lines. Text CPython cannot parse (or
longer than REWRITE_LIMIT) runs as it is, with Monty's `sys`.
"""
from __future__ import annotations

import ast
import threading
import warnings
from typing import Iterator, Optional, Union

SYS = "_scripted_sys"
PRINT = "_scripted_print"
REWRITE_LIMIT = 1 << 20               # characters: CPython's syntax tree costs ~100 bytes a character
# catch_warnings swaps the process's warning filters: two threads inside it at once could leave
# "ignore" installed for good.
_QUIET = threading.Lock()

# Monty's sys attributes a program may read; the prelude copies those this Monty has.
_SYS_NAMES = ("version", "version_info", "hexversion", "api_version", "copyright", "platform",
              "builtin_module_names", "maxsize", "maxunicode", "byteorder", "float_info",
              "float_repr_style", "executable", "prefix", "exec_prefix", "base_prefix",
              "base_exec_prefix", "platlibdir", "abiflags", "dont_write_bytecode", "pycache_prefix",
              "flags")

# Run with the input _scripted_argv (sys.argv). Its names start with _scripted_ (exit and quit
# aside, the builtins CPython's site module adds).
PRELUDE = f'''\
import _scripted_host
import sys as _scripted_monty_sys


class _ScriptedSys:
    def exit(self, status=None):
        raise SystemExit(_scripted_host.exit_message(status))


{SYS} = _ScriptedSys()
for _scripted_name in {_SYS_NAMES!r}:
    if hasattr(_scripted_monty_sys, _scripted_name):
        setattr({SYS}, _scripted_name, getattr(_scripted_monty_sys, _scripted_name))
{SYS}.argv = _scripted_argv
{SYS}.stdin = open('/dev/stdin')
{SYS}.stdout = open('/dev/stdout', 'w')
{SYS}.stderr = open('/dev/stderr', 'w')
exit = quit = {SYS}.exit


def {PRINT}(*values, sep=' ', end='\\n', file=None, flush=False):
    if file is None:
        print(*values, sep=sep, end=end)
    else:
        sep = ' ' if sep is None else sep
        file.write(sep.join([str(value) for value in values]) + ('\\n' if end is None else end))
'''


def normalized(source: str) -> str:
    """Line ends as \\n: the numbering that both parsers and the traceback's quotes agree on."""
    return source.replace("\r\n", "\n").replace("\r", "\n") if "\r" in source else source


def monty_source(text: str) -> str:
    """`text` (normalized) with its uses of sys and print(file=) pointed at the prelude's, and a
    last line that keeps the value of a final expression in the worker (Monty returns it)."""
    tree = _syntax_tree(text)
    if tree is None:
        return text
    lines = text.split("\n")
    for first, start, last, end, replacement in sorted(_edits(tree), reverse=True):
        _replace(lines, first, start, last, end, replacement)
    return "\n".join(lines) + "\nNone\n"


def _syntax_tree(text: str):
    if len(text) > REWRITE_LIMIT:
        return None
    try:
        with _QUIET, warnings.catch_warnings():   # (invalid escapes and the like: not the host's to hear)
            warnings.simplefilter("ignore")
            return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _edits(tree) -> Iterator[tuple]:
    """(first line, start, last line, end, replacement): lines 1-based, offsets in UTF-8 bytes."""
    for node in ast.walk(tree):
        edit = _edit(node)
        if edit is not None:
            where, replacement = edit
            yield where.lineno, where.col_offset, where.end_lineno, where.end_col_offset, replacement


def _edit(node: ast.AST) -> Optional[tuple[Union[ast.stmt, ast.expr], str]]:
    """What to put in place of `node` (or of a part of it), if it is one the prelude serves."""
    if isinstance(node, ast.Import) and any(alias.name == "sys" for alias in node.names):
        return node, "; ".join(f"{alias.asname or 'sys'} = {SYS}" if alias.name == "sys"
                               else f"import {alias.name}" + (f" as {alias.asname}" if alias.asname else "")
                               for alias in node.names)
    if (isinstance(node, ast.ImportFrom) and node.module == "sys" and not node.level
            and all(alias.name != "*" for alias in node.names)):
        return node, "; ".join(f"{alias.asname or alias.name} = {SYS}.{alias.name}" for alias in node.names)
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print"
            and any(keyword.arg == "file" for keyword in node.keywords)):
        return node.func, PRINT
    return None


def _replace(lines: list, first: int, start: int, last: int, end: int, replacement: str):
    """Put `replacement` where the text from (first, start) to (last, end) was; the lines it
    spanned stay, joined by backslashes, so that every later line keeps its number."""
    head = lines[first - 1].encode()[:start].decode()
    tail = lines[last - 1].encode()[end:].decode()
    joined = replacement + " \\" if last > first else replacement + tail
    lines[first - 1] = head + joined
    for number in range(first, last - 1):
        lines[number] = "\\"
    if last > first:
        lines[last - 1] = tail
