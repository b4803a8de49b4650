"""python3 / python on pydantic-monty: the command line CPython reads, the program's stdin,
stdout, stderr, sys.argv and exit status, its files through the script's filesystem, its
environment, tracebacks. Where CPython gives the same answer, each case runs in real bash with
the real python3 too (differential); the attacks are in tests/hardening/test_python3_attacks.py."""
import json
import re
import shutil
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest

from support import ours_with_files as ours, real_with_files as real
from scripted_kernel import BashTool, MemoryFs, ScriptedTool
from scripted_kernel.base.limits import ExecutionLimits

try:
    import pydantic_monty  # noqa: F401
    HAVE_MONTY = True
except ImportError:
    HAVE_MONTY = False

needs_monty = pytest.mark.skipif(not HAVE_MONTY, reason="the python extra (pydantic-monty) is not installed")
needs_real = pytest.mark.skipif(not (shutil.which("bash") and shutil.which("python3", path="/usr/bin:/bin")
                                     and shutil.which("jq", path="/usr/bin:/bin")),
                                reason="real bash, python3 and jq are needed for the comparison")

DATA_JSON = '{"users": [{"name": "ann", "age": 31, "tags": ["a", "b"]}, {"name": "bob", "age": 17, "tags": []}]}\n'
PEOPLE_CSV = 'name,age,city\nann,31,"Paris, FR"\nbob,17,Oslo\ncy,45,Rome\n'
FILES = {"data.json": DATA_JSON, "people.csv": PEOPLE_CSV}

# Each program's output, status and stderr are the same under CPython and Monty.
SAME_AS_CPYTHON = {
    "json reshaped between cat and jq":
        "cat data.json | python3 -c 'import json, sys\n"
        "users = json.load(sys.stdin)[\"users\"]\n"
        "print(json.dumps([{\"who\": u[\"name\"], \"adult\": u[\"age\"] >= 18, \"n\": len(u[\"tags\"])}\n"
        "                  for u in users]))'"
        " | jq -c '.[] | select(.adult) | .who'",
    "csv to json lines through a pipeline":
        "cat people.csv | python3 -c 'import csv, json, sys\n"
        "for row in csv.DictReader(sys.stdin):\n"
        "    print(json.dumps({\"name\": row[\"name\"], \"age\": int(row[\"age\"]), \"city\": row[\"city\"]}))'"
        " | jq -s 'map(select(.age > 20)) | map(.city)'",
    "csv written to sys.stdout":
        "python3 -c 'import csv, sys\n"
        "w = csv.writer(sys.stdout, lineterminator=\"\\n\")\n"
        "w.writerow([\"a\", \"b,c\", 3])\nw.writerow([\"x\", \"y\", 4])'",
    "json.dump to sys.stdout": "python3 -c 'import json, sys; json.dump({\"k\": [1, 2]}, sys.stdout); print()'",
    "sys.argv of -c": "python3 -c 'import sys; print(sys.argv)' one 'two words' -x",
    "sys.argv of a file": "printf 'import sys\\nprint(sys.argv[1:])\\n' > p.py; python3 p.py a -b",
    "sys.argv of stdin": "echo 'import sys; print(sys.argv)' | python3 - a b; "
                         "echo 'import sys; print(sys.argv)' | python3",
    "from sys import argv": "python3 -c 'from sys import argv as a, exit\nprint(a[1:]); exit(4)' q; echo $?",
    "stdin read by lines": "printf 'x\\ny\\n' | python3 -c 'import sys\nfor line in sys.stdin:\n"
                           "    print(line.strip().upper())'",
    "stdin after a script from a file": "printf 'import sys\\nprint(len(sys.stdin.read()))\\n' > p.py; "
                                        "echo hello | python3 p.py",
    "print to stderr and stdout": "python3 -c 'import sys; print(\"e\", file=sys.stderr); "
                                  "sys.stdout.write(\"o\\n\")' 2>&1",
    "print to a file object": "python3 -c 'f = open(\"o.txt\", \"w\"); print(\"a\", 1, sep=\"-\", file=f); "
                              "f.close()'; cat o.txt",
    "sys.exit(3)": "python3 -c 'import sys; sys.exit(3)'; echo $?",
    "sys.exit()": "python3 -c 'import sys; print(1); sys.exit()'; echo $?",
    "sys.exit(None)": "python3 -c 'import sys; sys.exit(None)'; echo $?",
    "sys.exit(message)": "python3 -c 'import sys; sys.exit(\"no input\")' 2>&1; echo $?",
    "sys.exit(256) wraps": "python3 -c 'import sys; sys.exit(256)'; echo $?",
    "sys.exit(-1)": "python3 -c 'import sys; sys.exit(-1)'; echo $?",
    "sys.exit(True)": "python3 -c 'import sys; sys.exit(True)'; echo $?",
    "exit() builtin": "python3 -c 'exit(5)'; echo $?",
    "SystemExit caught": "python3 -c 'import sys\ntry:\n    sys.exit(2)\nexcept SystemExit as e:\n"
                         "    print(\"caught\", e)'; echo $?",
    "exit inside a function": "python3 -c 'import sys\ndef f():\n    sys.exit(7)\nf()'; echo $?",
    "raise SystemExit": "python3 -c 'raise SystemExit'; echo $?",
    "file written by python read by cat and back":
        "python3 -c 'open(\"out.txt\", \"w\").write(\"from python\\n\")'; cat out.txt; echo 'from bash' >> out.txt; "
        "python3 -c 'print(open(\"out.txt\").read().splitlines())'",
    "pathlib round trip":
        "mkdir -p d; echo x > d/a.txt; python3 -c 'from pathlib import Path\n"
        "p = Path(\"d\")\n(p / \"b.txt\").write_text(\"y\\n\")\nprint(sorted(f.name for f in p.iterdir()))\n"
        "print((p / \"a.txt\").read_text(), end=\"\")\n"
        "print(p.is_dir(), (p / \"a.txt\").is_file(), (p / \"nope\").exists())'; cat d/b.txt",
    "os functions on files":
        "python3 -c 'import os\nos.makedirs(\"x/y\", exist_ok=True)\nos.makedirs(\"x/y\", exist_ok=True)\n"
        "open(\"x/y/f\", \"w\").write(\"abc\")\nprint(os.path.getsize(\"x/y/f\"), os.path.isdir(\"x\"))\n"
        "os.rename(\"x/y/f\", \"x/g\")\nos.remove(\"x/g\")\nos.rmdir(\"x/y\")\nprint(os.listdir(\"x\"))'",
    "binary files": "printf 'A\\377B' > b.bin; python3 -c 'print(list(open(\"b.bin\", \"rb\").read()))'",
    "missing file": "python3 -c 'open(\"/no/such.txt\")' 2>&1 | tail -1; echo ${PIPESTATUS[0]}",
    "exported variables only": "A=1; export B=2; python3 -c 'import os; print(os.getenv(\"A\"), os.environ[\"B\"])'",
    "an uncaught exception": "python3 -c 'def f():\n    raise ValueError(\"bad value\")\nf()' 2>&1 | sed -n '1p;$p'; "
                             "echo ${PIPESTATUS[0]}",
    "a syntax error": "python3 -c 'x = (1,' 2>/dev/null; echo $?",
    "a name error": "python3 -c 'print(undefined)' 2>&1 | tail -1",
    "zero division in a file": "printf 'x = 1\\ny = x / 0\\n' > z.py; python3 z.py 2>&1 | sed -n '1p;3p;$p'",
    "options before -c": "python3 -u -B -c 'print(2)'; python3 -Wignore -c 'print(3)'; "
                         "python3 -- p.py 2>/dev/null; echo $?",
    "in a command substitution and under set -e":
        "x=$(python3 -c 'print(20)'); echo $((x + 1)); set -e; python3 -c 'import sys; sys.exit(4)'; echo not reached",
    "through xargs": "printf '1\\n2\\n' | xargs -n1 python3 -c 'import sys; print(int(sys.argv[1]) * 10)'",
    "a missing program file": "python3 /no/such.py 2>&1; echo $?",
    "an unknown option": "python3 -Q 2>/dev/null; echo $?",
    "-c without its argument": "python3 -c 2>/dev/null; echo $?",
}


@needs_monty
@needs_real
@pytest.mark.parametrize("name", sorted(SAME_AS_CPYTHON))
def test_same_as_cpython(name):
    script = SAME_AS_CPYTHON[name]
    mine, theirs = ours(script, FILES), real(script, FILES)
    assert mine[0] == theirs[0] and mine[2] == theirs[2], (mine, theirs)


def bash_tool(**limits) -> BashTool:
    builder = BashTool.builder().files(dict(FILES))
    if limits:
        builder = builder.limits(ExecutionLimits(**limits))
    return builder.build()


@needs_monty
def test_a_traceback_as_cpython_prints_it():
    r = bash_tool().execute(textwrap.dedent("""\
        cat > prog.py <<'EOF'
        import json

        def parse(text):
            return int(json.loads(text)["n"])

        parse('{"n": "x"}')
        EOF
        python3 prog.py"""))
    assert r.exit_code == 1 and r.stdout == ""
    assert r.stderr == ('Traceback (most recent call last):\n'
                        '  File "/home/user/prog.py", line 6, in <module>\n'
                        '    parse(\'{"n": "x"}\')\n'
                        '  File "/home/user/prog.py", line 4, in parse\n'
                        '    return int(json.loads(text)["n"])\n'
                        "ValueError: invalid literal for int() with base 10: 'x'\n")


@needs_monty
def test_a_traceback_quotes_the_programs_own_lines():
    """`import sys` and print(file=) run edited; the traceback quotes them as written."""
    r = bash_tool().execute("python3 -c 'import sys\nprint(1, file=sys.stderr); import os, sys as s; 1/0'")
    assert r.stderr.splitlines()[-2:] == ["    print(1, file=sys.stderr); import os, sys as s; 1/0",
                                          "ZeroDivisionError: division by zero"]


@needs_monty
def test_a_long_recursion_is_summed_up():
    r = bash_tool().execute("python3 -c 'def f(n):\n    return f(n + 1)\nf(0)'")
    lines = r.stderr.splitlines()
    assert r.exit_code == 1 and lines[-1].startswith("RecursionError: ")
    assert lines[-2].startswith("  [Previous line repeated ") and lines[-2].endswith(" more times]")
    assert lines.count('  File "<string>", line 2, in f') == 3


@needs_monty
def test_a_syntax_error_names_its_line():
    r = bash_tool().execute("python3 -c 'x = 1\ny = (2,'")
    assert r.exit_code == 1
    assert r.stderr.startswith('  File "<string>", line 2\n    y = (2,\n')
    assert r.stderr.splitlines()[-1].startswith("SyntaxError: ")


@needs_monty
def test_what_monty_lacks_is_its_own_one_line_error():
    for program in ("class E(Exception): pass", "import subprocess", "import sys; sys.stdin.fileno()"):
        r = bash_tool().execute(f"python3 -c '{program}'")
        last = r.stderr.splitlines()[-1]
        assert r.exit_code == 1 and r.stderr.startswith("Traceback (most recent call last):\n"), r.stderr
        assert last.split(":")[0].endswith("Error") and "panic" not in r.stderr and "/root" not in r.stderr


@needs_monty
def test_output_streams_into_the_commands_stdout_not_the_hosts(capfd):
    chunks = []
    r = bash_tool().execute("python3 -c 'import sys\nfor i in range(3): print(i)\nprint(\"e\", file=sys.stderr)'",
                            on_output=lambda stream, text: chunks.append((stream, text)))
    assert (r.stdout, r.stderr) == ("0\n1\n2\n", "e\n")
    assert "".join(text for stream, text in chunks if stream == "stdout") == "0\n1\n2\n"
    assert capfd.readouterr().out == ""


@needs_monty
def test_relative_paths_start_at_the_shells_directory():
    r = bash_tool().execute("cd /tmp && python3 -c 'import os; open(\"r.txt\", \"w\").write(os.getcwd())'; "
                            "cat /tmp/r.txt")
    assert r.stdout == "/tmp"


@needs_monty
def test_the_filesystems_bounds_apply(tmp_path):
    (tmp_path / "ro.txt").write_text("host data\n")
    fs = MemoryFs(limits=ExecutionLimits(max_file_bytes=1000)).mount("/mnt", str(tmp_path))
    tool = BashTool.builder().filesystem(fs).build()
    r = tool.execute("python3 -c 'print(open(\"/mnt/ro.txt\").read(), end=\"\")\n"
                     "try:\n    open(\"/mnt/ro.txt\", \"w\")\nexcept OSError as e:\n    print(\"write:\", e)\n"
                     "try:\n    open(\"/tmp/big\", \"w\").write(\"x\" * 5000)\n"
                     "except OSError as e:\n    print(\"big:\", e)'")
    assert r.stdout == ("host data\nwrite: [Errno 30] Read-only file system: '/mnt/ro.txt'\n"
                        "big: [Errno 27] File too large: '/tmp/big'\n"), r.stderr


@needs_monty
def test_text_that_is_not_utf8_fails_as_cpython_fails():
    r = bash_tool().execute("printf 'A\\377' | python3 -c 'import sys; sys.stdin.read()'")
    assert r.exit_code == 1 and r.stderr.splitlines()[-1].startswith("UnicodeDecodeError: 'utf-8' codec")


@needs_monty
def test_the_hosts_parser_warns_nobody():
    """CPython's parser reads the program on the host (source.py); its warnings (an invalid escape
    here) are not the host's to hear."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        r = bash_tool().execute("python3 -c 'import re; print(re.sub(\"\\d\", \"#\", \"a1\"))'")
    assert r.stdout == "a#\n"
    assert not [w for w in seen if w.filename == "<unknown>"]


@needs_monty
def test_sleep_and_clock():
    r = bash_tool().execute("python3 -c 'import time\nt = time.time()\ntime.sleep(0.01)\nprint(time.time() >= t)'")
    assert r.stdout == "True\n"


@needs_monty
def test_version_help_and_python():
    r = bash_tool().execute("python3 -V; python3 --help | head -1; python3 -h | head -1; python3 --version; "
                            "python -c 'print(1)'")
    lines = r.stdout.splitlines()
    assert lines[0].startswith("Python 3.") and "Monty" in lines[0]
    assert lines[1] == lines[2] == "Usage: python3 [option] ... [-c cmd | file | -] [arg] ..."
    assert lines[3:] == ["python3 (scripted_kernel)", "1"]


@needs_monty
def test_refusals_name_the_problem():
    r = bash_tool().execute("python3 -m json.tool; echo $?; python3 -i; echo $?; python3 --bogus; echo $?")
    assert r.stdout == "2\n2\n2\n"
    assert r.stderr.splitlines() == [
        "python3: -m json.tool: running a module is not supported here (give the program with -c, as a file, "
        "or on stdin)",
        "python3: unknown option -i", "Try 'python3 --help' for more information.",
        "python3: unknown option --bogus", "Try 'python3 --help' for more information."]


@needs_monty
def test_logic_mode_has_no_python_unless_the_builder_asks():
    assert ScriptedTool.builder("t").build().execute("python3 -c 'print(1)'").exit_code == 127
    tool = ScriptedTool.builder("t").python().build()
    r = tool.execute("echo '[1, 2]' | python3 -c 'import json, sys; print(sum(json.load(sys.stdin)))'")
    assert (r.stdout, r.exit_code) == ("3\n", 0)
    r = tool.execute("python3 -c 'open(\"/tmp/x\", \"w\")'")
    assert r.exit_code == 1
    assert r.stderr.splitlines()[-1] == "PermissionError: [Errno 13] file access is disabled in logic mode: '/tmp/x'"
    assert ScriptedTool.builder("t").python(False).build().execute("python").exit_code == 127


@needs_monty
def test_a_scripted_tool_with_files_has_python():
    tool = ScriptedTool.builder("t").filesystem(MemoryFs).build()
    r = tool.execute("python3 -c 'open(\"/tmp/a\", \"w\").write(\"1\")'; cat /tmp/a")
    assert r.stdout == "1"


README = Path(__file__).resolve().parents[2] / "README.md"


@needs_monty
def test_the_readmes_example_runs_as_written():
    section = README.read_text().split("## `python3`", 1)[1]
    script = re.search(r"```bash\n(.*?)```", section, re.S).group(1)
    orders = [{"id": "a1", "total": 250}, {"id": "b2", "total": 40}, {"id": "c3", "total": 101.5}]
    r = BashTool.builder().files({"orders.json": json.dumps(orders)}).build().execute(script)
    assert (r.stdout, r.exit_code) == ('[\n  "a1",\n  "c3"\n]\n', 0), r.stderr


def test_absent_without_the_extra():
    """With pydantic_monty unimportable (a None in sys.modules, as an uninstalled package), the
    command is still there and says what to install, with the status of a missing program."""
    program = textwrap.dedent("""\
        import sys
        sys.modules["pydantic_monty"] = None
        from scripted_kernel import BashTool
        r = BashTool().execute("python3 -c 'print(1)'; echo $?; python -V; echo $?")
        print(repr((r.stdout, r.stderr)))
        """)
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == repr(("127\n127\n", "python3: not available: install scripted-kernel[python]\n"
                                                      "python: not available: install scripted-kernel[python]\n"))
    assert "Traceback" not in out.stderr and "ImportError" not in out.stderr


def test_the_prompt_and_the_names_know_python3_where_a_script_has_it():
    from scripted_kernel import BashTool, ScriptedTool, tool

    def python3(code: str) -> str:
        """A tool of that name."""
        return code
    logic = ScriptedTool.builder("t").build()
    assert "python3" not in logic.system_prompt()
    with_python = ScriptedTool.builder("t").python().build()
    assert "`python3 -c` runs a Python subset" in with_python.system_prompt()
    assert "python3" in BashTool().system_prompt().split("File commands:")[1].split(";")[0]
    ScriptedTool.builder("t").function(tool(python3, register=False)).build()      # free in logic mode
    with pytest.raises(ValueError, match="taken by the command 'python3'"):
        ScriptedTool.builder("t").python().function(tool(python3, register=False)).build()
