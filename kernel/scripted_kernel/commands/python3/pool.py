"""The process's one pool of Monty workers: started by the first program, closed at exit, and
forgotten in a child made by fork (whose workers are the parent's).

A session checks a worker out for one program. Checking out waits at most CHECKOUT_WAIT at a
time, so that a program waiting for a worker still stops at the run's deadline or cancel."""
from __future__ import annotations

import atexit
import os
import threading
from contextlib import contextmanager
from typing import Callable, Iterator, Optional

import pydantic_monty

MAX_WORKERS = max(4, os.cpu_count() or 1)    # programs running at once in the process
CHECKOUT_WAIT = 0.1                         # seconds per try for a free worker


class WorkerUnavailable(Exception):
    """The pool could not start (the worker binary is missing or cannot run)."""


_lock = threading.Lock()
_pool: Optional[pydantic_monty.Monty] = None


def _started() -> pydantic_monty.Monty:
    global _pool
    with _lock:
        if _pool is None:
            pool = pydantic_monty.Monty(min_processes=1, max_processes=MAX_WORKERS,
                                        checkout_timeout=CHECKOUT_WAIT)
            try:
                pool.__enter__()
            except (OSError, RuntimeError, pydantic_monty.MontyError) as e:   # no binary, or it cannot run
                raise WorkerUnavailable(str(e)) from None
            atexit.register(pool.__exit__, None, None, None)
            _pool = pool
        return _pool


def _forget_in_child():
    global _pool, _lock
    _pool = None
    _lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)


@contextmanager
def session(options: Callable[[], dict], check_stop: Callable[[], None]) -> Iterator[pydantic_monty.MontySession]:
    """A worker's session, checked out with `options()` (asked again at each try: the time
    left shrinks while waiting); `check_stop()` raises if the run must stop meanwhile."""
    while True:
        checked_out = _started().checkout(**options())
        try:
            checked_out.__enter__()
        except TimeoutError:          # every worker is busy
            check_stop()
            continue
        break
    try:
        yield checked_out
    finally:
        checked_out.__exit__(None, None, None)
