"""What a shell kept between calls holds, and its budget (`max_shell_state_bytes`).

A persistent shell (BashTool, `ScriptedTool.session()`, the notebook's `%scripted session on`,
an MCP `--bash` session) keeps its variables, arrays, functions, positional parameters, traps
and directory stack from one call to the next. A call may grow them within its own limits; at
its end they must fit `max_shell_state_bytes`, else the call fails with
`limit:max_shell_state_bytes` and they are put back as they were before it (the files, the
working directory and the options stay as the call left them).

Nothing is counted on assignment. A call starts by sharing the shell's tables with a
checkpoint, copy on write, as a subshell shares its parent's (see `Var.owner`): a few pointer
copies. At its end only the variables and functions the call replaced are measured, since
every change made a new object in a new table and the rest are the checkpoint's, counted
before.

How each thing counts (about what it takes in memory, measured on CPython 3.11):
- a variable: its name and value, plus ENTRY_BYTES (a Var, a dict slot, a str header: a
  scalar variable takes some 190 bytes besides its text);
- an array: its name, plus each element's key and value and ENTRY_BYTES (150-200 bytes
  each besides the text);
- a function: its name and FUNCTION_WEIGHT times its body's text (its syntax tree takes some
  95 bytes a character, compiled once called some 280), plus the text it was defined in,
  once per text;
- positional parameters, traps, the directory stack: their text and ENTRY_BYTES each.
"""
from __future__ import annotations

from typing import Optional

from ..base.errors import LimitExceeded
from ..base.limits import ENTRY_BYTES, FUNCTION_WEIGHT
from .state import IndexedArray


def value_bytes(value) -> int:
    if value is None:
        return ENTRY_BYTES
    if type(value) is str:
        return ENTRY_BYTES + len(value)
    if type(value) is IndexedArray:
        d = value.d
        return ENTRY_BYTES + sum(map(len, d.values())) + ENTRY_BYTES * len(d)
    return ENTRY_BYTES + sum(map(len, value)) + sum(map(len, value.values())) + ENTRY_BYTES * len(value)


def function_bytes(func) -> int:
    if func.text_length < 0:
        func.text_length = len(func.source)
    return len(func.name) + FUNCTION_WEIGHT * func.text_length


def _table_delta(before: dict, after: dict, size) -> int:
    """How much `after` takes more than `before`, measuring only the entries that differ."""
    if after is before:
        return 0
    get = before.get
    delta = added = 0
    for name in [name for name, item in after.items() if get(name) is not item]:
        old = get(name)
        if old is None:
            added += 1
        else:
            delta -= size(name, old)
        delta += size(name, after[name])
    if len(after) - added < len(before):         # some were removed
        for name in before.keys() - after.keys():
            delta -= size(name, before[name])
    return delta


def _var_size(name: str, var) -> int:
    return len(name) + value_bytes(var.value)


def _function_size(name: str, func) -> int:
    return function_bytes(func)


def _texts_bytes(functions: dict) -> int:
    """The texts the functions were defined in, each once."""
    return sum(len(text) for text in {id(f.script): f.script for f in functions.values()}.values())


def _others_bytes(positional: list, traps: dict, dirstack: list) -> int:
    """Positional parameters, traps and the directory stack (small, measured whole)."""
    return (sum(map(len, positional)) + ENTRY_BYTES * len(positional)
            + sum(len(k) + len(v) for k, v in traps.items()) + ENTRY_BYTES * len(traps)
            + sum(map(len, dirstack)) + ENTRY_BYTES * len(dirstack))


def measure(sh) -> int:
    """Everything the shell keeps, counted from scratch (a new shell's first call)."""
    return (sum(_var_size(name, var) for name, var in sh.globals.items())
            + sum(function_bytes(f) for f in sh.functions.values())
            + _texts_bytes(sh.functions) + _others_bytes(sh.positional, sh.traps, sh.dirstack))


class Checkpoint:
    """A persistent shell's state before a call, to measure the call's growth against and to
    go back to. Taking it shares the tables (copy on write); only the small ones are copied."""
    __slots__ = ("globals", "functions", "exported_functions", "positional", "traps", "dirstack",
                 "kept")

    def __init__(self, sh):
        self.globals = sh.globals
        self.functions = sh.functions
        self.exported_functions = set(sh.exported_functions)
        self.positional = sh.positional          # replaced, never changed in place
        self.traps = dict(sh.traps)
        self.dirstack = list(sh.dirstack)
        self.kept = sh.state_bytes
        # the call's first change to a variable or function copies it (and the table) first
        sh.globals_shared = sh.functions_shared = True
        sh.var_owner = object()

    def measure(self, sh) -> int:
        """What the shell keeps now: the checkpoint's figure plus what the call changed."""
        if sh.scopes:                # cannot happen at the top level; measure the safe way
            return measure(sh)
        kept = self.kept
        if sh.positional is not self.positional or sh.traps != self.traps or sh.dirstack != self.dirstack:
            kept += (_others_bytes(sh.positional, sh.traps, sh.dirstack)
                     - _others_bytes(self.positional, self.traps, self.dirstack))
        kept += _table_delta(self.globals, sh.globals, _var_size)
        if sh.functions is not self.functions:
            kept += _table_delta(self.functions, sh.functions, _function_size)
            kept += _texts_bytes(sh.functions) - _texts_bytes(self.functions)
        return kept

    def restore(self, sh):
        sh.globals, sh.functions = self.globals, self.functions
        sh.globals_shared = sh.functions_shared = True
        sh.var_owner = object()
        sh.exported_functions = self.exported_functions
        sh.positional, sh.traps, sh.dirstack = self.positional, self.traps, self.dirstack
        sh.state_bytes = self.kept


def keep_within_budget(sh, checkpoint: Optional[Checkpoint], limit: int) -> Optional[LimitExceeded]:
    """After a call of a persistent shell: records what it keeps, or, past `limit`, puts the
    state back as it was before the call (a new shell: the caller drops it) and returns the
    error to report."""
    kept = checkpoint.measure(sh) if checkpoint is not None else measure(sh)
    if kept <= limit:
        sh.state_bytes = kept
        return None
    if checkpoint is not None:
        checkpoint.restore(sh)
    return LimitExceeded("max_shell_state_bytes",
                         f"shell state limit exceeded: variables, arrays and functions would keep "
                         f"{kept} bytes, more than {limit} (max_shell_state_bytes); the call's "
                         f"changes to them were undone")
