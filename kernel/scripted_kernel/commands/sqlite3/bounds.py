"""What keeps SQLite inside a run's bounds where its per-connection limits do not reach:

- the heap: sorts, temporary indexes and in-memory "temporary files" are not pages of any
  database, so no max_page_count bounds them (100k rows of zeroblob(10000000) peaked the host at
  2.85 GB). SQLite's hard heap limit does, but it belongs to the process: `HEAP` sets it while
  sqlite3 commands run, to the largest max_memory_bytes among them, and puts it back as it was
  when the last ends. A statement past it fails with SQLITE_NOMEM (Python's MemoryError);
- the clock within one statement: the progress handler is called between virtual-machine
  instructions, never inside one function call, and a statement whose rows each make a long
  call (a printf of 16 MB) runs thousands of them between two calls of the handler.
  `INTERRUPTER` interrupts a connection's statement once its run's deadline passes or the run
  is cancelled, and the statement stops at its next instruction;
- printf's %c: `printf('%.*c', N, 'x')` repeats the character N times in a loop that goes on
  after the result is already too long (then NULL), 10 ns a time: N = 2**31 is 20 s in one
  call, which nothing can interrupt. `PrintfGuard` answers NULL at once when the repetitions
  alone pass the length limit, and hands every other call to SQLite's own printf.
"""
from __future__ import annotations

import re
import sqlite3
import sys
import threading
import time
from typing import Optional

from ...base.limits import Budget
from . import native


class _HeapLimit:
    """The process's SQLite hard heap limit while sqlite3 commands run (see the module)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.active: list[int] = []       # the max_memory_bytes of each running command
        self.before = 0                   # the limit before the first of them began

    def enter(self, limit: int):
        with self.lock:
            if not self.active:
                self.before = native.hard_heap_limit(-1)
            self.active.append(limit)
            native.hard_heap_limit(max(self.active))

    def leave(self, limit: int):
        with self.lock:
            self.active.remove(limit)
            native.hard_heap_limit(max(self.active) if self.active else self.before)


HEAP = _HeapLimit()


class _Interrupter:
    """One thread for the process that interrupts the statements of connections whose run's
    deadline has passed or whose run was cancelled. It polls every POLL seconds while any
    connection is watched, and ends LINGER seconds after the last (sqlite3 commands come in
    runs: a thread for each would cost more than they)."""
    POLL = 0.05
    LINGER = 2.0

    def __init__(self):
        self.lock = threading.Lock()
        self.watched: dict[int, tuple[sqlite3.Connection, Budget]] = {}
        self.thread: Optional[threading.Thread] = None

    def watch(self, conn: sqlite3.Connection, budget: Budget) -> None:
        with self.lock:
            self.watched[id(conn)] = (conn, budget)
            if self.thread is None:
                thread = threading.Thread(target=self._run, name="sqlite3-interrupter", daemon=True)
                try:
                    thread.start()
                except RuntimeError:      # no thread to be had: the progress handler remains
                    return
                self.thread = thread

    def unwatch(self, conn: sqlite3.Connection) -> None:
        with self.lock:
            self.watched.pop(id(conn), None)

    def _run(self):
        idle_since = None
        while True:
            with self.lock:
                entries = list(self.watched.values())
                if entries:
                    idle_since = None
                elif idle_since is None:
                    idle_since = time.monotonic()
                elif time.monotonic() - idle_since > self.LINGER:
                    self.thread = None
                    return
            now = time.monotonic()
            for conn, budget in entries:
                if budget.cancel.cancelled or (budget.deadline is not None and now >= budget.deadline):
                    try:
                        conn.interrupt()
                    except sqlite3.ProgrammingError:     # closed meanwhile
                        pass
            time.sleep(self.POLL)


INTERRUPTER = _Interrupter()


# a conversion of SQLite's printf: flags, width, precision, length modifier, type
_CONVERSION = re.compile(r"%([-+ 0#,!]*)(\*|[0-9]*)(?:\.(\*|[0-9]*))?(l{0,2})(.?)", re.S)
_LEADING_INTEGER = re.compile(r"\s*[-+]?[0-9]+")
_INT64 = 1 << 63


class PrintfGuard:
    """printf() and format() for a connection: a call whose %c repetitions alone exceed the
    length limit is NULL at once (SQLite's answer, after its loop); every other call is SQLite's
    own printf, run on a private connection with the same length limit."""

    def __init__(self, length_limit: int):
        self.length_limit = length_limit
        self.helper: Optional[sqlite3.Connection] = None
        self.queries: dict[int, str] = {}

    def install(self, conn: sqlite3.Connection):
        for name in ("printf", "format"):
            conn.create_function(name, -1, self.printf, deterministic=True)

    def printf(self, *args):
        if not args or args[0] is None:
            return None
        if "c" in str(args[0]) and self._repeated(args) > self.length_limit:
            return None
        return self._sqlite_printf(args)

    def _sqlite_printf(self, args):
        if self.helper is None:
            self.helper = sqlite3.connect(":memory:", check_same_thread=False)
            if sys.version_info >= (3, 11):         # (the command exists from 3.11 on)
                self.helper.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, self.length_limit)
        query = self.queries.get(len(args))
        if query is None:
            query = self.queries[len(args)] = "SELECT printf(" + ", ".join("?" * len(args)) + ")"
        return self.helper.execute(query, args).fetchone()[0]

    def _repeated(self, args) -> int:
        """The bytes the %c conversions of the format repeat, as SQLite's printf counts
        them (a precision from `*` is the argument as a 32-bit int, made positive)."""
        fmt, values = str(args[0]), args[1:]
        used = total = 0
        for match in _CONVERSION.finditer(fmt):
            _, width, precision, _, kind = match.groups()
            if kind in ("%", ""):
                continue
            if width == "*":
                used += 1
            count = 0
            if precision == "*":
                count = _int32(_int64_of(values[used]) if used < len(values) else 0)
                count = -count if count < 0 else count
                used += 1
            elif precision:
                count = _wrapped_digits(precision)
            if kind == "c":
                char = values[used] if used < len(values) else None
                text = "" if char is None else str(char)
                total += max(count, 1) * max(len(text[:1].encode("utf-8", "surrogatepass")), 1)
            used += 1
        return total


def _int64_of(value) -> int:
    """sqlite3_value_int64 of a bound value: integers as they are, reals truncated, text and
    blobs by their leading integer (0 without one), NULL as 0; clamped to 64 bits."""
    if isinstance(value, (bytes, str)):
        text = value.decode("latin-1") if isinstance(value, bytes) else value
        match = _LEADING_INTEGER.match(text)
        digits = match.group().strip() if match else "0"
        number = int(digits) if len(digits) < 40 else (-_INT64 if digits[0] == "-" else _INT64)
    elif isinstance(value, float):
        number = int(value) if value == value and abs(value) != float("inf") else 0
    else:
        number = value or 0
    return max(-_INT64, min(_INT64 - 1, number))


def _int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


def _wrapped_digits(digits: str) -> int:
    """A literal precision as printf reads it: digit by digit into 32 bits, the top bit
    dropped (a thousand digits at a time: int() refuses very long ones)."""
    value = 0
    for at in range(0, len(digits), 1000):
        piece = digits[at:at + 1000]
        value = (value * 10 ** len(piece) + int(piece)) & 0xFFFFFFFF
    return value & 0x7FFFFFFF
