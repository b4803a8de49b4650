"""How the sqlite3 command-line shell prints a statement's result in each `.mode`, as
SQLite 3.40's shell.c prints it: the row-by-row modes (list, csv, tabs, line, json, quote,
insert, html, ascii, tcl) and the columnar ones that read every row first to size the columns
(column, table, box, markdown).

Real numbers are printed as SQLite prints them: the text SQLite gives a REAL (`%!.15g`) where
the shell shows text, and `%!.20g` in the modes that must read back exactly (quote, insert,
json, .dump). Those conversions are asked of SQLite itself (a private in-memory connection),
so they match the library bit for bit.
"""
from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from ...base.limits import Budget

# The shell's separators (shell.c SEP_*)
SEP_COLUMN, SEP_ROW, SEP_COMMA, SEP_CRLF, SEP_TAB = "|", "\n", ",", "\r\n", "\t"
SEP_UNIT, SEP_RECORD = "\x1f", "\x1e"

COLUMNAR = ("column", "table", "box", "markdown")
MODE_NAMES = ("ascii box column csv html insert json line list markdown qbox quote table tabs tcl")
CHECK_EVERY = 1024          # rows between checks of the budget


@dataclass
class Settings:
    """The output state a script changes with options and dot-commands."""
    mode: str = "list"
    col_sep: str = SEP_COLUMN
    row_sep: str = SEP_ROW
    headers: bool = False
    headers_set: bool = False      # -header/-noheader/.headers given: .mode column keeps it
    null_value: str = ""
    table_name: str = "table"      # .mode insert TABLE
    widths: list = field(default_factory=list)
    wrap: int = 0                  # columnar modes: lines of at most this many characters
    wordwrap: bool = False         # ... broken between words
    quote_cells: bool = False      # ... values shown as SQL literals

    def set_mode(self, name: str) -> bool:
        """`.mode NAME` (a prefix is enough, as in shell.c's order of tests); False if unknown."""
        for full, action in _MODE_CHANGES:
            if full.startswith(name):
                action(self)
                return True
        return False


def _mode(name, col=None, row=None, header=False):
    def change(s: Settings):
        s.mode = name
        if col is not None:
            s.col_sep = col
        if row is not None:
            s.row_sep = row
        if header and not s.headers_set:
            s.headers = True
    return change


_MODE_CHANGES = (
    ("lines", _mode("line", row=SEP_ROW)),
    ("columns", _mode("column", row=SEP_ROW, header=True)),
    ("list", _mode("list", SEP_COLUMN, SEP_ROW)),
    ("html", _mode("html")),
    ("tcl", _mode("tcl", " ", SEP_ROW)),
    ("csv", _mode("csv", SEP_COMMA, SEP_CRLF)),
    ("tabs", _mode("list", SEP_TAB)),
    ("insert", _mode("insert")),
    ("quote", _mode("quote", SEP_COMMA, SEP_ROW)),
    ("ascii", _mode("ascii", SEP_UNIT, SEP_RECORD)),
    ("markdown", _mode("markdown")),
    ("table", _mode("table")),
    ("box", _mode("box")),
    ("json", _mode("json")),
)


class Reals:
    """SQLite's own text for REAL values, from a private in-memory connection (made on first use)."""

    def __init__(self):
        self._db: Optional[sqlite3.Connection] = None
        self._cache: dict = {}

    def _ask(self, fmt: str, value: float) -> str:
        key = (fmt, value)
        text = self._cache.get(key)
        if text is None:
            if self._db is None:
                self._db = sqlite3.connect(":memory:", check_same_thread=False)
            text = self._db.execute(f"SELECT printf('{fmt}', ?)", (value,)).fetchone()[0]
            if len(self._cache) < 4096:
                self._cache[key] = text
        return text

    def shown(self, value: float) -> str:
        """The text SQLite gives a REAL (what `sqlite3_column_text` returns)."""
        return self._ask("%!.15g", value)

    def exact(self, value: float) -> str:
        """A REAL as quote, insert, json and .dump write it: enough digits to read it back."""
        if value == float("inf"):
            return "1e999"
        if value == float("-inf"):
            return "-1e999"
        if value == int(value) and -2**63 <= value < 2**63:
            return f"{int(value)}.0"
        return self._ask("%!.20g", value)

    def close(self):
        if self._db is not None:
            self._db.close()


def blob_text(value: bytes) -> str:
    """A BLOB shown as text: its bytes as they are (streams carry non-UTF-8 as surrogates)."""
    return value.decode("utf-8", "surrogateescape")


def quoted_sql(value, reals: Reals, escape_newlines: bool = False) -> str:
    """A value as an SQL literal (quote mode, insert mode, .dump)."""
    if value is None:
        return "NULL"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return reals.exact(value)
    if isinstance(value, bytes):
        return "X'" + value.hex() + "'"
    text = "'" + value.replace("'", "''") + "'"
    if escape_newlines and ("\n" in value or "\r" in value):
        # shell.c output_quoted_escaped_string: replace('a\nb','\n',char(10))
        if "\n" in value:
            text = text.replace("\n", "\\n")
            text = f"replace({text},'\\n',char(10))"
        if "\r" in value:
            text = text.replace("\r", "\\r")
            text = f"replace({text},'\\r',char(13))"
    return text


def json_string(text: str) -> str:
    out = ['"']
    for ch in text:
        if ch == '"' or ch == "\\":
            out.append("\\" + ch)
        elif ch < " ":
            out.append({"\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(
                ch, "\\u%04x" % ord(ch)))
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


# shell.c needCsvQuote: control characters, space, '"', "'", DEL and every byte past ASCII
def _needs_csv_quote(text: str) -> bool:
    for ch in text:
        if ch <= " " or ch in "\"'" or ch >= "\x7f":
            return True
    return False


def _html_escape(text: str) -> str:
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;").replace("'", "&#39;"))


def _tcl_string(text: str) -> str:
    return json_string(text).replace("$", "\\$").replace("[", "\\[").replace("]", "\\]")


def _ascii_space(ch: str) -> bool:
    return ch in " \t\n\v\f\r"


def _ascii_alnum(ch: str) -> bool:
    return ch.isascii() and ch.isalnum()


def display_line(z: str, width: int, wordwrap: bool) -> tuple[str, Optional[str]]:
    """shell.c translateForDisplayAndDup: the first line of `z` as the columnar modes show it
    (at most `width` columns, 0 for no limit; tabs expanded; a control character ends the
    line) and the rest for the next line, or None."""
    width = abs(width) or 1_000_000
    i = n = 0
    length = len(z)
    while n < width:
        ch = z[i] if i < length else "\0"
        if ch >= " ":
            n += 1
            i += 1
            continue
        if ch == "\t":
            while True:
                n += 1
                if not (n & 7 and n < width):
                    break
            i += 1
            continue
        break
    k = i
    if n >= width and wordwrap:
        k = i
        while k > i // 2 and not _ascii_space(z[k - 1]):
            k -= 1
        if k <= i // 2:
            k = i
            while k > i // 2 and _ascii_alnum(z[k - 1]) == (k < length and _ascii_alnum(z[k])):
                k -= 1
        if k <= i // 2:
            k = i
        else:
            i = k
            while i < length and z[i] == " ":
                i += 1
    at = z[i] if i < length else "\0"
    tail: Optional[str]
    if n >= width and at >= " ":
        tail = z[i:]
    elif at == "\r" and i + 1 < length and z[i + 1] == "\n":
        tail = z[i + 2:] or None
    elif i >= length or i + 1 >= length:
        tail = None
    else:
        tail = z[i + 1:]
    out, j, n = [], 0, 0
    while j < k:
        ch = z[j]
        if ch >= " ":
            out.append(ch)
            n += 1
        elif ch == "\t":
            while True:
                n += 1
                out.append(" ")
                if not (n & 7 and n < width):
                    break
        else:
            break
        j += 1
    return "".join(out), tail


def display_lines(z: Optional[str], width: int, wordwrap: bool) -> list:
    """Every line a columnar mode shows for the value `z` (None: NULL)."""
    if z is None:
        return [None]
    if (not width or len(z) <= abs(width)) and not any(c < " " for c in z):
        return [z]
    lines = []
    while True:
        line, z = display_line(z, width, wordwrap)
        lines.append(line)
        if z is None:
            return lines


class Printer:
    """Prints the results of one sqlite3 run to `out` with the current `Settings`."""

    def __init__(self, out: Callable[[str], None], settings: Settings, budget: Budget):
        self.out = out
        self.budget = budget
        self.settings = settings
        self.reals = Reals()

    def shown(self, value) -> Optional[str]:
        """A value as the shell's row callback sees it (NULL stays None)."""
        if value is None or isinstance(value, str):
            return value
        if isinstance(value, int):
            return str(value)
        if isinstance(value, float):
            return self.reals.shown(value)
        return blob_text(value)

    def cell(self, value) -> str:
        """A value as the row modes print it (NULL as the null value)."""
        text = self.shown(value)
        return self.settings.null_value if text is None else text

    def result(self, names: list, rows) -> None:
        """Print one statement's result: `rows` is an iterator of tuples."""
        mode = self.settings.mode
        if mode in COLUMNAR:
            self._columnar(names, rows)
            return
        emit = getattr(self, "_row_" + mode)
        chunk: list = []
        size, n = 0, -1
        for n, row in enumerate(rows):
            text = emit(names, row, n)
            chunk.append(text)
            size += len(text)
            if size > 1 << 16:
                self.out("".join(chunk))
                chunk, size = [], 0
            if n % CHECK_EVERY == CHECK_EVERY - 1:
                self.budget.check_clock()
        if mode == "json" and n >= 0:
            chunk.append("]\n")
        if chunk:
            self.out("".join(chunk))

    def query_plan(self, rows) -> None:
        """EXPLAIN QUERY PLAN, in every mode: shell.c's tree of (id, parent, _, detail) rows."""
        children: dict = {}
        for node_id, parent, _, detail in rows:
            children.setdefault(parent, []).append((node_id, detail))
        if not children:
            return
        lines = ["QUERY PLAN\n"]
        _plan_level(children, 0, "", lines)
        self.out("".join(lines))

    # ---- the row-by-row modes: the text of row number n (0 first)

    def _header_line(self, names, quote=None) -> str:
        s = self.settings
        cells = [quote(name) if quote else name for name in names]
        return s.col_sep.join(cells) + s.row_sep

    def _row_list(self, names, row, n) -> str:
        s = self.settings
        head = self._header_line(names) if n == 0 and s.headers else ""
        cells = [self.cell(v) for v in row]
        return head + s.col_sep.join(cells) + s.row_sep

    def _csv_cell(self, text: Optional[str]) -> str:
        s = self.settings
        if text is None:
            return s.null_value
        if text == "" or _needs_csv_quote(text) or (s.col_sep and s.col_sep in text):
            return '"' + text.replace('"', '""') + '"'
        return text

    def _row_csv(self, names, row, n) -> str:
        s = self.settings
        head = self._header_line(names, self._csv_cell) if n == 0 and s.headers else ""
        return head + s.col_sep.join(self._csv_cell(self.shown(v)) for v in row) + s.row_sep

    def _row_ascii(self, names, row, n) -> str:
        return self._row_list(names, row, n)

    def _row_tcl(self, names, row, n) -> str:
        s = self.settings
        head = ""
        if n == 0 and s.headers:
            head = s.col_sep.join(_tcl_string(x) for x in names) + s.row_sep
        cells = [_tcl_string(self.cell(v)) for v in row]
        return head + s.col_sep.join(cells) + s.row_sep

    def _row_line(self, names, row, n) -> str:
        s = self.settings
        width = max([5] + [len(name) for name in names])
        lines = [f"{name:>{width}} = {self.cell(v)}{s.row_sep}"
                 for name, v in zip(names, row)]
        return (s.row_sep if n else "") + "".join(lines)

    def _json_value(self, value) -> str:
        if value is None:
            return "null"
        if isinstance(value, float):
            return self.reals.exact(value)
        if isinstance(value, int):
            return str(value)
        return json_string(value if isinstance(value, str) else blob_text(value))

    def _row_json(self, names, row, n) -> str:
        body = ",".join(json_string(name) + ":" + self._json_value(v) for name, v in zip(names, row))
        return ("[{" if n == 0 else ",\n{") + body + "}"

    def _row_quote(self, names, row, n) -> str:
        s = self.settings
        head = ""
        if n == 0 and s.headers:
            head = s.col_sep.join(quoted_sql(x, self.reals) for x in names) + s.row_sep
        return head + s.col_sep.join(quoted_sql(v, self.reals) for v in row) + s.row_sep

    def _row_insert(self, names, row, n) -> str:
        s = self.settings
        columns = "(" + ",".join(quote_name(x) for x in names) + ")" if s.headers else ""
        values = ",".join(quoted_sql(v, self.reals, escape_newlines=True) for v in row)
        return f"INSERT INTO {quote_name(s.table_name)}{columns} VALUES({values});\n"

    def _row_html(self, names, row, n) -> str:
        s = self.settings
        head = ""
        if n == 0 and s.headers:
            head = "<TR>" + "".join(f"<TH>{_html_escape(x)}</TH>\n" for x in names) + "</TR>\n"
        cells = "".join(f"<TD>{_html_escape(self.cell(v))}</TD>\n"
                        for v in row)
        return head + "<TR>" + cells + "</TR>\n"

    # ---- the columnar modes

    def _columnar(self, names, rows) -> None:
        """Every row read first: cells become lines (wrapped, or split at control characters),
        the columns as wide as their widest line."""
        s = self.settings
        count = len(names)
        limits = [(s.widths[k] if k < len(s.widths) and s.widths[k] else s.wrap) for k in range(count)]
        shown: Callable[[Any], Optional[str]]
        if s.quote_cells:
            shown = lambda v: quoted_sql(v, self.reals)
        else:
            shown = self.shown
        header = [display_line(x, limits[k], s.wordwrap)[0] for k, x in enumerate(names)]
        table, multiline, size = [], False, 0
        for n, row in enumerate(rows):
            pieces = [display_lines(shown(v), limits[k], s.wordwrap) for k, v in enumerate(row)]
            height = max(len(p) for p in pieces)
            multiline = multiline or height > 1
            lines = [[(p[i] if i < len(p) else "") for p in pieces] for i in range(height)]
            table.append([[s.null_value if c is None else c for c in line] for line in lines])
            size += sum(len(c) for line in lines for c in line if c)
            if n % CHECK_EVERY == CHECK_EVERY - 1:
                self.budget.note(size)
                size = 0
                self.budget.check_clock()
        if not table:
            return
        widths = [abs(s.widths[k]) if k < len(s.widths) else 0 for k in range(count)]
        for cells in [header] + [line for group in table for line in group]:
            for k, cell in enumerate(cells):
                if len(cell) > widths[k]:
                    widths[k] = len(cell)
        right = [k < len(s.widths) and s.widths[k] < 0 for k in range(count)]
        layout = _LAYOUTS[s.mode]
        self.out("".join(_columnar_lines(layout, header, table, widths, right, s.headers, multiline)))


def _plan_level(children: dict, parent: int, prefix: str, lines: list) -> None:
    level = children.get(parent, [])
    for k, (node_id, detail) in enumerate(level):
        last = k == len(level) - 1
        lines.append(f"{prefix}{'`--' if last else '|--'}{detail}\n")
        if node_id != parent:
            _plan_level(children, node_id, prefix + ("   " if last else "|  "), lines)


def _fit(text: str, width: int, right: bool) -> str:
    return text.rjust(width) if right else text.ljust(width)


def _centered(text: str, width: int) -> str:
    gap = width - len(text)
    return " " * (gap // 2) + text + " " * ((gap + 1) // 2)


class _Layout:
    """How a columnar mode frames its cells: the text around and between cells, the rules
    above the header, under it, between rows of several lines and at the end, and whether
    the header is centred and always shown."""

    def __init__(self, left, mid, end, top=None, under=None, between=None, bottom=None,
                 framed=True):
        self.left, self.mid, self.end = left, mid, end
        self.top, self.under, self.between, self.bottom = top, under, between, bottom
        self.framed = framed


def _rule(left, cross, right, line="-"):
    return lambda widths: left + cross.join(line * (w + 2) for w in widths) + right + "\n"


def _dashes(widths):
    return "  ".join("-" * w for w in widths) + "\n"


_LAYOUTS = {
    "column": _Layout("", "  ", "\n", under=_dashes, between=lambda w: "\n", framed=False),
    "table": _Layout("| ", " | ", " |\n", _rule("+", "+", "+"), _rule("+", "+", "+"),
                     _rule("+", "+", "+"), _rule("+", "+", "+")),
    "box": _Layout("│ ", " │ ", " │\n", _rule("┌", "┬", "┐", "─"), _rule("├", "┼", "┤", "─"),
                   _rule("├", "┼", "┤", "─"), _rule("└", "┴", "┘", "─")),
    "markdown": _Layout("| ", " | ", " |\n", under=_rule("|", "|", "|")),
}


def _columnar_lines(layout: _Layout, header, table, widths, right, headers, multiline):
    if layout.top:
        yield layout.top(widths)
    if layout.framed or headers:
        if layout.framed:
            cells = [_centered(c, widths[k]) for k, c in enumerate(header)]
        else:
            cells = [_fit(c, widths[k], right[k]) for k, c in enumerate(header)]
        yield layout.left + layout.mid.join(cells) + layout.end
        yield layout.under(widths)
    for n, group in enumerate(table):
        for cells in group:
            yield layout.left + layout.mid.join(_fit(c, widths[k], right[k])
                                                for k, c in enumerate(cells)) + layout.end
        if multiline and layout.between and n < len(table) - 1:
            yield layout.between(widths)
    if layout.bottom:
        yield layout.bottom(widths)


def quote_name(name: str) -> str:
    """An identifier as the shell writes it: bare when it is a plain word, else in quotes."""
    if name and name.isascii() and (name[0].isalpha() or name[0] == "_") \
            and all(c.isalnum() or c == "_" for c in name) and name.upper() not in _KEYWORDS:
        return name
    return '"' + name.replace('"', '""') + '"'


# Words that must be quoted as names (the common ones; shell.c asks sqlite3_keyword_check)
_KEYWORDS = frozenset("""ABORT ACTION ADD AFTER ALL ALTER ALWAYS ANALYZE AND AS ASC ATTACH
AUTOINCREMENT BEFORE BEGIN BETWEEN BY CASCADE CASE CAST CHECK COLLATE COLUMN COMMIT CONFLICT
CONSTRAINT CREATE CROSS CURRENT CURRENT_DATE CURRENT_TIME CURRENT_TIMESTAMP DATABASE DEFAULT
DEFERRABLE DEFERRED DELETE DESC DETACH DISTINCT DO DROP EACH ELSE END ESCAPE EXCEPT EXCLUDE
EXCLUSIVE EXISTS EXPLAIN FAIL FILTER FIRST FOLLOWING FOR FOREIGN FROM FULL GENERATED GLOB GROUP
GROUPS HAVING IF IGNORE IMMEDIATE IN INDEX INDEXED INITIALLY INNER INSERT INSTEAD INTERSECT INTO
IS ISNULL JOIN KEY LAST LEFT LIKE LIMIT MATCH MATERIALIZED NATURAL NO NOT NOTHING NOTNULL NULL
NULLS OF OFFSET ON OR ORDER OTHERS OUTER OVER PARTITION PLAN PRAGMA PRECEDING PRIMARY QUERY RAISE
RANGE RECURSIVE REFERENCES REGEXP REINDEX RELEASE RENAME REPLACE RESTRICT RETURNING RIGHT ROLLBACK
ROW ROWS SAVEPOINT SELECT SET TABLE TEMP TEMPORARY THEN TIES TO TRANSACTION TRIGGER UNBOUNDED
UNION UNIQUE UPDATE USING VACUUM VALUES VIEW VIRTUAL WHEN WHERE WINDOW WITH WITHOUT""".split())
