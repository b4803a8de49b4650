"""The sqlite3 shell's dot-commands that scripts use, as SQLite 3.40's shell.c words them:
.tables .schema .indexes .dump .import .mode .headers .separator .nullvalue .print .read
.output .once .width .bail .echo .quit .exit .databases .open .parameter .help (and .timer,
accepted).

Each returns the shell's status for the line: 0, 1 for an error, 2 for .quit.
"""
from __future__ import annotations

import sqlite3
from typing import Callable, Optional

from ...fs import FsError, access
from .database import Database, OpenError
from .output import COLUMNAR, MODE_NAMES, SEP_ROW, quote_name, quoted_sql
from .shell import MAX_INPUT_NESTING, Exit, Session, complete

_ESCAPES = {"a": "\a", "b": "\b", "t": "\t", "n": "\n", "v": "\v", "f": "\f", "r": "\r",
            '"': '"', "'": "'", "\\": "\\"}


def resolve_backslashes(text: str) -> str:
    """shell.c resolve_backslashes: \\n \\t ..., \\xHH and octal \\NNN."""
    if "\\" not in text:
        return text
    out, i = [], 0
    while i < len(text):
        ch = text[i]
        if ch != "\\" or i + 1 >= len(text):
            out.append(ch)
            i += 1
            continue
        nxt = text[i + 1]
        i += 2
        if nxt in _ESCAPES:
            out.append(_ESCAPES[nxt])
        elif nxt == "x":
            digits = ""
            while len(digits) < 2 and i < len(text) and text[i] in "0123456789abcdefABCDEF":
                digits += text[i]
                i += 1
            out.append(chr(int(digits, 16)) if digits else "x")
        elif nxt in "01234567":
            digits = nxt
            while len(digits) < 3 and i < len(text) and text[i] in "01234567":
                digits += text[i]
                i += 1
            out.append(chr(int(digits, 8)))
        else:
            out.append("\\" + nxt)
    return "".join(out)


def split_arguments(line: str) -> list:
    """A dot-command line's words: '...' is literal, "..." and bare words resolve backslashes."""
    args, h, n = [], 1, len(line)
    while h < n:
        while h < n and line[h].isspace():
            h += 1
        if h >= n:
            break
        if line[h] in "'\"":
            delim = line[h]
            h += 1
            start = h
            while h < n and line[h] != delim:
                if line[h] == "\\" and delim == '"' and h + 1 < n:
                    h += 1
                h += 1
            word = line[start:h]
            h += 1
            args.append(resolve_backslashes(word) if delim == '"' else word)
        else:
            start = h
            while h < n and not line[h].isspace():
                h += 1
            args.append(resolve_backslashes(line[start:h]))
    return args


def boolean_value(session: Session, text: str) -> bool:
    lowered = text.lower()
    if lowered in ("on", "yes", "true"):
        return True
    if lowered in ("off", "no", "false"):
        return False
    try:
        return int(text, 0) != 0
    except ValueError:
        session.error(f'ERROR: Not a boolean value: "{text}". Assuming "no".')
        return False


class Usage(Exception):
    """A dot-command given the wrong arguments: its usage line, status 1."""


class UsageOnOutput(Usage):
    """The same, where shell.c prints the usage on the output (.import)."""


def run_dot(session: Session, line: str) -> int:
    args = split_arguments(line)
    if not args:
        return 0
    name = args[0]
    for full, shortest, handler in _COMMANDS:
        if len(name) >= shortest and full.startswith(name):
            try:
                return handler(session, args)
            except UsageOnOutput as e:
                session.write(str(e) + "\n")
                return 1
            except Usage as e:
                session.error(str(e))
                return 1
            except OpenError as e:
                session.error(f'Error: unable to open database "{e}": unable to open database file')
                raise Exit(1) from None
            except sqlite3.Error as e:
                session.db.raise_if_stopped()
                session.error(f"Error: {e}")
                return 1
    session.error(f'Error: unknown command or invalid arguments:  "{name}". Enter ".help" for help')
    return 1


# ---- settings

def _headers(s: Session, args) -> int:
    if len(args) != 2:
        raise Usage("Usage: .headers on|off")
    s.settings.headers = boolean_value(s, args[1])
    s.settings.headers_set = True
    return 0


_COLUMNAR_OPTIONS = "options:\n  --noquote\n  --quote\n  --wordwrap on/off\n  --wrap N\n  --ww"


def _mode(s: Session, args) -> int:
    """.mode ?MODE? ?TABLE? ?OPTIONS?: the columnar modes take --wrap N (60 when not given),
    --wordwrap on|off, --ww, --quote, --noquote; qbox is box with --quote."""
    settings = s.settings
    wrap, wordwrap, quote = 60, False, False
    mode = table = None
    words = iter(args[1:])
    for word in words:
        option = word[2:] if word.startswith("--") else word[1:] if word.startswith("-") else None
        if option == "wrap":
            wrap = _int(next(words, "0"))
        elif option == "ww":
            wordwrap = True
        elif option == "wordwrap":
            wordwrap = boolean_value(s, next(words, "off"))
        elif option in ("quote", "noquote"):
            quote = option == "quote"
        elif mode is None:
            mode = word
            if word == "qbox":
                mode, quote = "box", True
        elif table is None:
            table = word
        elif word.startswith("-"):
            s.error(f"unknown option: {word}\n{_COLUMNAR_OPTIONS}")
            return 1
        else:
            s.error(f'extra argument: "{word}"')
            return 1
    if mode is None:
        s.write(f"current output mode: {_describe(settings)}\n")
        return 0
    if not settings.set_mode(mode):
        s.error("Error: mode should be one of: " + MODE_NAMES)
        return 1
    if settings.mode in COLUMNAR:
        settings.wrap, settings.wordwrap, settings.quote_cells = wrap, wordwrap, quote
    if settings.mode == "insert":
        settings.table_name = table or "table"
    return 0


def _describe(settings) -> str:
    if settings.mode in COLUMNAR:
        return (f"{settings.mode} --wrap {settings.wrap} --wordwrap "
                f"{'on' if settings.wordwrap else 'off'} --{'' if settings.quote_cells else 'no'}quote")
    return settings.mode


def _separator(s: Session, args) -> int:
    if len(args) not in (2, 3):
        raise Usage("Usage: .separator COL ?ROW?")
    s.settings.col_sep = args[1]
    if len(args) == 3:
        s.settings.row_sep = args[2]
    return 0


def _nullvalue(s: Session, args) -> int:
    if len(args) != 2:
        raise Usage("Usage: .nullvalue STRING")
    s.settings.null_value = args[1]
    return 0


def _width(s: Session, args) -> int:
    widths = []
    for word in args[1:]:
        try:
            widths.append(int(word))
        except ValueError:
            widths.append(0)
    s.settings.widths = widths
    return 0


def _flag(attribute: str, usage: str) -> Callable:
    def change(s: Session, args) -> int:
        if len(args) != 2:
            raise Usage(usage)
        setattr(s, attribute, boolean_value(s, args[1]))
        return 0
    return change


def _ignored(s: Session, args) -> int:
    return 0


# ---- output and input

def _print(s: Session, args) -> int:
    s.write(" ".join(args[1:]) + "\n")
    return 0


def _output(s: Session, args) -> int:
    once = args[0].startswith("o") and "once".startswith(args[0])
    files = [a for a in args[1:] if not a.startswith("-")]
    if len(files) > 1:
        raise Usage(f"ERROR: extra parameter: \"{files[1]}\".  Usage:\n.{'once' if once else 'output'} ?FILE?")
    name = files[0] if files else ("" if not once else None)
    if name is None:
        raise Usage("Usage: .once FILE")
    if name in ("", "stdout", "-"):
        s.output, s.output_once = None, False
        return 0
    if name.startswith("|"):
        s.error(f'Error: cannot open pipe "{name[1:]}"')
        return 1
    try:
        s.output = access.writer(s.ctx, name)
    except FsError:
        s.error(f'Error: cannot write to "{name}"')
        s.output = None
        return 1
    s.output_once = once
    return 0


def _read(s: Session, args) -> int:
    if len(args) != 2:
        raise Usage("Usage: .read FILE")
    name = args[1]
    if s.nesting >= MAX_INPUT_NESTING:
        s.error(f"Input nesting limit ({MAX_INPUT_NESTING}) reached at line 1. Check recursion.")
        return 1
    if name.startswith("|"):
        s.error(f'Error: cannot open "{name}"')
        return 1
    try:
        text = access.read_text(s.ctx, name)
    except FsError:
        s.error(f'Error: cannot open "{name}"')
        return 1
    s.nesting += 1
    try:
        status = s.run_input(text)
    finally:
        s.nesting -= 1
    return 1 if status == 1 else 0


# ---- databases and parameters

_OPEN_FLAGS = {"new", "readonly", "nofollow", "deserialize"}
_OPEN_UNSUPPORTED = {"append", "zip", "hexdb"}       # other kinds of file than a database


def _open(s: Session, args) -> int:
    """.open ?--new? ?--readonly? ?FILE?: the current database closed (written back if it
    changed), FILE opened in its place, an in-memory one when there is none or it cannot be
    opened (the error is printed; the shell goes on, status 0, as shell.c)."""
    flags, files = set(), []
    words = iter(args[1:])
    for word in words:
        option = word.lstrip("-") if word.startswith("-") and len(word) > 1 else None
        if option is None:
            files.append(word)
        elif option == "maxsize":
            next(words, None)
        elif option in _OPEN_FLAGS:
            flags.add(option)
        elif option in _OPEN_UNSUPPORTED:
            s.error(f"Error: .open {word} is not supported: only database files are")
            return 1
        else:
            s.error(f"unknown option: {word}")
            return 1
    if len(files) > 1:
        s.error(f'extra argument: "{files[1]}"')
        return 1
    problem = s.db.close()
    if problem:
        s.error(problem)
    s.db = Database(s.ctx, files[0] if files else None, readonly="readonly" in flags)
    try:
        if "new" in flags and s.db.path is not None:
            s.ctx.fs.write_bytes(s.db.path, b"", mode=0o666 & ~s.ctx.umask)
        s.db.connection()
    except (OpenError, FsError):
        s.error(f'Error: unable to open database "{files[0]}": unable to open database file')
        s.db = Database(s.ctx, None)
    return 0


_PARAMETER_HELP = """.parameter CMD ...       Manage SQL parameter bindings
   clear                   Erase all bindings
   init                    Initialize the TEMP table that holds bindings
   list                    List the current parameter bindings
   set PARAMETER VALUE     Given SQL parameter PARAMETER a value of VALUE
                           PARAMETER should start with one of: $ : @ ?
   unset PARAMETER         Remove PARAMETER from the binding table
"""


def _parameter(s: Session, args) -> int:
    """.parameter clear|init|list|set NAME VALUE|unset NAME: the values bound to the
    statements' parameters (shell.c keeps them in temp.sqlite_parameters; here they live
    beside the connection, and go with it on .open). Anything else prints the help."""
    parameters = s.db.parameters
    action = args[1] if len(args) > 1 else ""
    if action in ("clear", "init") and len(args) == 2:
        if action == "clear":
            parameters.clear()
    elif action == "list" and len(args) == 2:
        width = max((len(name) for name in parameters), default=0)
        for name in sorted(parameters, key=lambda n: n.encode("utf-8", "surrogateescape")):
            quoted = s.db.execute("SELECT quote(?1)", (parameters[name],)).fetchone()[0]
            s.write(f"{name:<{width}} {quoted}\n")
    elif action == "set" and len(args) == 4:
        _set_parameter(s, args[2], args[3])
    elif action == "unset" and len(args) == 3:
        parameters.pop(args[2], None)
    else:
        s.write(_PARAMETER_HELP)
    return 0


def _set_parameter(s: Session, name: str, text: str) -> None:
    """VALUE is an SQL expression (`2+3`, `'x'`, `x'41'`); one that does not compile is
    taken as text, and one that fails as it runs sets nothing, as in shell.c, where the
    expression is put in `REPLACE INTO temp.sqlite_parameters VALUES(name, VALUE)`."""
    db = s.db
    try:
        rows = db.execute(f"VALUES(0,{text})", ())
        row = rows.fetchone()
    except sqlite3.Error:
        db.raise_if_stopped()
        if db.stepped:
            return
        row = None
    if row is None or len(row) != 2:
        db.parameters[name] = text
    else:
        db.parameters[name] = row[1]


def _quit(s: Session, args) -> int:
    return 2


def _exit(s: Session, args) -> int:
    if len(args) > 1:
        try:
            status = int(args[1], 0)
        except ValueError:
            status = 0
        if status:
            raise Exit(status & 0xFF)
    return 2


def _help(s: Session, args) -> int:
    s.write("".join(f".{line}\n" for line in _HELP))
    return 0


_HELP = (
    "bail on|off              Stop after hitting an error.  Default OFF",
    "databases                List names and files of attached databases",
    "dump ?OBJECTS?           Render database content as SQL",
    "echo on|off              Turn command echo on or off",
    "exit ?CODE?              Exit this program with return-code CODE",
    "headers on|off           Turn display of headers on or off",
    "help ?-all? ?PATTERN?    Show help text for PATTERN",
    "import FILE TABLE        Import data from FILE into TABLE",
    "indexes ?TABLE?          Show names of indexes",
    "mode MODE ?TABLE?        Set output mode",
    "nullvalue STRING         Use STRING in place of NULL values",
    "once ?OPTIONS? ?FILE?    Output for the next SQL command only to FILE",
    "open ?OPTIONS? ?FILE?    Close existing database and reopen FILE",
    "output ?FILE?            Send output to FILE or stdout if FILE is omitted",
    "parameter CMD ...        Manage SQL parameter bindings",
    "print STRING...          Print literal STRING",
    "quit                     Exit this program",
    "read FILE                Read input from FILE",
    "schema ?PATTERN?         Show the CREATE statements matching PATTERN",
    "separator COL ?ROW?      Change the column and row separators",
    "tables ?TABLE?           List names of tables matching LIKE pattern TABLE",
    "width NUM1 NUM2 ...      Set minimum column widths for columnar output",
)


# ---- the schema

def _names_in_columns(s: Session, names: list) -> None:
    """.tables and .indexes: names in as many columns as fit 80 characters, down then across."""
    if not names:
        return
    width = max(len(n) for n in names)
    per_line = max(1, 80 // (width + 2))
    rows = (len(names) + per_line - 1) // per_line
    out = []
    for i in range(rows):
        cells = [("" if j < rows else "  ") + names[j].ljust(width) for j in range(i, len(names), rows)]
        out.append("".join(cells) + "\n")
    s.write("".join(out))


def _tables(s: Session, args) -> int:
    if len(args) > 2:
        raise Usage("Usage: .tables ?TABLE?")
    rows = s.db.execute(
        "SELECT name FROM sqlite_schema WHERE type IN ('table','view') "
        "AND name NOT LIKE 'sqlite_%' AND name LIKE ?1 ORDER BY 1",
        (args[1] if len(args) > 1 else "%",)).fetchall()
    _names_in_columns(s, [r[0] for r in rows])
    return 0


def _indexes(s: Session, args) -> int:
    if len(args) > 2:
        raise Usage("Usage: .indexes ?LIKE-PATTERN?")
    rows = s.db.execute(
        "SELECT name FROM sqlite_schema WHERE type='index' AND tbl_name LIKE ?1 ORDER BY 1",
        (args[1] if len(args) > 1 else "%",)).fetchall()
    _names_in_columns(s, [r[0] for r in rows])
    return 0


def schema_line(sql: str, tail: str) -> str:
    """shell.c printSchemaLine: a table whose name was quoted is shown CREATE TABLE IF NOT
    EXISTS, and a statement ending in a comment gets the comment closed before its ';'."""
    if tail.startswith(";") and ("/*" in sql or "--" in sql):
        for ending in ("", "*/", "\n"):
            if complete(sql + ending + ";"):
                sql += ending
                break
    if sql.startswith(("CREATE TABLE '", 'CREATE TABLE "')):
        return "CREATE TABLE IF NOT EXISTS " + sql[13:] + tail
    return sql + tail


def _view_columns(s: Session, name: str) -> str:
    """The comment .schema adds under a view: its name and column names."""
    try:
        columns = s.db.execute(f"PRAGMA table_info({quote_name(name)})").fetchall()
    except sqlite3.Error:
        return ""
    if not columns:
        return ""
    return f"\n/* {quote_name(name)}({','.join(quote_name(c[1]) for c in columns)}) */"


def _schema(s: Session, args) -> int:
    words = [a for a in args[1:] if not a.startswith("-")]
    no_system = "--nosys" in args[1:]
    if len(words) > 1:
        raise Usage("Usage: .schema ?--indent? ?--nosys? ?LIKE-PATTERN?")
    where, params = ["sql IS NOT NULL"], []
    if words:
        pattern = words[0]
        glob = any(c in pattern for c in "*?[")
        where.insert(0, "lower(tbl_name) GLOB ?" if glob else "lower(tbl_name) LIKE ? ESCAPE '\\'")
        params.append(pattern.lower() if glob else pattern)
    if no_system:
        where.insert(0, "name NOT LIKE 'sqlite_%'")
    rows = s.db.execute(f"SELECT sql, type, name FROM sqlite_schema WHERE {' AND '.join(where)} "
                        "ORDER BY rowid", params).fetchall()
    out = []
    for sql, kind, name in rows:
        if kind == "view":
            sql += _view_columns(s, name)
        out.append(schema_line(sql, ";\n"))
    s.write("".join(out))
    return 0


def _dump(s: Session, args) -> int:
    patterns = [a for a in args[1:] if not a.startswith("-")] or [None]
    db = s.db
    s.write("PRAGMA foreign_keys=OFF;\nBEGIN TRANSACTION;\n")
    for pattern in patterns:
        where = "" if pattern is None else " AND tbl_name LIKE ?1"
        params = () if pattern is None else (pattern,)
        tables = db.execute("SELECT name, sql FROM sqlite_schema WHERE type='table' AND sql NOT NULL"
                            f"{where} ORDER BY tbl_name='sqlite_sequence', rowid", params).fetchall()
        for name, sql in tables:
            _dump_table(s, name, sql)
        others = db.execute("SELECT sql FROM sqlite_schema WHERE sql NOT NULL AND "
                            f"type IN ('index','trigger','view'){where} ORDER BY rowid", params).fetchall()
        s.write("".join(schema_line(sql, ";\n") for (sql,) in others))
    s.write("COMMIT;\n")
    return 0


def _dump_table(s: Session, name: str, sql: str) -> None:
    if name == "sqlite_sequence":
        s.write("DELETE FROM sqlite_sequence;\n")
    elif name.startswith("sqlite_"):
        return
    else:
        s.write(schema_line(sql, ";\n"))
    target, reals = quote_name(name), s.printer.reals
    out = []
    for row in s.db.execute(f"SELECT * FROM {quote_name(name)}"):
        values = ",".join(quoted_sql(v, reals, escape_newlines=True) for v in row)
        out.append(f"INSERT INTO {target} VALUES({values});\n")
        if len(out) >= 1024:
            s.write("".join(out))
            out = []
            s.ctx.budget.check_clock()
    s.write("".join(out))


def _databases(s: Session, args) -> int:
    for _, name, _path in s.db.execute("PRAGMA database_list").fetchall():
        shown = s.db.path if name == "main" and s.db.path else '""'
        s.write(f"{name}: {shown} {'r/o' if s.db.readonly else 'r/w'}\n")
    return 0


# ---- .import

_IMPORT_USAGE = """\
.import FILE TABLE       Import data from FILE into TABLE
   Options:
     --ascii               Use \\037 and \\036 as column and row separators
     --csv                 Use , and \\n as column and row separators
     --skip N              Skip the first N rows of input
     --schema S            Target table to be S.TABLE
     -v                    "Verbose" - increase auxiliary output
   Notes:
     *  If TABLE does not exist, it is created.  The first row of input
        determines the column names.
     *  If neither --csv or --ascii are used, the input mode is derived
        from the ".mode" output mode
     *  If FILE begins with "|" then it is a command that generates the
        input text."""


def _import(s: Session, args) -> int:
    from .importer import import_file    # the CSV reader is only needed here
    file = table = schema = None
    skip, verbose = 0, False
    separators: Optional[tuple[str, str]] = None        # (column, row) of --csv or --ascii
    words = iter(args[1:])
    for word in words:
        option = word[1:] if word.startswith("--") else word
        if option == "-skip":
            skip = _int(next(words, "0"))
        elif option == "-schema":
            schema = next(words, None)
        elif option == "-csv":
            separators = (",", "\n")
        elif option == "-ascii":
            separators = ("\x1f", "\x1e")
        elif option == "-v":
            verbose = True
        elif word.startswith("-"):
            raise UsageOnOutput(f'ERROR: unknown option: "{word}".  Usage:\n{_IMPORT_USAGE}')
        elif file is None:
            file = word
        elif table is None:
            table = word
        else:
            raise UsageOnOutput(f'ERROR: extra argument: "{word}".  Usage:\n{_IMPORT_USAGE}')
    if file is None:
        raise UsageOnOutput(f"ERROR: missing FILE argument. Usage:\n{_IMPORT_USAGE}")
    if table is None:
        raise UsageOnOutput(f"ERROR: missing TABLE argument. Usage:\n{_IMPORT_USAGE}")
    settings = s.settings
    if separators is None:
        if settings.mode == "csv" and settings.row_sep == "\r\n":
            settings.row_sep = SEP_ROW        # shell.c changes the output's separator too
        separators = (settings.col_sep, settings.row_sep)
    col_sep, row_sep = separators
    if len(col_sep) != 1:
        s.error("Error: multi-character column separators not allowed for import")
        return 1
    if len(row_sep) != 1:
        s.error("Error: multi-character row separators not allowed for import")
        return 1
    return import_file(s, file, table, schema, skip, col_sep, row_sep, verbose)


def _int(text: str) -> int:
    try:
        return int(text, 0)
    except ValueError:
        return 0


# (full name, shortest prefix accepted, handler), in the order shell.c tests them
_COMMANDS = (
    ("bail", 3, _flag("bail", "Usage: .bail on|off")),
    ("databases", 2, _databases),
    ("dump", 1, _dump),
    ("echo", 1, _flag("echo", "Usage: .echo on|off")),
    ("exit", 1, _exit),
    ("headers", 1, _headers),
    ("help", 1, _help),
    ("import", 3, _import),
    ("indexes", 3, _indexes),
    ("indices", 3, _indexes),
    ("mode", 1, _mode),
    ("nullvalue", 1, _nullvalue),
    ("once", 1, _output),
    ("open", 2, _open),
    ("output", 1, _output),
    ("parameter", 4, _parameter),
    ("print", 3, _print),
    ("quit", 1, _quit),
    ("read", 3, _read),
    ("schema", 2, _schema),
    ("separator", 3, _separator),
    ("tables", 2, _tables),
    ("timer", 2, _ignored),
    ("width", 1, _width),
)
