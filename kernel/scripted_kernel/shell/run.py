"""What one execute() owns, in one object: the limits and the budget that enforces them (clock,
counters, cancel flag), the two output sinks, the filesystem, the network policy, and a slot
for the host's own state of the run (the tool layer's). Made once per execute() and passed
down: every shell of the script (subshells, script files) points at it, and each command sees
it through its context. Code that has no context at hand (pattern matching deep inside
expansion) reaches the budget through one documented ambient accessor, limits.active_budget().
"""
from __future__ import annotations

from typing import Any, Callable, Optional

from ..base.errors import LimitExceeded
from ..base.limits import Budget, CancelToken, ExecutionLimits


class OutputSink:
    """The top-level stdout or stderr: keeps the text, streams it, enforces the output limit."""
    __slots__ = ("chunks", "size", "limit", "truncated", "stream", "on_output", "shared")

    def __init__(self, stream: str, limit: int, on_output: Optional[Callable], shared: list):
        self.chunks: list[str] = []
        self.size = 0
        self.limit = limit
        self.truncated = False
        self.stream = stream
        self.on_output = on_output
        self.shared = shared          # [total bytes of stdout and stderr]

    def write(self, text: str):
        if not text:
            return
        n = len(text)
        if n > 256 or not text.isascii():
            n = len(text.encode("utf-8", "surrogateescape"))
        total = self.shared[0] + n
        if total > self.limit:
            room = max(0, self.limit - self.shared[0])
            cut = text.encode("utf-8", "surrogateescape")[:room].decode("utf-8", "ignore")
            if cut:
                self._emit(cut)
            self.shared[0] = self.limit
            self.truncated = True
            raise LimitExceeded("max_output_bytes",
                                f"output limit exceeded: more than {self.limit} bytes "
                                f"(max_output_bytes); output truncated")
        self.shared[0] = total
        self._emit(text)

    def force(self, text: str):
        """A final diagnostic: kept even when the output limit has been reached."""
        self._emit(text)

    def _emit(self, text: str):
        self.chunks.append(text)
        if self.on_output is not None:
            self.on_output(self.stream, text)

    def text(self) -> str:
        return "".join(self.chunks)


class Run:
    """One execution's state. `host`: whatever the caller of execute() keeps for the run (the
    tool layer's waiting and tracing state), reached by commands as `ctx.execution.host`."""
    __slots__ = ("limits", "budget", "out", "err", "fs", "network", "observer", "host")

    def __init__(self, limits: ExecutionLimits, cancel: CancelToken, on_output: Optional[Callable] = None,
                 fs=None, network: Any = (), host: Any = None, observer: Any = None):
        self.limits = limits
        self.budget = Budget(limits, cancel)
        shared = [0]                  # bytes of stdout and stderr together, for max_output_bytes
        self.out = OutputSink("stdout", limits.max_output_bytes, on_output, shared)
        self.err = OutputSink("stderr", limits.max_output_bytes, on_output, shared)
        self.fs = fs
        self.network = network        # curl's network policy for this run (empty: no network)
        self.observer = observer      # the host's tracing hook for commands (None: tracing off)
        self.host = host


class ShellSlot:
    """Where a persistent shell waits between calls (BashTool, ScriptedTool.session(), the
    notebook's session): empty until a call makes the shell, emptied to start afresh."""
    __slots__ = ("shell",)

    def __init__(self, shell=None):
        self.shell = shell

    def __bool__(self) -> bool:
        return self.shell is not None

    def clear(self):
        self.shell = None
