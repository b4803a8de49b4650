"""The contract between the interpreter and its commands: every command is registered once,
answers --help and --version the same way, reports usage errors through the registry, and
starts other programs (xargs, find -exec, env) through one dispatcher that skips shell
functions, as exec does."""
import shutil
import subprocess

import pytest

from scripted_kernel import BashTool
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
