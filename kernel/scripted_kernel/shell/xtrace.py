"""`set -x`: each command and assignment shown on standard error as it runs, after $PS4 (its
first character repeated once per level of command substitution and eval), the words quoted
so that they could be read back."""
from __future__ import annotations

import re
from typing import Callable, Optional

from ..base.errors import FatalError
from . import nodes as A
from .quoting import quote_for_reuse
from .variables import seed_random


def xtrace_quote(arg: str) -> str:
    if arg and re.fullmatch(r"[A-Za-z0-9_./,:@%^+=-]+", arg):
        return arg
    if "'" not in arg and not any(ord(c) < 32 for c in arg):
        return "'" + arg + "'"
    return quote_for_reuse(arg)


def trace_argv(sh, argv):
    trace_line(sh, " ".join(xtrace_quote(a if type(a) is str else str(a)) for a in argv))


_PS4_WORDS: dict = {}


def trace_line(sh, text: str):
    """One line of `set -x`: $PS4 expanded (its first character repeated once per level of
    command substitution and eval, as bash does; unset: no prefix), then `text`."""
    ps4 = sh.get_value("PS4")
    if ps4 is None:
        sh.err(text + "\n")
        return
    if "$" in ps4 or "`" in ps4:
        fn = _PS4_WORDS.get(ps4)
        if fn is None:
            try:
                fn = sh.compiler.word_text(ps4)
            except Exception:           # a PS4 that does not parse is shown as it is
                fn = (lambda text: lambda sh: text)(ps4)
            if len(_PS4_WORDS) > 64:
                _PS4_WORDS.clear()
            _PS4_WORDS[ps4] = fn
        sh.xtrace = False                # (its expansion is not traced)
        saved_status = sh.status
        try:
            ps4 = fn(sh)
        except FatalError:
            pass
        finally:
            sh.xtrace = True
            sh.status = saved_status
    if ps4:
        ps4 = ps4[0] * sh.xtrace_depth + ps4
    sh.err(ps4 + text + "\n")


class LazyTraced:
    """The assignments of a simple command as `set -x` runs them (each shows itself), compiled
    the first time they are needed: most scripts never trace."""
    __slots__ = ("compiler", "assigns", "node", "compiled")

    def __init__(self, compiler, assigns: list, node):
        self.compiler, self.assigns, self.node = compiler, assigns, node
        self.compiled: Optional[list] = None

    def __iter__(self):
        if self.compiled is None:
            node, compiler = self.node, self.compiler
            self.compiled = [_traced_assignment(fn, a, compiler)
                             if a.index is None or not node.words else fn
                             for fn, a in zip(self.assigns, node.assigns)]
        return iter(self.compiled)


def _traced_assignment(fn: Callable, a: A.Assign, compiler) -> Callable:
    """An assignment that shows itself under `set -x` (`+ name=value`), as bash does: a
    scalar or an element with its value expanded, an array as it is written (in the text of
    `compiler`, the Compiler of the script)."""
    source = compiler.source
    name, op, append = a.name, "+=" if a.append else "=", a.append
    if a.array is not None:
        shown = source_array(source.text, a.pos) if source is not None else f"{name}{op}(...)"

        def show_array(sh):
            trace_line(sh, shown)
            fn(sh)
        traced = show_array
    elif a.index is not None:
        value = compiler.string(a.value) if a.value is not None else (lambda sh: "")
        index = compiler.string(a.index)

        def show_element(sh):
            key, v = index(sh), value(sh)
            trace_line(sh, f"{name}[{key}]{op}{xtrace_quote(v)}")
            sh.set_element(name, key, v, append)
        traced = show_element
    else:
        value = compiler.string(a.value) if a.value is not None else (lambda sh: "")

        def show(sh):
            v = value(sh)
            trace_line(sh, f"{name}{op}{xtrace_quote(v) if v else ''}")
            if name == "RANDOM" and not append:
                seed_random(sh, v)
            else:
                sh.set_var(name, v, append)
        traced = show
    return traced


def source_word(text: str, pos: int) -> str:
    """The shell word starting at `pos`, as written (up to a blank outside quotes)."""
    return text[pos:_scan_source(text, pos, "({", ")}", False)]


def source_array(text: str, pos: int) -> str:
    """`name=(...)` as written, from `pos` to its closing parenthesis."""
    start = text.find("(", pos)
    return text[pos:] if start < 0 else text[pos:_scan_source(text, start, "(", ")", True)]


def _scan_source(text: str, k: int, opens: str, closes: str, closing_ends: bool) -> int:
    """Where a stretch of source text from `k` ends, quotes and backslashes respected:
    `closing_ends`: just after the bracket that closes the one at `k`; otherwise at the first
    blank or `;` outside brackets (or at the end of the text)."""
    depth, quote = 0, ""
    while k < len(text):
        c = text[k]
        if quote:
            if c == "\\" and quote == '"':
                k += 1
            elif c == quote:
                quote = ""
        elif c in "'\"":
            quote = c
        elif c == "\\":
            k += 1
        elif c in opens:
            depth += 1
        elif c in closes:
            depth -= 1
            if closing_ends and depth == 0:
                return k + 1
        elif not closing_ends and c in " \t\n;" and depth <= 0:
            break
        k += 1
    return len(text) if closing_ends else k
