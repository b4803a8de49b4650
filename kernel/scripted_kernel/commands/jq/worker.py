"""Worker processes that run jq programs.

libjq cannot be interrupted from Python, holds the GIL while it runs, and calls abort() when an
allocation fails. So a jq program runs in a child process with an address-space limit: the
calling thread waits on the child's pipe in short slices, checking the script's cancel flag
and deadline between them, and kills the child on a timeout, a cancel or an interrupt. A dead
or killed child is simply dropped; the next call takes another. Children are kept warm in a
pool of at most `MAX_CHILDREN`, so a call costs one pipe round trip; when all of them are busy a
caller waits for one (a call takes about a millisecond, starting a child a hundred times that,
so many concurrent scripts must not each start their own).

Sharing: a call still running after `SLOW_AFTER` is moved aside, out of the count of
`MAX_CHILDREN` (at most `MAX_ASIDE` at once), so long programs in some executions (a bomb that
runs to the deadline) leave the pool's workers to the short programs of others.

A child never outlives its host: on Linux it gets SIGKILL when the host dies (the parent-death
signal); everywhere it exits when its request pipe closes, and a request may use no more CPU
time than the caller had left, so a child whose host died mid-request stops by itself.
"""
from __future__ import annotations

import os
import pickle
import queue
import resource
import select
import signal
import struct
import subprocess
import sys
import threading
import time
from concurrent.futures import Future
from typing import Callable, Optional

from .program import JqFailure, run_program

MEMORY_LIMIT = 768 << 20          # bytes of address space for a child
MAX_CHILDREN = max(4, 2 * (os.cpu_count() or 1))     # children idle or busy, besides those aside
MAX_ASIDE = MAX_CHILDREN          # calls moved aside at once, beyond MAX_CHILDREN
POLL_SLICE = 0.05                 # seconds between checks of the cancel flag and deadline
SLOW_AFTER = 0.25                 # seconds a call runs before it is moved aside
CPU_GRACE = 1                     # seconds of CPU time a request gets past the caller's time left
PR_SET_PDEATHSIG = 1              # prctl(2) option, Linux
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


class CapturedOutput:
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


def _die_with(parent: int):
    """SIGKILL when the host dies (Linux), and an exit now if it already has."""
    if sys.platform.startswith("linux"):
        import ctypes
        try:
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        except (OSError, AttributeError):
            pass                  # no prctl: the pipe and the CPU limit below still end the child
    # another parent: the host died before the signal was asked for (or sys.executable is a
    # launcher that started this process, and the host lives on)
    if os.getppid() != parent:
        try:
            os.kill(parent, 0)
        except ProcessLookupError:
            os._exit(0)


class _CpuLimit:
    """Each request may use the caller's time left, plus a grace, in CPU time. One thread's CPU
    time never runs ahead of the clock, so the limit never stops a request the caller still waits
    for; it stops one the caller no longer can (its host died): SIGXCPU ends the process."""

    def __init__(self):
        self.soft, self.hard = resource.getrlimit(resource.RLIMIT_CPU)

    def allow(self, seconds: Optional[float]):
        soft = self.hard
        if seconds is not None:
            soft = int(time.process_time() + seconds) + CPU_GRACE
            if self.hard != resource.RLIM_INFINITY:
                soft = min(soft, self.hard)
        if soft != self.soft:             # whole seconds: a burst of requests sets it once
            resource.setrlimit(resource.RLIMIT_CPU, (soft, self.hard))
            self.soft = soft


def serve(parent: int):
    """The child of host process `parent`: run requests from stdin until it closes. A request is
    (seconds the caller has left or None, (filter, options, named, positional, env, stdin text,
    output limit)); the reply is ("ok", stdout, stderr, status) or ("error", message)."""
    _die_with(parent)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))         # abort() and SIGXCPU write no core
    try:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    except (ValueError, OSError):
        pass
    cpu_limit = _CpuLimit()
    inp, out = sys.stdin.fileno(), sys.stdout.fileno()
    while True:
        try:
            (size,) = _HEADER.unpack(_read_exact(inp, _HEADER.size))
            seconds, request = pickle.loads(_read_exact(inp, size))
        except EOFError:
            return
        text, opts, named, positional, env, raw, out_limit = request
        cpu_limit.allow(seconds)
        io = CapturedOutput(raw, out_limit)
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
            [sys.executable, "-c",
             f"from scripted_kernel.commands.jq.worker import serve; serve({os.getpid()})"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
            close_fds=True)
        assert self.proc.stdin is not None and self.proc.stdout is not None     # both are PIPEs
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
                if stream is not None:
                    stream.close()
            except Exception:
                pass

    def exchange(self, request, between_slices: Callable[[], None]):
        """Send one request and wait for its reply, calling `between_slices` (which raises to
        stop waiting) after each slice without one."""
        _write_frame(self.to_child, request)
        poller = select.poll()
        poller.register(self.from_child, select.POLLIN | select.POLLHUP | select.POLLERR)

        def wait():
            while not poller.poll(POLL_SLICE * 1000):
                between_slices()
        (size,) = _HEADER.unpack(_read_exact(self.from_child, _HEADER.size, wait))
        return pickle.loads(_read_exact(self.from_child, size, wait))


class _Spawner:
    """Starts children from one thread that lives as long as the process: Linux sends the
    parent-death signal when the thread that started a child ends, and callers' threads come
    and go (a runner thread, a thread of the caller's own)."""

    def __init__(self):
        self._requests: queue.SimpleQueue = queue.SimpleQueue()
        self._thread: Optional[threading.Thread] = None
        self._lock = threading.Lock()

    def start_child(self) -> _Child:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():     # first use, or a fork
                self._thread = threading.Thread(target=self._serve, name="scripted-jq-spawner",
                                                daemon=True)
                self._thread.start()
        started: Future = Future()
        self._requests.put(started)
        return started.result()

    def _serve(self):
        while True:
            started = self._requests.get()
            try:
                started.set_result(_Child())
            except BaseException as e:
                started.set_exception(e)


class Pool:
    """Warm children, checked out for one call at a time by any number of threads."""

    def __init__(self):
        self._idle: list[_Child] = []
        self._alive = 0                            # idle and checked out, not aside
        self._aside = 0                            # checked out by calls moved aside
        self._changed = threading.Condition()
        self._spawner = _Spawner()

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
            return self._spawner.start_child()
        except BaseException:
            with self._changed:
                self._alive -= 1
                self._changed.notify()
            raise

    def _move_aside(self) -> bool:
        """Take a slow call's child out of the count, so a waiting caller can start another."""
        with self._changed:
            if self._aside >= MAX_ASIDE:
                return False
            self._aside += 1
            self._alive -= 1
            self._changed.notify()
            return True

    def _release(self, child: _Child, aside: bool, healthy: bool):
        """A call is done with `child`: kept warm if it is healthy and the pool has room."""
        with self._changed:
            if aside:
                self._aside -= 1
            else:
                self._alive -= 1
            keep = healthy and self._alive < MAX_CHILDREN
            if keep:
                self._alive += 1
                self._idle.append(child)
            self._changed.notify()
        if not keep:
            child.kill()

    def run(self, request, deadline: Optional[float], cancelled: Callable[[], bool]):
        """The child's reply to `request`; raises WorkerTimeout or WorkerCrashed."""
        def should_stop():
            return cancelled() or (deadline is not None and time.monotonic() > deadline)
        if should_stop():
            raise WorkerTimeout()
        child = self._checkout(should_stop)
        started, aside = time.monotonic(), False

        def between_slices():
            nonlocal aside
            if should_stop():
                raise WorkerTimeout()
            if not aside and time.monotonic() - started > SLOW_AFTER:
                aside = self._move_aside()
        seconds = None if deadline is None else max(0.0, deadline - started)
        try:
            reply = child.exchange((seconds, request), between_slices)
        except BaseException as e:      # timeout, crash, interrupt: the child is discarded
            self._release(child, aside, healthy=False)
            if not isinstance(e, (BrokenPipeError, EOFError, pickle.UnpicklingError)):
                raise
            if should_stop():           # it died of its CPU limit, which ends it past the deadline
                raise WorkerTimeout() from None
            raise WorkerCrashed() from None
        self._release(child, aside, healthy=reply[0] != "error")
        if reply[0] == "error":
            raise WorkerCrashed()
        return reply


POOL = Pool()
