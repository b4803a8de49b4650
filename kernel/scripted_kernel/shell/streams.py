"""The text a command reads and writes inside one execution: an input stream consumed from the
front, and the buffers of pipeline stages and substitutions (bounded by the budget)."""
from __future__ import annotations

from typing import Optional

from ..base.errors import LimitExceeded


class InputStream:
    """A command's standard input: text consumed from the front (by `read`, `cat`, ...)."""
    __slots__ = ("data", "pos")

    def __init__(self, data: str = ""):
        self.data = data
        self.pos = 0

    def read_all(self) -> str:
        s = self.data[self.pos:] if self.pos else self.data
        self.data, self.pos = "", 0       # the caller holds the only copy (large inputs)
        return s

    def read_until(self, delim: str) -> Optional[str]:
        """Up to and including `delim` (or the rest); None at end of input."""
        if self.pos >= len(self.data):
            return None
        end = self.data.find(delim, self.pos) if delim else -1
        end = len(self.data) if end < 0 else end + len(delim)
        s = self.data[self.pos:end]
        self.pos = end
        return s

    def read_chars(self, n: int) -> str:
        s = self.data[self.pos:self.pos + n]
        self.pos += len(s)
        return s

    def at_eof(self) -> bool:
        return self.pos >= len(self.data)


EMPTY_INPUT = InputStream("")


class PipeBuffer:
    """What one pipeline stage writes for the next (stages run one after another). Its size
    counts against the memory budget, and it is refused once past BOUND: `yes | head -1` ends
    with the memory limit, not an exhausted host."""
    __slots__ = ("chunks", "size", "budget", "noted")
    BOUND, WHAT, UNIT = "max_memory_bytes", "pipe buffer", "bytes"

    def __init__(self, budget):
        self.chunks: list[str] = []
        self.size = 0
        self.noted = 0
        self.budget = budget

    def write(self, text: str):
        self.chunks.append(text)
        self.size += len(text)
        if self.size - self.noted > 1 << 20:
            self.budget.note(self.size - self.noted)
            self.noted = self.size
            limit = getattr(self.budget.limits, self.BOUND)
            if self.size > limit:
                raise LimitExceeded(self.BOUND, f"{self.WHAT} exceeded {limit} {self.UNIT} ({self.BOUND})")

    def text(self) -> str:
        return "".join(self.chunks)


class SubstitutionBuffer(PipeBuffer):
    """What a command substitution's commands write, refused once past max_string_length, which
    its value may not pass anyway (kept whole until the end, 50 writes of 16 MB took the host
    to 1.6 GB before the check)."""
    __slots__ = ()
    BOUND, WHAT, UNIT = "max_string_length", "command substitution output", "characters"


def discard(_text: str):
    pass
