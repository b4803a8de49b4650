"""jq in logic mode: no modules or files, no host environment, halts do not end the host."""
import os
import re
import shutil
import subprocess

import pytest


@pytest.mark.parametrize("program", ['import "a" as a; .', 'include "x"; .', "modulemeta",
                                     "get_search_list"])
def test_module_and_file_features_are_refused(run, program):
    r = run(f"jq -n '{program}'")
    assert r.exit_code == 3 and "disabled in logic mode" in r.stderr


def test_env_is_the_scripts_exported_variables(run, monkeypatch):
    monkeypatch.setenv("HOST_SECRET", "s3cret")
    r = run("export REGION=eu; LOCAL=x; jq -nc '[$ENV.REGION, $ENV.LOCAL, env.HOST_SECRET]'")
    assert r.stdout == '["eu",null,null]\n'


def test_halt_and_halt_error_end_only_jq(run):
    r = run("jq -n '1, halt, 2'; echo after=$?")
    assert r.stdout == "1\nafter=0\n"
    r = run("""jq -n '"bye\\n" | halt_error(3)'; echo after=$?""")
    assert r.stdout == "after=3\n" and r.stderr == "bye\n"


def test_errors_keep_outputs_before_them_and_use_jq_statuses(run):
    r = run("echo '[1,\"a\",3]' | jq '.[] + 1'; echo status=$?")
    assert r.stdout == "2\nstatus=5\n"
    assert "jq: error (at <stdin>:1): string (\"a\") and number (1) cannot be added" in r.stderr
    # jq 1.7+ (the bundled libjq's release): the message and status 5 of its main.c
    r = run("echo '1 {' | jq .; echo status=$?")
    assert r.stdout == "1\nstatus=5\n"
    assert r.stderr == "jq: parse error: Unfinished JSON term at EOF at line 2, column 0\n"


def test_file_operands_and_options_are_refused(run):
    r = run("jq . /etc/passwd")
    assert r.exit_code == 2 and "file access is disabled" in r.stderr
    r = run("jq --rawfile x /etc/passwd -n '$x'")
    assert r.exit_code == 2 and "file access is disabled" in r.stderr


def test_a_program_in_a_loop_compiles_once(run):
    """libjq compiles a program once for a whole loop, whatever its --arg values (input whose
    number text libjq keeps needs it); a program jq_fast evaluates is not compiled at all."""
    from scripted_kernel.commands.jq import libjq as jq_libjq
    jq_libjq._programs.clear()
    # a path-only program on a small input runs in this process, where its cache shows
    script = 'for i in 1 2 3; do echo "{\\"id\\": $i.0}" | jq -r --arg n "$i" \'.id\'; done'
    r = run(script)
    assert r.stdout == "1.0\n2.0\n3.0\n", r.stderr
    assert len(jq_libjq._programs) == 1
    jq_libjq._programs.clear()
    r = run(script.replace(".0}", "}"))
    assert r.stdout == "1\n2\n3\n", r.stderr
    assert len(jq_libjq._programs) == 0


def test_version_leaf_paths_and_errors_about_the_users_program():
    from scripted_kernel import ScriptedTool
    tool = ScriptedTool.builder("t").build()
    r = tool.execute("jq --version; jq -V")
    assert re.fullmatch(r"(jq-1\.\d+(\.\d+)?\n){2}", r.stdout)
    assert tool.execute("""echo '{"a":{"b":1},"c":[2]}' | jq -c '[leaf_paths]'""").stdout == '[["a","b"],["c",0]]\n'
    r = tool.execute("jq -n 'foo(1)'; echo status=$?")
    assert r.stderr == ("jq: error: foo/1 is not defined at <top-level>, line 1, column 1:\n"
                        "    foo(1)\n    ^^^\njq: 1 compile error\n")
    assert r.stdout == "status=3\n"
    r = tool.execute("jq -n '1 +'")
    assert "__scripted" not in r.stderr and "    1 +\n" in r.stderr and "end of file" in r.stderr


@pytest.mark.skipif(shutil.which("jq") is None, reason="jq is not installed")
def test_input_line_number_counts_lines_read_as_jq_does(run):
    for script in ["""printf '{"a":1}\\n{"b":2}\\n\\n3\\n' | jq -c '[., input_line_number]'""",
                   "echo '[1,2]' | jq -c '.[] | [., input_line_number]'",
                   "printf 'a\\nb\\n' | jq -R -c '[., input_line_number]'",
                   "echo 1 | jq --arg x y -c '[$x, input_line_number]'", "echo 1 | jq -n input_line_number"]:
        want = subprocess.run(["bash", "-c", script], capture_output=True, text=True).stdout
        got = run(script)
        assert got.stdout == want, (script, got.stderr)


def test_concurrent_scripts_share_a_bounded_set_of_jq_children(tool):
    """Many scripts running jq at once wait for a warm child instead of each starting one."""
    import threading
    from pathlib import Path
    from scripted_kernel.commands.jq import worker as jq_worker

    def child_processes() -> int:       # children are listed under the thread that started them
        count = 0
        for task in Path(f"/proc/{os.getpid()}/task").iterdir():
            try:
                count += sum(b"jq.worker" in Path(f"/proc/{c}/cmdline").read_bytes()
                             for c in (task / "children").read_text().split())
            except OSError:             # the thread or the child ended meanwhile
                pass
        return count
    results, most = [], [0]

    def script(k):
        r = tool.execute(f"for i in 1 2 3 4 5; do echo '[{k}, 2, 3]' | jq 'length + .[0]'; done")
        results.append(r.stdout)
        most[0] = max(most[0], child_processes())
    threads = [threading.Thread(target=script, args=(k,)) for k in range(3 * jq_worker.MAX_CHILDREN)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == sorted(f"{k + 3}\n" * 5 for k in range(3 * jq_worker.MAX_CHILDREN))
    # a call slow on a busy machine may be moved aside while another starts a child; idle, the
    # pool keeps MAX_CHILDREN at most
    assert 0 < most[0] <= jq_worker.MAX_CHILDREN + jq_worker.MAX_ASIDE
    assert child_processes() <= jq_worker.MAX_CHILDREN


def test_the_input_file_never_shows(run):
    """libjq reads the input from an in-memory file: its name is no filename jq would show."""
    r = run("echo 1 | jq -c '[input_filename, $__loc__]'; echo '[1' | jq . ; jq -n 'error(\"x\")'")
    assert r.stdout == '[null,{"file":"<top-level>","line":1}]\n'
    assert "/proc" not in r.stderr and "/dev/fd" not in r.stderr and "jq-input" not in r.stderr
    assert r.stderr == ("jq: parse error: Unfinished JSON term at EOF at line 2, column 0\n"
                        "jq: error (at <unknown>): x\n")


def test_libjq_in_process_serves_threads_at_once():
    """Path programs on small input run libjq in this process (input with number text it keeps
    needs it): runs on several threads at once each get their own jq state or wait for none."""
    import threading
    from scripted_kernel import ScriptedTool
    tool = ScriptedTool.builder("t").build()
    results, failures = [], []

    def work(k):
        for i in range(25):
            r = tool.execute(f"echo '{{\"a\": {k}.{i}0}}' | jq .a")
            (results if r.stdout == f"{k}.{i}0\n" else failures).append((k, i, r.stdout, r.stderr))
    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures and len(results) == 200
