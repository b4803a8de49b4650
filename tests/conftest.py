import shutil
import subprocess

import pytest

from scripted_kernel import ScriptedTool

BASH = shutil.which("bash")


def bash_version_ok() -> bool:
    if BASH is None:
        return False
    out = subprocess.run([BASH, "-c", "echo ${BASH_VERSINFO[0]}"], capture_output=True, text=True).stdout
    return out.strip().isdigit() and int(out) >= 5


HAVE_BASH5 = bash_version_ok()


@pytest.fixture(scope="session")
def tool():
    return ScriptedTool.builder("test").build()


@pytest.fixture
def run(tool):
    """run(script, stdin='') -> ToolResponse"""
    def _run(script, stdin=""):
        return tool.execute(script, stdin=stdin)
    return _run


def run_bash(script: str, stdin: str = "", tmp_path=None):
    """Real bash, as the conformance oracle runs it: empty environment, C.UTF-8."""
    env = {"PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8", "HOME": "/home/user"}
    p = subprocess.run([BASH, "--norc", "--noprofile", "-c", script], input=stdin.encode(),
                       capture_output=True, env=env, timeout=20, cwd=tmp_path)
    return p.stdout.decode("utf-8", "surrogateescape"), p.returncode
