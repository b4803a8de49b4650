"""Process substitution, background jobs, `bash`/`sh` with options, `set -x`, end-of-text
syntax errors and the smaller shell features of issues 35 and 36, against real bash 5.2 (and
GNU grep, mawk) run in an empty temporary directory with the same files.

Each file case runs in a BashTool (a filesystem, the home directory as the working directory)
and in bash in a fresh temporary directory; stdout and the exit status must match, and where
a case says so, stderr too (`set -x`, messages that name a script's path)."""
import subprocess

import pytest

from support import BASH, HAVE_BASH5, default_signals, run_bash
from scripted_kernel import ScriptedTool
from scripted_kernel.tools.bash_tool import BashTool

pytestmark = [pytest.mark.differential,
              pytest.mark.skipif(not HAVE_BASH5, reason="real bash 5 is not installed")]

SETUP = """printf 'b\\na\\nc\\n' > f1; printf 'c\\nd\\na\\n' > f2; printf 'h1,h2\\nr1,x\\nr2,y\\n' > t.csv
"""

# stdout and status compared; the scripts make their own files in an empty directory
FILE_CASES = {
    "procsub_paths_as_bash_numbers_them": "echo <(true) <(true) >(true); echo <(true)",
    "procsub_diff_and_comm": SETUP + "diff <(sort f1) <(sort f2); echo rc=$?; comm -13 <(sort f1) <(sort f2)",
    "procsub_while_read": SETUP + "n=0; while IFS=, read -r a b; do n=$((n+1)); echo \"$a:$b\"; done "
                                  "< <(tail -n +2 t.csv); echo n=$n",
    "procsub_mapfile_read_source": "mapfile -t a < <(printf 'x\\ny\\n'); echo ${#a[@]} ${a[1]}; "
                                   "read -r first < <(echo one two); echo \"$first\"; "
                                   "source <(echo 'X=42; echo args $#') p q; echo X=$X",
    "procsub_as_function_argument": "f() { echo \"$1\"; cat \"$1\"; }; f <(echo hi)",
    "procsub_nested": "cat <(cat <(cat <(echo deep))); echo $(cat <(echo in-cmdsub))",
    "procsub_tee_output": "printf 'x\\ny\\n' > in.txt; tee >(wc -l) > out.txt < in.txt; wait; cat out.txt",
    "procsub_redirect_into_output": "{ echo b; echo a; } > >(sort); wait; echo x > >(tr x X); wait",
    "procsub_many_readers": SETUP + "paste <(cut -d, -f1 t.csv) <(cut -d, -f2 t.csv); "
                            "join <(printf '1 a\\n2 b\\n') <(printf '1 x\\n2 y\\n'); "
                            "awk '{print FILENAME != \"\", $0}' <(echo aw); grep -c a <(printf 'a\\nb\\na\\n')",
    "procsub_tests_and_loops": "[[ -e <(true) ]] && echo e; [ -p <(true) ] && echo pipe; "
                               "[ -e /dev/fd/60 ] || echo closed; for a in <(true) <(true); do echo $a; done; "
                               "case <(true) in /dev/fd/*) echo case;; esac",
    "procsub_exec_descriptor": "exec 4< <(printf 'four\\nfive\\n'); read -u 4 v; echo v=$v; "
                               "mapfile -t -u 4 rest; echo ${rest[@]}",
    "jobs_wait_status": "(exit 4) & wait -n; echo n=$?; "
                                  "(exit 5) & x=$!; wait $x; echo w=$?; wait $x; echo again=$?; "
                                  "wait; echo all=$?",
    "jobs_wait_errors": "wait 99999; echo $?; wait %9; echo $?; kill %9; echo $?; wait -x; echo $?",
    "jobs_snapshot_at_start": "v=1; { echo v=$v; } & v=2; wait; f() { echo in-f $1; }; f 1 & wait; echo main",
    "jobs_listing": "sleep 0.3 & sleep 0.4 & jobs; jobs -p | wc -l; kill %1; echo k=$?; wait %2; "
                    "echo w=$?; jobs",
    "jobs_limiter_idiom": "for i in 1 2 3 4 5 6; do { echo job $i; } & "
                          "while [ $(jobs -r | wc -l) -ge 1 ]; do wait -n; done; done; wait; echo done",
    "jobs_killed_status": "sleep 5 & kill $!; wait $!; echo $?; sleep 5 & kill -9 %1; wait %1; echo $?",
    "jobs_kill_list": "kill -l 9; kill -l KILL; kill -l 130; kill -0 $$; echo $?; disown; echo $?",
    "bash_with_options": "bash -lc 'echo login'; bash -c 'echo $0 $1' nm one; "
                         "bash -euo pipefail -c 'false | true; echo not-here'; echo rc=$?; "
                         "bash -u -c 'echo $u; echo after'; echo rc=$?; bash -e -c 'false; echo no'; echo rc=$?; "
                         "echo 'echo stdin $1' | bash -s arg1; bash -O extglob -c 'shopt extglob'",
    "bash_script_files": "printf 'echo a\\nx=1\\necho \"$0 $1 $#\"\\nexit 3\\n' > s.sh; bash s.sh q; "
                         "echo rc=$?; chmod +x s.sh; ./s.sh; echo rc=$?; printf 'echo ${x!}\\necho next\\n' > b.sh; "
                         "bash b.sh; echo rc=$?",
    "random_seed": "RANDOM=5; echo $RANDOM $RANDOM $RANDOM; RANDOM=0; echo $RANDOM; RANDOM=4294967301; "
                   "echo $RANDOM; RANDOM=42; for i in 1 2 3 4 5; do echo -n \"$RANDOM \"; done; echo",
    "devices": "head -c 10 /dev/zero | od -An -tx1; head -c 4 < /dev/zero | od -c; "
               "tr -dc a-z < /dev/urandom | head -c 8 | wc -c; [ -c /dev/zero ] && echo chr",
    "type_and_command_over_path": "export PATH=/usr/bin:/bin; type -a ls echo; type -a -t ls echo; type -p ls; "
                                  "type -P echo; command -v ls echo if; command -V ls; type ls; "
                                  "f() { :; }; type -at f; type -a nonexistent; echo $?",
    "regex_bracket_with_escaped_close": r"""for l in '[ab] x' '[] y' 'a]b' 'ab12'; do
[[ $l =~ ^\[([^\]]+)\] ]] && echo "1 ${BASH_REMATCH[1]}"; [[ $l =~ [\]] ]] && echo "2 ${BASH_REMATCH[0]}"
[[ $l =~ [[:alpha:]]+ ]] && echo "3 ${BASH_REMATCH[0]}"; [[ $l =~ [a\-c]+ ]] && echo "5 ${BASH_REMATCH[0]}"; done""",
    "printf_formats_beginning_with_dash": "printf -- '--- title ---\\n'; printf '--- x\\n'; echo rc=$?; "
                                          "printf '-x'; echo rc=$?; printf -v; echo rc=$?",
    "awk_gawk_only_syntax": "echo ab | awk '{ if (match($0, /b+/, arr)) print arr[0] }'; echo rc=$?; "
                            "echo a,b | awk '{ n = split($0, p, /,/, seps) }'; echo rc=$?",
    "grep_over_trees": "mkdir -p g/sub g/.hid g/skip && cd g && echo foo > a.py && echo foo > sub/b.txt && "
                       "echo bar > sub/c.py && echo foo > .hid/d && echo foo > skip/e.py && ln -s a.py link.py && "
                       "ln -s sub linkdir && printf 'foo\\0' > bin.dat; "
                       "grep -r foo --include='*.py' . | sort; grep -r foo --exclude='*.py' . | sort; "
                       "grep -r foo --exclude-dir=skip --exclude-dir=.hid . | sort; grep -R foo . | sort; "
                       "grep -rL foo . | sort; grep -rl foo --include='*.py' --include='*.txt' | sort; "
                       "grep foo sub; echo rc=$?; grep -r foo link.py linkdir | sort; grep -rI foo . | sort; "
                       "grep -Z -l foo a.py sub/b.txt | od -c; grep -Zc foo a.py sub/b.txt | od -c; "
                       "grep -z -l foo a.py | od -c; grep -rn foo --include=*.txt; grep -rc foo sub | sort",
}

# stderr compared too (set -x traces, messages naming a script's path, syntax errors)
STDERR_CASES = {
    "xtrace_assignments_tests_loops": """set -x
a=1
b=2 c="x y"
d=$a echo hi
[[ $a == 1 && -n $b ]]
[[ ! -z x ]]
(( a++ ))
((a+=2))
for i in 1 2; do :; done
for ((j=0; j<2; j++)); do :; done
case $a in 4) echo four;; *) :;; esac
echo $(echo sub)
arr=(1 "2 3")
arr[5]=x
declare -i n=5
x=$(true)
let 'k=1+2'
while [[ $a -lt 5 ]]; do a=5; done
eval 'echo ev'
PS4='+${LINENO}: '
echo ps4
unset PS4; echo nops4""",
    "script_path_in_messages": "printf 'echo a\\nnocmd\\n' > s.sh; bash s.sh; chmod +x s.sh; ./s.sh; "
                               "bash -c 'nocmd3' myname; printf 'echo one\\nif true\\n' > bad.sh; bash bad.sh; "
                               "printf 'echo two\\necho )\\n' > bad2.sh; bash bad2.sh; bash -x s.sh",
}


def _run_bash_in(script: str, tmp_path):
    env = {"PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8", "HOME": str(tmp_path)}
    p = subprocess.run([BASH, "--norc", "--noprofile", "-c", script], capture_output=True, env=env,
                       timeout=20, cwd=tmp_path, preexec_fn=default_signals)
    return (p.stdout.decode("utf-8", "surrogateescape"), p.stderr.decode("utf-8", "surrogateescape"),
            p.returncode)


def _ours(script: str):
    tool = BashTool()
    return tool.execute(script)


@pytest.mark.parametrize("name", sorted(FILE_CASES))
def test_same_as_bash(name, tmp_path):
    script = FILE_CASES[name]
    want_out, _, want_status = _run_bash_in(script, tmp_path)
    got = _ours(script)
    assert (got.stdout, got.exit_code) == (want_out, want_status), got.stderr


@pytest.mark.parametrize("name", sorted(STDERR_CASES))
def test_same_stderr_as_bash(name, tmp_path):
    script = STDERR_CASES[name]
    want_out, want_err, want_status = _run_bash_in(script, tmp_path)
    got = _ours(script)
    assert (got.stdout, got.stderr, got.exit_code) == (want_out, want_err, want_status)


@pytest.mark.parametrize("text", ["echo ${x", "echo ${x\n", "echo ${", 'echo "${x', "echo ${a["])
def test_unclosed_parameter_is_an_unexpected_eof(text):
    """One line, bash's words (with our `bash: line N:` prefix for a script), status 2."""
    out, status = run_bash(text)
    got = ScriptedTool.builder("t").build().execute(text)
    assert (got.stdout, got.exit_code) == (out, status) == ("", 2)
    assert got.stderr == "bash: line 1: unexpected EOF while looking for matching `}'\n"


LOGIC_CASES = {
    "procsub": "echo <(true); comm -3 <(printf 'a\\nb\\n') <(printf 'b\\nc\\n'); "
               "while read l; do echo \"got $l\"; done < <(echo line); tee >(wc -c) >/dev/null <<< hi; wait; "
               "source <(echo echo src); cat <(echo cat)",
    "jobs": "sleep 0 & wait $!; echo w=$?; (exit 3) & wait -n; echo $?; echo a & wait; echo b",
}


@pytest.mark.parametrize("name", sorted(LOGIC_CASES))
def test_logic_mode_has_them_too(name, run):
    """Process substitution and jobs need no files (only the shell's descriptor table): logic
    mode has them, as bash does."""
    script = LOGIC_CASES[name]
    want_out, want_status = run_bash(script)
    got = run(script)
    assert (got.stdout, got.exit_code) == (want_out, want_status), got.stderr


def test_logic_mode_still_refuses_files_through_a_substitution(run):
    r = run("cat <(cat /etc/passwd); source <(echo 'cat /etc/shadow')")
    assert r.stdout == "" and r.stderr.count("file access is disabled") == 2


def test_help_lists_the_file_commands_of_the_registry():
    from scripted_kernel.commands import FILE_COMMANDS
    tool = BashTool()
    for name in ("tar", "sqlite3", "ls", "find"):
        assert name in FILE_COMMANDS
        assert f" {name}" in tool.help() and f" {name}" in tool.system_prompt()


def test_jobs_run_in_a_deterministic_order():
    """Where bash races, the engine picks the order of a job still running when the script
    reaches that point: a job's output comes where it is waited for, or when its shell ends
    (after the EXIT trap); inside a command substitution, before its value is taken; more
    than MAX_PENDING jobs waiting: the oldest runs."""
    tool = BashTool()
    r = tool.execute("echo a & echo b; wait; echo $(echo x & echo y); for i in 1 2 3; do echo job $i & done; "
                     "echo main; wait %2; echo after2; wait; echo end & trap 'echo trap' EXIT")
    assert r.stdout == "b\na\ny x\nmain\njob 1\njob 2\nafter2\njob 3\ntrap\nend\n", r.stderr
    r = tool.execute("for i in $(seq 70); do echo $i & done; echo started; wait")
    lines = r.stdout.split()
    assert lines.index("started") == 6 and lines[:6] == ["1", "2", "3", "4", "5", "6"]


def test_a_killed_job_never_runs_and_a_sleeping_one_costs_nothing_until_waited():
    import time
    tool = BashTool()
    start = time.monotonic()
    r = tool.execute("sleep 20 & pid=$!; (echo ran > f) & kill %2; kill $pid; wait; cat f 2>/dev/null; echo rc=$?")
    assert r.stdout == "rc=1\n" and time.monotonic() - start < 5, r.stderr
