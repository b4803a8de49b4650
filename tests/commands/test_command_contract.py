"""The contract between the interpreter and its commands: every command is registered once,
answers --help and --version the same way, reports usage errors through the registry, and
starts other programs (xargs, find -exec, env) through one dispatcher that skips shell
functions, as exec does."""
import shutil
import subprocess

import pytest

from scripted_kernel import BashTool
from scripted_kernel.commands import COMMANDS, FILE_COMMANDS
from scripted_kernel.commands.registry import USAGE


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
    assert set(USAGE) <= set(COMMANDS)


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
