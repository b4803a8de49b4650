"""BashTool's contract, ScriptedTool's filesystem modes, and that nothing of the host is
reachable without a mount."""
import asyncio
import os

import pytest

from scripted_kernel import BashTool, MemoryFs, ScriptedTool, tool


def test_state_persists_across_calls_like_a_terminal():
    bash = BashTool()
    bash.execute("mkdir -p /tmp/work && cd /tmp/work; greeting=hi; f() { echo \"f:$1\"; }; echo x > a")
    r = bash.execute('pwd; echo $greeting; f 1; cat a')
    assert r.stdout == "/tmp/work\nhi\nf:1\nx\n"


def test_fresh_shell_keeps_files_only():
    bash = BashTool.builder().fresh_shell().build()
    bash.execute("cd /tmp; v=1; echo kept > /tmp/f")
    r = bash.execute('pwd; echo "[$v]"; cat /tmp/f')
    assert r.stdout == "/home/user\n[]\nkept\n"


def test_builder_identity_env_files_and_builtins():
    bash = (BashTool.builder().username("agent").hostname("box").env("API_URL", "http://x")
            .files({"/etc/app.conf": "debug=1\n", "notes.txt": b"bytes\n"})
            .builtin("greet", lambda args, stdin: f"hello {' '.join(args)}\n")
            .builtin("fail", lambda args, stdin: 1 / 0).build())
    r = bash.execute('whoami; hostname; echo $HOME $USER $API_URL; pwd; cat /etc/app.conf notes.txt; '
                     'greet a b; fail; echo $?')
    assert r.stdout == ("agent\nbox\n/home/agent agent http://x\n/home/agent\ndebug=1\nbytes\n"
                        "hello a b\n1\n")
    assert "fail: division by zero" in r.stderr


def test_help_prompt_and_description():
    bash = BashTool.builder().username("agent").env("TOKEN_NAME", "x").builtin("greet", print).build()
    help_text = bash.help()
    for heading in ("NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "CONFIGURATION", "OUTPUT"):
        assert f"\n{heading}\n" in "\n" + help_text
    assert "User: agent" in help_text and "TOKEN_NAME" in help_text and "greet" in help_text
    assert "Home: /home/agent" in bash.system_prompt()
    assert "greet" in bash.description() and "mkdir" in bash.description()
    assert bash.to_anthropic_tool()["input_schema"]["required"] == ["commands"]
    assert bash.to_openai_tool()["function"]["name"] == "bash"


def test_a_prepared_filesystem_and_async_execution():
    fs = MemoryFs({"/tmp/in.json": '{"n": 2}'})
    bash = BashTool.builder().filesystem(fs).build()
    r = asyncio.run(bash.execute_async("jq .n /tmp/in.json > /tmp/out; cat /tmp/out"))
    assert r.stdout == "2\n" and fs.read_text("/tmp/out") == "2\n"


@tool
def pages(count: int) -> list:
    """Pages of results."""
    return [{"id": i, "ok": i % 3 != 0} for i in range(count)]


STAGING = ('pages --count 9 | jq -c ".[]" > /tmp/pages.jsonl\n'
           'jq -s "map(select(.ok)) | length" /tmp/pages.jsonl\n'
           'grep false /tmp/pages.jsonl | tee /tmp/errors.txt > /dev/null\n'
           'wc -l < /tmp/errors.txt')


def test_scratch_files_per_call_do_not_bleed():
    api = ScriptedTool.builder("api").function(pages).filesystem(MemoryFs).build()
    assert api.execute(STAGING).stdout == "6\n3\n"
    r = api.execute("ls /tmp; cat /tmp/pages.jsonl")
    assert r.stdout == "" and "No such file or directory" in r.stderr
    assert "empty virtual file system" in api.system_prompt()


def test_a_shared_filesystem_instance_persists_across_calls():
    fs = MemoryFs()
    api = ScriptedTool.builder("api").function(pages).filesystem(fs).build()
    api.execute("pages --count 3 > /tmp/p.json")
    assert api.execute("jq length /tmp/p.json").stdout == "3\n"
    assert "persist across calls" in api.system_prompt()


def test_default_is_logic_mode_as_before():
    api = ScriptedTool.builder("api").function(pages).build()
    r = api.execute(STAGING)
    assert "file redirection is disabled in logic mode" in r.stderr
    assert "there is no file system" in api.system_prompt()
    for script, message in [("cat /etc/passwd", "cat: /etc/passwd: file access is disabled in logic mode"),
                            ("cd /tmp", "changing directories is disabled"),
                            ("source x.sh", "reading script files is disabled"),
                            ("./x.sh", "running programs by path is disabled")]:
        assert message in api.execute(script).stderr


HOST_FILE = os.path.abspath(__file__)
HOST_DIR = os.path.dirname(HOST_FILE)
MARKER = "HOST_MARKER_7f3a"          # this file contains it; no script may print it


@pytest.mark.parametrize("command", [
    "cat {f}", "head {f}", "tail {f}", "grep -r HOST_MARKER {d}", "grep HOST {f}", "sed -n p {f}",
    "awk 1 {f}", "awk 'BEGIN{{while((getline l < \"{f}\")>0) print l}}'", "sort {f}", "uniq {f}",
    "cut -c1-80 {f}", "tr a a < {f}", "wc {f}", "jq -R . {f}", "jq -n --rawfile r {f} '$r'",
    "base64 {f}", "nl {f}", "paste {f}", "column {f}", "rev {f}", "tac {f}", "fold {f}",
    "xargs -a {f} echo", "diff {f} /dev/null", "cmp {f} /dev/null", "ls {d}", "ls -la {d}",
    "find {d}", "stat {f}", "du {d}", "cp {f} /tmp/c; cat /tmp/c", "source {f}", "bash {f}",
    "mapfile -t a < {f}; echo \"${{a[@]}}\"", "read l < {f}; echo $l", "cd {d}; ls", "realpath {f}",
    "ln -s {f} /tmp/l; cat /tmp/l", "echo {d}/*", "tee /tmp/t < {f}", "mv {f} /tmp/m; cat /tmp/m",
])
@pytest.mark.parametrize("mode", ["bash_tool", "scratch", "logic"])
def test_nothing_of_the_host_is_reachable(command, mode):
    script = command.format(f=HOST_FILE, d=HOST_DIR)
    if mode == "bash_tool":
        r = BashTool().execute(script)
    else:
        api = ScriptedTool.builder("api").filesystem(MemoryFs if mode == "scratch" else None).build()
        r = api.execute(script)
    assert MARKER not in r.stdout + r.stderr
    assert os.path.exists(HOST_FILE)
