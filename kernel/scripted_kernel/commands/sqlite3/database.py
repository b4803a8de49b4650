"""The database a sqlite3 command works on: a file of the script's filesystem loaded into an
in-memory SQLite database (`Connection.deserialize`) and written back (`serialize`) when the
run changed it; `:memory:` or no file name is a database that is never written.

The guards live here, on the connection, so they hold for everything the command runs (SQL,
.import, .dump, .schema):
- an authorizer refuses ATTACH of anything but `:memory:` (so VACUUM INTO, which attaches its
  target, is refused too), the pragmas that name host directories or lift the limits below,
  and `load_extension` (also left disabled on the connection);
- a progress handler checks the execution's deadline and cancel flag every `PROGRESS_STEPS`
  virtual-machine steps, and its memory budget every few of those, and interrupts the statement
  when one is spent (the command then raises the budget's own error);
- `max_page_count` bounds each database (the main one, the temporary one and every attached
  one, as it is attached) at the filesystem's `max_file_bytes`, the length limits bound one
  string or blob and one statement at `max_string_length`, and temporary tables and sorts stay
  in memory (never in a host temporary file);
- bounds.py: SQLite's heap at the run's `max_memory_bytes` (sorts and temporary structures
  are no database's pages), an interrupt at the deadline or on cancel (a long function call
  keeps the progress handler away), and printf's %c repetitions checked before they run.
"""
from __future__ import annotations

import contextlib
import sqlite3
import sys
from typing import Optional

from ...fs import FsError
from . import native
from .bounds import HEAP, INTERRUPTER, PrintfGuard

_NEEDS = "sqlite3 needs Python 3.11 (Connection.serialize, deserialize and setlimit)"
PROGRESS_STEPS = 20_000        # VM instructions between checks of the deadline (about 0.1 ms)
MEMORY_EVERY = 16              # progress calls between checks of the memory budget

# pragmas that may only be read: they name host directories, or lift our bounds, or are
# process-wide (heap limits)
_PRAGMAS_READ_ONLY = frozenset({"temp_store", "max_page_count", "hard_heap_limit",
                                "soft_heap_limit", "mmap_size", "threads"})
_PRAGMAS_REFUSED = frozenset({"temp_store_directory", "data_store_directory"})
_FUNCTIONS_REFUSED = frozenset({"load_extension", "fts3_tokenizer"})


class OpenError(Exception):
    """The database file cannot be opened (the shell's "unable to open database" error)."""


def _text(data: bytes) -> str:
    # TEXT that is not UTF-8 travels as surrogates, as everywhere in the shell's streams
    return data.decode("utf-8", "surrogateescape")


class Database:
    """One run's database: opened on first use, saved by `close()` if it changed."""

    def __init__(self, ctx, name: Optional[str], readonly: bool = False):
        self.ctx = ctx
        self.name = name
        self.readonly = readonly
        self.path = None if name in (None, "", ":memory:") else ctx.path(name)
        self.conn: Optional[sqlite3.Connection] = None
        self.original = b""
        self.stepped = False           # the current statement began to run (trace callback)
        self.stopped: Optional[BaseException] = None   # the budget's error, from the progress handler
        self._ticks = 0
        self.attached = False          # a statement attached a database (bounded after it)
        self.temp_bounded = False      # the temporary database is bounded (opened when first used)
        self.wants_temp = False        # a statement was refused until it is
        self.trusted = False           # our own statements run: the authorizer lets them be
        self.heap_limit = 0            # what was given to HEAP (left again when closing)
        self.parameters: dict = {}     # .parameter set: name with its $ : @ ? -> value

    # ---- opening

    def connection(self) -> sqlite3.Connection:
        if self.conn is None:
            self.conn = self._open()
        return self.conn

    def _open(self) -> sqlite3.Connection:
        if sys.version_info < (3, 11):      # command.py registers sqlite3 from 3.11 on only
            raise RuntimeError(_NEEDS)
        data = self._load() if self.path is not None else b""
        conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        conn.text_factory = _text
        if data:
            conn.deserialize(_without_wal(data))
        self.original = data
        limits = self.ctx.limits
        length = min(limits.max_string_length, 1_000_000_000)
        conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, length)
        conn.setlimit(sqlite3.SQLITE_LIMIT_SQL_LENGTH, length)
        conn.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 10)
        PrintfGuard(length).install(conn)
        try:
            conn.execute("PRAGMA temp_store = MEMORY")
            _bound_pages(conn, "main", limits.max_file_bytes)
            if self.readonly:
                conn.execute("PRAGMA query_only = 1")
        except (sqlite3.DatabaseError, UnicodeDecodeError):
            pass                      # not a database, or a damaged one: its statements will say so
        conn.set_authorizer(self._authorize)
        conn.set_progress_handler(self._progress, PROGRESS_STEPS)
        conn.set_trace_callback(self._traced)
        self.heap_limit = limits.max_memory_bytes
        HEAP.enter(self.heap_limit)
        INTERRUPTER.watch(conn, self.ctx.budget)
        return conn

    def _load(self) -> bytes:
        fs = self.ctx.fs
        try:
            return fs.read_bytes(self.path)
        except FsError as e:
            if e.strerror != "No such file or directory" or self.readonly:
                raise OpenError(self.name) from None
        try:                          # the shell creates the file when it opens it
            fs.write_bytes(self.path, b"", mode=0o666 & ~self.ctx.umask)
        except FsError:
            raise OpenError(self.name) from None
        return b""

    # ---- the guards

    def _authorize(self, action, arg1, arg2, db_name, source):
        if self.trusted:
            return sqlite3.SQLITE_OK
        if db_name == "temp" and not self.temp_bounded:
            self.wants_temp = True    # refused while it is prepared; run again once bounded
            return sqlite3.SQLITE_DENY
        if action == sqlite3.SQLITE_ATTACH:
            if arg1 != ":memory:":
                return sqlite3.SQLITE_DENY
            self.attached = True
        if action == sqlite3.SQLITE_PRAGMA:
            pragma = (arg1 or "").lower()
            if pragma in _PRAGMAS_REFUSED or (pragma in _PRAGMAS_READ_ONLY and arg2 is not None):
                return sqlite3.SQLITE_DENY
        if action == sqlite3.SQLITE_FUNCTION and (arg2 or "").lower() in _FUNCTIONS_REFUSED:
            return sqlite3.SQLITE_DENY
        return sqlite3.SQLITE_OK

    def _progress(self) -> int:
        self._ticks += 1
        budget = self.ctx.budget
        try:
            if self._ticks % MEMORY_EVERY:
                budget.check_stop()
            else:
                budget.check_clock()
        except BaseException as e:    # the budget's Cancelled or LimitExceeded
            self.stopped = e
            return 1                  # interrupts the statement
        return 0

    def _traced(self, _sql):
        self.stepped = True

    def raise_if_stopped(self):
        """After a failed statement: the budget's error if the progress handler stopped it,
        or if the interrupter did (the deadline passed, or the run was cancelled)."""
        if self.stopped is not None:
            stopped, self.stopped = self.stopped, None
            raise stopped
        self.ctx.budget.check_stop()

    def _trusted(self, sql: str) -> list:
        """The rows of one of our own statements (past the authorizer)."""
        self.trusted = True
        try:
            return self.connection().execute(sql).fetchall()
        finally:
            self.trusted = False

    def _bound(self, schemas: list):
        """The page bound on each database of `schemas` (see _bound_pages)."""
        self.trusted = True
        try:
            for schema in schemas:
                _bound_pages(self.connection(), schema, self.ctx.limits.max_file_bytes)
        finally:
            self.trusted = False

    # ---- running

    def execute(self, sql: str, params=None) -> "Rows":
        """Run one statement. Parameters the statement names but nobody bound are NULL, as in
        the shell (Python's module insists on a value for each)."""
        try:
            cursor = self._execute(sql, params)
        except sqlite3.DatabaseError:
            if not self.wants_temp:
                raise
            # its first use of the temporary database, refused while it was prepared (nothing
            # ran): the database is made and bounded, and the statement run again
            self.wants_temp = False
            self._bound(["temp"])
            self.temp_bounded = True
            cursor = self._execute(sql, params)
        if self.attached:
            self.attached = False
            self._bound([schema for _, schema, _ in self._trusted("PRAGMA database_list")])
        return cursor

    def _execute(self, sql: str, params) -> "Rows":
        self.stepped = False
        conn = self.connection()
        with readable_errors(conn):
            if params is not None:
                return Rows(conn, conn.execute(sql, params))
            if self.parameters:
                return self._run_with_parameters(conn, sql)
            try:
                return Rows(conn, conn.execute(sql))
            except sqlite3.ProgrammingError as e:
                nulls = _unbound_parameters(str(e))
                if nulls is None:
                    raise
                self.stepped = False
                return Rows(conn, conn.execute(sql, nulls))

    def _run_with_parameters(self, conn: sqlite3.Connection, sql: str) -> "Rows":
        """The statement run with the .parameter values bound as the shell binds them: each
        parameter by its name (`:a`, `@a`, `$a`, `?1`), NULL when unset. Python's module binds
        a statement holding a nameless `?` by position only (it says so before running it):
        then the Nth is looked up as `?N`."""
        try:
            named = _Nulls({name[1:]: value for name, value in self.parameters.items()})
            return Rows(conn, conn.execute(sql, named))
        except sqlite3.ProgrammingError as e:
            if "has no name" not in str(e):
                raise
        try:
            conn.execute(sql, ())
            count = 0
        except sqlite3.ProgrammingError as e:    # (the count, told before the statement runs)
            nulls = _unbound_parameters(str(e))
            count = len(nulls) if isinstance(nulls, list) else 0
        values = [self.parameters.get(f"?{n}") for n in range(1, count + 1)]
        return Rows(conn, conn.execute(sql, values))

    # ---- closing

    def close(self) -> Optional[str]:
        """Write the database back if it changed, and close it; an error message if the file
        could not be written."""
        conn, self.conn = self.conn, None
        if conn is None:
            return None
        if sys.version_info < (3, 11):      # never opened (see _open)
            raise RuntimeError(_NEEDS)
        INTERRUPTER.unwatch(conn)
        try:
            if self.path is None or self.readonly:
                return None
            if conn.in_transaction:   # as sqlite3_close: an open transaction is rolled back
                conn.rollback()
            try:
                data = conn.serialize()
            except sqlite3.OperationalError:   # a database without a page: nothing to write
                data = b""
            if data == self.original:
                return None
            if len(data) > self.ctx.limits.max_file_bytes:
                return (f"Error: database is {len(data)} bytes, more than a file may hold "
                        f"({self.ctx.limits.max_file_bytes} bytes, max_file_bytes)")
            try:
                self.ctx.fs.write_bytes(self.path, data, mode=0o666 & ~self.ctx.umask)
            except FsError as e:
                return f"Error: cannot write {self.name}: {e.strerror}"
            return None
        finally:
            conn.close()
            HEAP.leave(self.heap_limit)


class Rows:
    """A statement's cursor whose errors are all sqlite3.Error (see readable_errors)."""

    def __init__(self, conn: sqlite3.Connection, cursor: sqlite3.Cursor):
        self.conn, self.cursor = conn, cursor
        self.description = cursor.description

    def __iter__(self):
        return self

    def __next__(self):
        with readable_errors(self.conn):
            return next(self.cursor)

    def fetchone(self):
        with readable_errors(self.conn):
            return self.cursor.fetchone()

    def fetchall(self) -> list:
        with readable_errors(self.conn):
            return self.cursor.fetchall()


class NotUtf8(sqlite3.DatabaseError):
    """SQL text that is not UTF-8 (bytes the script gave, kept as surrogates): Python's module
    passes statements to SQLite as UTF-8 only. No position in the statement goes with it."""


@contextlib.contextmanager
def readable_errors(conn: sqlite3.Connection):
    """Python's module raises UnicodeDecodeError where SQLite's error message (a damaged schema
    quoted in it) or a column's name is not UTF-8: that becomes the sqlite3.Error it stands
    for, with the message read from the library, its bytes kept as surrogates. It raises
    UnicodeEncodeError for a statement that is not UTF-8: that becomes NotUtf8."""
    try:
        yield
    except UnicodeEncodeError:
        raise NotUtf8("the statement is not valid UTF-8") from None
    except UnicodeDecodeError:
        error = native.last_error(conn)
        if error is None or error[0] & 0xFF in (sqlite3.SQLITE_OK, 100, 101):   # (no error: a name)
            raise sqlite3.DatabaseError("a name or message is not valid UTF-8") from None
        failure = sqlite3.DatabaseError(error[1].decode("utf-8", "surrogateescape"))
        failure.sqlite_errorcode = error[0]  # type: ignore[attr-defined]
        raise failure from None


def _bound_pages(conn: sqlite3.Connection, schema: str, max_bytes: int):
    """At most `max_bytes` of pages in the database `schema`."""
    quoted = '"' + schema.replace('"', '""') + '"'
    page_size = conn.execute(f"PRAGMA {quoted}.page_size").fetchone()[0]
    conn.execute(f"PRAGMA {quoted}.max_page_count = {max(1, max_bytes // page_size)}")


class _Nulls(dict):
    def __missing__(self, key):
        return None


def _unbound_parameters(message: str):
    """NULL values for the parameters Python refused to leave unbound, or None."""
    if message.startswith("Incorrect number of bindings supplied. The current statement uses "):
        count = message.split(" uses ", 1)[1].split(",", 1)[0]
        if count.isdigit():
            return [None] * int(count)
    if "binding parameter :" in message or "supplied a dictionary" in message:
        return _Nulls()
    return None


def _without_wal(data: bytes) -> bytes:
    """A database file in WAL mode, as one in rollback mode (an in-memory database cannot use
    a write-ahead log; without its -wal file the main file is the whole database)."""
    if len(data) >= 20 and data[:16] == b"SQLite format 3\x00" and data[18:20] == b"\x02\x02":
        return data[:18] + b"\x01\x01" + data[20:]
    return data
