"""python3 and python: Python programs run by pydantic-monty, a Rust bytecode VM for a subset of
Python, in a pool of worker processes that have no access to the host of their own.

command.py registers the commands, program.py reads their command line; the rest is imported when a script
first runs one, and only if the `python` extra is installed: execution.py (one program in one
worker: its limits, its output, what stops it, its exit status) <- pool.py (the process's worker
pool), bridge.py (files, environment and sleep through the command context; oserror.py), source.py (the
program as Monty runs it: `sys`, `print(file=...)`), report.py (tracebacks as CPython prints them).
"""
from .command import NAMES, available

__all__ = ["NAMES", "available"]
