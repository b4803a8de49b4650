"""Attacks on the data tools (sqlite3, yq): reaching host files through SQLite (ATTACH, VACUUM
INTO, extensions, pragmas naming host directories), reading the host through dot-commands,
and bombs: recursive queries, giant strings and blobs, databases and imports past the
filesystem's bounds, YAML alias expansion (the billion laughs) and deep nesting."""
import sqlite3
import time

import pytest

from scripted_kernel import BashTool
from scripted_kernel.base.limits import ExecutionLimits


def run(script: str, limits: ExecutionLimits = None, files: dict = None):
    builder = BashTool.builder()
    if limits is not None:
        builder = builder.limits(limits)
    if files:
        builder = builder.files(files)
    return builder.build().execute(script)


@pytest.fixture
def host_database(tmp_path):
    path = tmp_path / "secret.db"
    conn = sqlite3.connect(path)
    conn.execute("create table secret(s)")
    conn.execute("insert into secret values ('TOPSECRET')")
    conn.commit()
    conn.close()
    return path


# ---- sqlite3: the host stays out of reach

def test_attach_of_a_host_database_is_refused(host_database):
    for target in (f"'{host_database}'", f"'file:{host_database}?mode=ro'", "'/etc/passwd'",
                   f"'{str(host_database)[:5]}' || '{str(host_database)[5:]}'"):
        r = run(f'sqlite3 :memory: "attach {target} as h; select * from h.secret"')
        assert r.stderr == "Error: in prepare, not authorized (23)\n", target
        assert r.exit_code == 23 and "TOPSECRET" not in r.stdout


def test_attach_from_a_script_file_in_the_sandbox_is_refused(host_database):
    sql = f"attach '{host_database}' as h;\nselect * from h.secret;\nselect 'went on';\n"
    r = run("sqlite3 :memory: '.read evil.sql'; echo rc=$?", files={"evil.sql": sql})
    assert r.stdout == "went on\nrc=1\n"
    assert r.stderr.startswith("Parse error near line 1: not authorized")


def test_memory_databases_may_be_attached():
    r = run("sqlite3 :memory: \"attach ':memory:' as m; create table m.t(x); insert into m.t values (1); "
            "select * from m.t\"")
    assert (r.stdout, r.exit_code) == ("1\n", 0)


def test_vacuum_into_a_host_file_is_refused(tmp_path):
    target = tmp_path / "copy.db"
    r = run(f"sqlite3 :memory: \"create table t(x); vacuum into '{target}'\"")
    assert r.exit_code == 23 and "authorization denied" in r.stderr
    assert not target.exists()


def test_extensions_and_host_directories_are_refused():
    r = run("sqlite3 :memory: \"select load_extension('/lib/x86_64-linux-gnu/libc.so.6')\"; echo rc=$?; "
            "sqlite3 :memory: \"pragma temp_store_directory='/tmp'\"; echo rc=$?; "
            "sqlite3 :memory: 'pragma max_page_count = 1000000000'; echo rc=$?; "
            "sqlite3 :memory: 'pragma temp_store = file'; echo rc=$?; "
            "sqlite3 :memory: 'pragma hard_heap_limit = 1'; echo rc=$?")
    assert r.stdout == "rc=1\nrc=23\nrc=23\nrc=23\nrc=23\n"
    assert "not authorized to use function: load_extension" in r.stderr


def test_dot_commands_read_and_write_the_sandbox_only(tmp_path):
    r = run("sqlite3 :memory: '.read /etc/passwd'; echo rc=$?; "
            "mkdir -p /etc && echo \"select 'sandbox file';\" > /etc/passwd && sqlite3 :memory: '.read /etc/passwd'; "
            "sqlite3 :memory: '.import /etc/shadow t'; echo rc=$?; "
            f"mkdir -p {tmp_path}; sqlite3 :memory: '.output {tmp_path}/out.txt' 'select 42'; cat {tmp_path}/out.txt")
    assert r.stdout == "rc=1\nsandbox file\nrc=1\n42\n"
    assert 'Error: cannot open "/etc/passwd"' in r.stderr
    assert not (tmp_path / "out.txt").exists()


# ---- sqlite3: bombs

def test_a_recursive_query_stops_at_the_deadline():
    started = time.monotonic()
    r = run("sqlite3 :memory: 'with recursive c(x) as (select 1 union all select x + 1 from c) "
            "select count(*) from c'; echo after", ExecutionLimits(timeout_seconds=1))
    assert r.exit_code == 124 and "timed out" in r.stderr and "after" not in r.stdout
    assert time.monotonic() - started < 30


def test_giant_strings_and_blobs_stop_at_the_string_limit():
    r = run("sqlite3 :memory: 'select length(zeroblob(1000000000))'; echo rc=$?; "
            "sqlite3 :memory: 'select length(randomblob(100000000))'; echo rc=$?; "
            "sqlite3 :memory: 'with recursive c(x) as (select 1 union all select x + 1 from c limit 1000000) "
            "select length(group_concat(x)) from c'; echo rc=$?",
            ExecutionLimits(max_string_length=1 << 20))
    assert r.stdout == "rc=18\nrc=18\nrc=18\n"
    assert r.stderr.count("string or blob too big") == 3


def test_a_database_cannot_outgrow_a_file():
    r = run("sqlite3 big.db 'create table t(x)' 'with recursive c(x) as (select 1 union all select x + 1 "
            "from c limit 100000) insert into t select printf(\"%0100d\", x) from c'; echo rc=$?; "
            "sqlite3 big.db 'select count(*) from t'",
            ExecutionLimits(max_file_bytes=1 << 20))
    assert r.stdout == "rc=13\n0\n"
    assert "database or disk is full (13)" in r.stderr


def test_import_of_a_huge_file_ends_at_the_bounds():
    make = ("awk 'BEGIN { for (i = 0; i < 200000; i++) print i \",aaaaaaaaaaaaaaaaaaaa,bbbbbbbbbbbbbbbbbbbb\" }' "
            "> huge.csv; ")
    r = run(make + "sqlite3 h.db 'create table t(a, b, c)' '.import --csv huge.csv t'; echo rc=$?; "
            "sqlite3 h.db 'select count(*) < 200000 from t'; wc -c < h.db",
            ExecutionLimits(max_file_bytes=4 << 20))
    assert r.stdout.startswith("rc=1\n1\n"), r.stdout + r.stderr
    assert "database or disk is full" in r.stderr
    assert int(r.stdout.split("\n")[2]) <= 4 << 20


# ---- sqlite3: .open and .parameter

def test_open_reaches_only_the_sandbox(host_database):
    r = run(f"mkdir d; sqlite3 :memory: '.open {host_database}' 'select * from secret'; echo rc=$?; "
            "sqlite3 :memory: '.open d' '.open ../../../../etc/passwd' '.open /etc/passwd' 'select 3'; echo rc=$?")
    assert r.stdout == "rc=1\n3\nrc=0\n"
    assert "no such table: secret" in r.stderr
    assert r.stderr.endswith("".join(
        f'Error: unable to open database "{name}": unable to open database file\n'
        for name in ("d", "../../../../etc/passwd", "/etc/passwd")))
    assert "Traceback" not in r.stderr


def test_open_of_a_file_at_the_size_limit_or_past_it():
    r = run("truncate -s 2M z.db; truncate -s 3M big.db; sqlite3 :memory: '.open z.db' '.tables'; echo rc=$?; "
            "sqlite3 :memory: '.open big.db' 'select 2'; echo rc=$?",
            ExecutionLimits(max_file_bytes=2 << 20))
    assert r.stdout == "rc=1\n2\nrc=0\n"
    assert r.stderr == ("truncate: failed to truncate 'big.db' at 3145728 bytes: File too large\n"
                        "Error: file is not a database\n")


def test_parameter_values_stay_within_the_bounds():
    r = run("v=$(head -c 1000000 /dev/zero | tr '\\0' x); sqlite3 :memory: \".parameter set :a '$v'\" "
            "'.parameter set :b randomblob(2000000000)' '.parameter set :c zeroblob(1e12)' "
            "\".parameter set :d \\\"printf('%.*c', 2000000000, 'x')\\\"\" "
            "'select length(:a), :b, :c, length(:d)'; echo rc=$?", ExecutionLimits(max_string_length=1 << 20))
    assert (r.stdout, r.stderr) == ("1000000|||\nrc=0\n", "")


# ---- yq: bombs

def billion_laughs() -> str:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(8):
        this, prev = chr(98 + i), chr(97 + i)
        lines.append(f"{this}: &{this} [" + ",".join([f"*{prev}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def test_yaml_alias_expansion_is_refused():
    started = time.monotonic()
    r = run("yq -c . lol.yaml; echo rc=$?; yq -y .i lol.yaml; echo rc=$?; yq -c '.b[0][0]' lol.yaml",
            files={"lol.yaml": billion_laughs()})
    assert r.stdout == 'rc=1\nrc=1\n'
    assert r.stderr == "yq: Error: detected unsafe YAML entity expansion\n" * 3
    assert time.monotonic() - started < 30


def test_a_small_alias_fan_out_is_fine():
    r = run("yq -c '.b[0]' lol.yaml", files={"lol.yaml": billion_laughs().split("\nc:")[0] + "\n"})
    assert (r.stdout, r.exit_code) == ('["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n', 0)


@pytest.mark.parametrize("document", [
    "[" * 200_000 + "]" * 200_000,                                  # flow style
    "".join("  " * i + "- \n" for i in range(3000)),                 # block style
    "{a: " * 50_000 + "1" + "}" * 50_000,
])
def test_deeply_nested_yaml_is_refused_without_crashing(document):
    r = run("yq . deep.yaml; echo rc=$?", files={"deep.yaml": document})
    assert r.stdout == "rc=1\n"
    assert r.stderr == "yq: Error: deep.yaml: the document is nested deeper than 1000 levels\n"


def test_nesting_is_refused_at_the_same_depth_whichever_layer_refuses():
    """PyYAML 6.0.4's libyaml refuses 1001 flow levels itself, before our count of the events
    sees them (its scanner reads ahead); both refusals give our message, 1000 levels pass."""
    pytest.importorskip("tomllib")
    r = run("yq -c . ok.yaml | wc -c; yq -c . deep.yaml; echo rc=$?; tomlq -c . deep.toml; echo rc=$?",
            files={"ok.yaml": "[" * 1000 + "]" * 1000, "deep.yaml": "x: " + "[" * 1001 + "]" * 1001,
                   "deep.toml": "a = " + "[" * 1001 + "]" * 1001 + "\n"})
    assert r.stdout == "2001\nrc=1\nrc=1\n"
    assert r.stderr == ("yq: Error: deep.yaml: the document is nested deeper than 1000 levels\n"
                        "tomlq: Error: the document is nested deeper than 1000 levels\n")


def test_a_syntax_error_deep_inside_is_reported_as_one():
    r = run("yq . deep.yaml; echo rc=$?", files={"deep.yaml": "[" * 900 + "a: b: c" + "]" * 900})
    assert r.stdout == "rc=1\n"
    assert r.stderr.startswith("yq: Error: deep.yaml: line 1, column ")
    assert "nested" not in r.stderr and r.stderr.count("\n") == 1


def test_depth_built_through_aliases_is_refused():
    chain = "a0: &a0 [1]\n" + "".join(f"a{i}: &a{i} [*a{i - 1}]\n" for i in range(1, 3000))
    r = run("yq -c .a5 chain.yaml; echo rc=$?", files={"chain.yaml": chain})
    assert r.stdout == "rc=1\n"
    assert r.stderr == "yq: Error: the document is nested deeper than 1000 levels\n"


def test_nesting_within_the_bound_works():
    r = run("yq -c . deep.yaml", files={"deep.yaml": "[" * 900 + "]" * 900})
    assert (r.stdout, r.exit_code) == ("[" * 900 + "]" * 900 + "\n", 0)


def test_a_jq_program_over_yaml_stops_at_the_deadline():
    # a loop in constant memory, so that only the deadline can end it on any machine
    r = run("echo 'a: 1' | yq 'last(range(1e18))'; echo after", ExecutionLimits(timeout_seconds=1))
    assert r.exit_code == 124 and "after" not in r.stdout


def test_a_lowered_recursion_limit_is_raised_again_for_a_run():
    # hypothesis (or a host) may lower Python's recursion limit after the engine's import: the
    # 1,000-level document then failed inside the full test run only
    import sys
    saved = sys.getrecursionlimit()
    sys.setrecursionlimit(3000)
    try:
        r = run("yq -c . ok.yaml | wc -c", files={"ok.yaml": "[" * 1000 + "]" * 1000})
    finally:
        sys.setrecursionlimit(max(saved, sys.getrecursionlimit()))
    assert r.stdout == "2001\n", r.stderr
