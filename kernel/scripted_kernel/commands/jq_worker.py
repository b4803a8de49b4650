"""Worker processes that run jq programs.

libjq cannot be interrupted from Python, holds the GIL while it runs, and calls abort() when an
allocation fails. So a jq program runs in a child process with an address-space limit: the
calling thread waits on the child's pipe in short slices, checking the script's cancel flag
and deadline between them, and kills the child on a timeout, a cancel or an interrupt. A dead
or killed child is simply dropped; the next call takes another. Children are kept warm in a
pool of at most `MAX_CHILDREN`, so a call costs one pipe round trip; when all of them are busy a
caller waits for one (a call takes about a millisecond, starting a child a hundred times that,
so many concurrent scripts must not each start their own).
"""
from __future__ import annotations

import os
import pickle
import select
import struct
import subprocess
import sys
import threading
import time
from typing import Callable, Optional

MEMORY_LIMIT = 768 << 20          # bytes of address space for a child
MAX_CHILDREN = max(4, 2 * (os.cpu_count() or 1))     # children alive at once, busy or idle
POLL_SLICE = 0.05                 # seconds between checks of the cancel flag and deadline
_HEADER = struct.Struct(">Q")


class WorkerTimeout(Exception):
    """The deadline passed or the script was cancelled; the child was killed."""


class WorkerCrashed(Exception):
    """The child died (an allocation failure inside libjq ends it with abort())."""


# ---------------------------------------------------------------- the child

def _read_exact(fd: int, size: int, wait: Optional[Callable[[], None]] = None) -> bytes:
    """`size` bytes from `fd`; `wait()` first blocks until some are ready (or raises)."""
    parts, got = [], 0
    while got < size:
        if wait is not None:
            wait()
        chunk = os.read(fd, min(size - got, 1 << 20))
        if not chunk:
            raise EOFError
        parts.append(chunk)
        got += len(chunk)
    return b"".join(parts)


def _write_frame(fd: int, obj) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    view = memoryview(_HEADER.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view):]


class _CapturedShell:
    """What jq's runner needs of a shell: its output streams and its standard input."""

    def __init__(self, raw: str, out_limit: int):
        self.raw = raw
        self.out_parts: list[str] = []
        self.err_parts: list[str] = []
        self.room = out_limit + 1

    def read_all(self) -> str:
        raw, self.raw = self.raw, ""
        return raw

    def out(self, text: str):
        # past the output limit the rest is of no use: the parent reports the limit
        self.room -= len(text)
        self.out_parts.append(text)
        if self.room < 0:
            raise _OutputFull()

    def err(self, text: str):
        self.err_parts.append(text)


class _OutputFull(Exception):
    pass


def serve():
    """The child: run requests from stdin until it closes. A request is
    (filter, options, named, positional, env, stdin text, output limit); the reply is
    ("ok", stdout, stderr, status) or ("error", message)."""
    import resource
    try:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    except (ValueError, OSError):
        pass
    from .jq import JqFailure, run_program
    inp, out = sys.stdin.fileno(), sys.stdout.fileno()
    while True:
        try:
            (size,) = _HEADER.unpack(_read_exact(inp, _HEADER.size))
            text, opts, named, positional, env, raw, out_limit = pickle.loads(_read_exact(inp, size))
        except EOFError:
            return
        io = _CapturedShell(raw, out_limit)
        try:
            status = run_program(io, opts, named, positional, text, env)
        except _OutputFull:
            status = 0
        except JqFailure as e:
            io.err(e.message + "\n")
            status = e.status
        except (MemoryError, RecursionError):
            _write_frame(out, ("error", "memory"))
            continue
        _write_frame(out, ("ok", "".join(io.out_parts), "".join(io.err_parts), status))


# ---------------------------------------------------------------- the parent

class _Child:
    __slots__ = ("proc", "to_child", "from_child")

    def __init__(self):
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
               "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        self.proc = subprocess.Popen(
            [sys.executable, "-c", "from scripted_kernel.commands.jq_worker import serve; serve()"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
            close_fds=True)
        self.to_child = self.proc.stdin.fileno()
        self.from_child = self.proc.stdout.fileno()

    def kill(self):
        try:
            self.proc.kill()
            self.proc.wait(timeout=5)
        except Exception:
            pass
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                stream.close()
            except Exception:
                pass

    def exchange(self, request, should_stop: Callable[[], bool]):
        """Send one request and wait for its reply, checking `should_stop` between slices."""
        _write_frame(self.to_child, request)
        poller = select.poll()
        poller.register(self.from_child, select.POLLIN | select.POLLHUP | select.POLLERR)

        def wait():
            while not poller.poll(POLL_SLICE * 1000):
                if should_stop():
                    raise WorkerTimeout()
        (size,) = _HEADER.unpack(_read_exact(self.from_child, _HEADER.size, wait))
        return pickle.loads(_read_exact(self.from_child, size, wait))


class Pool:
    """Warm children, checked out for one call at a time by any number of threads."""

    def __init__(self):
        self._idle: list[_Child] = []
        self._alive = 0                            # idle and checked out
        self._changed = threading.Condition()

    def _checkout(self, should_stop: Callable[[], bool]) -> _Child:
        with self._changed:
            while True:
                while self._idle:
                    child = self._idle.pop()
                    if child.proc.poll() is None:
                        return child
                    child.kill()
                    self._alive -= 1
                if self._alive < MAX_CHILDREN:
                    self._alive += 1
                    break
                if should_stop():
                    raise WorkerTimeout()
                self._changed.wait(POLL_SLICE)
        try:
            return _Child()
        except BaseException:
            self._forget()
            raise

    def _checkin(self, child: _Child):
        with self._changed:
            self._idle.append(child)
            self._changed.notify()

    def _discard(self, child: _Child):
        child.kill()
        self._forget()

    def _forget(self):
        with self._changed:
            self._alive -= 1
            self._changed.notify()

    def run(self, request, deadline: Optional[float], cancelled: Callable[[], bool]):
        """The child's reply to `request`; raises WorkerTimeout or WorkerCrashed."""
        def should_stop():
            return cancelled() or (deadline is not None and time.monotonic() > deadline)
        if should_stop():
            raise WorkerTimeout()
        child = self._checkout(should_stop)
        try:
            reply = child.exchange(request, should_stop)
        except BaseException as e:      # timeout, crash, interrupt: the child is discarded
            self._discard(child)
            if isinstance(e, (BrokenPipeError, EOFError, pickle.UnpicklingError)):     # it died
                raise WorkerCrashed() from None
            raise
        if reply[0] == "error":
            self._discard(child)
            raise WorkerCrashed()
        self._checkin(child)
        return reply


POOL = Pool()
