"""One program in one worker session: the session's limits from the run's (the time left, the
memory bound, the depth of calls, a host round trip per command), its output into the command's
stdout and stderr, what stops it, and its exit status.

What stops a program: the run's deadline or cancel (a watcher thread sees them within
WATCH_EVERY and kills the worker), the output limit or a fault met in a callback (`stop`, which
also kills the worker), Monty's own limits (its time limit shows as an uncaught TimeoutError
past the deadline; its memory limit as an uncaught MemoryError), or the worker's death. A killed
worker's session is gone with it; the pool replaces the worker for the next program."""
from __future__ import annotations

import os
import posixpath
import signal
import threading
import time
from typing import Any, Optional

import pydantic_monty
from pydantic_monty import MontyCrashedError, MontyError, MontyRuntimeError, MontySyntaxError

from . import pool, report, source
from .bridge import Bridge
from .program import Program

WATCH_EVERY = 0.05                    # seconds between the watcher's looks at the deadline and cancel


class BudgetSpent(Exception):
    """The watcher's reason for a stop: the budget's own check says which (deadline or cancel)."""


def run(ctx, name: str, program: Program) -> int:
    try:
        return Execution(ctx, name, program).run()
    except pool.WorkerUnavailable:
        ctx.err(f"{name}: not available: the Python worker could not start\n")
        return 127


class Execution:
    def __init__(self, ctx, name: str, program: Program):
        self.ctx = ctx
        self.name = name
        self.program = program
        self.text = source.normalized(program.source)
        self.stopped: Optional[BaseException] = None     # why the program was stopped, if it was
        self.worker: Optional[int] = None                # the process id of its worker
        self.exit_request: Optional[tuple] = None        # (status, message) of its last sys.exit()
        self._stopping = threading.Lock()

    def run(self) -> int:
        error = self._run_in_worker()
        if self.stopped is not None:
            if not isinstance(self.stopped, BudgetSpent):
                raise self.stopped
            self.ctx.budget.check_stop()
        return 0 if error is None else self._failure(error)

    def _run_in_worker(self) -> Optional[MontyError]:
        bridge = Bridge(self.ctx, self.stop)
        try:
            with pool.session(self._checkout_options, self.ctx.budget.check_stop) as session:
                self.worker = session.worker_pid
                with _Watcher(self):
                    session.feed_run(source.PRELUDE, inputs={"_scripted_argv": list(self.program.argv)},
                                     os=bridge, print_callback=self.print, cwd=self.ctx.cwd)
                    session.feed_run(source.monty_source(self.text), os=bridge, print_callback=self.print)
        except MontyError as e:
            return e
        return None

    def _checkout_options(self) -> dict:
        limits, deadline = self.ctx.limits, self.ctx.budget.deadline
        left = None if deadline is None else max(0.001, deadline - time.monotonic())
        host = pydantic_monty.ExternalModule({"exit_message": self.exit_message})
        options: dict[str, Any] = {
            "limits": {"max_feed_duration_secs": left, "max_memory": limits.max_memory_bytes,
                       "max_recursion_depth": limits.max_function_depth,
                       "max_suspensions": limits.max_commands},
            "os_policy": {"sleep": "call_host"},          # sleeps end at the deadline (Bridge.sleep)
            "external_modules": {"_scripted_host": host},
        }
        if not self.program.filename.startswith("<"):
            options["script_name"] = posixpath.basename(self.program.filename)
        return options

    # ------------------------------------------------------------ what the worker calls

    def print(self, stream: str, text: str) -> None:
        if self.stopped is None:
            try:
                (self.ctx.out if stream == "stdout" else self.ctx.err)(text)
            except BaseException as e:        # the output limit
                self.stop(e)

    def exit_message(self, status=None) -> str:
        """sys.exit(status): keep the status for the host; the SystemExit's message."""
        message = "" if status is None else str(status)
        self.exit_request = (status, message)
        return message

    def stop(self, error: BaseException) -> None:
        """End the program now, for `error` (raised by the command once the worker is gone)."""
        with self._stopping:
            if self.stopped is not None:
                return
            self.stopped = error
        if self.worker is not None:
            try:
                os.kill(self.worker, signal.SIGKILL)
            except ProcessLookupError:
                pass

    # ------------------------------------------------------------ how it ended

    def _failure(self, error: MontyError) -> int:
        lines = self.text.split("\n")
        if isinstance(error, MontySyntaxError):
            self.ctx.err(report.syntax_error_text(error, self.program.filename, lines))
            return 1
        if isinstance(error, MontyRuntimeError):
            return self._uncaught(error, lines)
        if isinstance(error, MontyCrashedError):
            problem = "the Python worker stopped unexpectedly; the program did not finish"
        else:
            problem = (str(error).splitlines() or [type(error).__name__])[0]
        self.ctx.err(f"{self.name}: {problem}\n")
        return 1

    def _uncaught(self, error: MontyRuntimeError, lines: list) -> int:
        exception = error.exception()
        if isinstance(exception, SystemExit):
            return self._exit_status(str(exception))
        if isinstance(exception, MemoryError):
            self.ctx.err(f"{self.name}: memory limit exceeded: the program needed more than "
                         f"{self.ctx.limits.max_memory_bytes} bytes (max_memory_bytes)\n")
            return 1
        if isinstance(exception, TimeoutError):
            self.ctx.budget.check_stop()      # Monty's clock ran out with the run's time
        self.ctx.err(report.traceback_text(error, self.program.filename, lines))
        return 1

    def _exit_status(self, message: str) -> int:
        """CPython's status for an uncaught SystemExit: sys.exit(n) n, sys.exit() 0, and for
        anything else the value printed on stderr and 1."""
        if self.exit_request is not None and self.exit_request[1] == message:
            status = self.exit_request[0]
            if status is None:
                return 0
            if isinstance(status, int):
                return status & 0xFF
        elif not message:
            return 0
        self.ctx.err(message + "\n")
        return 1


class _Watcher:
    """While the worker runs: stop it once the run is cancelled or past its deadline."""

    def __init__(self, execution: Execution):
        self.execution = execution
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._watch, name="python3-watcher", daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc_info):
        self.done.set()
        self.thread.join()

    def _watch(self):
        budget = self.execution.ctx.budget
        while not self.done.wait(WATCH_EVERY):
            if budget.cancel.cancelled or (budget.deadline is not None and time.monotonic() >= budget.deadline):
                self.execution.stop(BudgetSpent())
                return
