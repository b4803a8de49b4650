"""Logic mode: what a script may not do fails with one clear line and a bash-like status."""
import pytest


@pytest.mark.parametrize("script,status,fragment", [
    ("echo hi > /tmp/x", 1, "file redirection is disabled"),
    ("echo hi >> out.txt", 1, "file redirection is disabled"),
    ("cat < /etc/passwd", 1, "file redirection is disabled"),
    ("echo hi &> log", 1, "file redirection is disabled"),
    ("./script.sh", 126, "running programs by path is disabled"),
    ("/bin/ls", 126, "running programs by path is disabled"),
    ("source ~/.bashrc", 1, "reading script files is disabled"),
    (". ./lib.sh", 1, "reading script files is disabled"),
    ("cat /etc/passwd", 1, "file access is disabled"),
    ("cd /tmp", 1, "changing directories is disabled"),
    ("ls", 127, "ls: command not found"),
])
def test_rejected_with_one_line(run, script, status, fragment):
    r = run(script)
    assert r.exit_code == status
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0], r.stderr
    assert "Traceback" not in r.stderr


def test_unknown_command_suggests_the_closest_name(run):
    r = run("ech hello")
    assert r.exit_code == 127
    assert "did you mean 'echo'?" in r.stderr


def test_dev_null_and_fd_duplication_are_allowed(run):
    r = run("echo hidden >/dev/null; echo err 2>/dev/null 1>&2; echo to-err >&2; cat </dev/null; echo ok")
    assert r.stdout == "ok\n" and r.stderr == "to-err\n" and r.exit_code == 0


def test_no_host_environment_is_visible(run, monkeypatch):
    monkeypatch.setenv("SECRET_TOKEN", "hunter2")
    # the secret's text is assembled at run time: the script itself (BASH_EXECUTION_STRING)
    # must not be what is found
    r = run('echo "${SECRET_TOKEN:-absent}"; declare -p | grep -c "hun$(echo ter2)"; echo $HOME')
    assert r.stdout == "absent\n0\n/home/user\n"


def test_each_execution_starts_fresh(tool):
    tool.execute("x=1; f() { echo f; }")
    r = tool.execute('echo "${x:-unset}"; type -t f || echo no-f')
    assert r.stdout == "unset\nno-f\n"


def test_stdin_is_given_to_the_script(run):
    r = run('while read -r l; do echo "<$l>"; done; cat', stdin="a\nb\n")
    assert r.stdout == "<a>\n<b>\n"


def test_syntax_error_runs_the_lines_before_it_and_exits_2(run):
    r = run("echo before\nif then\necho after")
    assert r.stdout == "before\n" and r.exit_code == 2
    assert "syntax error near unexpected token `then'" in r.stderr
