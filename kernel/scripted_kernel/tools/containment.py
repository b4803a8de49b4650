"""Keeping callbacks from harming the caller: where scripts and callbacks run, and how long the
caller waits for them (what of their failures reaches a script: redaction.py).

A script runs on a runner thread while the calling thread waits for it in short slices. Python
cannot stop a thread, so when a callback hangs past the deadline (or the run is cancelled) the
caller stops waiting and returns the output so far; the runner thread, a daemon, is left to
finish the callback and then ends. Nothing a hung callback holds (a thread, an event loop, a
persistent shell) is shared with any later call, and the threads so abandoned are counted: past
MAX_ABANDONED_THREADS, work that needs a thread is refused at once with a named limit.
"""
from __future__ import annotations

import contextvars
import re
import threading
from typing import Callable, Optional

from ..base.errors import Cancelled, LimitExceeded
from .results import NotJson

# ---------------------------------------------------------------- threads

# 2x what the deepest script needs on a runner thread: jq's in-process path at its 10,000-deep
# input limit takes 3.9 MB (3.75 MiB crashes); the shell's own limits (200 function calls,
# 64 subshells, parser depth 200) take under 1 MB. It is also a Linux thread's default, so a
# script runs alike whether it names a tool (a runner thread) or not (the caller's thread).
RUNNER_STACK = 8 << 20
MAX_IDLE_RUNNERS = 8
# Threads still running a hung callback after their caller stopped waiting. Python cannot stop
# them; past this many, calls that need a thread fail at once with `limit:max_abandoned_threads`
# rather than take every thread (and address space) the host has.
MAX_ABANDONED_THREADS = 64
_stack_lock = threading.Lock()


def start_thread(target: Callable, name: str):
    """Start a daemon thread with the runner stack. LimitExceeded('threads') when the host
    cannot start one (out of threads or address space)."""
    thread = threading.Thread(target=target, name=name, daemon=True)
    with _stack_lock:
        previous = threading.stack_size(RUNNER_STACK)
        try:
            thread.start()
        except RuntimeError:
            raise LimitExceeded("threads", "cannot start a thread: the host is out of threads or "
                                           "memory (threads)") from None
        finally:
            threading.stack_size(previous)


class _Abandoned:
    """How many threads are left running by callers that stopped waiting for them."""

    def __init__(self):
        self.count = 0
        self._lock = threading.Lock()

    def change(self, by: int):
        with self._lock:
            self.count += by

    def check(self):
        """Refuse new work that needs a thread once too many are left running."""
        if self.count >= MAX_ABANDONED_THREADS:
            raise LimitExceeded("max_abandoned_threads",
                                f"{self.count} tool calls are still running after their callers "
                                f"stopped waiting; no new ones until they return (max_abandoned_threads)")


ABANDONED = _Abandoned()


def left_running(names: list) -> str:
    """What a caller that stopped waiting says of the callbacks it left running (one line)."""
    quoted = ", ".join(f"'{name}'" for name in names)
    if len(names) == 1:
        said = f"tool {quoted} did not return and was left running: its callback goes on"
    else:
        said = f"tools {quoted} did not return and were left running: their callbacks go on"
    return (f"{said} in the background, counted against the abandoned-threads limit "
            f"({ABANDONED.count} of {MAX_ABANDONED_THREADS}, max_abandoned_threads) until "
            f"{'it returns' if len(names) == 1 else 'they return'}")


class Errand:
    """Work handed to another thread, which its waiter may stop waiting for (`leave`): the
    thread then counts as abandoned until it finishes."""
    __slots__ = ("done", "_lock", "_left")

    def __init__(self):
        self.done = threading.Event()
        self._lock = threading.Lock()
        self._left = False

    def finish(self):
        """Called by the worker when the work ends, however it ends."""
        with self._lock:
            self.done.set()
            if self._left:
                ABANDONED.change(-1)

    def leave(self):
        """The waiter stops waiting: if the work still runs, it is abandoned."""
        with self._lock:
            if not self.done.is_set() and not self._left:
                self._left = True
                ABANDONED.change(+1)

    @property
    def left(self) -> bool:
        """Whether the waiter left while the work was running (it may still be)."""
        return self._left


class _RunnerSlot:
    """A runner thread's mailbox: the job to run next, and the event that wakes it."""
    __slots__ = ("job", "ready")

    def __init__(self):
        self.job: Optional[Callable] = None
        self.ready = threading.Event()


class Runners:
    """Threads that run scripts: an idle one takes the next job, else a new one starts."""

    def __init__(self):
        self._idle: list[_RunnerSlot] = []     # parked runner threads
        self._lock = threading.Lock()

    def submit(self, job: Callable):
        """Run job() on a runner thread. LimitExceeded when too many threads are abandoned or
        none can be started."""
        ABANDONED.check()
        with self._lock:
            runner = self._idle.pop() if self._idle else None
        if runner is None:
            runner = _RunnerSlot()
            start_thread(lambda: self._serve(runner), "scripted-runner")
        runner.job = job
        runner.ready.set()

    def _serve(self, runner: _RunnerSlot):
        while True:
            runner.ready.wait()
            runner.ready.clear()
            job, runner.job = runner.job, None
            try:
                assert job is not None        # submit() sets the job before it sets ready
                job()
            except BaseException:      # a job reports its own outcome; the thread must not die
                pass
            with self._lock:
                if len(self._idle) >= MAX_IDLE_RUNNERS:
                    return
                self._idle.append(runner)


RUNNERS = Runners()


# ---------------------------------------------------------------- running callbacks

WAIT_SLICE = 0.02                # seconds between checks of the cancel flag and the deadline


def wait_for(done: threading.Event, budget):
    """Block until `done`, the budget's deadline or its cancel flag."""
    while not done.wait(WAIT_SLICE):
        budget.check_stop()


def call_on_own_thread(name: str, fn: Callable, budget):
    """Run fn() on a thread of its own (under `timeout`): the script can go on without it."""
    ABANDONED.check()
    errand = Errand()
    box: dict = {}
    context = contextvars.copy_context()     # what the caller's thread knows (nested calls)

    def work():
        try:
            box["value"] = context.run(fn)
        except BaseException as e:
            box["error"] = e
        finally:
            errand.finish()
    start_thread(work, f"scripted-tool-{name}")
    try:
        wait_for(errand.done, budget)
    except BaseException:
        errand.leave()
        raise
    if "error" in box:
        raise box["error"]
    return box["value"]


_thread_loop = threading.local()


def run_coroutine(make_coroutine: Callable, caller_loop, budget, in_flight: Optional[set] = None):
    """An async callback's result: on the caller's loop when there is one (execute_async),
    else on this thread's own loop, within the deadline and cancel flag. `in_flight` holds the
    caller-loop future meanwhile, so a cancelled caller can cancel the callback at once."""
    import asyncio       # here, not at the top: a tool without async callbacks never pays its import
    if caller_loop is not None:
        future = asyncio.run_coroutine_threadsafe(make_coroutine(), caller_loop)
        done = threading.Event()
        future.add_done_callback(lambda _: done.set())
        if in_flight is not None:
            in_flight.add(future)
        try:
            wait_for(done, budget)
        except Cancelled:
            future.cancel()
            raise
        finally:
            if in_flight is not None:
                in_flight.discard(future)
        return future.result()
    loop = getattr(_thread_loop, "loop", None)
    if loop is None or loop.is_closed():
        loop = _thread_loop.loop = asyncio.new_event_loop()
    return loop.run_until_complete(_within_budget(make_coroutine(), budget))


async def _within_budget(coroutine, budget):
    import asyncio
    task = asyncio.ensure_future(coroutine)
    while True:
        done, _ = await asyncio.wait({task}, timeout=WAIT_SLICE)
        if done:
            return task.result()
        try:
            budget.check_stop()
        except Cancelled:
            task.cancel()
            raise


# ---------------------------------------------------------------- results and failures


def cannot_print(error: BaseException) -> str:
    """Why a callback's return value could not be printed (results.result_text raised)."""
    if isinstance(error, NotJson):
        return str(error)
    return f"cannot print the result: {failure_message(error)}"


def failure_message(error: BaseException) -> str:
    """What a callback's exception says, never failing itself (a `__str__` may raise)."""
    if isinstance(error, SystemExit):
        return f"exited with status {error.code}"
    try:
        if len(error.args) == 1 and isinstance(error.args[0], str):
            message = error.args[0]
        else:
            message = str(error)
    except BaseException:
        message = ""
    return message or type(error).__name__


_SURROGATE = re.compile("[\ud800-\udfff]")


def valid_unicode(text: str) -> str:
    """`text` with each lone surrogate (an undecodable byte kept by `surrogateescape`, or one a
    callback returned) as U+FFFD, for consumers that need valid UTF-8 (JSON, MCP)."""
    return _SURROGATE.sub("\ufffd", text)
