"""Keeping callbacks from harming the caller: where scripts and callbacks run, how long the
caller waits for them, and what of their failures reaches a script.

A script runs on a runner thread while the calling thread waits for it in short slices. Python
cannot stop a thread, so when a callback hangs past the deadline (or the run is cancelled) the
caller stops waiting and returns the output so far; the runner thread, a daemon, is left to
finish the callback and then ends. Nothing a hung callback holds (a thread, an event loop) is
shared with any later call.
"""
from __future__ import annotations

import asyncio
import ipaddress
import json
import re
import threading
from typing import Callable, Optional

from ..shell.errors import Cancelled

# ---------------------------------------------------------------- runner threads

RUNNER_STACK = 64 << 20          # deep (bounded) shell recursion needs more than the default
MAX_IDLE_RUNNERS = 8
_stack_lock = threading.Lock()


class _Runner(threading.Thread):
    def __init__(self, pool: "Runners"):
        super().__init__(name="scripted-runner", daemon=True)
        self.pool = pool
        self.job: Optional[Callable] = None
        self.ready = threading.Event()

    def run(self):
        while True:
            self.ready.wait()
            self.ready.clear()
            job, self.job = self.job, None
            try:
                job()
            except BaseException:      # a job reports its own outcome; the thread must not die
                pass
            if not self.pool.park(self):
                return


class Runners:
    """Threads that run scripts: an idle one takes the next job, else a new one starts."""

    def __init__(self):
        self._idle: list[_Runner] = []
        self._lock = threading.Lock()

    def submit(self, job: Callable):
        with self._lock:
            runner = self._idle.pop() if self._idle else None
        if runner is None:
            runner = _Runner(self)
            with _stack_lock:
                previous = threading.stack_size(RUNNER_STACK)
                try:
                    runner.start()
                finally:
                    threading.stack_size(previous)
        runner.job = job
        runner.ready.set()

    def park(self, runner: _Runner) -> bool:
        with self._lock:
            if len(self._idle) < MAX_IDLE_RUNNERS:
                self._idle.append(runner)
                return True
        return False


RUNNERS = Runners()


# ---------------------------------------------------------------- running callbacks

WAIT_SLICE = 0.02                # seconds between checks of the cancel flag and the deadline


def wait_for(done: threading.Event, budget):
    """Block until `done`, the budget's deadline or its cancel flag."""
    while not done.wait(WAIT_SLICE):
        budget.check_stop()


def call_on_own_thread(name: str, fn: Callable, budget):
    """Run fn() on a thread of its own (under `timeout`): the script can go on without it."""
    done = threading.Event()
    box: dict = {}

    def work():
        try:
            box["value"] = fn()
        except BaseException as e:
            box["error"] = e
        done.set()
    threading.Thread(target=work, name=f"scripted-tool-{name}", daemon=True).start()
    wait_for(done, budget)
    if "error" in box:
        raise box["error"]
    return box["value"]


_thread_loop = threading.local()


def run_coroutine(make_coroutine: Callable, caller_loop, budget, in_flight: Optional[set] = None):
    """An async callback's result: on the caller's loop when there is one (execute_async),
    else on this thread's own loop, within the deadline and cancel flag. `in_flight` holds the
    caller-loop future meanwhile, so a cancelled caller can cancel the callback at once."""
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

_LONE_SURROGATE = re.compile("[\ud800-\udc7f\udd00-\udfff]")


def result_text(value) -> str:
    """A callback's return value as command output. Raises ValueError (or TypeError) when
    the value has no text form."""
    if value is None:
        return ""
    if isinstance(value, bytes):
        return value.decode("utf-8", "surrogateescape")
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str) + "\n"
    # a lone surrogate is no character; the ones from undecodable bytes stay bytes
    return _LONE_SURROGATE.sub("\ufffd", text) if not text.isascii() else text


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


_TRACEBACK = re.compile(r"Traceback \(most recent call last\):")
_URL_CREDENTIALS = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^\s/@:]*(?::[^\s/@]*)?@")
_SECRET_NAME = r"[\w-]*(?:password|passwd|pwd|passphrase|token|secret|credential|api[_-]?key|key|auth)[\w-]*"
_QUOTED_PAIR = re.compile(r"""(?i)(['"])(""" + _SECRET_NAME + r""")\1(\s*[:=]\s*)('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|[^\s,;}\])]+)""")
_BARE_PAIR = re.compile(r"(?i)\b(" + _SECRET_NAME + r")(\s*[:=]\s*)(?!<redacted>)('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|[^\s,;}\])&]+)")
_BEARER = re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{8,}")
_TOKEN_SHAPES = re.compile(r"\b(?:sk-[A-Za-z0-9_-]{8,}|gh[pousr]_[A-Za-z0-9]{20,}|xox[abpr]-[A-Za-z0-9-]{10,}"
                           r"|AKIA[0-9A-Z]{16}|[A-Fa-f0-9]{32,}|[A-Za-z0-9+/]{40,}={0,2})\b")
_IP_CANDIDATE = re.compile(r"(?i)(?<![\w:.])(?:(?:\d{1,3}\.){3}\d{1,3}(?![\w.])"
                           r"|[0-9a-f]{0,4}(?::[0-9a-f]{0,4}){2,7}(?![\w:]))")
_INTERNAL_HOST = re.compile(r"(?i)\b(?:[a-z0-9-]+\.)+(?:internal|local|localdomain|lan|corp|intranet|"
                            r"private|svc|cluster\.local|home\.arpa)\b(?::\d+)?")
_PATH = re.compile(r"(?:[A-Za-z]:\\|(?<![\w<])/)(?:[\w.@+-]+[/\\])+[\w.@+-]*")


def sanitize(message: str) -> str:
    """One line of a callback's error, without credentials, secrets, addresses, internal
    host names, host paths or traceback."""
    text = message.strip()
    traceback = _TRACEBACK.search(text)
    if traceback and text[:traceback.start()].strip():
        text = text[:traceback.start()].strip()
    elif traceback:                      # a bare traceback: its exception line
        lines = [ln for ln in text.splitlines()[1:] if ln.strip() and not ln.startswith((" ", "\t"))]
        text = lines[-1] if lines else "failed"
    text = text.splitlines()[0] if text else "failed"
    text = _URL_CREDENTIALS.sub(r"\1<redacted>@", text)
    text = _QUOTED_PAIR.sub(lambda m: f"{m[1]}{m[2]}{m[1]}{m[3]}'<redacted>'", text)
    text = _BEARER.sub(r"\1 <redacted>", text)
    text = _BARE_PAIR.sub(r"\1\2<redacted>", text)
    text = _TOKEN_SHAPES.sub("<redacted>", text)
    text = _INTERNAL_HOST.sub("<host>", text)
    text = _IP_CANDIDATE.sub(_redact_address, text)
    return _PATH.sub("<path>", text)


def _redact_address(match) -> str:
    try:
        ipaddress.ip_address(match[0])
    except ValueError:
        return match[0]                  # a time of day, a version number
    return "<ip>"


_SURROGATE = re.compile("[\ud800-\udfff]")


def valid_unicode(text: str) -> str:
    """`text` with each lone surrogate (an undecodable byte kept by `surrogateescape`, or one a
    callback returned) as U+FFFD, for consumers that need valid UTF-8 (JSON, MCP)."""
    return _SURROGATE.sub("\ufffd", text)
