"""The contract between the interpreter and its commands: every command is registered once,
answers --help and --version the same way, reports usage errors through the registry, reaches
its budget through its context, and starts other programs (xargs, find -exec, env) through one
dispatcher that skips shell functions, as exec does."""
import ast
import shutil
import subprocess
from pathlib import Path

import pytest

from scripted_kernel import BashTool, ExecutionLimits
from scripted_kernel.base import limits
from scripted_kernel.commands import COMMANDS, FILE_COMMANDS


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_answers_help_and_version(name):
    r = BashTool().execute(f"{name} --help; echo status=$?; {name} --version | head -1")
    usage, _, rest = r.stdout.partition("status=")
    assert usage.startswith(f"Usage: {name}") and rest.startswith("0\n"), r.stdout
    version = rest.split("\n")[1]
    assert version.startswith("jq-1.") if name == "jq" else version.startswith(name), rest


def test_usage_errors_are_reported_by_the_registry():
    r = BashTool().execute("sort --bogus; echo $?")
    assert r.stderr == "sort: unrecognized option '--bogus'\nTry 'sort --help' for more information.\n"
    assert r.stdout == "2\n"          # GNU sort: status 2


def test_file_commands_are_marked():
    assert {"ls", "cp", "find", "stat"} <= FILE_COMMANDS
    assert not {"grep", "sort", "jq"} & FILE_COMMANDS


def test_the_index_read_from_the_sources_is_what_importing_every_module_registers():
    """The names come from the decorators' text; importing each module must register exactly
    those (a command registered some other way would be missing from the table)."""
    import importlib
    import pkgutil

    import scripted_kernel.commands as package
    from scripted_kernel.commands import registry
    indexed, file_commands = dict(registry._HOME), set(FILE_COMMANDS)
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        if not info.name.rsplit(".", 1)[-1].startswith("_"):
            importlib.import_module(info.name)
    assert set(registry._LOADED) == set(indexed) == set(COMMANDS)
    assert FILE_COMMANDS == file_commands
    for name, module in indexed.items():
        assert registry._LOADED[name].__module__ == module, name


@pytest.mark.parametrize("args, names", [
    ('"a", usage=Usage("x (y", ")) z")', ["a"]),                       # brackets in strings
    ("'b', \"c\", usage=Usage('it\\'s (', \"a \\\" )\"), needs_files=True", ["b", "c"]),  # escaped quotes
    ('"d", usage=Usage("x", ("-a  (one)", "-b  [two]")), python=(3, 11)', ["d"]),  # nested brackets
])
def test_a_decorator_is_read_to_its_closing_parenthesis(args, names):
    from scripted_kernel.commands import registry
    source = f"@command({args})\ndef run(ctx, argv):\n    return ')'\n".encode()
    (found, needs_files, python), = registry._decorations(source, "x.py")
    assert found == names
    assert needs_files == ("needs_files=True" in args) and python == ((3, 11) if "python" in args else ())


@pytest.mark.parametrize("args", ["NAMES", '"a", needs_files=FLAG', '"a", python=3', '"a", python=(3, MINOR)',
                                  '"a\\"b"'])
def test_a_decorator_whose_names_or_flags_are_not_literals_is_refused(args):
    from scripted_kernel.commands import registry
    with pytest.raises(ValueError, match="must be literals"):
        list(registry._decorations(f"@command({args})\n".encode(), "x.py"))


def test_a_decorator_never_closed_is_refused():
    from scripted_kernel.commands import registry
    with pytest.raises(ValueError):
        list(registry._decorations(b'@command("a", usage=Usage("x")\n', "x.py"))


def test_a_module_is_imported_when_a_script_first_runs_its_command():
    import subprocess
    import sys
    program = ("import sys\nfrom scripted_kernel import BashTool\n"
               "t = BashTool()\nprint('scripted_kernel.commands.rev' in sys.modules)\n"
               "print(t.execute('echo abc | rev').stdout.strip())\n"
               "print('scripted_kernel.commands.rev' in sys.modules)\n"
               "print(t.execute('rev --help').stdout.splitlines()[0])\n")
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120)
    assert done.stdout.splitlines() == ["False", "cba", "True", "Usage: rev [file ...]"], done.stderr


PROGRAMS = """\
mkdir -p "$HOME/bin"
printf '#!/bin/bash\\necho "script $1"\\n' > "$HOME/bin/hello"
chmod +x "$HOME/bin/hello"
PATH="$HOME/bin:$PATH"
f() { echo function; }
echo a | xargs hello
mkdir -p "$HOME/d"
find "$HOME/d" -maxdepth 0 -exec hello found \\;
env hello z
echo x | env grep -c x
echo b | xargs f 2>/dev/null; echo "xargs f: $?"
env f 2>/dev/null; echo "env f: $?"
"""


def test_programs_run_by_programs_skip_functions_and_find_scripts():
    r = BashTool().execute(PROGRAMS)
    expected = "script a\nscript found\nscript z\n1\nxargs f: 127\nenv f: 127\n"
    assert r.stdout == expected
    if shutil.which("bash") and shutil.which("xargs") and shutil.which("find"):
        import tempfile
        with tempfile.TemporaryDirectory() as home:
            real = subprocess.run(["bash", "--norc", "-c", PROGRAMS], capture_output=True, text=True,
                                  env={"HOME": home, "PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8"})
            assert real.stdout == expected


# ------------------------------------------------------------------ the budget through the context

COMMANDS_DIR = Path(limits.__file__).resolve().parent.parent / "commands"
# base/limits.py's accessors of the budget of the thread that runs them
THREAD_LOCAL = {"active_budget", "check_clock", "check_stop", "check_length", "string_limit",
                "note_allocation", "time_left", "timed_out", "wall_clock"}
# the command code that is handed no context (bc's numbers: operators) and keeps them
KEEPS_THE_THREADS_BUDGET = {"bc/numbers.py", "bc/radix.py"}


def thread_local_imports(path: Path) -> set:
    """The thread-local accessors a module imports (the module `limits` itself counts as all)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            names = {alias.name for alias in node.names}
            if (node.module or "").endswith("limits"):
                found |= names & THREAD_LOCAL
            elif "limits" in names:
                found |= THREAD_LOCAL
    return found


def test_commands_reach_their_budget_through_the_context():
    """A command holds ctx.budget, which goes with its work to any thread; the thread-local
    accessors see only the budget of the thread they run on. The few modules that keep them
    are the ones base/limits.py names."""
    keeping = {path.relative_to(COMMANDS_DIR).as_posix() for path in COMMANDS_DIR.rglob("*.py")
               if thread_local_imports(path)}
    assert keeping == KEEPS_THE_THREADS_BUDGET
    assert all(f"commands/{name}" in (limits.__doc__ or "") for name in keeping)


@pytest.fixture
def threads_budget_hidden(monkeypatch):
    """The accessors find no budget on this thread, as on a thread that work was moved to."""
    monkeypatch.setattr(limits, "active_budget", lambda: None)


@pytest.mark.parametrize("script,stdin", [
    ("shuf -r -n 5000000 -e x > /dev/null", ""),                 # a helper handed ctx.budget
    ("sed 's/1/2/' > /dev/null", "1\n" * 2_000_000),             # a runner holding the budget
    ("echo 'for (i = 0; i < 400000; i++) {}' | bc", ""),          # an interpreter holding ctx
])
def test_a_command_stops_at_the_deadline_without_the_threads_budget(threads_budget_hidden, script, stdin):
    """Each runs for tens of seconds unchecked (as it did with the thread's budget hidden)."""
    tool = BashTool.builder().limits(ExecutionLimits(timeout_seconds=0.5)).build()
    r = tool.execute(script + "; echo after", stdin=stdin)
    assert (r.exit_code, r.error, r.stdout) == (124, "timeout", ""), r.stderr


def test_a_command_measures_strings_by_its_own_limit_without_the_threads_budget(threads_budget_hidden):
    """With the thread's budget hidden, awk measured its strings by the default limit (16 MiB)."""
    tool = BashTool.builder().limits(ExecutionLimits(max_string_length=10_000)).build()
    r = tool.execute("awk 'BEGIN { s = \"x\"; while (1) s = s s }'")
    assert (r.exit_code, r.error) == (1, "limit:max_string_length")
    assert r.stderr == "bash: awk: string longer than 10000 characters (max_string_length)\n"


def test_commands_read_the_scripts_clock():
    """date and touch -t read the execution's clock (Budget.now: the host's, moved back to the
    time a resumed run first saw) from their context."""
    import time
    from scripted_kernel import MemoryFs
    from scripted_kernel.shell.interpreter import execute
    back = 3650 * 86400.0

    def ten_years_back(sh):
        sh.budget.clock_offset = -back
    r = execute("date +%Y; touch -t 01011200 f; date -r f +%Y", fs=MemoryFs(), commands=COMMANDS,
                shell_setup=ten_years_back)
    year = time.strftime("%Y", time.gmtime(time.time() - back))
    assert (r.stdout, r.exit_code) == (f"{year}\n{year}\n", 0), r.stderr
