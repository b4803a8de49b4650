"""The registration of python3 and python.

A file command (absent in logic mode unless the tool's builder asks for it with `.python()`).
Without the `python` extra the command is still there and says how to get it, with the status of
a program that is not installed."""
from __future__ import annotations

from ..registry import Usage, command
from .program import CommandLine, parse_command_line, read_program

USAGE = Usage("[option] ... [-c cmd | file | -] [arg] ...",
              "Run a Python program on pydantic-monty: a sandboxed subset of Python 3, not CPython "
              "(no third-party modules, no network; files of this sandbox only).", (
                  "-c cmd  program passed in as string (terminates option list)",
                  "file    program read from script file (terminates option list)",
                  "-       program read from stdin (default; also when there is no file)",
                  "arg ... arguments passed to the program in sys.argv[1:]",
                  "-V      print the Python version number and exit",
                  "-h      print this help message and exit",
                  "-b -B -d -E -I -O -P -q -s -S -u -v -x, -W arg, -X opt: accepted, they change nothing here"))

NOT_AVAILABLE = "not available: install scripted-kernel[python]"
VERSION_PROGRAM = CommandLine("code", code="import sys\nprint('Python', sys.version)", argv=["-c"])


def _monty_installed() -> bool:
    try:
        import pydantic_monty  # noqa: F401
    except ImportError:
        return False
    return True


@command("python3", "python", usage=USAGE, needs_files=True)
def run(ctx, argv):
    name = argv[0].rsplit("/", 1)[-1]
    line = parse_command_line(name, argv[1:])
    if line.action == "help":
        ctx.out(USAGE.text(name))
        return 0
    if not _monty_installed():
        ctx.err(f"{name}: {NOT_AVAILABLE}\n")
        return 127
    from . import execution
    program = read_program(ctx, name, VERSION_PROGRAM if line.action == "version" else line)
    return execution.run(ctx, name, program)
