"""Execution limits and the per-execution budget that enforces them."""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from .errors import Cancelled, LimitExceeded


@dataclass(slots=True)
class ExecutionLimits:
    """Bounds on one execution. Every bound stops the script with an error naming it; the
    output produced so far is kept."""
    max_commands: int = 1_000_000
    max_loop_iterations: int = 1_000_000
    max_function_depth: int = 200
    max_output_bytes: int = 10 * 1024 * 1024
    max_string_length: int = 16 * 1024 * 1024
    max_array_length: int = 1_000_000
    max_brace_expansion: int = 100_000
    timeout_seconds: float = 30.0
    max_parser_depth: int = 100
    max_script_bytes: int = 1024 * 1024
    max_subshell_depth: int = 64


class CancelToken:
    """Set `cancelled` from any thread (an interrupt); the script stops at its next command."""
    __slots__ = ("cancelled", "reason")

    def __init__(self):
        self.cancelled = False
        self.reason = "cancelled"

    def cancel(self, reason: str = "cancelled"):
        self.reason = reason
        self.cancelled = True


class Budget:
    """Counters shared by a script and all of its subshells."""
    __slots__ = ("limits", "commands", "deadline", "cancel", "started")

    def __init__(self, limits: ExecutionLimits, cancel: CancelToken):
        self.limits = limits
        self.commands = 0
        self.started = time.monotonic()
        self.deadline = self.started + limits.timeout_seconds if limits.timeout_seconds else None
        self.cancel = cancel

    def check(self):
        """Called between commands: the command count, the cancel flag, the clock."""
        self.commands += 1
        if self.commands > self.limits.max_commands:
            raise LimitExceeded("max_commands",
                                f"command limit exceeded: more than {self.limits.max_commands} "
                                f"commands (max_commands)")
        if self.cancel.cancelled:
            raise Cancelled(f"execution {self.cancel.reason}")
        if self.deadline is not None and not self.commands & 63 and time.monotonic() > self.deadline:
            raise Cancelled(f"execution timed out after {self.limits.timeout_seconds:g} s "
                            f"(timeout_seconds)", status=124)

    def check_clock(self):
        if self.cancel.cancelled:
            raise Cancelled(f"execution {self.cancel.reason}")
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise Cancelled(f"execution timed out after {self.limits.timeout_seconds:g} s "
                            f"(timeout_seconds)", status=124)


# The budget of the execution running on this thread, for code that has no shell at hand
# (pattern matching, text commands' inner loops).
_active = threading.local()


def active_budget() -> "Budget | None":
    return getattr(_active, "budget", None)


def activate(budget: "Budget | None") -> "Budget | None":
    """Make `budget` this thread's; returns the one it replaces (restore it afterwards)."""
    previous = getattr(_active, "budget", None)
    _active.budget = budget
    return previous


def time_left() -> "float | None":
    """Seconds until this thread's deadline (at least a millisecond), or None."""
    budget = active_budget()
    if budget is None or budget.deadline is None:
        return None
    return max(0.001, budget.deadline - time.monotonic())


def check_clock():
    """Stop with the deadline or cancel error if either has come (cheap; call in long loops)."""
    budget = active_budget()
    if budget is not None:
        budget.check_clock()


def timed_out() -> Cancelled:
    """The error for a deadline that passed inside a call that was given the time left."""
    budget = active_budget()
    seconds = budget.limits.timeout_seconds if budget is not None else 0
    return Cancelled(f"execution timed out after {seconds:g} s (timeout_seconds)", status=124)
