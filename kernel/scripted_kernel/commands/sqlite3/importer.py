"""sqlite3's `.import FILE TABLE`: the file (of the script's filesystem) read as shell.c's
csv_read_one_field reads it, into a table created from its first row if there is none.

The file is at most max_file_bytes (the filesystem's bound); the rows go in one transaction,
checked against the budget every `CHECK_EVERY` rows, and the database cannot grow past its
max_page_count (SQLite's "database or disk is full").
"""
from __future__ import annotations

import sqlite3
from typing import Iterator, Optional

from ...fs import FsError, access
from .output import quote_name
from .shell import Session

CHECK_EVERY = 1000


def read_rows(text: str, col_sep: str, row_sep: str) -> Iterator[tuple[int, list]]:
    """(line number where the row starts, its fields): fields between `col_sep`, rows ended
    by `row_sep`; a field in double quotes may hold both, with "" for a quote; a CR before
    the row separator is dropped."""
    pos, length, line = 0, len(text), 1
    while pos < length:
        start_line, fields = line, []
        while True:
            if pos < length and text[pos] == '"':
                field, pos = _quoted(text, pos + 1, col_sep, row_sep)
            else:
                field, pos = _plain(text, pos, col_sep, row_sep)
            line += field.count("\n") if row_sep == "\n" else 0
            fields.append(field)
            if pos >= length:
                break
            ch = text[pos]
            pos += 1
            if ch == row_sep:
                line += 1 if row_sep == "\n" else 0
                break
        yield start_line, fields


def _plain(text: str, pos: int, col_sep: str, row_sep: str) -> tuple[str, int]:
    end = pos
    length = len(text)
    while end < length and text[end] != col_sep and text[end] != row_sep:
        end += 1
    field = text[pos:end]
    if row_sep == "\n" and field.endswith("\r") and (end >= length or text[end] == row_sep):
        field = field[:-1]
    return field, end


def _quoted(text: str, pos: int, col_sep: str, row_sep: str) -> tuple[str, int]:
    """A field after its opening quote; returns it and the position of what follows it."""
    parts = []
    length = len(text)
    while pos < length:
        close = text.find('"', pos)
        if close < 0:
            parts.append(text[pos:])
            return "".join(parts), length
        parts.append(text[pos:close])
        pos = close + 1
        if pos < length and text[pos] == '"':
            parts.append('"')
            pos += 1
            continue
        # after the closing quote: the rest up to a separator belongs to the field
        rest, pos = _plain(text, pos, col_sep, row_sep)
        parts.append(rest)
        return "".join(parts), pos
    return "".join(parts), pos


def _column_names(s: Session, file: str, header: list) -> list:
    """The first row as column names: empty ones are "?", repeated ones get _1, _2 ..."""
    names = [h if h else "?" for h in header]
    seen: dict = {}
    for n in names:
        seen[n] = seen.get(n, 0) + 1
    if all(count == 1 for count in seen.values()):
        return names
    renamed, notes = [], []
    counters: dict[str, int] = {}
    for n in names:
        if seen[n] == 1:
            renamed.append(n)
            continue
        counters[n] = counters.get(n, 0) + 1
        renamed.append(f"{n}_{counters[n]}")
        notes.append(f'"{n}" to "{renamed[-1]}"')
    s.error(f"Columns renamed during .import {file} due to duplicates:\n" + ",\n".join(notes))
    return renamed


def import_file(s: Session, file: str, table: str, schema: Optional[str], skip: int,
                col_sep: str, row_sep: str, verbose: bool) -> int:
    try:
        text = access.read_text(s.ctx, file)
    except FsError:
        s.error(f'Error: cannot open "{file}"')
        return 1
    rows = read_rows(text, col_sep, row_sep)
    for _ in range(skip):
        if next(rows, None) is None:
            break
    db = s.db
    target = (quote_name_always(schema) + "." if schema else "") + quote_name_always(table)
    if not _table_exists(s, schema, table):
        first = next(rows, None)
        if first is None:
            s.error(f"{file}: empty file")
            return 1
        names = _column_names(s, file, first[1])
        columns = ", ".join(f"{quote_name_always(n)} TEXT" for n in names)
        create = f"CREATE TABLE {target}(\n{columns})"
        if verbose:
            s.write(create + "\n")
        db.execute(create)
    count = len(db.execute(f"SELECT * FROM {target} LIMIT 0").description)
    # each field bound as bytes and made TEXT again, so that bytes of the file that are not
    # UTF-8 are stored as they are, as the shell stores them (Python binds text as UTF-8 only)
    insert = f"INSERT INTO {target} VALUES({','.join(['CAST(? AS TEXT)'] * count)})"
    return _insert_rows(s, file, rows, count, insert)


def quote_name_always(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _table_exists(s: Session, schema: Optional[str], table: str) -> bool:
    catalog = (quote_name(schema) + "." if schema else "") + "sqlite_schema"
    return s.db.execute(f"SELECT 1 FROM {catalog} WHERE name = ?1 COLLATE NOCASE "
                        "AND type IN ('table','view')", (table,)).fetchone() is not None


def _insert_rows(s: Session, file: str, rows, count: int, insert: str) -> int:
    conn = s.db.connection()
    conn.execute("BEGIN")
    status = 0
    try:
        for n, (line, fields) in enumerate(rows):
            if len(fields) < count:
                if not (len(fields) == 1 and count == 1):
                    s.error(f"{file}:{line}: expected {count} columns but found {len(fields)}"
                            " - filling the rest with NULL")
                fields = fields + [None] * (count - len(fields))
            elif len(fields) > count:
                s.error(f"{file}:{line}: expected {count} columns but found {len(fields)}"
                        " - extras ignored")
                fields = fields[:count]
            try:
                conn.execute(insert, [None if f is None else f.encode("utf-8", "surrogateescape")
                                      for f in fields])
            except sqlite3.IntegrityError as e:
                s.error(f"{file}:{line}: INSERT failed: {e}")
            if n % CHECK_EVERY == CHECK_EVERY - 1:
                s.ctx.budget.check_clock()
    except sqlite3.Error as e:
        s.db.raise_if_stopped()
        s.error(f"Error: {e}")
        status = 1
    finally:
        if conn.in_transaction:
            conn.execute("COMMIT")
    return status
