"""A program as CPython's command line gives it: options up to `-c CMD`, a file or `-`; every
word after those is the program's (sys.argv[1:]). Its text, its name for tracebacks, its argv."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ...fs import FsError, access
from .._options import UsageError
from .oserror import os_error

_IGNORED_FLAGS = "bBdEIOPqsSuvx"      # CPython's switches: nothing here for them to change
_IGNORED_VALUES = "WX"                # warning and implementation options, with their argument


@dataclass
class CommandLine:
    action: str                       # code, file, stdin, version or help
    code: str = ""                    # -c's program
    path: str = ""                    # the program file, as given
    argv: list = field(default_factory=list)    # sys.argv


@dataclass(frozen=True)
class Program:
    source: str
    filename: str                     # what tracebacks call it: <string>, <stdin> or the file's path
    argv: list


def parse_command_line(name: str, args: list) -> CommandLine:
    """CPython's reading of its command line; UsageError (status 2) for what it refuses."""
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            i += 1
            break
        if arg in ("--version", "--help"):
            return CommandLine(arg[2:])
        if not arg.startswith("-") or arg == "-":
            break
        if arg.startswith("--"):
            raise _bad_usage(name, f"unknown option {arg}")
        i += 1
        for k, letter in enumerate(arg[1:]):
            if letter in _IGNORED_FLAGS:
                continue
            if letter in "Vh":
                return CommandLine("version" if letter == "V" else "help")
            if letter not in "cm" + _IGNORED_VALUES:
                raise _bad_usage(name, f"unknown option -{letter}")
            value: Optional[str] = arg[k + 2:] or None
            if value is None:
                if i == len(args):
                    raise _bad_usage(name, f"argument expected for the -{letter} option")
                value = args[i]
                i += 1
            if letter == "c":
                return CommandLine("code", code=value, argv=["-c", *args[i:]])
            if letter == "m":
                raise UsageError(f"{name}: -m {value}: running a module is not supported here "
                                 f"(give the program with -c, as a file, or on stdin)", 2)
            break                     # -W arg, -X opt: taken and ignored
    rest = args[i:]
    if not rest:
        return CommandLine("stdin", argv=[""])
    if rest[0] == "-":
        return CommandLine("stdin", argv=rest)
    return CommandLine("file", path=rest[0], argv=rest)


def _bad_usage(name: str, problem: str) -> UsageError:
    return UsageError(f"{name}: {problem}\nTry '{name} --help' for more information.", 2)


def read_program(ctx, name: str, line: CommandLine) -> Program:
    """The program's text and name. UsageError when its file cannot be read (status 2, as
    CPython's "can't open file") or it is not UTF-8 (status 1, as CPython's SyntaxError)."""
    if line.action == "code":
        source, filename = line.code, "<string>"
    elif line.action == "stdin":
        source, filename = ctx.stdin.read_all(), "<stdin>"
    else:
        filename = ctx.path(line.path)
        try:
            source = access.read_text(ctx, line.path)
        except FsError as e:
            error = os_error(e, filename)
            raise UsageError(f"{name}: can't open file '{filename}': [Errno {error.errno}] {error.strerror}",
                             2) from None
    try:                              # text from the shell carries undecodable bytes as surrogates
        source.encode("utf-8")
    except UnicodeEncodeError:
        raise UsageError(f"{name}: {filename}: the program is not UTF-8 text") from None
    return Program(source, filename, line.argv)
