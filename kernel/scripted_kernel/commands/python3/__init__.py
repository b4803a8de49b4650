"""python3 and python: Python programs run by pydantic-monty, a Rust bytecode VM for a subset of
Python, in a pool of worker processes that have no access to the host of their own.

command.py registers the commands, program.py reads their command line; the rest is imported when a script
first runs one, and only if the `python` extra is installed: execution.py (one program in one
worker: its limits, its output, what stops it, its exit status) <- pool.py (the process's worker
pool), bridge.py (files, environment and sleep through the command context; oserror.py), source.py (the
program as Monty runs it: `sys`, `print(file=...)`), report.py (tracebacks as CPython prints them).
"""
NAMES = ("python3", "python")


def available() -> bool:
    """Whether the `python` extra (pydantic-monty) is installed (found, not imported)."""
    import importlib.util
    return importlib.util.find_spec("pydantic_monty") is not None


__all__ = ["NAMES", "available"]
