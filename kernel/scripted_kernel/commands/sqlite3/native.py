"""Functions of the SQLite library that Python's module does not expose, called through
ctypes in the library the module is linked with:

- where in a statement SQLite found an error (`sqlite3_error_offset`), which the shell prints
  under the message ("  select y from t" / "         ^--- error here"), and the last error's
  code and message as bytes (`sqlite3_extended_errcode`, `sqlite3_errmsg`: Python's module
  cannot report a message that is not UTF-8, as from a damaged schema), given the connection's
  `sqlite3*` handle. CPython keeps that handle as the first field after the object header of a
  Connection (3.10 to 3.13 all do); elsewhere, or with a library older than 3.38 for the
  offset, they are unknown: the shell's message is printed without the quoted statement, and
  a message that is not UTF-8 is replaced by a description of it;
- the process's hard heap limit (`sqlite3_hard_heap_limit64`, SQLite 3.31 on), which can be
  put back after a run, where `PRAGMA hard_heap_limit` can only lower it. Without the library
  at hand there is no heap limit (the page bounds and the memory checks of the progress handler
  remain).
"""
from __future__ import annotations

import functools
import sqlite3
import sys


@functools.lru_cache(maxsize=1)
def _library():
    try:
        import ctypes
        import _sqlite3
        return ctypes.CDLL(_sqlite3.__file__)
    except (ImportError, OSError, AttributeError):
        return None


@functools.lru_cache(maxsize=1)
def _heap_limit_function():
    library = _library()
    if library is None or sqlite3.sqlite_version_info < (3, 31, 0):
        return None
    import ctypes
    try:
        function = library.sqlite3_hard_heap_limit64
    except AttributeError:
        return None
    function.restype = ctypes.c_int64
    function.argtypes = [ctypes.c_int64]
    return function


def hard_heap_limit(limit: int) -> int:
    """Set the process's SQLite hard heap limit (0: none; negative: leave it); the limit before."""
    function = _heap_limit_function()
    return function(limit) if function is not None else 0


@functools.lru_cache(maxsize=1)
def _connection_functions():
    """(sqlite3_error_offset, sqlite3_errmsg, sqlite3_extended_errcode) of a Connection, or
    None where its `sqlite3*` handle cannot be read (see the module)."""
    if sys.implementation.name != "cpython" or not (3, 10) <= sys.version_info[:2] <= (3, 13):
        return None
    library = _library()
    if library is None:
        return None
    import ctypes
    handle_at = object.__basicsize__          # the field after PyObject_HEAD

    def on_handle(name: str, restype):
        try:
            function = getattr(library, name)
        except AttributeError:
            return None
        function.restype = restype
        function.argtypes = [ctypes.c_void_p]

        def call(conn: sqlite3.Connection):
            handle = ctypes.c_void_p.from_address(id(conn) + handle_at).value
            return function(handle) if handle else None
        return call
    offset = on_handle("sqlite3_error_offset", ctypes.c_int) \
        if sqlite3.sqlite_version_info >= (3, 38, 0) else None
    return offset, on_handle("sqlite3_errmsg", ctypes.c_char_p), on_handle("sqlite3_extended_errcode", ctypes.c_int)


def error_offset(conn: sqlite3.Connection) -> int:
    """The byte offset of the last error in its statement's text, or -1."""
    functions = _connection_functions()
    if functions is None or functions[0] is None:
        return -1
    offset = functions[0](conn)
    return -1 if offset is None else offset


def last_error(conn: sqlite3.Connection) -> "tuple[int, bytes] | None":
    """(extended result code, message bytes) of the connection's last error, or None when
    they cannot be read. Python's module cannot report a message that is not UTF-8 (it raises
    UnicodeDecodeError building it)."""
    functions = _connection_functions()
    if functions is None or functions[1] is None or functions[2] is None:
        return None
    code, message = functions[2](conn), functions[1](conn)
    return None if code is None or message is None else (code, message)


def error_context(sql: str, offset: int) -> str:
    """shell.c's shell_error_context: the statement (from 50 bytes before the error, at most
    78 bytes, white space as blanks) and a marker under the error."""
    if offset < 0:
        return ""
    data = sql.encode("utf-8", "surrogateescape")
    while offset > 50:
        offset -= 1
        data = data[1:]
        while data and data[0] & 0xC0 == 0x80:
            data = data[1:]
            offset -= 1
    if len(data) > 78:
        cut = 78
        while cut > 0 and data[cut] & 0xC0 == 0x80:
            cut -= 1
        data = data[:cut]
    code = "".join(" " if ch in " \t\n\v\f\r" else ch for ch in data.decode("utf-8", "surrogateescape"))
    if offset < 25:
        return f"\n  {code}\n  {' ' * offset}^--- error here"
    return f"\n  {code}\n  {' ' * (offset - 14)}error here ---^"
