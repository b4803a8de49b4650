"""Running a script: parse (cached), compile, execute in a fresh shell, collect the output.

Every way a script can end (normally, `exit`, `set -e`, a fatal expansion error, a syntax
error, a limit, a timeout, a cancel) produces a `ShellResult` with the output so far; no
Python exception or traceback leaves `execute`.
"""
from __future__ import annotations

import contextlib
import gc
import os
import sys
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Callable, Optional

from .builtins import load as load_builtins
from .compile import COMPILER, CompiledScript, Compiler, ParserTooDeep, StreamedScript, run_units
from ..base.errors import (Cancelled, ErrexitSignal, ExitSignal, LimitExceeded,
                     ShellSyntaxError, ReturnSignal)
from .escapes import text_from_host
from .jobs import end_of_call, finish_jobs
from .lexer import Source
from .nodes import CommandList
from ..base.limits import CancelToken, ExecutionLimits, activate, collector_enabled
from .parser import Parser
from .run import OutputSink, Run, ShellSlot
from .runtime import InputStream, Shell
from .session_state import Checkpoint, keep_within_budget
from .state import Var

# Deep but bounded recursion (nested functions, subshells, a YAML or JSON document a thousand
# levels deep) needs more than Python's default. Checked again at every execute(): a host (or
# a library it runs, such as hypothesis) may lower it after the import.
RECURSION_LIMIT = 20000
if sys.getrecursionlimit() < RECURSION_LIMIT:
    sys.setrecursionlimit(RECURSION_LIMIT)

DEBUG = os.environ.get("SCRIPTED_KERNEL_DEBUG") == "1"


@dataclass(slots=True)
class ShellResult:
    """A script's end: its output, exit status, and the limit that stopped it, if one did."""
    stdout: str
    stderr: str
    exit_code: int
    error: Optional[str] = None          # None, or what stopped the script: a limit, timeout, cancel
    stdout_truncated: bool = False


@contextlib.contextmanager
def _gc_paused():
    """Parsing allocates thousands of small acyclic nodes; the cyclic collector would walk the
    whole heap several times meanwhile for nothing (about an eighth of parse time)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class FrozenCode:
    """Keeps the compiled scripts the cache holds out of the cyclic collector's walks.

    A 300-line script compiles to some 20,000 closures, cells and lists. With the cache full,
    every collection of the older generations walked all of them, on each new script: about
    40 % of its time. `gc.freeze()` moves every object alive into a generation the collector
    never walks; they are still freed by reference counting when the cache drops them, since
    compiled code holds no reference cycles.

    Freezing takes the whole process's objects, not only ours, so:
    - a collection of all that is not frozen runs just before compiling, so that no garbage is
      frozen with the code (cheap once freezing has begun; see before_compile);
    - when the rest of the heap (allocated blocks, less those of the frozen scripts the cache
      holds) has grown by a quarter since the frozen set was last rebuilt, which is CPython's
      own rule for full collections, everything is unfrozen, collected whole and frozen again:
      cycles that became garbage after they were frozen are reclaimed at the pace a full
      collection would reclaim them;
    - nothing happens while the host has the collector disabled (the pause of a call is not
      the host's: see collector_enabled)."""

    GROWTH = 1.25

    def __init__(self):
        self.code_blocks = 0    # blocks held by the frozen scripts in the cache
        self.rebuilt_at = 0     # blocks of the rest of the heap after the last whole collection

    def before_compile(self) -> Optional[int]:
        """Collects, and returns the heap's size in blocks; None if the collector is off.

        With no object in the oldest generation (the usual case once freezing has begun), a
        collection of the younger two reclaims all a full one would: a full one also empties
        the interpreter's free lists, some 40,000 tuples after a script has run, which cost
        more to free than the collection itself (0.2 ms of a 12 ms script) and again to make
        while compiling."""
        if not collector_enabled():
            return None
        gc.collect(2 if gc.get_objects(2) else 1)
        return sys.getallocatedblocks()

    def freeze(self, blocks_before: int, kept: bool) -> int:
        """Freezes what is alive; returns the blocks the script compiled since took, if the
        cache keeps it (else 0: it goes after its run, by reference count, and the rest of the
        heap is the heap as it was before compiling; no second count of the heap is needed)."""
        footprint = 0
        if kept:
            footprint = max(0, sys.getallocatedblocks() - blocks_before)
            self.code_blocks += footprint
        if blocks_before + footprint - self.code_blocks > self.rebuilt_at * self.GROWTH:
            running = 0 if kept else max(0, sys.getallocatedblocks() - blocks_before)
            gc.unfreeze()
            gc.collect()
            self.rebuilt_at = sys.getallocatedblocks() - self.code_blocks - running
        gc.freeze()
        return footprint

    def dropped(self, footprint: int):
        self.code_blocks = max(0, self.code_blocks - footprint)


class ScriptCache:
    """Compiled scripts by text (LRU): a script run again, or an `eval` in a loop, compiles once.

    A script is kept from the second time its text is seen: most scripts (each one an LLM
    sends, each notebook cell edited) run once, and keeping those only made every later script
    slower (25 kept 300-line scripts are some 50 MB of closures, which pushed the compiler's
    and the run's working memory out of the processor's caches: a new script took 19 ms
    instead of 12.5). The texts seen once are remembered by hash only, the last `max_seen`.

    Bounded by the bytes of script text it holds, since a compiled script takes some hundred
    times its text: scripts above `max_script` bytes are compiled for each use and not kept.
    Each entry counts as at least `min_entry` bytes, which bounds the number of small ones.
    Scripts of `freeze_from` bytes or more are frozen (`FrozenCode`) when compiled, kept or not:
    the collector then does not walk them while they run either. At the top level of a call
    (`stream`), a script the cache will not keep is not compiled whole: it is read a command
    at a time (StreamedScript)."""

    def __init__(self, max_total: int = 256 * 1024, max_script: int = 32 * 1024,
                 min_entry: int = 1024, freeze_from: float = 2048, max_seen: int = 4096):
        self.max_total = max_total
        self.max_script = max_script
        self.min_entry = min_entry
        self.freeze_from = freeze_from
        self.max_seen = max_seen
        self.total = 0
        self.entries: OrderedDict = OrderedDict()   # key → (compiled script, footprint)
        self.seen: OrderedDict = OrderedDict()      # hash of a key seen once → None
        self.frozen = FrozenCode()
        self._lock = threading.Lock()

    def get(self, text: str, max_depth: int, stream: bool = False):
        """The compiled script; one with a syntax error keeps the commands before it.
        `stream`: a script the cache will not keep comes as a StreamedScript (each command
        parsed and compiled as the one before it has run), for the top level of a call."""
        key = (text, max_depth)
        with self._lock:
            entry = self.entries.get(key)
            if entry is not None:
                self.entries.move_to_end(key)
                return entry[0]
            keep = len(text) <= self.max_script and self._seen_before(hash(key))
        if stream and not keep:
            return StreamedScript(text, max_depth)
        blocks_before = self.frozen.before_compile() if len(text) >= self.freeze_from else None
        # frozen before the collector is back on: else its first young collection walks the
        # thousands of objects compiling made
        with _gc_paused():
            fn = self._compile(text, max_depth)
            with self._lock:
                keep = keep and key not in self.entries      # not put there by another thread
                footprint = 0 if blocks_before is None else self.frozen.freeze(blocks_before, keep)
                if keep:
                    self._insert(key, fn, footprint)
        return fn

    def _seen_before(self, key_hash: int) -> bool:
        """Whether the key was seen since it last entered the cache; remembers it if not."""
        if key_hash in self.seen:
            del self.seen[key_hash]
            return True
        self.seen[key_hash] = None
        if len(self.seen) > self.max_seen:
            self.seen.popitem(last=False)
        return False

    def _insert(self, key, fn: CompiledScript, footprint: int):
        self.entries[key] = (fn, footprint)
        self.total += max(len(key[0]), self.min_entry)
        while self.total > self.max_total:
            (old_text, _), (_, old_footprint) = self.entries.popitem(last=False)
            self.total -= max(len(old_text), self.min_entry)
            self.frozen.dropped(old_footprint)

    @staticmethod
    def _compile(text: str, max_depth: int) -> CompiledScript:
        source = Source(text)
        with _gc_paused():
            try:
                tree = Parser(text, max_depth=max_depth, source=source).parse_program()
                error = None
            except ShellSyntaxError as e:
                assert isinstance(e.partial, CommandList)     # parse_program keeps it
                tree, error = e.partial, e
            fn = Compiler(source).compile_program(tree)
        fn.syntax_error = error
        return fn


TOO_DEEP = "syntax error: nesting too deep"


SCRIPT_CACHE = ScriptCache()
BUILTINS = load_builtins()


def execute(script: str, *, commands: Optional[dict] = None, env: Optional[dict] = None,
            limits: Optional[ExecutionLimits] = None, stdin: str = "",
            cancel: Optional[CancelToken] = None, on_output: Optional[Callable] = None,
            builtins: Optional[dict] = None, shell_setup: Optional[Callable] = None,
            session: Optional[ShellSlot] = None, fs=None, network: tuple = (),
            run: Optional[Run] = None) -> ShellResult:
    """Run `script` in a fresh shell. `commands` maps names to `fn(ctx, argv) -> status`.

    `run`: the execution's state (shell/run.py), when the caller keeps it (to read the output
    of a run it stopped waiting for, or to reach its own state from commands); otherwise it is
    made from `limits`, `cancel`, `on_output`, `fs` and `network`.
    `session`: the ShellSlot holding the shell of earlier calls (or an empty one): variables
    and functions then carry over between calls, within max_shell_state_bytes."""
    if run is None:
        run = Run(limits or ExecutionLimits(), cancel or CancelToken(), on_output, fs, network)
    if sys.getrecursionlimit() < RECURSION_LIMIT:
        sys.setrecursionlimit(RECURSION_LIMIT)
    limits = run.limits
    script, stdin = text_from_host(script), text_from_host(stdin)
    if env:
        env = {text_from_host(k): text_from_host(v) for k, v in env.items()}
    if len(script) > limits.max_script_bytes or (
            not script.isascii() and len(script.encode("utf-8", "surrogateescape")) > limits.max_script_bytes):
        return _stopped_before_running(run, f"script too large: more than {limits.max_script_bytes} bytes "
                                            f"(max_script_bytes)", 2, "limit:max_script_bytes")
    run.budget.watch()            # from here: parsing is under the deadline too
    try:
        return _execute(script, run, commands, env, stdin, builtins, shell_setup, session)
    finally:
        run.budget.unwatch()


def _stopped_before_running(run: Run, message: str, status: int, error: str) -> ShellResult:
    run.err.chunks.append(f"bash: {message}\n")
    return ShellResult("", run.err.text(), status, error)


def _execute(script, run: Run, commands, env, stdin, builtins, shell_setup, session):
    limits, out, err = run.limits, run.out, run.err
    outer_budget = activate(run.budget)
    try:
        fn = SCRIPT_CACHE.get(script, limits.max_parser_depth, stream=True)
    except RecursionError:
        return _stopped_before_running(run, TOO_DEEP, 2, "limit:max_parser_depth")
    except Cancelled as e:
        return _stopped_before_running(run, e.message, e.status, _stop_kind(e))
    except Exception as e:        # an engine defect: reported as run_shell reports one
        if DEBUG:
            raise
        return _stopped_before_running(run, f"internal error ({type(e).__name__})", 1, "internal")
    finally:
        activate(outer_budget)

    checkpoint = None
    if session:
        sh = session.shell
        sh.attach(run, InputStream(stdin), commands if commands is not None else {})
        checkpoint = Checkpoint(sh)
    else:
        sh = Shell(run, commands if commands is not None else {}, builtins or BUILTINS, env,
                   stdin=InputStream(stdin),
                   compile_script=lambda text: SCRIPT_CACHE.get(text, limits.max_parser_depth),
                   compiler=COMPILER)
        if session is not None:
            session.shell = sh
    if not session:
        sh.globals["BASH_EXECUTION_STRING"] = Var(script)
    if shell_setup is not None:
        shell_setup(sh)
    status, error = run_shell(sh, fn, report=err.force)
    if session is not None:
        status, error = _keep_session_state(session, checkpoint, status, error, err)
    return ShellResult(out.text(), err.text(), status, error, out.truncated)


def _keep_session_state(session: ShellSlot, checkpoint, status: int, error, err: OutputSink):
    """A persistent shell keeps its state only within max_shell_state_bytes (the call fails
    otherwise, its changes to the state undone; a shell made by this call is dropped)."""
    sh = session.shell
    over = keep_within_budget(sh, checkpoint, sh.limits.max_shell_state_bytes)
    if over is None:
        return status, error
    if checkpoint is None:
        session.clear()
    err.force(f"bash: {over.message}\n")
    return (1, f"limit:{over.limit}") if error is None else (status, error)


def _stop_kind(e: Cancelled) -> str:
    return "timeout" if e.status == 124 else "cancelled"


def run_shell(sh: Shell, fn: CompiledScript | StreamedScript,
              report: Optional[Callable] = None) -> tuple[int, Optional[str]]:
    """Run a compiled script at the top level of `sh`: (exit status, what stopped it).
    `report` writes the message of what stopped it, past any output limit."""
    error = None

    def _report(sh, message):
        (report or sh.err)(f"bash: {message}\n")
    status = 0
    outer_budget = activate(sh.budget)
    try:
        try:
            status = run_units(sh, fn)
        except (ExitSignal, ErrexitSignal) as e:
            status = e.status
        except ReturnSignal as e:
            status = e.status
        status = sh.run_exit_trap(status)
        if sh.jobs is not None or sh.procsub_frame:
            finish_jobs(sh)         # the jobs still to run, after the EXIT trap (shell/jobs.py)
    except ParserTooDeep:          # (a script read command by command: after the ones before)
        status, error = 2, "limit:max_parser_depth"
        _report(sh, TOO_DEEP)
    except LimitExceeded as e:
        status, error = 1, f"limit:{e.limit}"
        _report(sh, e.message)
    except Cancelled as e:
        status, error = e.status, _stop_kind(e)
        _report(sh, e.message)
    except RecursionError:
        status, error = 1, "limit:recursion"
        _report(sh, "maximum nesting depth exceeded")
    except MemoryError:           # the host ran out before the budget noticed
        status, error = 1, "limit:max_memory_bytes"
        _report(sh, "memory limit exceeded: out of memory (max_memory_bytes)")
    except Exception as e:        # an engine defect: report it without a traceback or host paths
        if DEBUG:
            raise
        status, error = 1, "internal"
        _report(sh, f"internal error ({type(e).__name__})")
    finally:
        end_of_call(sh)
        activate(outer_budget)
    return status, error
