"""Execution limits and the per-execution budget that enforces them.

Who uses the thread-local budget, and why. A command reaches its budget through its context
(`ctx.budget`: check_clock, check_stop, check_length, string_limit, note, time_left,
timed_out, now), and hands it to the helpers that loop, so the checks go wherever its work
goes, another thread included. The module-level accessors below (check_clock, wall_clock ...)
read the budget that the interpreter made this thread's (`activate`), for code that is handed
no budget:
- pattern matching (patterns.py, extglob.py) and globbing (shell/glob.py): called from the
  shell and from commands alike, deep inside a match, which is handed no budget;
- the lexer (shell/lexer.py), the parser's clock (shell/api.py) and the interpreter's first
  check of a call (shell/interpreter.py), before any command runs;
- the shell's readers of the script's clock ($SECONDS, $EPOCHSECONDS: shell/runtime.py;
  printf's %(...)T: shell/builtins/printf.py) and the tool layer's journal and MCP server;
- the filesystem (fs/memory.py): path resolution and file times, below the shell;
- in commands, only bc's numbers (commands/bc/numbers.py and commands/bc/radix.py): a Num's
  operators, printing and base conversions are called from expressions, which carry no
  context; the bc interpreter that evaluates them runs on the script's own thread.
"""
from __future__ import annotations

import gc
import math
import os
import threading
import time
from dataclasses import dataclass
from typing import Optional

from .errors import Cancelled, LimitExceeded


class _Setting:
    """A limit's value that is also its setter: `ExecutionLimits().max_commands(500)` sets the
    limit and returns the limits, for the seed's chained style; reading it gives the number."""
    _owner: ExecutionLimits
    _name: str

    def __call__(self, value):
        setattr(self._owner, self._name, value)
        return self._owner


class _IntSetting(_Setting, int):
    pass


class _FloatSetting(_Setting, float):
    pass


_SETTING_TYPES = {int: _IntSetting, float: _FloatSetting}


@dataclass(slots=True)
class ExecutionLimits:
    """Bounds on one execution. Every bound stops the script with an error naming it; the
    output produced so far is kept. Set them as keywords, as attributes, or chained:
    `ExecutionLimits().max_commands(500).timeout_seconds(5)`."""
    max_commands: int = 1_000_000
    max_loop_iterations: int = 1_000_000
    max_function_depth: int = 200
    max_output_bytes: int = 10 * 1024 * 1024
    max_string_length: int = 16 * 1024 * 1024
    max_array_length: int = 1_000_000
    max_brace_expansion: int = 100_000
    # Paths one pathname expansion holds after any one of its components (`*/../*/../*`
    # multiplies them at each step; `**` lists a whole tree).
    max_glob_matches: int = 100_000
    timeout_seconds: float = 30.0
    max_parser_depth: int = 100           # at most 200 (lexer.MAX_DEPTH_CAP): the C stack's bound
    max_script_bytes: int = 1024 * 1024
    max_subshell_depth: int = 64
    # Growth of the process's resident memory while the script runs (variables, arrays, pipe
    # buffers, every command's working data). Checked every 64 commands, inside long loops
    # and after every 4 MiB of large values built.
    max_memory_bytes: int = 512 * 1024 * 1024
    # A MemoryFs (BashTool, scratch files, the notebook's files): all file contents together,
    # the number of files and directories, the components of one path, the bytes of one file.
    max_fs_bytes: int = 64 * 1024 * 1024
    max_file_count: int = 10_000
    max_path_depth: int = 128
    max_file_bytes: int = 16 * 1024 * 1024
    # A shell kept between calls (BashTool, sessions): what its variables, arrays, functions,
    # positional parameters, traps and directory stack keep, checked at the end of each call
    # (see shell/session_state.py for how each is counted).
    max_shell_state_bytes: int = 16 * 1024 * 1024
    # Calls of registered tools (and a BashTool's custom builtins) in one execution.
    max_tool_calls: int = 100_000

    def __setattr__(self, name, value):
        setting = _SETTING_TYPES.get(type(value))
        if setting is not None:
            value = setting(value)
            value._owner, value._name = self, name
        object.__setattr__(self, name, value)


class CancelToken:
    """Set `cancelled` from any thread (an interrupt); the script stops at its next command."""
    __slots__ = ("cancelled", "reason")

    def __init__(self):
        self.cancelled = False
        self.reason = "cancelled"

    def cancel(self, reason: str = "cancelled"):
        self.reason = reason
        self.cancelled = True


def resident_bytes() -> int:
    """The process's resident memory (0 where /proc is missing: the memory limit is then off)."""
    global _statm
    if _statm is None:
        try:
            _statm = os.open("/proc/self/statm", os.O_RDONLY)
        except OSError:
            _statm = -1
    if _statm < 0:
        return 0
    try:
        return int(os.pread(_statm, 128, 0).split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return 0


_statm: int | None = None
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
_NOTE_EVERY = 4 << 20
# How long, and over how many new objects, a call keeps the cyclic collector paused (see
# Budget.pause_collector)
COLLECTOR_PAUSE_SECONDS = 0.1
COLLECTOR_PAUSE_OBJECTS = 100_000
MAX_FIELD_WIDTH = 10_000_000   # characters of one printf field's width or precision


class Budget:
    """Counters shared by a script and all of its subshells."""
    __slots__ = ("limits", "commands", "max_commands", "deadline", "cancel", "started", "memory_start",
                 "unchecked", "stop", "clock_offset", "collector_paused", "collector_resumes_at")

    def __init__(self, limits: ExecutionLimits, cancel: CancelToken):
        self.limits = limits
        self.commands = 0
        self.max_commands = limits.max_commands     # (read by check(), between every two commands)
        self.started = time.monotonic()
        self.deadline = self.started + limits.timeout_seconds if limits.timeout_seconds else None
        self.cancel = cancel
        # what the check between commands reads: the cancel token, or EXPIRED once the
        # watchdog has seen the deadline pass
        self.stop = cancel
        self.memory_start = resident_bytes()
        self.unchecked = 0            # bytes of large values built since the last memory check
        # seconds added to the host's wall clock for this execution: 0, or the step back to the
        # time a resumed run saw when it first ran (tools/journal.py replays it)
        self.clock_offset = 0.0
        self.collector_paused = False
        self.collector_resumes_at = math.inf

    def watch(self):
        """The call starts: the watchdog marks this budget when its deadline passes, and the
        cyclic collector is paused (pause_collector), until unwatch()."""
        self.pause_collector()
        WATCHDOG.watch(self)

    def unwatch(self):
        WATCHDOG.unwatch(self)
        self.resume_collector()

    def pause_collector(self):
        """Pause Python's cyclic collector for the start of the call, if it is on.

        A call allocates thousands of container objects that live until it ends (the syntax
        trees of the functions it defines, their compiled closures, the shell) and then die by
        reference counting; the engine makes no cycles on its common paths. With the collector
        on, its young collections walk all of them, once or more per call, for nothing: a
        tenth of a call that defines 100 functions. Paused, they are never walked.

        The pause is the whole process's, so it is kept short: it ends with the call, after
        COLLECTOR_PAUSE_SECONDS (the watchdog ends it, whatever the call is doing: a tool's
        callback or another thread of the host allocating meanwhile), or once the young objects
        pass COLLECTOR_PAUSE_OBJECTS (checked with memory, every 64 commands). A call that
        finds the collector off (the host's choice, or a call running beside it that paused
        it) leaves it as it is. A host that wants no pause sets COLLECTOR_PAUSE_SECONDS to 0."""
        if COLLECTOR_PAUSE_SECONDS > 0 and gc.isenabled():
            gc.disable()
            self.collector_resumes_at = time.monotonic() + COLLECTOR_PAUSE_SECONDS
            self.collector_paused = True

    def resume_collector(self):
        """End this call's pause of the collector (nothing if it made none, or ended it)."""
        if self.collector_paused:
            self.collector_paused = False
            gc.enable()

    def check_memory(self):
        self.unchecked = 0
        if self.collector_paused and gc.get_count()[0] > COLLECTOR_PAUSE_OBJECTS:
            self.resume_collector()
        if self.memory_start and resident_bytes() - self.memory_start > self.limits.max_memory_bytes:
            raise LimitExceeded("max_memory_bytes",
                                f"memory limit exceeded: the script grew the process by more than "
                                f"{self.limits.max_memory_bytes} bytes (max_memory_bytes)")

    def note(self, size: int):
        """A large value of `size` characters was built: check memory every few MiB of them."""
        self.unchecked += size
        if self.unchecked > _NOTE_EVERY:
            self.check_memory()

    def check(self):
        """Called between commands: the command count, the cancel flag or the watchdog's mark,
        the clock (the watchdog's mark stops a script at its next command whatever share of
        the CPU it gets; the clock read every 64 commands is for a process without it).
        The compiled commands make its common case themselves (compile.py, count_command)."""
        count = self.commands = self.commands + 1
        if count > self.max_commands:
            raise LimitExceeded("max_commands",
                                f"command limit exceeded: more than {self.max_commands} "
                                f"commands (max_commands)")
        if self.stop.cancelled:
            self.check_stop()
        if not count & 63:
            if self.deadline is not None and time.monotonic() > self.deadline:
                raise timeout_error(self.limits)
            self.check_memory()

    def check_stop(self):
        """The cancel flag and the clock: while waiting on something outside the script."""
        if self.cancel.cancelled:
            raise Cancelled(f"execution {self.cancel.reason}")
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise timeout_error(self.limits)
        self.stop = self.cancel       # a mark for a deadline since moved on (`timeout` ended)

    def check_clock(self):
        """The cancel flag, the clock and memory: for loops inside one command."""
        self.check_memory()
        self.check_stop()

    def string_limit(self) -> int:
        """The most characters one string may hold (max_string_length)."""
        return self.limits.max_string_length

    def check_length(self, size: int, what: str):
        """Refuse to build a string of `size` characters past max_string_length (before building it)."""
        _refuse_length(size, what, self.limits.max_string_length)

    def time_left(self) -> Optional[float]:
        """Seconds until the deadline (at least a millisecond), or None: for a call that
        cannot be interrupted but can be given a time limit."""
        if self.deadline is None:
            return None
        return max(0.001, self.deadline - time.monotonic())

    def timed_out(self) -> Cancelled:
        """The error for a deadline that passed inside a call that was given time_left()."""
        return timeout_error(self.limits)

    def now(self) -> float:
        """Seconds since the epoch as the running script sees them (`date`, $EPOCHSECONDS,
        file times): the host's clock, shifted by clock_offset."""
        return time.time() + self.clock_offset


class _Expired:
    """The watchdog's mark on a budget whose deadline has passed."""
    cancelled = True


EXPIRED = _Expired()


class Watchdog:
    """One thread for all the executions of the process, which marks a running budget as soon
    as its deadline passes; the check between commands reads the mark as it reads the cancel
    flag. Checks that read the clock only every so many commands fire late on a loaded
    machine, where those commands take several times as long (a 3 s timeout ended at 13 s
    with four busy processes on two cores).

    It sleeps until the earliest deadline of the budgets it watches (`next_wake`); a budget
    whose deadline comes sooner, watched or brought forward by `timeout`, wakes it. Once none
    is left it waits LINGER seconds before sleeping for good: calls come in runs, and waking
    the thread on every execute() would cost a switch of threads (15 us) each time."""
    LINGER = 2.0

    def __init__(self):
        self.budgets: set = set()
        self.wake = threading.Event()
        self.next_wake = math.inf     # inf while it scans or sleeps for good: any budget wakes it
        self.thread = None
        self.failed = False           # no thread could be started: the clock reads remain

    def watch(self, budget: Budget):
        self.budgets.add(budget)
        if self.thread is None and not self.failed:
            self._start()
        if self.failed:               # nothing would end its pause of the collector in time
            budget.resume_collector()
        self.deadline_moved(budget)

    def unwatch(self, budget: Budget):
        self.budgets.discard(budget)

    def deadline_moved(self, budget: Budget):
        """The budget's deadline, or the end of its pause of the collector, was set or brought
        forward: wake the thread if it sleeps past it."""
        deadline = budget.deadline
        if (deadline is not None and deadline < self.next_wake) or (
                budget.collector_paused and budget.collector_resumes_at < self.next_wake):
            self.wake.set()

    def _start(self):
        thread = threading.Thread(target=self._run, name="scripted-watchdog", daemon=True)
        try:
            thread.start()
        except RuntimeError:          # "can't start new thread"
            self.failed = True
            return
        self.thread = thread

    def _run(self):
        lingered = False
        while True:
            self.next_wake = math.inf          # (before the scan: a budget added during it wakes us)
            wait = self._mark_expired()
            if wait is None:                   # no deadline to wait for
                wait = None if lingered else self.LINGER
                lingered = True
            else:
                lingered = False
            if wait is not None:
                self.next_wake = time.monotonic() + wait
            self.wake.wait(wait)
            self.wake.clear()                  # (whatever set it, the next scan sees)

    def _mark_expired(self) -> Optional[float]:
        """Marks the budgets past their deadline, and ends their pauses of the collector that
        are over; the seconds until the next of either (None: none)."""
        now = time.monotonic()
        wait = None
        for budget in list(self.budgets):
            if budget.collector_paused:
                if now >= budget.collector_resumes_at:
                    budget.resume_collector()
                elif wait is None or budget.collector_resumes_at - now < wait:
                    wait = budget.collector_resumes_at - now
            deadline = budget.deadline
            if deadline is None or budget.stop is EXPIRED:
                continue
            if now >= deadline:
                budget.stop = EXPIRED
            elif wait is None or deadline - now < wait:
                wait = deadline - now
        return wait

    def _forked(self):
        """In a child process made by fork: the thread is the parent's."""
        Watchdog.__init__(self)


WATCHDOG = Watchdog()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=WATCHDOG._forked)


def timeout_error(limits: ExecutionLimits) -> Cancelled:
    """What ends an execution that ran past `timeout_seconds` (status 124, as timeout(1))."""
    return Cancelled(f"execution timed out after {limits.timeout_seconds:g} s (timeout_seconds)",
                     status=124)


# The budget of the execution running on this thread (see the module's docstring for who reads it).
_active = threading.local()


def active_budget() -> "Budget | None":
    return getattr(_active, "budget", None)


def activate(budget: "Budget | None") -> "Budget | None":
    """Make `budget` this thread's; returns the one it replaces (restore it afterwards)."""
    previous = getattr(_active, "budget", None)
    _active.budget = budget
    return previous


def collector_enabled() -> bool:
    """Whether the host runs with the cyclic collector: it is on, or paused only by the call
    running on this thread (Budget.pause_collector), which will turn it back on."""
    if gc.isenabled():
        return True
    budget = active_budget()
    return budget is not None and budget.collector_paused


def wall_clock() -> float:
    """Budget.now() of this thread's budget (the host's clock when there is none)."""
    budget = active_budget()
    return budget.now() if budget is not None else time.time()


def time_left() -> "float | None":
    """Budget.time_left() of this thread's budget (None when there is none)."""
    budget = active_budget()
    return budget.time_left() if budget is not None else None


def check_clock():
    """Stop with the deadline, cancel or memory error if one has come (call in long loops)."""
    budget = active_budget()
    if budget is not None:
        budget.check_clock()


def check_stop():
    """Stop with the deadline or cancel error if one has come: check_clock without the memory
    check (its read of /proc is too dear for the parser's frequent checks)."""
    budget = active_budget()
    if budget is not None:
        budget.check_stop()


def timed_out() -> Cancelled:
    """Budget.timed_out() of this thread's budget."""
    budget = active_budget()
    return budget.timed_out() if budget is not None else timeout_error(ExecutionLimits(timeout_seconds=0))


def note_allocation(size: int):
    """Tell this thread's budget that a large value of `size` characters was built."""
    budget = active_budget()
    if budget is not None:
        budget.note(size)


# What a kept shell's state counts (shell/session_state.py says why): each variable, array
# element, positional parameter, trap or directory its text plus ENTRY_BYTES; a function
# FUNCTION_WEIGHT times its text.
ENTRY_BYTES = 128
FUNCTION_WEIGHT = 128

_DEFAULTS = ExecutionLimits()      # (a slots dataclass's class attribute is a descriptor, not the default)


def string_limit() -> int:
    """Budget.string_limit() of this thread's budget (the default limit when there is none)."""
    budget = active_budget()
    return budget.string_limit() if budget is not None else _DEFAULTS.max_string_length


def check_length(size: int, what: str):
    """Budget.check_length() against this thread's budget (the default limit when there is none)."""
    _refuse_length(size, what, string_limit())


def _refuse_length(size: int, what: str, limit: int):
    """The max_string_length error for a string of `size` characters, if it is over `limit`."""
    if size > limit:
        raise LimitExceeded("max_string_length",
                            f"{what}: string longer than {limit} characters (max_string_length)")
