"""Syntax tree → closures. Each command node is resolved once into `fn(sh) -> status`, so a
loop body runs as direct Python calls with no dispatch on node types at run time."""
from __future__ import annotations

import gc
import re
import threading
import time
from typing import Callable, Optional

from ..base import patterns
from ..base.errors import (ArithError, BreakLoop, ContinueLoop, ErrexitSignal, ExitSignal, FatalError,
                           LimitExceeded, ReadonlyVariable, ShellSyntaxError)
from ..fs import FsError
from . import nodes as A
from .arith import compile_arith
from .braces import brace_expand, has_braces
from .builtins.test import unary_test
from .conditions import CondError, WrittenPattern, any_matches, cond_binary_test, pattern_test, regex_test
from .dispatch import dispatch
from .expand import Disabled, WordCompiler
from .jobs import start_job, with_substitutions
from ..base.limits import check_stop
from .lexer import Source
from .parser import Parser
from .redirects import RedirectError, get_fd, redirect_both, redirect_file, set_fd, with_redirects
from .runtime import DeclarationArg, Function, InputStream, PipeBuffer
from .variables import NO_COMMAND, TempScope, seed_random
from .select import select_menu
from .state import EXPORT, Var
from .xtrace import LazyTraced, source_word, trace_argv, trace_line, xtrace_quote


_COMPILE_METHODS: dict = {}      # node type → Compiler.c_<type name>


# bodies compiled when first run (Compiler.later), for tests and benchmarks; not thread-exact
COMPILE_COUNTS = {"later": 0}


class Compiler(WordCompiler):
    """Turns the AST of one source text into closures (the text gives them line numbers).
    The closures keep their compiler, which compiles a body the first time it runs (later);
    compiled scripts are shared between threads, and so is their compiler, whose source never
    changes. COMPILER, with no source, compiles what arrives as text at run time.

    (It is a WordCompiler rather than holding one: the word compiler calls back for the
    commands inside words, and a compiler per text that held one would make a reference cycle
    per script, left to the collector.)"""

    def __init__(self, source: "Source | None" = None) -> None:
        super().__init__()
        self.source = source

    def line(self, pos: int) -> int:
        source = self.source
        return source.line_of(pos) if source is not None else 0

    def compile_program(self, node: A.CommandList) -> "CompiledScript":
        return CompiledScript([self.compile_unit(unit) for unit in node.items])

    def compile_unit(self, node: A.CommandList) -> Callable:
        """One top-level command (a line, as Parser.next_unit gives it)."""
        return self.compile_each([node])[0]

    def compile_command(self, node) -> Callable:
        return self.later(node)

    def word_text(self, text: str) -> Callable:
        """A word that arrives as text at run time (a subscript), as a closure giving its value."""
        return self.string(Parser(text).lex.sub_word(0, len(text)))

    def assignment_text(self, text: str) -> Callable:
        """`name=value` or `name+=value` that arrives as text at run time (declare -a "a=(1 2)")."""
        node = Parser(text).parse_program()
        return self.assignment(node.items[0].items[0].assigns[0])

    def compile(self, node) -> Callable:
        method = _COMPILE_METHODS.get(type(node))
        if method is None:
            method = _COMPILE_METHODS[type(node)] = getattr(Compiler, "c_" + type(node).__name__)
        if type(node) in _FRAMED:
            # a compound command whose own words may hold process substitutions (`for f in
            # <(...)`, `case <(...)`, `[[ -p <(...) ]]`): their descriptors close when it ends
            before = self.process_substitutions
            fn = method(self, node)
            if self.process_substitutions != before:
                fn = with_substitutions(fn)
            return fn
        return method(self, node)

    # ------------------------------------------------------------ lists

    def compile_each(self, nodes: list) -> list:
        """The nodes of a list compiled, under the script's deadline as parsing is (a list may
        hold a whole script's commands)."""
        source = self.source
        step = source.step if source is not None else None
        fns: list = []
        for node in nodes:
            if step is not None:
                step()
            fns.append(self.compile(node))
        return fns

    def c_CommandList(self, node: A.CommandList) -> Callable:
        if len(node.items) == 1:          # most lists: a line of one command, a body of one
            return self.compile(node.items[0])
        fns = self.compile_each(node.items)
        if not fns:
            return lambda sh: sh.status

        def run(sh):
            status = 0
            for fn in fns:
                status = fn(sh)
            return status
        return run

    def c_Background(self, node: A.Background) -> Callable:
        """`cmd &`: a job, run later (shell/jobs.py); the status is 0 at once."""
        line = self.line(node.pos)
        body = self.compile(node.body)
        source = self.source
        text = " ".join(source.text[node.pos:node.end].split()) + " &" if source is not None else "&"

        def run(sh):
            sh.lineno = line
            count_command(sh.budget)
            start_job(sh, body, text)
            sh.status = 0
            return 0
        return run

    def c_AndOr(self, node: A.AndOr) -> Callable:
        first = self.compile(node.first)
        rest: list = []
        for op, n in node.rest:
            rest.append((op == "&&", self.compile(n)))
        last = len(rest) - 1

        def run(sh):
            sh.errexit_suppressed += 1
            try:
                status = first(sh)
            finally:
                sh.errexit_suppressed -= 1
            for k, (is_and, fn) in enumerate(rest):
                if (status == 0) != is_and:
                    continue
                if k == last:
                    status = fn(sh)
                else:
                    sh.errexit_suppressed += 1
                    try:
                        status = fn(sh)
                    finally:
                        sh.errexit_suppressed -= 1
            sh.status = status
            return status
        return run

    def c_Pipeline(self, node: A.Pipeline) -> Callable:
        stages: list = []
        for command in node.commands:       # (a loop: compiled, map() would call each through Python)
            stages.append(self._pipeline_stage(command))                # (in the shell, forked)
        negate = node.negate
        if not stages:                      # `time` alone, `! time`
            def only_time(sh):
                sh.err("\nreal\t0m0.000s\nuser\t0m0.000s\nsys\t0m0.000s\n")
                sh.status = 1 if negate else 0
                return sh.status
            return only_time
        timed = node.timed
        # each stage of a pipeline of two or more as (run in the shell, in-place check (see
        # _runs_in_place), run in a subshell of its own, a simple command, `|&` after it)
        feeders, last_stage = [], None
        if len(stages) > 1:
            piped = [(run, self._runs_in_place(n), forked, type(n) is A.SimpleCommand, err_too)
                     for n, (run, forked), err_too in zip(node.commands, stages,
                                                          node.stderr_too + [False])]
            feeders, last_stage = piped[:-1], piped[-1]
        last = stages[-1][0]

        def run(sh):
            start = time.monotonic() if timed else 0.0
            # bash ignores `set -e` under `!` only if it was on when the `!` began (a `set -e`
            # run inside applies at once); the ERR trap is held either way
            suppressed = negate and sh.errexit
            held = negate and not suppressed
            sh.errexit_suppressed += suppressed
            sh.err_trap_held += held
            try:
                # `! cmd` and `time cmd` run the command itself
                statuses = _run_piped(sh, feeders, last_stage) if last_stage is not None else [last(sh)]
            finally:
                sh.errexit_suppressed -= suppressed
                sh.err_trap_held -= held
            if sh.pipefail:
                status = next((s for s in statuses[::-1] if s), 0)
            else:
                status = statuses[-1]
            if timed:
                elapsed = time.monotonic() - start
                sh.err(f"\nreal\t{int(elapsed // 60)}m{elapsed % 60:.3f}s\nuser\t0m0.000s\nsys\t0m0.000s\n")
            sh.pipestatus = statuses
            if negate:
                status = 0 if status else 1
            sh.status = status
            if status and not negate and not sh.errexit_suppressed and (sh.errexit or "ERR" in sh.traps):
                command_failed(sh, status)
            return status
        return run

    def _pipeline_stage(self, node) -> tuple[Callable, Callable]:
        """A pipeline stage as run in the shell, and as run in a subshell of its own: there a
        `( )` stage is its body, since that subshell is the one `( )` asks for (bash forks
        once for it: $BASH_SUBSHELL counts one level)."""
        if type(node) is not A.Subshell:
            compiled = self.compile(node)
            return compiled, compiled
        body = self.compile(node.body)
        return self._subshell(body, node.redirects), self.with_redirects(body, node.redirects)

    def _runs_in_place(self, node):
        """A pipeline stage that cannot change shell state need not be a subshell: a simple
        command naming a registered command (or echo/printf) with side-effect-free words."""
        if type(node) is not A.SimpleCommand or node.assigns or not node.words:
            return None
        words = node.words
        name = words[0].literal()
        if name is None:
            return None
        for word in words:
            if type(word) is A.Word and word.text is not None:
                continue                    # a literal word, the most common, without a call
            if not _pure_word(word):        # (an argument may be an assignment: declare x=1)
                return None
        # echo, printf (not -v) and the like run in place unless a function takes the name
        builtin = None
        if name in ("echo", "printf", "true", "false", ":", "test", "["):
            builtin = not (name == "printf" and len(words) > 1 and words[1].literal() == "-v")

        def check(sh):
            if name in sh.functions:
                return False
            if builtin is not None:
                return builtin
            return name in sh.commands and name not in sh.builtins
        return check

    # ------------------------------------------------------------ simple commands

    def c_SimpleCommand(self, node: A.SimpleCommand) -> Callable:
        before = self.process_substitutions
        fn = self._simple_command(node)
        if self.process_substitutions != before:
            return with_substitutions(fn)
        return fn

    def _simple_command(self, node: A.SimpleCommand) -> Callable:
        source = self.source
        if source is not None:
            line, command = source.line_of(node.pos), (source.text, node.pos, node.end)
        else:
            line, command = 0, NO_COMMAND
        assigns: list = []
        # before a command, each assignment is a temporary binding of (name, +=): the name is
        # None for `b[0]=2 cmd`, which binds nothing
        bindings: list = []
        if node.assigns and node.words:
            for a in node.assigns:
                if a.array is not None:
                    fn, target = self._array_as_text(a), a.name
                elif a.index is not None:
                    fn, target = self._element_binding(a), None
                else:
                    fn, target = self.assignment(a), a.name
                assigns.append(fn)
                bindings.append((target, a.append))
        elif node.assigns:
            for a in node.assigns:          # (a loop: compiled, map() would call each through Python)
                assigns.append(self.assignment(a))
        redirects = list(map(self.redirect, node.redirects)) if node.redirects else []
        traced = LazyTraced(self, assigns, node) if assigns else assigns
        if not node.words:
            return self._assignment_only(line, command, assigns, redirects, traced)
        argv_fn = self._argv(node.words)
        is_exec_redirect = len(node.words) == 1 and node.words[0].literal() == "exec"

        def run(sh):
            if not sh.trap_depth:     # a trap's commands keep $LINENO and $BASH_COMMAND of the script
                sh.lineno = line
                sh.bash_command = command
                if sh.traps and "DEBUG" in sh.traps:
                    sh.run_debug_trap()
            count_command(sh.budget)
            sh.cmdsub_status = 0
            try:
                argv = argv_fn(sh)
            except Disabled as e:
                sh.error(str(e))
                sh.status = 1
                return 1
            if not argv:
                status = _apply_assignments(sh, assigns) if assigns else sh.cmdsub_status
                if redirects:
                    status = with_redirects(sh, redirects, _known_status, status)
                sh.status = status
                return status
            sh.last_arg = argv[-1]
            if sh.xtrace:
                if assigns:                     # `+ v=1` before `+ cmd`, as bash shows them
                    status = with_redirects(sh, redirects, _invoke, sh, argv, traced, bindings, True) \
                        if redirects else _invoke(sh, argv, traced, bindings, True)
                    sh.status = status
                    if status and not sh.errexit_suppressed and (sh.errexit or "ERR" in sh.traps):
                        command_failed(sh, status)
                    return status
                trace_argv(sh, argv)
            if is_exec_redirect:
                try:
                    for r in redirects:
                        r(sh)
                    status = 0
                except RedirectError as refused:     # (not `e`: compiled, a name holds one type)
                    sh.error(str(refused))
                    status = 1
            elif redirects:
                status = with_redirects(sh, redirects, _invoke, sh, argv, assigns, bindings)
            else:
                status = _invoke(sh, argv, assigns, bindings)
            sh.status = status
            if status and not sh.errexit_suppressed and (sh.errexit or "ERR" in sh.traps):
                command_failed(sh, status)
            return status
        return run

    def _argv(self, words: tuple) -> Callable:
        for w in words:
            if type(w) is A.Assign:
                break
        else:
            return self.fields_list(words)
        fns: list = []
        for w in words:                     # declare x=(...) etc.
            fns.append(self._declaration_arg(w) if type(w) is A.Assign else self.fields(w))

        def run(sh):
            out = []
            for fn in fns:
                out.extend(fn(sh))
            return out
        return run

    def _declaration_arg(self, a: A.Assign) -> Callable:
        """An argument of declare/local/export/readonly that looks like an assignment."""
        apply = self.assignment(a)
        name, append = a.name, a.append
        index = self.string(a.index) if a.index is not None else None
        value = self.string(a.value) if a.value is not None else None

        def run(sh):
            if a.array is not None:
                return [DeclarationArg(name, None, append, None, apply)]
            key = index(sh) if index else None
            return [DeclarationArg(name, key, append, value(sh) if value else "", None)]
        return run

    def _assignment_only(self, line, command, assigns, redirects, traced) -> Callable:
        def run(sh):
            if not sh.trap_depth:     # a trap's commands keep $LINENO and $BASH_COMMAND of the script
                sh.lineno = line
                sh.bash_command = command
                if sh.traps and "DEBUG" in sh.traps:
                    sh.run_debug_trap()
            count_command(sh.budget)
            sh.cmdsub_status = 0
            try:
                # bash expands the assignments before it performs the redirections
                status = _apply_assignments(sh, traced if sh.xtrace else assigns)
                if redirects:
                    status = with_redirects(sh, redirects, _known_status, status)
            except Disabled as e:
                sh.error(str(e))
                status = 1
            sh.status = status
            if status and not sh.errexit_suppressed and (sh.errexit or "ERR" in sh.traps):
                command_failed(sh, status)
            return status
        return run

    def _array_as_text(self, a: A.Assign) -> Callable:
        """`B=(b b) cmd`: bash binds the array literal as a string in the command's temporary
        environment (arrays cannot be exported): each element expanded as one word (no
        splitting or globbing), `[k]=v` kept as such, joined by blanks inside parentheses."""
        pieces: list = []
        assert a.array is not None          # (called for an array assignment)
        for elem in a.array:
            key = self.string(elem.key) if elem.key is not None else None
            pieces.append((key, self.string(elem.value)))
        name = a.name

        def assign(sh):
            text = " ".join((f"[{key(sh)}]=" if key is not None else "") + value(sh)
                            for key, value in pieces)
            sh.set_var(name, f"({text})", a.append)
        return assign

    def _element_binding(self, a: A.Assign) -> Callable:
        """`b[0]=2 cmd`: an element cannot be a temporary binding; bash says so and runs cmd."""
        text = self.source.text if self.source is not None else ""
        end = text.find("]", a.pos)
        shown = text[a.pos:end + 1] if end >= 0 else a.name

        def refuse(sh):
            sh.error(f"`{shown}': not a valid identifier")
        return refuse

    def assignment(self, a: A.Assign) -> Callable:
        """fn(sh) performing the assignment."""
        name, append = a.name, a.append
        if a.array is not None and a.index is not None:
            def refuse(sh):
                sh.error(f"{name}[...]: cannot assign list to array member")
                sh.cmdsub_status = 1
            return refuse
        if a.array is not None:
            elems: list = []
            for e in a.array:
                braced = None
                if e.key is not None and _brace_expands(e.value):
                    # bash brace-expands `[k]=-{a,b}-` of an indexed array first; the results
                    # are plain elements
                    braced = self.fields(A.Word(e.pos, [
                        A.Lit(e.pos, "["), *e.key.parts, A.Lit(e.pos, "]+=" if e.append else "]="),
                        *e.value.parts]))
                if e.key is not None:
                    elems.append((self.string(e.key), self.string(e.value), e.append, braced))
                else:
                    elems.append((None, self.fields(e.value), False, None))

            def assign_array(sh) -> None:
                items: list[tuple] = []
                for key, value, elem_append, braced in elems:
                    if braced is not None and not sh.is_assoc(name):
                        items.extend((None, v, False) for v in braced(sh))
                    elif key is None:
                        for v in value(sh):
                            items.append((None, v, False))
                    else:
                        items.append((key(sh), value(sh), elem_append))
                sh.set_array(name, items, append=append)
            return assign_array
        value = self.string(a.value) if a.value is not None else (lambda sh: "")
        if a.index is not None:
            index = self.string(a.index)
            quoted = next((p for p in a.index.parts if type(p) is A.SingleQuoted), None)

            def assign_element(sh):
                if quoted is not None and not sh.is_assoc(name):
                    # an index is arithmetic, where single quotes are not allowed
                    shown = f"'{quoted.text}'"
                    raise FatalError(ArithError(shown, "syntax error: operand expected", shown).render(),
                                     exits=True)
                sh.set_element(name, index(sh), value(sh), append)
            return assign_element
        if name == "RANDOM" and not append:            # RANDOM=N seeds the generator
            def assign_random(sh):
                seed_random(sh, value(sh))
            return assign_random
        if not append:
            def assign(sh):
                sh.set_var(name, value(sh))
            return assign

        def assign_append(sh):
            sh.set_var(name, value(sh), True)
        return assign_append

    # ------------------------------------------------------------ redirections

    def redirect(self, r: A.Redirect) -> Callable:
        if isinstance(r.fd, str):
            return self._named_fd_redirect(r)
        op, fd = r.op, r.fd
        if op in ("<<", "<<-"):
            doc = r.target
            assert isinstance(doc, A.HereDoc)   # (the target of `<<` is its here-document)
            body = self.string(doc.body) if doc.body is not None else (lambda sh: "")
            target_fd = 0 if fd is None else fd

            def heredoc(sh):
                set_fd(sh, target_fd, InputStream(body(sh)))
            return heredoc
        assert isinstance(r.target, A.Word)     # (only a here-document's is a HereDoc)
        if op == "<<<":
            text = self.string(r.target)
            target_fd = 0 if fd is None else fd

            def herestring(sh):
                set_fd(sh, target_fd, InputStream(text(sh) + "\n"))
            return herestring
        target = self.string(r.target)
        if op in (">&", "<&"):
            default_fd = 1 if op == ">&" else 0

            def dup(sh):
                t = target(sh)
                src_fd = default_fd if fd is None else fd
                if t == "-":
                    set_fd(sh, src_fd, None)
                    return
                if t.endswith("-") and (t[:-1].isascii() and t[:-1].isdigit()):
                    set_fd(sh, src_fd, get_fd(sh, int(t[:-1])))
                    set_fd(sh, int(t[:-1]), None)
                    return
                if not (t.isascii() and t.isdigit()):
                    if op == ">&" and fd is None:
                        redirect_both(sh, t, ">")
                        return
                    if op == ">&" and fd == 1:
                        redirect_file(sh, t, 1, ">")
                        return
                    raise RedirectError(f"{t}: ambiguous redirect")
                set_fd(sh, src_fd, get_fd(sh, int(t)))
            return dup

        words = self.fields(r.target)

        def to_file(sh):
            fields = words(sh)        # split and globbed: it must come to one word
            if len(fields) != 1:
                raise RedirectError(f"{' '.join(fields) or target(sh)}: ambiguous redirect")
            t = fields[0]
            if op in ("&>", "&>>"):
                redirect_both(sh, t, ">>" if op == "&>>" else ">")
            else:
                redirect_file(sh, t, (0 if op in ("<", "<>") else 1) if fd is None else fd, op)
        return to_file

    def _named_fd_redirect(self, r: A.Redirect) -> Callable:
        """`{name}>file` opens the lowest free descriptor from 10 and stores it in $name;
        `{name}>&-` closes the descriptor $name holds."""
        name = r.fd
        closing = r.op in (">&", "<&") and self._static_target(r) == "-"
        compiled: dict = {}

        def run(sh):
            if closing:
                value = sh.get_value(name) or ""
                if not (value.isascii() and value.isdigit()):
                    raise RedirectError(f"{name}: ambiguous redirect")
                n = int(value)
            else:
                n = 10
                while n in sh.extra_fds:
                    n += 1
                sh.set_var(name, str(n))
            inner = compiled.get(n)
            if inner is None:
                inner = compiled[n] = self.redirect(A.Redirect(r.pos, n, r.op, r.target))
            inner(sh)
        return run

    @staticmethod
    def _static_target(r: A.Redirect):
        word = r.target
        return word.literal() if isinstance(word, A.Word) else None

    def with_redirects(self, fn: Callable, redirects: tuple[A.Redirect, ...]) -> Callable:
        if not redirects:
            return fn
        before = self.process_substitutions
        rs = list(map(self.redirect, redirects))

        def run(sh):
            return with_redirects(sh, rs, fn, sh)
        if self.process_substitutions != before:       # `done < <(cmd)`, `} > >(cmd)`
            return with_substitutions(run)
        return run

    # ------------------------------------------------------------ compound commands

    def c_BraceGroup(self, node: A.BraceGroup) -> Callable:
        return self.with_redirects(self.compile(node.body), node.redirects)

    def c_Subshell(self, node: A.Subshell) -> Callable:
        return self._subshell(self.compile(node.body), node.redirects)

    def _subshell(self, body: Callable, redirects) -> Callable:
        def run(sh):
            status = sh.subshell().run_subshell(body)
            sh.status = status
            if status and not sh.errexit_suppressed and (sh.errexit or "ERR" in sh.traps):
                command_failed(sh, status)
            return status
        return self.with_redirects(run, redirects)

    def c_If(self, node: A.If) -> Callable:
        clauses: list = []
        for c, b in node.clauses:
            clauses.append((self.compile(c), self.compile(b)))
        else_body = self.compile(node.else_body) if node.else_body is not None else None

        def run(sh):
            for cond, body in clauses:
                sh.errexit_suppressed += 1
                try:
                    status = cond(sh)
                finally:
                    sh.errexit_suppressed -= 1
                if status == 0:
                    return body(sh)
            if else_body is not None:
                return else_body(sh)
            sh.status = 0
            return 0
        return self.with_redirects(run, node.redirects)

    def c_While(self, node: A.While) -> Callable:
        cond = self.compile(node.cond)
        body = self.compile(node.body)
        until = node.until

        def run(sh):
            status = 0
            iterations = 0
            max_iter = sh.limits.max_loop_iterations
            sh.loop_depth += 1
            try:
                while True:
                    try:
                        sh.errexit_suppressed += 1
                        try:
                            c = cond(sh)
                        finally:
                            sh.errexit_suppressed -= 1
                        if (c == 0) == until:
                            break
                        iterations += 1
                        if iterations > max_iter:
                            raise _loop_limit(max_iter)
                        status = body(sh)
                    except BreakLoop as b:
                        status = _loop_exit(b)
                        break
                    except ContinueLoop as c:
                        status = _loop_exit(c)
            finally:
                sh.loop_depth -= 1
            sh.status = status
            return status
        return self.with_redirects(run, node.redirects)

    def c_For(self, node: A.For) -> Callable:
        if node.select:
            return self.with_redirects(self._select(node), node.redirects)
        body = self.compile(node.body)
        var = node.var
        words = self.fields_list(node.words) if node.words is not None else None
        line = self.line(node.pos)

        valid = re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", var) is not None

        def run(sh):
            sh.lineno = line
            if not valid:
                sh.error(f"`{var}': not a valid identifier")
                sh.status = 1
                return 1
            items = words(sh) if words is not None else list(sh.positional)
            status = 0
            if len(items) > sh.limits.max_loop_iterations:
                raise _loop_limit(sh.limits.max_loop_iterations)
            sh.loop_depth += 1
            set_var = sh.set_var
            try:
                for item in items:
                    if sh.xtrace:
                        trace_line(sh, f"for {var} in " + " ".join(map(xtrace_quote, items)))
                    set_var(var, item)
                    try:
                        status = body(sh)
                    except BreakLoop as b:
                        status = _loop_exit(b)
                        break
                    except ContinueLoop as c:
                        status = _loop_exit(c)
            finally:
                sh.loop_depth -= 1
            sh.status = status
            return status
        return self.with_redirects(run, node.redirects)

    def _select(self, node: A.For) -> Callable:
        """bash's select without a terminal: the menu and the PS3 prompt go to stderr, each
        answer is a line of standard input (REPLY); an empty line shows the menu again; the
        loop ends at `break`, or at end of input with status 1."""
        body = self.compile(node.body)
        var = node.var
        words = self.fields_list(node.words) if node.words is not None else None
        line = self.line(node.pos)

        def run(sh):
            sh.lineno = line
            items = words(sh) if words is not None else list(sh.positional)
            if not items:
                return 0
            status, show_menu, rounds = 0, True, 0
            sh.loop_depth += 1
            try:
                while True:
                    rounds += 1
                    if rounds > sh.limits.max_loop_iterations:
                        raise _loop_limit(sh.limits.max_loop_iterations)
                    if sh.xtrace:
                        trace_line(sh, f"select {var} in " + " ".join(map(xtrace_quote, items)))
                    if show_menu:
                        sh.err(select_menu(items, sh.get_value("COLUMNS")))
                    prompt = sh.get_value("PS3")
                    sh.err("#? " if prompt is None else prompt)
                    answer = sh.stdin.read_until("\n")
                    if answer is None:
                        sh.out("\n")           # bash ends the prompt line on stdout at EOF
                        status = 1
                        break
                    reply = answer[:-1] if answer.endswith("\n") else answer
                    sh.set_var("REPLY", reply)
                    if reply == "":
                        show_menu = True
                        continue
                    show_menu = False
                    number = reply.strip()
                    chosen = number.isascii() and number.isdigit() and 1 <= int(number) <= len(items)
                    sh.set_var(var, items[int(number) - 1] if chosen else "")
                    try:
                        status = body(sh)
                    except BreakLoop as b:
                        status = _loop_exit(b)
                        break
                    except ContinueLoop as c:
                        status = _loop_exit(c)
            finally:
                sh.loop_depth -= 1
            sh.status = status
            return status
        return run

    def c_ArithFor(self, node: A.ArithFor) -> Callable:
        plain = (self._arith(node.init) if node.init else None,
                 self._arith(node.cond) if node.cond else None,
                 self._arith(node.step) if node.step else None)
        # under `set -x` (as the loop starts) its parts show themselves: `+ (( i<2 ))`
        traced = tuple(self._traced_arith(w, True) if w else None for w in (node.init, node.cond, node.step))
        body = self.compile(node.body)
        line = self.line(node.pos)

        def run(sh):
            sh.lineno = line
            status = 0
            iterations = 0
            max_iter = sh.limits.max_loop_iterations
            init, cond, step = traced if sh.xtrace else plain
            try:
                if init:
                    init(sh)
                sh.loop_depth += 1
                try:
                    while cond is None or _at_line(sh, line, cond):
                        iterations += 1
                        if iterations > max_iter:
                            raise _loop_limit(max_iter)
                        try:
                            status = body(sh)
                        except BreakLoop as b:
                            status = _loop_exit(b)
                            break
                        except ContinueLoop as c:
                            status = _loop_exit(c)
                        if step:
                            step(sh)
                finally:
                    sh.loop_depth -= 1
            except ArithError as e:
                sh.error(e.render())
                status = 1
            except ReadonlyVariable as readonly:
                sh.error(readonly.message)
                status = 1
            sh.status = status
            return status
        return self.with_redirects(run, node.redirects)

    def _arith(self, word: A.Word) -> Callable:
        """fn(sh) -> int for an arithmetic word; raises ArithError (callers decide)."""
        static = self._static_text(word)
        if static is not None:
            try:
                fn = compile_arith(static)
                return fn
            except ArithError:
                pass
        text = self.string(word)
        return lambda sh: compile_arith(text(sh))(sh)

    def _traced_arith(self, word: A.Word, strip: bool = False) -> Callable:
        """fn(sh) -> int that shows `(( expression ))` under `set -x` first (the expression
        expanded once, as bash shows and evaluates it); compiled when first needed."""
        compiled: list = []

        def shown(sh):
            if not compiled:
                compiled.append(self.string(word))
            text = compiled[0](sh)
            trace_line(sh, f"(( {text.strip() if strip else text} ))")
            return compile_arith(text)(sh)
        return shown

    def c_ArithCommand(self, node: A.ArithCommand) -> Callable:
        expr = self._arith(node.expr)
        line = self.line(node.pos)
        shown = self._traced_arith(node.expr)

        def run(sh):
            sh.lineno = line
            count_command(sh.budget)
            try:
                status = 0 if (shown(sh) if sh.xtrace else expr(sh)) else 1
            except ArithError as e:
                sh.error(f"((: {e.render()}")
                status = 1
            except ReadonlyVariable as readonly:        # the command fails; the line goes on
                sh.error(readonly.message)
                status = 1
            sh.status = status
            if status and not sh.errexit_suppressed and (sh.errexit or "ERR" in sh.traps):
                command_failed(sh, status)
            return status
        return self.with_redirects(run, node.redirects)

    def c_Case(self, node: A.Case) -> Callable:
        subject = self.string(node.word)
        # an arm: [its pattern tests, its body's node, the body compiled when first taken (as
        # later() does, without a closure per arm: most arms are never taken), terminator]
        arms: list[list] = []
        for item in node.items:
            arms.append([[self.pattern_test(w) for w in item.patterns], item.body, None, item.terminator])
        source = self.source
        line = self.line(node.pos)
        word_pos = node.word.pos

        def run(sh):
            sh.lineno = line
            count_command(sh.budget)        # (a case that matches nothing runs no other command)
            if sh.xtrace:                               # bash shows the word as written
                trace_line(sh, f"case {source_word(source.text, word_pos) if source else ''} in")
            value = subject(sh)
            nocase = sh.shopts["nocasematch"]
            status = 0
            k = 0
            n = len(arms)
            matched_fallthrough = False
            while k < n:
                arm = arms[k]
                if matched_fallthrough or any_matches(sh, arm[0], value, nocase):
                    body = arm[2]
                    if body is None:
                        body = arm[2] = self.arm_body(arm[1])
                    status = body(sh)
                    term = arm[3]
                    if term == ";;":
                        break
                    if term == ";&":
                        matched_fallthrough = True
                        k += 1
                        continue
                    matched_fallthrough = False   # ;;& tests the next patterns
                k += 1
            sh.status = status
            return status
        return self.with_redirects(run, node.redirects)

    def arm_body(self, body: Optional[A.Node]) -> Callable:
        """A `case` arm's body compiled, the first time the arm is taken."""
        return self.compile_deferred(body) if body is not None else _status_zero

    def pattern_test(self, word: A.Word) -> Callable:
        """fn(sh, value, nocase) -> bool: whether value matches the pattern `word`."""
        written = self.written_pattern(word)
        return WrittenPattern(written) if written is not None else pattern_test(self.pattern(word))

    def c_CondCommand(self, node: A.CondCommand) -> Callable:
        test = self.cond(node.expr)
        line = self.line(node.pos)
        traced: list = []           # the test compiled to show its steps (`set -x`), once needed

        def run(sh):
            sh.lineno = line
            count_command(sh.budget)
            try:
                if sh.xtrace:
                    if not traced:
                        traced.append(self.cond(node.expr, True))
                    status = 0 if traced[0](sh) else 1
                else:
                    status = 0 if test(sh) else 1
            except CondError as e:
                sh.error(str(e))
                status = e.status
            sh.status = status
            if status and not sh.errexit_suppressed and (sh.errexit or "ERR" in sh.traps):
                command_failed(sh, status)
            return status
        return self.with_redirects(run, node.redirects)

    def cond(self, e, trace: bool = False, negated: bool = False) -> Callable:
        """A [[ ]] expression as fn(sh) -> bool. `trace`: each test shows itself as it is
        made, as `set -x` shows them (`+ [[ 1 == 1 ]]`, `+ [[ ! -z x ]]`)."""
        t = type(e)
        if t is A.CondAndOr:
            left, right = self.cond(e.left, trace), self.cond(e.right, trace)
            if e.op == "&&":
                return lambda sh: left(sh) and right(sh)
            return lambda sh: left(sh) or right(sh)
        if t is A.CondNot:
            inner = self.cond(e.operand, trace, not negated)
            return lambda sh: not inner(sh)
        bang = "! " if negated else ""
        if t is A.CondWord:
            w = self.string(e.word)
            if trace:
                def shown_word(sh):
                    value = w(sh)
                    trace_line(sh, f"[[ {bang}-n {xtrace_quote(value)} ]]")
                    return value != ""
                return shown_word
            return lambda sh: w(sh) != ""
        if t is A.CondUnary:
            operand = self.string(e.operand)
            op = e.op
            if trace:
                def shown_unary(sh):
                    value = operand(sh)
                    trace_line(sh, f"[[ {bang}{op} {xtrace_quote(value)} ]]")
                    return unary_test(sh, op, value)
                return shown_unary
            return lambda sh: unary_test(sh, op, operand(sh))
        op = e.op
        left = self.string(e.left)
        if op in ("==", "=", "!="):
            negate = op == "!="
            if trace:
                right = self.pattern(e.right)

                def shown_match(sh):
                    lhs, rhs = left(sh), right(sh)
                    trace_line(sh, f"[[ {bang}{xtrace_quote(lhs)} {op} {rhs} ]]")
                    return patterns.glob_match(rhs, lhs, sh.shopts["nocasematch"]) != negate
                return shown_match
            test = self.pattern_test(e.right)

            def match(sh):
                return test(sh, left(sh), sh.shopts["nocasematch"]) != negate
            return match
        if op == "=~":
            right = self.regex(e.right)
            if trace:
                def shown_regex(sh):
                    lhs, rhs = left(sh), right(sh)
                    trace_line(sh, f"[[ {bang}{xtrace_quote(lhs)} =~ {rhs} ]]")
                    return regex_test(sh, lhs, rhs)
                return shown_regex
            return lambda sh: regex_test(sh, left(sh), right(sh))
        right = self.string(e.right)
        if trace:
            def shown_binary(sh):
                lhs, rhs = left(sh), right(sh)
                trace_line(sh, f"[[ {bang}{xtrace_quote(lhs)} {op} {xtrace_quote(rhs)} ]]")
                return cond_binary_test(sh, op, lhs, rhs)
            return shown_binary
        return lambda sh: cond_binary_test(sh, op, left(sh), right(sh))

    def later(self, node, redirects: tuple[A.Redirect, ...] = ()) -> Callable:
        """fn(sh) that compiles `node` (with its redirections) the first time it runs: a
        function body, a `$( )` body (a `case` arm is compiled so too, in its own slot:
        c_Case). Scripts define more than they run (many functions, few called; one arm of a
        case taken), so what never runs costs nothing.
        Parsing still reads it all first, so a syntax error in it is reported as bash does.

        Compiled scripts are cached and shared between threads: two threads running it first
        at once may both compile it; each result is the same closure tree, and the one kept
        last is used from then on (no lock needed, and none held while a body compiles that
        may itself, by a limit, end the run)."""
        compiled: Optional[Callable] = None

        def run_compiled(sh):
            nonlocal compiled
            fn = compiled
            if fn is None:
                fn = compiled = self.compile_deferred(node, redirects)
            return fn(sh)
        return run_compiled

    def compile_deferred(self, node, redirects: tuple[A.Redirect, ...] = ()) -> Callable:
        """What later() and a `case` arm compile when first run (counted: the lazy-compile
        tests read COMPILE_COUNTS)."""
        COMPILE_COUNTS["later"] += 1
        fn = self.compile(node)
        return self.with_redirects(fn, redirects) if redirects else fn

    def c_FunctionDef(self, node: A.FunctionDef) -> Callable:
        name = node.name
        if not node.valid_name:
            line = self.line(node.pos)

            def refuse(sh):
                sh.lineno = line
                sh.error(f"`{name}': not a valid identifier")
                sh.status = 1
                return 1
            return refuse
        source = self.source
        func = Function(name, self.later(node.body, node.redirects), node, source.text if source is not None else "")

        def define(sh):
            count_command(sh.budget)
            functions = sh.functions
            existing = functions.get(name)
            if existing is not None and getattr(existing, "readonly", False):
                sh.error(f"{name}: readonly function")
                return 1
            if sh.functions_shared:         # (sh.own_functions() only then: a Python call less)
                functions = sh.own_functions()
            functions[name] = func
            sh.status = 0
            return 0
        return define


# Scripts run from a script (eval, source, a trap's commands, `bash FILE`) nest on the thread's
# C stack. Compiled, a level passes through few of the frames Python's recursion limit counts,
# so the stack could overflow before a RecursionError stopped the nesting: it is bounded here,
# alike for the compiled and the pure build (a level takes some 2 KB of stack compiled).
MAX_SCRIPT_NESTING = 1000
_nesting = threading.local()


def _status_zero(sh) -> int:
    """The body of an empty `case` arm."""
    return 0


def _enter_script() -> None:
    depth = getattr(_nesting, "depth", 0) + 1
    if depth > MAX_SCRIPT_NESTING:
        raise RecursionError("scripts nested too deep")
    _nesting.depth = depth


def _leave_script() -> None:
    _nesting.depth -= 1


class CompiledScript:
    """A script's top-level commands (one per line), each a closure; `syntax_error` is the
    error that ended the parse early, reported after the commands before it have run."""
    __slots__ = ("units", "syntax_error")

    def __init__(self, units: list):
        self.units = units
        self.syntax_error: Optional[ShellSyntaxError] = None

    def __call__(self, sh, where: str = "bash: eval") -> int:
        """Run as `eval` does: errors propagate to the caller's top-level command. A syntax
        error is reported as bash reports it for `where` (`bash: eval`, `bash: -c`, a
        script's path): one line for an unexpected end, else also the line's text."""
        _enter_script()
        try:
            status = sh.status
            for unit in self.units:
                status = unit(sh)
        finally:
            _leave_script()
        if self.syntax_error is not None:
            status = self._syntax(sh, where)
        return status


    def run_as_script(self, sh, where: str) -> int:
        """Run as bash runs a script file or `bash -c`: an expansion error abandons its
        top-level command and the script goes on; one that exits the shell (an unbound
        variable under `set -u`) ends it with its status (127)."""
        _enter_script()
        try:
            status = sh.status
            for unit in self.units:
                status, ends = run_unit(sh, unit)
                if ends:
                    raise ExitSignal(status)
        finally:
            _leave_script()
        if self.syntax_error is not None:
            status = self._syntax(sh, where)
        return status

    def _syntax(self, sh, where: str) -> int:
        e = self.syntax_error
        assert e is not None
        sh.err(f"{where}: line {e.line}: {e.message}\n")
        if e.source_line and not e.eof:
            sh.err(f"{where}: line {e.line}: `{e.source_line}'\n")
        status = sh.status if e.keeps_status else 2
        sh.status = status
        return status


class ParserTooDeep(Exception):
    """A command nested deeper than the parser (or the compile stage) can follow."""


class StreamedScript:
    """A script read as bash reads one: each top-level command is parsed and compiled when
    the one before it has run (`next_unit`), and a syntax error, in `syntax_error` once met,
    ends the commands before it as in a CompiledScript.

    For a script seen once. A command's syntax tree and closures are garbage once the next
    command is read, so the next reuses their memory while it is still in the processor's
    caches, where a whole script's tree and closures (1.3 MB for 300 lines) would be new
    memory for every call."""
    __slots__ = ("parser", "compiler", "syntax_error")

    def __init__(self, text: str, max_depth: int):
        source = Source(text)
        self.parser = Parser(text, max_depth=max_depth, source=source)
        self.compiler = Compiler(source)
        self.syntax_error: Optional[ShellSyntaxError] = None

    def next_unit(self) -> Optional[Callable]:
        """The next top-level command, compiled; None at the end or at a syntax error."""
        enabled = gc.isenabled()      # (off for the call's first 0.1 s: Budget.pause_collector)
        if enabled:
            gc.disable()
        try:
            node = self.parser.next_unit()
            if node is None:
                return None
            return self.compiler.compile_unit(node)
        except ShellSyntaxError as e:
            self.syntax_error = e
            return None
        except RecursionError:
            raise ParserTooDeep() from None
        finally:
            if enabled:
                gc.enable()


def run_units(sh, script) -> int:
    """The top-level commands of `script` (a CompiledScript, or a StreamedScript: anything with
    `next_unit()` and `syntax_error`) run in `sh`, one after another, until one ends the script
    (see run_unit) or `set -n`; then the syntax error that ended the script's text, if one did,
    is reported. Its status. (The loop of every execute(), compiled: a tenth of the steps the
    interpreter took for a 300-line script.)"""
    status = 0
    if isinstance(script, CompiledScript):
        for unit in script.units:
            status, ends = run_unit(sh, unit)
            if ends or sh.noexec:
                return status
    else:
        check_stop()                  # a call whose deadline passed, or cancelled, runs nothing
        unit = script.next_unit()
        while unit is not None:
            status, ends = run_unit(sh, unit)
            if ends or sh.noexec:
                return status
            unit = script.next_unit()
    error = script.syntax_error
    if error is not None:
        sh.err(error.render())
        status = sh.status if error.keeps_status else 2
    return status


def run_unit(sh, unit) -> tuple[int, bool]:
    """One top-level command of a script, as bash runs it: its status, and whether the error
    it met ends the script (one that exits the shell, or any under errexit that does); an
    expansion error or a disabled construct only abandons that command."""
    try:
        return unit(sh), False
    except FatalError as e:
        sh.error(e.message)
        status = sh.status = 1 if (e.exits and sh.errexit) else e.status
        return status, e.exits or (sh.errexit and e.ends_errexit_shell)
    except Disabled as disabled:
        sh.error(str(disabled))
        sh.status = 1
        return 1, False
    except (BreakLoop, ContinueLoop):
        sh.status = 0
        return 0, False


def _at_line(sh, line: int, fn):
    """Evaluate a loop header at its own line ($LINENO in `for ((...; i < $LINENO; ...))`)."""
    sh.lineno = line
    return fn(sh)


def _loop_exit(signal) -> int:
    """A break/continue reached a loop: this loop handles one level, outer loops the rest."""
    if signal.levels > 1:
        signal.levels -= 1
        raise signal
    return 0


def _loop_limit(max_iter: int) -> LimitExceeded:
    return LimitExceeded("max_loop_iterations",
                         f"loop iteration limit exceeded: more than {max_iter} iterations "
                         f"(max_loop_iterations)")


def _pure_word(w) -> bool:
    if type(w) is A.Assign:
        return False
    for p in w.parts:
        t = type(p)
        if t is A.Lit:
            continue
        if t is A.DoubleQuoted:
            for q in p.parts:
                if type(q) is not A.Lit and not _pure_part(q):
                    return False
        elif not _pure_part(p):
            return False
    return True


def _pure_part(p) -> bool:
    t = type(p)
    if t is A.ParamExp:
        return p.op not in ("=", ":=")
    if t is A.ArithSub:
        text = "".join(q.text for q in p.expr.parts if type(q) is A.Lit)
        return "=" not in text.replace("==", "").replace("!=", "").replace("<=", "").replace(">=", "") \
            and "++" not in text and "--" not in text
    return True


def command_failed(sh, status: int):
    """A command failed where `set -e` would stop: run the ERR trap (at the top level: bash
    does not give it to functions without errtrace, nor run it inside itself), then stop
    under errexit."""
    action = sh.traps.get("ERR")
    if action is not None and (not sh.funcnames or sh.errtrace) and not sh.err_trap_held:
        sh.err_trap_held += 1
        sh.trap_depth += 1
        try:
            sh.status = status
            sh.eval_string(action)
        finally:
            sh.err_trap_held -= 1
            sh.trap_depth -= 1
            sh.status = status
    if sh.errexit:
        raise ErrexitSignal(status)


def count_command(budget) -> None:
    """Budget.check between two commands, its common case here: compiled, it costs a third of
    calling the method, which runs for every command. Past the command limit, at a cancel or
    deadline mark, and every 64 commands (the clock and memory), the method does it all."""
    count = budget.commands + 1
    if count > budget.max_commands or budget.stop.cancelled or not count & 63:
        budget.check()
    else:
        budget.commands = count


def _apply_assignments(sh, assigns) -> int:
    for a in assigns:
        a(sh)
    return sh.cmdsub_status


def _invoke(sh, argv: list, assigns, bindings: list, trace: bool = False) -> int:
    """Run a command by name: function, builtin, registered command; with prefix assignments
    as a temporary scope (bash's temporary environment), `bindings` their (name, +=). A write
    past a filesystem limit fails the command as bash reports a write error. `trace`: show the
    command under `set -x` once the assignments (traced ones) have shown themselves."""
    name = argv[0]
    try:
        if not assigns:
            return dispatch(sh, name, argv)
        scope = TempScope()
        scope.of_function = name in sh.functions
        sh.scopes.append(scope)
        try:
            for (target, append), a in zip(bindings, assigns):
                if target is not None and target not in scope:
                    outer = sh.lookup(target) if append else None
                    scope[target] = Var(outer.scalar() if outer else None, EXPORT)
                a(sh)
            if trace:
                trace_argv(sh, argv)
            return dispatch(sh, name, argv)
        finally:
            sh.scopes.pop()
    except FsError as e:
        sh.error(f"{name}: write error: {e.strerror}")
        return 1


def _run_piped(sh, feeders: list, last: tuple) -> list:
    """The stages of a pipeline (see c_Pipeline), run one after another, each reading what
    the one before wrote: their statuses. A stage that cannot change the shell runs in it, as
    if in a subshell (only `$_` would show the difference, and it is put back)."""
    statuses: list = []
    stdin = sh.stdin
    for run, in_place, forked, simple, stderr_too in feeders:
        buf = PipeBuffer(sh.budget)
        err = buf.write if stderr_too else sh.err
        if in_place is not None and in_place(sh):
            statuses.append(_stage_in_place(sh, run, stdin, buf.write, err, True))
        else:
            statuses.append(_stage_in_subshell(sh, forked, simple, stdin, buf.write, err))
        stdin = InputStream(buf.text())
    run, in_place, forked, simple, _ = last
    if sh.shopts["lastpipe"]:
        statuses.append(_stage_in_place(sh, run, stdin, sh.out, sh.err, False))
    elif in_place is not None and in_place(sh):
        statuses.append(_stage_in_place(sh, run, stdin, sh.out, sh.err, True))
    else:
        statuses.append(_stage_in_subshell(sh, forked, simple, stdin, sh.out, sh.err))
    return statuses


def _stage_in_subshell(sh, stage: Callable, simple: bool, stdin, out, err) -> int:
    child = sh.subshell()
    child.stdin, child.out, child.err = stdin, out, err
    return child.run_subshell(stage, simple)


def _stage_in_place(sh, stage: Callable, stdin, out, err, isolated: bool) -> int:
    """`isolated`: the stage stands for a subshell, so what ends a subshell ends only the stage,
    and `$_` is put back after it (not so for the last stage under `lastpipe`, which runs in
    the shell)."""
    saved = (sh.stdin, sh.out, sh.err, sh.last_arg)
    sh.stdin, sh.out, sh.err = stdin, out, err
    sh.err_trap_held += 1             # the whole pipeline's status decides
    try:
        if isolated:
            return sh.run_contained(stage, True)        # (a simple command)
        try:
            return stage(sh)
        except ErrexitSignal as e:
            return e.status
    finally:
        sh.err_trap_held -= 1
        sh.stdin, sh.out, sh.err = saved[0], saved[1], saved[2]
        if isolated:
            sh.last_arg = saved[3]


def _known_status(status: int) -> int:
    """The body of a command that has redirections and nothing to run."""
    return status


COMPILER = Compiler()
_FRAMED = frozenset((A.For, A.Case, A.CondCommand))


def _brace_expands(word: A.Word) -> bool:
    """Whether brace expansion makes more than one word of `word`."""
    if not has_braces(word):
        return False
    try:
        return len(brace_expand(word, 2)) > 1
    except LimitExceeded:           # more than two
        return True
