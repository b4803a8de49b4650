"""One run of the sqlite3 shell: SQL given as arguments or read as input (standard input,
.read FILE), split into statements as SQLite splits them, each run and its result printed,
errors reported in the words and with the exit statuses of SQLite 3.40's shell.c.
"""
from __future__ import annotations

import re
import sqlite3
from typing import Callable, Optional

from . import native
from .database import Database, NotUtf8, OpenError
from .output import Printer, Settings

MAX_INPUT_NESTING = 25        # shell.c: .read inside .read inside ...

# A ';' outside strings, quoted names and comments (an unterminated one runs to the end)
_SEMICOLON = re.compile(r"""'[^']*(?:''[^']*)*(?:'|\Z)|"[^"]*(?:""[^"]*)*(?:"|\Z)|`[^`]*(?:`|\Z)"""
                        r"""|\[[^\]]*(?:\]|\Z)|--[^\n]*|/\*.*?(?:\*/|\Z)|(;)""", re.S)
_BLANK = re.compile(r"(?:\s+|--[^\n]*(?:\n|\Z)|/\*.*?(?:\*/|\Z))*\Z", re.S)
# input lines are only white space when no comment is left open (shell.c quickscan)
_BLANK_LINES = re.compile(r"(?:\s+|--[^\n]*(?:\n|\Z)|/\*.*?\*/)*\Z", re.S)


def complete(sql: str) -> bool:
    """sqlite3_complete: whether `sql` ends a statement. Bytes that are not UTF-8 (surrogates)
    cannot reach it and play no part in the answer: they stand in as U+FFFD."""
    if sql.isascii():
        return sqlite3.complete_statement(sql)
    return sqlite3.complete_statement(sql.encode("utf-8", "surrogateescape").decode("utf-8", "replace"))


def statements(sql: str):
    """(start, end) of each statement of `sql` with its ';': where SQLite's prepare would stop
    (a ';' inside a trigger's body does not end it). The text after the last ';' is a
    statement too, unless it is only white space and comments."""
    pos, length = 0, len(sql)
    while pos < length:
        while pos < length and sql[pos].isspace():
            pos += 1
        if pos >= length:
            return
        end = length
        for m in _SEMICOLON.finditer(sql, pos):
            if m.group(1) and complete(sql[pos:m.end()]):
                end = m.end()
                break
        if end < length or not _BLANK.match(sql, pos):
            yield pos, end
        pos = end


_QUERY_PLAN = re.compile(r"(?:\s+|--[^\n]*\n|/\*.*?\*/)*EXPLAIN\s+QUERY\s+PLAN\b", re.I | re.S)


def is_blank(sql: str) -> bool:
    return bool(_BLANK_LINES.match(sql))


class Exit(Exception):
    """The shell stops with `status` (.exit N, a database that cannot be opened)."""

    def __init__(self, status: int):
        super().__init__(status)
        self.status = status


class Session:
    """The shell's state for one command line: settings, output, the database."""

    def __init__(self, ctx, db: Database, settings: Settings, run_dot: Callable[["Session", str], int]):
        self.ctx = ctx
        self.run_dot = run_dot         # dot.run_dot (which imports this module)
        self.db = db
        self.settings = settings
        self.printer = Printer(self.write, settings, ctx.budget)
        self.bail = False
        self.echo = False
        self.output: Optional[Callable[[str], None]] = None   # .output FILE
        self.output_once = False
        self.nesting = 0

    def write(self, text: str) -> None:
        (self.output or self.ctx.out)(text)

    def error(self, text: str) -> None:
        self.ctx.err(text + "\n")

    def close(self) -> Optional[str]:
        self.printer.reals.close()
        return self.db.close()

    # ---- SQL

    def run_sql(self, sql: str) -> Optional[tuple[int, str]]:
        """Run each statement of `sql` in turn; stop at the first that fails and return
        (SQLite's primary result code, shell.c's message: "in prepare, ..." or "stepping, ...")."""
        for start, end in statements(sql):
            failure = self._run_statement(sql[start:end], sql[start:])
            if failure is not None:
                return failure
            self.ctx.budget.check_clock()
        return None

    def _run_statement(self, statement: str, rest: str) -> Optional[tuple[int, str]]:
        if self.echo:
            self.write(statement + "\n")
        db = self.db
        try:
            conn = db.connection()
        except OpenError as e:
            self.error(f'Error: unable to open database "{e}": unable to open database file')
            raise Exit(1) from None
        try:
            cursor = db.execute(statement)
            if cursor.description and _QUERY_PLAN.match(statement):
                self.printer.query_plan(cursor.fetchall())
            elif cursor.description:
                self.printer.result([d[0] for d in cursor.description], iter(cursor))
            return None
        except sqlite3.Error as e:
            db.raise_if_stopped()
            code = getattr(e, "sqlite_errorcode", None)
            code = code & 0xFF if code else 1
            if db.stepped or isinstance(e, sqlite3.IntegrityError):
                message = f"stepping, {e}" + (f" ({code})" if code > 1 else "")
            else:
                message = f"in prepare, {e}" + (f" ({code})" if code > 1 else "")
                if not isinstance(e, NotUtf8):       # (SQLite never saw it: no position)
                    message += native.error_context(rest, native.error_offset(conn))
            return code, message

    # ---- input: standard input or a file of .read

    def run_input(self, text: str) -> int:
        """shell.c's process_input: lines gathered into complete statements, dot-commands
        on lines of their own. Returns 1 if something failed, 2 for .quit, else 0."""
        errors, start_line = 0, 0
        buffer: list[str] = []
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        for number, line in enumerate(lines, 1):
            if errors and self.bail:
                break
            if not buffer:
                if is_blank(line):
                    continue
                if line.startswith("."):
                    if self.echo:
                        self.write(line + "\n")
                    status = self.run_dot(self, line)
                    if status == 2:
                        return 2
                    errors += status != 0
                    continue
                if line.startswith("#"):
                    continue
                line = line.lstrip()
                start_line = number
            buffer.append(line)
            sql = "\n".join(buffer)
            if ";" in line and complete(sql):
                errors += self._run_lines(sql, start_line)
                buffer = []
                continue
            if is_blank(sql):
                buffer = []
        if buffer and not (errors and self.bail):
            errors += self._run_lines("\n".join(buffer), start_line)
        return 1 if errors else 0

    def _run_lines(self, sql: str, line: int) -> int:
        failure = self.run_sql(sql)
        self._end_once()
        if failure is None:
            return 0
        _, message = failure
        kind = "Error"
        for prefix, prefixed_kind in (("in prepare, ", "Parse error"), ("stepping, ", "Runtime error")):
            if message.startswith(prefix):
                message, kind = message[len(prefix):], prefixed_kind
                break
        self.error(f"{kind} near line {line}: {message}")
        return 1

    def run_argument(self, sql: str) -> int:
        """SQL given on the command line: the first error ends the shell with its code."""
        failure = self.run_sql(sql)
        self._end_once()
        if failure is None:
            return 0
        code, message = failure
        self.error(f"Error: {message}")
        raise Exit(code)

    def _end_once(self):
        if self.output_once:
            self.output, self.output_once = None, False
