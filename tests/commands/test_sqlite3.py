"""sqlite3 against the real sqlite3 shell (Debian's `sqlite3` package, SQLite 3.40): each
script runs in real bash in an empty temporary directory and in a BashTool over a MemoryFs with
the same files; stdout, the exit status and stderr must match."""
import shutil
import sqlite3
import subprocess
import tempfile
from pathlib import Path

import pytest

from support import ours_with_files as ours, real_with_files as real
from scripted_kernel import BashTool

SQLITE3 = shutil.which("sqlite3")
needs_sqlite3 = pytest.mark.skipif(SQLITE3 is None, reason="the sqlite3 program is not installed")

PEOPLE = "name,age\nann,30\n\"bob, jr\",4\ncy,\n"
RAGGED = 'a,b\n1,2\n\n3\n4,5,6\n"x\ny",7\n\n'
FILES = {"people.csv": PEOPLE, "ragged.csv": RAGGED, "dup.csv": "a,a\n1,2\n",
         "empty.csv": "", "q.sql": "create table q(x);\ninsert into q values(1),(2);\nselect sum(x) from q;\n",
         "bad.sql": "select 1;\nselect * from nope;\nselect 2;\n"}

SETUP = ("sqlite3 t.db \"create table t(a integer primary key, b text, c real); "
         "insert into t(b, c) values ('x', 1.5), (NULL, 0.1), ('it''s', -2.0), ('ünï', 1e20);\"; ")


CASES = {
    # output modes
    "list": SETUP + "sqlite3 t.db 'select * from t'",
    "csv header": SETUP + "sqlite3 -header -csv t.db 'select * from t'",
    "csv quoting": "sqlite3 -csv :memory: \"select '', 'a b', 'q\\\"x', 'c,d', NULL, 'plain'\"",
    "json": SETUP + "sqlite3 -json t.db 'select * from t'",
    # printf and format run through a guard (bounds.PrintfGuard) that hands them to SQLite's own
    "printf": "sqlite3 :memory: \"select printf('%5.2f|%-6d|%x|%o|%e|%g|%s|%q|%Q|%w|%%|%c', 3.14159, 42, 255, 8, "
              "12345.678, 0.0001, 'str', 'it''s', NULL, 'a\\\"b', 'xyz'), printf('%.*c|%*c|%3c|%.2c', 5, 'ab', 4, "
              "'q', 'é', 'z'), format('%!.3f %,d %lld %.*s', 1.5, 1234567, 9, '3', 'abcdef'), printf(NULL), "
              "printf('%d %d', 1), printf('%.*c', -3, 'n'), printf('%.*c', 'x', 'm'), printf('no args'), "
              "printf(x'2564', 7), printf('%.*c', 4294967299, 'w')\"",
    "json blob and reals": "sqlite3 -json :memory: \"select x'41', 0.1+0.2, 123456789012345678.0, 1e300*1e300\"",
    "line": SETUP + "sqlite3 -line t.db 'select * from t; select 1 as longer_name'",
    "column": SETUP + "sqlite3 -column -header t.db 'select * from t'",
    "column no header": SETUP + "sqlite3 -column t.db 'select * from t'",
    "table": SETUP + "sqlite3 -table t.db 'select * from t'",
    "box": SETUP + "sqlite3 -box t.db 'select b, c from t'",
    "markdown": SETUP + "sqlite3 -markdown t.db 'select * from t'",
    "quote": SETUP + "sqlite3 -quote -header t.db \"select *, x'00ff' from t\"",
    "tabs": SETUP + "sqlite3 -tabs -header t.db 'select * from t'",
    "html": SETUP + "sqlite3 -html -header t.db 'select * from t'",
    "separator": SETUP + "sqlite3 -separator ';' -newline '|' -nullvalue NULL t.db 'select * from t'",
    "empty result": SETUP + "sqlite3 -header -csv t.db 'select * from t where 0'; sqlite3 -json t.db 'select 1 where 0'",
    "reals": "sqlite3 :memory: 'select 1e20, 1e-5, 0.1+0.2, -0.0, 1.0, 123456789012345678.0, 2.5e-7, 1e15, 1e16'",
    "dot modes": SETUP + "printf '.mode csv\\n.headers on\\nselect * from t;\\n.mode column\\nselect b from t;\\n"
                         ".mode\\n.mode tabs\\n.mode\\n.mode insert tb\\nselect a, b from t;\\n' | sqlite3 t.db",
    "mode column sets headers": "printf '.mode column\\nselect 1 as a;\\n.mode table\\nselect 2 as b;\\n' | sqlite3",
    "bad mode": "printf '.mode nope\\nselect 1;\\n' | sqlite3; echo rc=$?",
    "separator dot": SETUP + "printf '.separator \",\" \"\\\\n--\\\\n\"\\nselect a, b from t;\\n' | sqlite3 t.db",
    "nullvalue": SETUP + "printf '.nullvalue (null)\\nselect b from t;\\n' | sqlite3 t.db",
    "wrapping": "printf \".mode table\\nselect '%s' as a, 'short' as b;\\n.mode column\\nselect 'aaaa bbbb cccc dddd eeee ffff "
                "gggg hhhh iiii jjjj kkkk llll mmmm nnnn oooo' as w;\\n.mode box --wrap 10\\nselect 'hello world this is long' as q;"
                "\\n.mode box --wrap 10 --wordwrap on\\nselect 'hello world this is long' as q;\\n.mode qbox\\nselect 'x', 1, NULL;"
                "\\n.mode\\n.mode table --quote\\nselect 'x', 1, NULL, 2.5;\\n\" $(printf 'x%.0s' $(seq 70)) | sqlite3",
    "several lines in a cell": "printf \".mode table\\nselect 'a'||char(10)||'b' as x, 1 as y union all select 'c', 2 union all select 'd', 3;"
                               "\\n.mode box\\nselect 'a'||char(10)||'b' as x, 1 as y union all select 'c', 2;\\n.mode column"
                               "\\nselect 'a'||char(10)||'b' as x, 1 as y union all select 'c', 2;\\n.mode markdown\\nselect 'a'||char(10)||"
                               "'b' as x, 1 as y union all select 'c'||char(9)||'d', 2;\\n.mode table\\n.width 3\\nselect 'abcdefgh' as longname;\\n\" | sqlite3",
    "command-line column modes do not wrap": "sqlite3 -table :memory: \"select printf('%.70c', 'y') as a\"; sqlite3 -column :memory: .mode",
    "width": "printf '.mode column\\n.width 6 -4\\nselect 1 as a, 2 as b;\\n' | sqlite3",
    # SQL, statements and errors
    "several arguments": SETUP + "sqlite3 t.db 'select count(*) from t' 'select max(a) from t' .tables; echo rc=$?",
    "error in argument": SETUP + "sqlite3 t.db 'select 1; select * from x; select 2'; echo rc=$?",
    "syntax error context": "sqlite3 :memory: 'selec 3; select 2;'; echo rc=$?",
    "no such column": SETUP + "sqlite3 t.db 'select zz from t'; echo rc=$?",
    "error past column 25": SETUP + "sqlite3 t.db 'select a, b, c, a, b, c, a, b, c from t where nothing = 1'; echo rc=$?",
    "constraint": "sqlite3 u.db 'create table u(a unique); insert into u values(1); insert into u values(1);'; echo rc=$?; "
                  "sqlite3 u.db 'select count(*) from u'",
    "overflow": "sqlite3 :memory: 'select abs(-9223372036854775808)'; echo rc=$?",
    "incomplete": "sqlite3 :memory: 'select 1,'; echo rc=$?",
    "stdin errors continue": "printf 'select 1;\\n\\nselect\\n *\\n from x;\\nselect 2;\\n' | sqlite3; echo rc=$?",
    "stdin syntax error": "printf 'select 1; selec 3; select 2;\\nselect 4;\\n' | sqlite3; echo rc=$?",
    "stdin runtime error": "printf 'create table u(a unique);\\ninsert into u values(1);\\ninsert into u values(1);\\nselect 9;\\n' | sqlite3; echo rc=$?",
    "stdin incomplete at end": "printf 'select 1;\\nselect (' | sqlite3; echo rc=$?",
    "stdin no semicolon at end": "printf 'select 1' | sqlite3; echo rc=$?",
    "bail": "printf 'select 1;\\nselect * from x;\\nselect 2;\\n' | sqlite3 -bail; echo rc=$?",
    "comments and blank lines": "printf -- '-- a comment\\n\\n/* block\\n comment */\\nselect 1; -- trailing\\n  select 2;\\n# hash\\n' | sqlite3; echo rc=$?",
    "trigger body": "sqlite3 :memory: 'create table a(x); create table b(y); create trigger tr after insert on a begin insert into b values(new.x); insert into b values(new.x * 2); end; insert into a values(5); select * from b;'",
    "unbound parameters": "sqlite3 :memory: 'select ?, :x, 1'",
    "cmd option": SETUP + "sqlite3 -cmd '.mode csv' -cmd '.headers on' t.db 'select a, b from t'",
    "cmd error": "sqlite3 -cmd 'select * from nope' :memory: 'select 1'; echo rc=$?; "
                 "sqlite3 -bail -cmd 'select * from nope' :memory: 'select 1'; echo rc=$?",
    "unknown option": "sqlite3 --bogus :memory: 'select 1'; echo rc=$?",
    "missing option value": "sqlite3 :memory: -separator; echo rc=$?",
    "version": "sqlite3 -version",
    "unknown dot command": "sqlite3 :memory: .bogus 'select 5'; echo rc=$?; printf 'select 1;\\n.bogus\\nselect 2;\\n' | sqlite3; echo rc=$?",
    "dot usage": "sqlite3 :memory: .headers; echo rc=$?",
    "quit and exit": "sqlite3 :memory: .quit 'select 1'; echo rc=$?; sqlite3 :memory: '.exit 3' 'select 1'; echo rc=$?; "
                     "printf 'select 1;\\n.quit\\nselect 2;\\n' | sqlite3; echo rc=$?",
    "print": "sqlite3 :memory: '.print hello \"big world\"' 'select 1'",
    "no database": "echo 'select 1+1;' | sqlite3; echo rc=$?",
    # the schema
    "tables schema dump": SETUP + "sqlite3 t.db 'create index ib on t(b); create view v as select a, b from t; "
                                  "create table \"odd name\"(x); insert into \"odd name\" values (char(10)), (x\"00\");' "
                                  ".tables .schema '.schema t' '.schema nomatch' .dump '.tables t%' '.indexes'",
    "dump newlines": "sqlite3 :memory: \"create table n(x); insert into n values('a' || char(10) || 'b'), ('c' || char(13));\" .dump",
    "dump empty": "sqlite3 :memory: .dump",
    "autoincrement": "sqlite3 a.db 'create table t(id integer primary key autoincrement, v); insert into t(v) values (1),(2)' "
                     ".schema .dump '.schema --nosys'",
    "query plan": "sqlite3 -json :memory: 'create table t(a,b); create table u(c); explain query plan select * from t, u "
                  "where a in (select c from u) order by b'; sqlite3 :memory: '  EXPLAIN   query plan select 1 union select 2'",
    "indexes": "sqlite3 :memory: 'create table t(a unique, b); create index ib on t(b)' .indexes '.indexes t'",
    "databases": "sqlite3 :memory: .databases",
    "heredoc": "sqlite3 h.db <<'EOF'\n.headers on\n.mode column\ncreate table t(a text, b int);\n"
               "insert into t values('x', 1), ('yy', 22);\nselect * from t order by b desc;\nEOF",
    "transactions": "sqlite3 tx.db 'create table t(a); begin; insert into t values(1); commit; begin; "
                    "insert into t values(2); rollback;' 'select * from t'",
    "json functions": "sqlite3 :memory: \"select json_object('a', 1, 'b', json_array(1,2)), json_extract('{\\\"k\\\":[5]}', '$.k[0]')\"",
    "stdin ignored with sql arguments": "echo 'select 9;' | sqlite3 :memory: 'select 1'",
    # files
    "creates empty file": "sqlite3 new.db 'select 1'; ls -l new.db | cut -d' ' -f5; sqlite3 new2.db '.mode csv'; ls new2.db 2>&1 | wc -l",
    "changes persist": "sqlite3 p.db 'create table p(x)'; sqlite3 p.db 'insert into p values(7)'; sqlite3 p.db 'select * from p'",
    "failed statement keeps earlier ones": "sqlite3 f.db 'create table f(x not null); insert into f values(1); insert into f values(NULL)'; "
                                           "echo rc=$?; sqlite3 f.db 'select * from f'",
    "open transaction is rolled back": "sqlite3 r.db 'create table r(x); begin; insert into r values(1);'; sqlite3 r.db 'select count(*) from r'",
    "not a database": "echo hello > g.txt; sqlite3 g.txt 'select 1'; echo rc=$?; sqlite3 g.txt .tables; echo rc=$?; "
                      "sqlite3 g.txt 'select * from sqlite_schema'; echo rc=$?",
    "directory": "mkdir dd; sqlite3 dd 'select 1'; echo rc=$?",
    "missing directory": "sqlite3 nodir/x.db 'select 1'; echo rc=$?",
    "read": "sqlite3 :memory: '.read q.sql'; echo rc=$?; sqlite3 :memory: '.read bad.sql'; echo rc=$?; "
            "sqlite3 :memory: '.read nofile.sql'; echo rc=$?",
    "read recursion": "echo '.read r.sql' > r.sql; sqlite3 :memory: '.read r.sql' 'select 1'; echo rc=$?",
    "read from stdin": "printf 'select 0;\\n.read bad.sql\\nselect 3;\\n' | sqlite3; echo rc=$?",
    "import csv": "sqlite3 i.db '.import --csv people.csv people' .schema 'select * from people' "
                  "'select typeof(age) from people'; echo rc=$?",
    "import into existing": "sqlite3 i.db '.import --csv people.csv people' '.import --csv --skip 1 people.csv people' "
                            "'select count(*) from people'",
    "import by mode": "printf '.mode csv\\n.import people.csv p2\\n.headers on\\nselect * from p2;\\n' | sqlite3; echo rc=$?",
    "import ragged": "sqlite3 -quote :memory: '.import --csv ragged.csv t' 'select * from t'; echo rc=$?",
    "import duplicate names": "sqlite3 :memory: '.import --csv dup.csv t' .schema",
    "import errors": "sqlite3 :memory: '.import --csv nofile.csv x'; echo rc=$?; sqlite3 :memory: '.import people.csv'; echo rc=$?; "
                     "sqlite3 :memory: '.import --csv empty.csv t'; echo rc=$?",
    "output file": SETUP + "printf '.output out.txt\\nselect a from t;\\n.output\\nselect 9;\\n.once one.txt\\nselect 8;\\nselect 7;\\n' | sqlite3 t.db; "
                           "cat out.txt one.txt",
    # .open: the database before written back, FILE (or a new in-memory one) in its place; one
    # that cannot be opened is said and replaced by an in-memory one, and the shell goes on
    ".open": "sqlite3 :memory: '.open x.db' 'create table t(a)' 'insert into t values(1)' '.open y.db' "
             "'.tables' '.open x.db' 'select * from t'; echo rc=$?; ls; sqlite3 x.db '.open --new x.db' '.tables'; "
             "sqlite3 :memory: '.open' '.databases'; sqlite3 y.db 'create table y(b)' '.op x.db' '.tables'",
    ".open errors": "mkdir dir; sqlite3 :memory: '.open dir' 'select 1' '.databases'; echo rc=$?; "
                    "sqlite3 :memory: '.open nodir/x.db' 'select 2'; echo rc=$?; sqlite3 :memory: '.open dir'; "
                    "echo rc=$?; sqlite3 :memory: '.open a b'; echo rc=$?; sqlite3 :memory: '.open --bogus a'; "
                    "echo rc=$?; printf junk > j.db; sqlite3 :memory: '.open j.db' 'select 1'; echo rc=$?; "
                    "sqlite3 :memory: 'create table z(a)'; sqlite3 :memory: '.open --readonly x.db' "
                    "'create table z(a)'; echo rc=$?; ls",
    # .parameter: VALUE is an SQL expression, text when it does not compile, nothing when it
    # fails as it runs; statements bind :a @a $a ?N by name and a nameless ? as ?N
    ".parameter": "printf '%s\\n' '.parameter set :a 1' \".parameter set @b 'hello'\" '.parameter set $c 2+3' "
                  "\".parameter set ?1 x'41'\" \".parameter set :d \\\"quoted 'x'\\\"\" '.param set :f abc' "
                  "'.parameter set :g zeroblob(2000000000)' '.parameter list' "
                  "'select :a, @b, $c, ?1, :d, :f, :zz;' '.parameter unset :a' '.parameter unset :nope' "
                  "'.parameter list' 'select :a;' '.parameter set ?2 5' 'select ?, ?;' '.parameter clear' "
                  "'.parameter list' '.parameter init' 'select :d;' | sqlite3; echo rc=$?",
    ".parameter usage": "sqlite3 :memory: '.parameter'; echo rc=$?; sqlite3 :memory: '.parameter set :e'; "
                        "sqlite3 :memory: '.parameter clear x' '.parameter foo' '.parameter set :a 1 2'; echo rc=$?; "
                        "sqlite3 :memory: '.parameter set :a 5' '.open' '.parameter list' 'select :a'",
}


@needs_sqlite3
@pytest.mark.parametrize("name", sorted(CASES))
def test_like_the_sqlite3_shell(name):
    script = CASES[name]
    assert ours(script, FILES) == real(script, FILES)


@needs_sqlite3
def test_reads_a_database_the_real_shell_wrote_and_writes_one_it_reads():
    with tempfile.TemporaryDirectory() as tmp:
        made = Path(tmp) / "made.db"
        subprocess.run([SQLITE3, str(made), "create table m(x, y); insert into m values (1, 'one'), (2, 'two')"],
                       check=True)
        data = made.read_bytes()
    tool = BashTool.builder().files({"made.db": data}).build()
    r = tool.execute("sqlite3 made.db 'select y from m order by x' \"insert into m values (3, 'three')\"")
    assert (r.stdout, r.exit_code) == ("one\ntwo\n", 0)
    written = tool.execute("base64 -w0 made.db").stdout
    import base64
    with tempfile.TemporaryDirectory() as tmp:
        back = Path(tmp) / "back.db"
        back.write_bytes(base64.b64decode(written))
        out = subprocess.run([SQLITE3, str(back), "select group_concat(y) from m"], capture_output=True, text=True)
    assert out.stdout == "one,two,three\n"


def test_memory_databases_are_never_written():
    tool = BashTool()
    r = tool.execute("cd /tmp && sqlite3 :memory: 'create table x(y)' && sqlite3 </dev/null && "
                     "echo 'select 1;' | sqlite3 'create table z(y)' && ls")
    # the first operand is the file name: `sqlite3 'create table z(y)'` names a file, as in the
    # shell, which creates it when it first opens the database
    assert r.stdout == "1\ncreate table z(y)\n"


def test_statements_split_where_sqlite_splits_them():
    from scripted_kernel.commands.sqlite3.shell import statements
    sql = "select ';'; select \"a;b\" -- c;\n; create trigger t after insert on x begin select 1; end; /* ; */"
    parts = [sql[a:b] for a, b in statements(sql)]
    assert parts == ["select ';';", "select \"a;b\" -- c;\n;",
                     "create trigger t after insert on x begin select 1; end;"]


def test_a_wal_database_opens():
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "w.db"
        conn = sqlite3.connect(path)
        conn.execute("pragma journal_mode=wal")
        conn.execute("create table w(x)")
        conn.execute("insert into w values (42)")
        conn.commit()
        conn.execute("pragma wal_checkpoint(truncate)")
        conn.close()
        data = path.read_bytes()
    r = BashTool.builder().files({"w.db": data}).build().execute("sqlite3 w.db 'select x from w'")
    assert (r.stdout, r.exit_code) == ("42\n", 0)


def _damaged_schema() -> bytes:
    """A database whose view's SQL holds a byte that is not UTF-8, so that SQLite's error
    quotes it (Python's module raised UnicodeDecodeError building the message)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "d.db"
        conn = sqlite3.connect(path)
        conn.executescript("create table t(a); insert into t values (1); create view v as select * from t;")
        conn.close()
        data = path.read_bytes()
    return data.replace(b"create view v", b"create vi\xc3w v")


NOT_UTF8 = {"d.db": _damaged_schema(), "latin1.csv": b"a,b\n\xe9,1\n"}


@needs_sqlite3
@pytest.mark.parametrize("script", [
    "sqlite3 d.db 'select * from t'; echo rc=$?; sqlite3 d.db .tables; echo rc=$?",
    "sqlite3 x.db '.import --csv latin1.csv t' 'select hex(a), typeof(b) from t'; echo rc=$?",
])
def test_bytes_that_are_not_utf8_like_the_sqlite3_shell(script):
    assert ours(script, NOT_UTF8) == real(script, NOT_UTF8)


def test_sql_that_is_not_utf8_is_an_error_not_a_crash():
    """Python's module passes statements to SQLite as UTF-8 only (the shell takes the bytes):
    such a statement is refused with an error, where it was an internal error."""
    r = BashTool().execute("sqlite3 :memory: \"select '$(printf '\\xe9')'\"; echo rc=$?; "
                           "printf \"select 'a\\xe9';\\nselect 2;\\n\" | sqlite3 :memory:; echo rc=$?")
    assert r.stdout == "rc=1\n2\nrc=1\n"
    assert r.stderr == ("Error: in prepare, the statement is not valid UTF-8\n"
                        "Parse error near line 1: the statement is not valid UTF-8\n")


def test_absent_in_logic_mode():
    from scripted_kernel import ScriptedTool
    r = ScriptedTool.builder("t").build().execute("sqlite3 :memory: 'select 1'")
    assert r.exit_code == 127


def test_absent_before_python_3_11(monkeypatch):
    """The database is loaded and saved with Connection.deserialize and serialize and bounded
    with setlimit, all new in Python 3.11: on 3.10 every run failed with an AttributeError, so
    the command is not registered there (as tomlq is not)."""
    import importlib
    import sys

    from scripted_kernel.commands import registry
    from scripted_kernel.commands.sqlite3 import command as registration
    for table in ("COMMANDS", "_LOADED", "_HOME"):
        monkeypatch.setattr(registry, table, {})
    monkeypatch.setattr(registry, "FILE_COMMANDS", set())
    monkeypatch.setattr(sys, "version_info", (3, 10, 14, "final", 0))
    registry.index()
    assert "sqlite3" not in registry.COMMANDS and "jq" in registry.COMMANDS
    importlib.reload(registration)
    assert "sqlite3" not in registry.COMMANDS and "sqlite3" not in registry._LOADED
