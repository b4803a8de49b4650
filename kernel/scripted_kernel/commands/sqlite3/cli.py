"""The command line of sqlite3 [OPTIONS] [FILENAME [SQL...]]: the SQLite command-line shell
over a database file of the script's filesystem (see database.py for how it is loaded, guarded
and written back).

SQL and dot-commands come from the arguments after the file name (the first error ends the
shell with SQLite's result code) or, when there are none, from standard input (errors are
reported with their line and the shell goes on, unless -bail; status 1 if any failed).
Options are those of SQLite 3.40's shell, with one dash or two, anywhere on the line.
"""
from __future__ import annotations

import sqlite3

from ...base.errors import LimitExceeded
from .._options import UsageError
from ..registry import usage_text
from .database import Database
from .dot import run_dot
from .output import SEP_COMMA, SEP_RECORD, SEP_ROW, SEP_TAB, SEP_UNIT, Settings
from .shell import Exit, Session

# options taking a value (their count of values)
_VALUED = {"separator": 1, "newline": 1, "nullvalue": 1, "cmd": 1, "init": 1, "vfs": 1,
           "mmap": 1, "maxsize": 1, "nonce": 1, "lookaside": 2, "pagecache": 2, "heap": 2}
_NO_EFFECT = {"batch", "interactive", "nofollow", "safe", "append", "deserialize", "memtrace",
              "stats", "unsafe-testing", "utf8", "no-utf8", "vfstrace"}
_MODES = {
    "html": ("html", None, None), "list": ("list", None, None), "line": ("line", None, None),
    "column": ("column", None, None), "json": ("json", None, None),
    "markdown": ("markdown", None, None), "table": ("table", None, None),
    "box": ("box", None, None), "csv": ("csv", SEP_COMMA, None),
    "quote": ("quote", SEP_COMMA, SEP_ROW), "ascii": ("ascii", SEP_UNIT, SEP_RECORD),
    "tabs": ("list", SEP_TAB, SEP_ROW),
}

def _split_command_line(argv: list) -> tuple[list, list, list]:
    """shell.c's first pass: (options with their values, in order; the file name, if any,
    as a one-element list; the SQL and dot-command arguments)."""
    options: list[tuple[str, str, list[str]]] = []
    database: list[str] = []
    commands: list[str] = []
    i = 1
    while i < len(argv):
        word = argv[i]
        i += 1
        if not word.startswith("-"):
            (commands if database else database).append(word)
            continue
        name = word[2:] if word.startswith("--") else word[1:]
        count = _VALUED.get(name, 0)
        if i + count > len(argv):
            raise UsageError(f"sqlite3: Error: missing argument to {word}", 1)
        options.append((name, word, argv[i:i + count]))
        i += count
    return options, database, commands


def run(ctx, argv):
    options, database, commands = _split_command_line(argv)
    names = {name for name, _, _ in options}
    db = Database(ctx, database[0] if database else None, readonly="readonly" in names)
    session = Session(ctx, db, Settings(), run_dot)
    try:
        status = _run(session, options, commands)
    except Exit as e:
        status = e.status
    except MemoryError:               # SQLite's heap limit (bounds.HEAP): SQLITE_NOMEM
        limit = ctx.limits.max_memory_bytes
        raise LimitExceeded("max_memory_bytes", f"sqlite3: out of memory: SQLite may use at most "
                                                f"{limit} bytes (max_memory_bytes)") from None
    finally:
        problem = session.close()
    if problem:
        ctx.err(problem + "\n")
        status = status or 1
    return status


def _run(session: Session, options: list, commands: list) -> int:
    for name, _word, values in options:
        if name == "init":
            _run_init(session, values[0])
    for name, word, values in options:
        status = _apply_option(session, name, word, values)
        if status is not None:
            return status
    if not commands:
        return 1 if session.run_input(session.ctx.stdin.read_all()) == 1 else 0
    for text in commands:
        if text.startswith("."):
            status = run_dot(session, text)
            if status:
                return 0 if status == 2 else status
        else:
            session.run_argument(text)
    return 0


def _run_init(session: Session, name: str) -> None:
    from ...fs import FsError, access
    try:
        text = access.read_text(session.ctx, name)
    except FsError:
        return
    session.run_input(text)


def _apply_option(session: Session, name: str, word: str, values: list):
    """One option of the second pass; a status if the shell stops there."""
    settings = session.settings
    if name in _MODES:
        mode, col, row = _MODES[name]
        settings.mode = mode
        settings.col_sep = col or settings.col_sep
        settings.row_sep = row or settings.row_sep
    elif name in ("header", "noheader"):
        settings.headers, settings.headers_set = name == "header", True
    elif name == "separator":
        settings.col_sep = values[0]
    elif name == "newline":
        settings.row_sep = values[0]
    elif name == "nullvalue":
        settings.null_value = values[0]
    elif name == "bail":
        session.bail = True
    elif name == "echo":
        session.echo = True
    elif name == "cmd":
        return _run_cmd(session, values[0])
    elif name == "version":
        source = sqlite3.connect(":memory:").execute("SELECT sqlite_source_id()").fetchone()[0]
        session.write(f"{sqlite3.sqlite_version} {source}\n")
        return 0
    elif name == "help":
        session.ctx.err(usage_text("sqlite3"))
        return 1
    elif name not in _VALUED and name not in _NO_EFFECT and name != "readonly":
        session.error(f"sqlite3: Error: unknown option: {word[1:] if word.startswith('--') else word}\n"
                      "Use -help for a list of options.")
        return 1
    return None


def _run_cmd(session: Session, text: str):
    """-cmd COMMAND: run before the rest; an error stops the shell only under -bail."""
    if text.startswith("."):
        status = run_dot(session, text)
        return (0 if status == 2 else status) if status and session.bail else None
    failure = session.run_sql(text)
    if failure is None:
        return None
    code, message = failure
    session.error(f"Error: {message}")
    return code if session.bail else None
