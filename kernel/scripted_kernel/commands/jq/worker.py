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

The protocol. A child is less trusted than its host: it runs libjq on the script's program and
data, and libjq has had heap overflows, so a child may be taken over. Nothing it sends is
unpickled or evaluated: a message is a run of frames (an 8-byte big-endian length, then that
many bytes), the first a JSON object, the texts after it raw UTF-8 (lone surrogates passed as
they are). The host checks each frame's length against a bound before it reads (or allocates)
anything of it, and a reply that breaks the protocol ends the child (BadReply).

    request   {"seconds": S or null (whole seconds), "filter": ..., "options": {...}, "named": {...},
               "positional": [...], "env": {...}, "output_limit": N}, then the input
    reply     {"status": N}, then stdout, then stderr, each at most N + 1 characters
              {"error": "memory"} alone: the program ran out of memory
"""
from __future__ import annotations

import json
import math
import os
import queue
import re
import resource
import select
import signal
import struct
import subprocess
import sys
import threading
import time
from concurrent.futures import Future
from typing import Callable, NamedTuple, Optional

from .program import JqFailure, run_program

MEMORY_LIMIT = 768 << 20          # bytes of address space for a child
MAX_CHILDREN = max(4, 2 * (os.cpu_count() or 1))     # children idle or busy, besides those aside
MAX_ASIDE = MAX_CHILDREN          # calls moved aside at once, beyond MAX_CHILDREN
POLL_SLICE = 0.05                 # seconds between checks of the cancel flag and deadline
SLOW_AFTER = 0.25                 # seconds a call runs before it is moved aside
CPU_GRACE = 1                     # seconds of CPU time a request gets past the caller's time left
PR_SET_PDEATHSIG = 1              # prctl(2) option, Linux
REPLY_HEADER_BOUND = 64           # bytes of a reply's JSON object ({"error":"memory"} takes 18)
READ_SIZE = 1 << 16               # bytes asked of a pipe at once (what a Linux pipe holds)
_LENGTH = struct.Struct(">Q")


class WorkerTimeout(Exception):
    """The deadline passed or the script was cancelled; the child was killed."""


class WorkerCrashed(Exception):
    """The child died (an allocation failure inside libjq ends it with abort())."""


class BadReply(Exception):
    """The child's reply broke the protocol (a frame over its bound, not one of the two JSON
    objects, text that is not UTF-8); the child was killed."""


class Reply(NamedTuple):
    stdout: str
    stderr: str
    status: int


# ---------------------------------------------------------------- frames, both ways

class _FrameReader:
    """Frames from a pipe. `wait()`, when given, blocks until bytes are ready (or raises)."""
    __slots__ = ("fd", "wait", "data", "at")

    def __init__(self, fd: int, wait: Optional[Callable[[], None]] = None):
        self.fd, self.wait = fd, wait
        self.data, self.at = b"", 0      # read from the pipe; data[at:] is not taken yet

    def frame(self, bound: int) -> bytes:
        """The next frame's bytes; BadReply, before reading any of them, if it has more than
        `bound`. EOFError when the pipe closes first."""
        if len(self.data) - self.at < _LENGTH.size:
            self._read(_LENGTH.size)
        (size,) = _LENGTH.unpack_from(self.data, self.at)
        if size > bound:
            raise BadReply(f"a frame of {size} bytes, more than {bound}")
        start = self.at + _LENGTH.size
        if len(self.data) - start < size:
            self._read(_LENGTH.size + size)
            start = _LENGTH.size
        self.at = start + size
        return self.data[start:self.at]

    def pending(self) -> bool:
        """Whether bytes were read that no frame took."""
        return len(self.data) > self.at

    def _read(self, size: int):
        """Reads until `size` bytes not taken yet are at hand (a whole message usually comes in
        one read)."""
        parts = [self.data[self.at:]]
        have = len(parts[0])
        while have < size:
            if self.wait is not None:
                self.wait()
            chunk = os.read(self.fd, READ_SIZE)
            if not chunk:
                raise EOFError
            parts.append(chunk)
            have += len(chunk)
        self.data, self.at = b"".join(parts), 0


# compact, acyclic (the values were parsed from JSON text)
_ENCODER = json.JSONEncoder(ensure_ascii=False, check_circular=False, separators=(",", ":"))
_REPLY_HEADER = re.compile(rb'\{"status":(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\}|\{"error":"memory"\}')


def _message(header: dict, *texts: str) -> bytes:
    """`header` as a JSON frame, then each text as a UTF-8 frame."""
    parts: list[bytes] = []
    for part in (_ENCODER.encode(header), *texts):
        data = part.encode("utf-8", "surrogatepass")
        parts += (_LENGTH.pack(len(data)), data)
    return b"".join(parts)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


# ---------------------------------------------------------------- the child

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

    def allow(self, seconds: Optional[int]):
        soft = self.hard
        if seconds is not None:
            soft = int(time.process_time() + seconds) + CPU_GRACE
            if self.hard != resource.RLIM_INFINITY:
                soft = min(soft, self.hard)
        if soft != self.soft:             # whole seconds: a burst of requests sets it once
            resource.setrlimit(resource.RLIMIT_CPU, (soft, self.hard))
            self.soft = soft


def serve(parent: int):
    """The child of host process `parent`: run requests from stdin until it closes (the protocol
    is in the module's docstring)."""
    _die_with(parent)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))         # abort() and SIGXCPU write no core
    try:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    except (ValueError, OSError):
        pass
    cpu_limit = _CpuLimit()
    requests, replies = _FrameReader(sys.stdin.fileno()), sys.stdout.fileno()
    while True:
        try:
            request = json.loads(requests.frame(sys.maxsize))     # the host is trusted
            raw = requests.frame(sys.maxsize).decode("utf-8", "surrogatepass")
        except EOFError:
            return
        cpu_limit.allow(request["seconds"])
        _write_all(replies, _run_request(request, raw))


def _run_request(request: dict, raw: str) -> bytes:
    """The reply to one request: its output and status, each text cut to the output limit plus
    one character (still over the limit, which the host reports)."""
    keep = request["output_limit"] + 1
    io = CapturedOutput(raw, request["output_limit"])
    try:
        status = run_program(io, request["options"], request["named"], request["positional"],
                             request["filter"], request["env"])
    except _OutputFull:
        status = 0
    except JqFailure as e:
        io.err(e.message + "\n")
        status = e.status
    except (MemoryError, RecursionError):
        return _message({"error": "memory"})
    return _message({"status": status}, "".join(io.out_parts)[:keep], "".join(io.err_parts)[:keep])


# ---------------------------------------------------------------- the parent

class Request(NamedTuple):
    """One jq command line, as the host hands it to a child."""
    filter: str
    options: dict
    named: dict
    positional: list
    env: dict
    input: str
    output_limit: int             # max_output_bytes: the child stops writing past it


class _Child:
    """A child process serving requests on its stdin and stdout."""
    __slots__ = ("proc", "to_child", "from_child")

    def __init__(self, proc: subprocess.Popen):
        assert proc.stdin is not None and proc.stdout is not None     # both are PIPEs
        self.proc = proc
        self.to_child = proc.stdin.fileno()
        self.from_child = proc.stdout.fileno()

    @classmethod
    def start(cls) -> "_Child":
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
               "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        return cls(subprocess.Popen(
            [sys.executable, "-c",
             f"from scripted_kernel.commands.jq.worker import serve; serve({os.getpid()})"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
            close_fds=True))

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

    def exchange(self, seconds: Optional[int], request: Request, between_slices: Callable[[], None]) -> Reply:
        """Send one request and wait for its reply, calling `between_slices` (which raises to
        stop waiting) after each slice without one. Raises WorkerCrashed for a reply that says
        the program ran out of memory, BadReply for one that breaks the protocol."""
        header = {"seconds": seconds, "filter": request.filter, "options": request.options,
                  "named": request.named, "positional": request.positional, "env": request.env,
                  "output_limit": request.output_limit}
        _write_all(self.to_child, _message(header, request.input))
        poller = select.poll()
        poller.register(self.from_child, select.POLLIN | select.POLLHUP | select.POLLERR)

        def wait():
            while not poller.poll(POLL_SLICE * 1000):
                between_slices()
        return _read_reply(_FrameReader(self.from_child, wait), request.output_limit)


def _read_reply(reader: _FrameReader, output_limit: int) -> Reply:
    """A reply, every frame bounded: the JSON object by REPLY_HEADER_BOUND, each text by the
    output limit plus one character, 4 UTF-8 bytes each at most."""
    status = _reply_status(reader.frame(REPLY_HEADER_BOUND))
    if status is None:
        raise WorkerCrashed()
    text_bound = 4 * (output_limit + 1)
    stdout, stderr = reader.frame(text_bound), reader.frame(text_bound)
    if reader.pending():
        raise BadReply("bytes after the reply")
    return Reply(_reply_text(stdout), _reply_text(stderr), status)


def _reply_status(frame: bytes) -> Optional[int]:
    """N of {"status": N} (0 to 255), None for {"error": "memory"}, as the child writes them
    (compact JSON, matched whole rather than parsed); BadReply for anything else."""
    m = _REPLY_HEADER.fullmatch(frame)
    if m is None:
        raise BadReply('a reply that is not {"status": N} or {"error": "memory"}')
    return None if m.group(1) is None else int(m.group(1))


def _reply_text(frame: bytes) -> str:
    try:
        return frame.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        raise BadReply("a text that is not UTF-8") from None


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
                started.set_result(_Child.start())
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

    def run(self, request: Request, deadline: Optional[float], cancelled: Callable[[], bool]) -> Reply:
        """The child's reply to `request`; raises WorkerTimeout, WorkerCrashed or BadReply."""
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
        # whole seconds, as the CPU limit counts them (an integer is also cheaper to send)
        seconds = None if deadline is None else math.ceil(max(0.0, deadline - started))
        try:
            reply = child.exchange(seconds, request, between_slices)
        except (BrokenPipeError, EOFError):
            self._release(child, aside, healthy=False)
            if should_stop():           # it died of its CPU limit, which ends it past the deadline
                raise WorkerTimeout() from None
            raise WorkerCrashed() from None
        except BaseException:           # timeout, out of memory, a bad reply, an interrupt
            self._release(child, aside, healthy=False)
            raise
        self._release(child, aside, healthy=True)
        return reply


POOL = Pool()
