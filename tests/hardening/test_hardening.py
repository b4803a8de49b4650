"""Scripts may come from an attacker (through an LLM's input): resource bombs, regex bombs,
runaway jq, escapes and malformed input must end with a clear error, in bounded time and
memory, with the host process alive. Budgets here are generous for a loaded 2-core machine;
SECURITY.md lists what each case measured."""
import json
import resource
import subprocess
import sys
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scripted_kernel import BashTool, ExecutionLimits, MemoryFs, ScriptedTool, ToolDef
from support import scaled

LIMITS = ExecutionLimits(timeout_seconds=3, max_output_bytes=1 << 20)
# Bombs that a count limit must stop get a clock far beyond any machine's speed, so that the
# count, never the clock, is what ends them (a race on a loaded machine otherwise).
COUNTED = ExecutionLimits(timeout_seconds=300, max_output_bytes=1 << 20)


@pytest.fixture(scope="module")
def tool():
    def echo_params(args):
        return {"params": args.params, "stdin_bytes": len(args.stdin or "")}
    return (ScriptedTool.builder("hard").limits(LIMITS)
            .tool(ToolDef("probe", "echo parameters", {"type": "object", "properties": {
                "n": {"type": "integer", "maximum": 1000}, "name": {"type": "string", "maxLength": 64}}}),
                echo_params)
            .build())


def rss_mb() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024


BOMBS = {
    "brace expansion": ("echo {1..99999999}", "limit:max_brace_expansion"),
    "seq": ("seq 1 1000000000000 | head -1", "limit:max_string_length"),
    "printf width": ("printf '%999999999d' 1", "limit:max_string_length"),
    "string doubling": ("s=x; while :; do s=$s$s; done", "limit:max_string_length"),
    "endless arithmetic for": ("for ((i=0;;i++)); do :; done", "limit:max_loop_iterations"),
    "endless while": ("while :; do :; done", "limit:max_commands"),
    "recursion": ("f(){ f; }; f", "limit:max_function_depth"),
    "output flood": ("while :; do echo yyyyyyyyyyyyyyyyyyyyyyyyyyyyyy; done", "limit:max_output_bytes"),
    "parser nesting $(": ("echo " + "$(" * 100_000, None),
    "parser nesting ((": ("(" * 100_000, None),
    # the values' memory bound, reached after ~4 s of CPU: counted, on the far clock (on the
    # 3 s one, a faster machine got there first)
    "jq range": ("jq -n '[range(1e9)]'", "jq: error: jq ran out of memory"),
    "jq repeat": ("jq -n '[repeat(1)]'", None),
    "jq recursion": ("jq -n 'def f: f; f'", "timeout"),
    "jq limit repeat": ("jq -n '[limit(1e9; repeat(.))] | length'", "timeout"),
}


@pytest.mark.parametrize("name", sorted(BOMBS))
def test_resource_bombs_end_cleanly(tool, name):
    script, error = BOMBS[name]           # error: the response's, or the start of a command's own message
    counted = error is not None and error != "timeout"
    runner = ScriptedTool.builder("hard").limits(COUNTED).build() if counted else tool
    r = runner.execute(script)
    assert r.exit_code != 0
    if error is not None and (error == "timeout" or error.startswith("limit:")):
        assert r.error == error, r.stderr
    elif error is not None:
        assert r.error is None and r.stderr.startswith(error), r.stderr
    assert r.stderr and "Traceback" not in r.stderr
    assert rss_mb() < 2048
    assert tool.execute("echo alive").stdout == "alive\n"


# Every way of nesting: commands, `$( )`, word parts, quotes, here-documents. The compiled
# parser has no Python recursion limit to fall back on, so the depth limit alone must stop each.
NESTING = ["$(", "((", "{ ", "( ", "<(", "if ", "while ", "case x in x) ", "f() ", "${x:-", "${x/",
           '"${x:-', "${x:-$(", "{ $(", "$((a[", '${x:-"$((', "<<E\n$("]
# In a child process, so that a crash fails this test rather than ending the run: with the
# default limits, and with no depth limit asked for in a thread with a 1 MB stack.
NEST_EACH = """
import json, sys, threading
from scripted_kernel import ExecutionLimits, ScriptedTool
limits = ExecutionLimits(max_parser_depth=int(sys.argv[3])) if len(sys.argv) > 3 else None
tool = ScriptedTool.builder("nest").limits(limits or ExecutionLimits()).build()
threading.stack_size(1 << 20)
results = []
worker = threading.Thread(target=lambda: results.extend(
    tool.execute(opener * int(sys.argv[2])) for opener in json.loads(sys.argv[1])))
worker.start()
worker.join()
print(json.dumps([[r.exit_code, r.stderr] for r in results]))
"""


@pytest.mark.parametrize("depth_limit", [[], ["1000000"]], ids=["default", "unlimited"])
def test_deep_nesting_of_every_kind_ends_at_the_depth_limit(depth_limit):
    # past the depth limit, and (unlimited) past what Python's recursion allows on a 1 MB stack
    levels = str(scaled(10_000))
    child = subprocess.run([sys.executable, "-c", NEST_EACH, json.dumps(NESTING), levels, *depth_limit],
                           capture_output=True, text=True)
    assert child.returncode == 0, child.stderr[-500:]
    outcomes = json.loads(child.stdout)
    assert len(outcomes) == len(NESTING)
    for opener, (status, stderr) in zip(NESTING, outcomes):
        assert status == 2 and "nesting too deep" in stderr, (opener, status, stderr)


@pytest.mark.parametrize("script", [
    "printf 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!\\n' | grep -E '(a+)+$'",
    "echo aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa! | sed -E 's/(a+)+$//'",
    "echo aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa! | awk '/(a+)+$/'",
    "echo aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa! | awk -v r='(a+)+$' '$0 ~ r'",
    "echo aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa! | awk '{ gsub(/(a+)+$/, \"x\"); print }'",
    "[[ aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa! =~ (a+)+$ ]]",
    "x=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa; echo ${x//*(a)*(a)b/}",
    "case aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa! in *(*(a))b) echo m;; esac",
])
def test_catastrophic_regexes_finish(tool, script):
    r = tool.execute(script)           # bash's answer, or the 3 s deadline
    assert r.error in (None, "timeout") and "Traceback" not in r.stderr


@pytest.mark.parametrize("script,fragment", [
    ("cat /etc/passwd", "file access is disabled"),
    ("grep root /etc/passwd", "file access is disabled"),
    ("sed -n p /etc/passwd", "file access is disabled"),
    ("awk '{print}' /etc/passwd", "file access is disabled"),
    ("jq . /etc/passwd", "file access is disabled"),
    ("sort /etc/passwd", "file access is disabled"),
    ("echo x > /tmp/owned", "file redirection is disabled"),
    ("echo x >> ~/.bashrc", "file redirection is disabled"),
    ("cat < /etc/shadow", "file redirection is disabled"),
    ("exec 3</etc/passwd", "file redirection is disabled"),
    ("source /etc/profile", "reading script files is disabled"),
    (". /etc/profile", "reading script files is disabled"),
    ("/bin/sh -c id", "running programs by path is disabled"),
    ("PATH=/bin; ls", "command not found"),
    ("exec /bin/sh", "running programs by path is disabled"),
    ("command /bin/ls", "running programs by path is disabled"),
    ("source <(echo cat /etc/passwd)", "file access is disabled"),
    ("cat <(cat /etc/passwd) && cat /etc/passwd", "file access is disabled"),
    ("jq -n 'import \"a\" as a; 1'", "disabled"),
    ("jq -n --rawfile f /etc/passwd '$f'", "file access is disabled"),
    ("awk 'BEGIN { while ((getline l < \"/etc/passwd\") > 0) print l }'", "file access is disabled"),
    ("awk 'BEGIN { print \"x\" > \"/tmp/owned\" }'", "file access is disabled"),
    ("awk 'BEGIN { system(\"id\") }'", "running commands is disabled"),
    ("awk 'BEGIN { \"id\" | getline x }'", "syntax error"),
    ("echo x | sed 'w /tmp/owned'", "disabled"),
    ("echo x | sed 'e id'", "disabled"),
    ("echo x | sed 's/x/id/e'", "disabled"),
])
def test_escapes_are_refused(tool, script, fragment):
    r = tool.execute(script)
    assert r.exit_code != 0 and fragment in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


def test_awk_program_text_stays_data_in_the_generated_code(tool):
    """awk compiles to Python source: strings, regexes and names must never become code."""
    script = r"""awk 'function __import__(os) { return os "!" }
BEGIN { s = "\"); __import__(\"os\").system(\"echo pwned\"); (\""; print s; print __import__("x")
        None = 1; class[1] = 2; print None + class[1]; if ("a" ~ /"\); import os; \("/) print "no" }'"""
    r = tool.execute(script)
    assert r.stdout == '"); __import__("os").system("echo pwned"); ("\nx!\n3\n', r.stderr
    assert r.exit_code == 0 and "pwned\n" not in r.stdout.replace('echo pwned"', "")


def test_host_environment_and_secrets_stay_out(tool, monkeypatch):
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "topsecretvalue")
    # the pattern is split with quotes so that the script's own text does not match it
    script = """env_dump() { declare -p; export -p; }
env_dump | grep -c "top""secret"
jq -n 'env | tostring' | grep -c "top""secret"
awk 'BEGIN { for (k in ENVIRON) print k, ENVIRON[k] }' | grep -c "top""secret"
echo "${AWS_SECRET_ACCESS_KEY:-unset}" """
    r = tool.execute(script)
    assert r.stdout == "0\n0\n0\nunset\n"


def test_tool_errors_are_sanitised():
    def leaky(args):
        raise RuntimeError("connect failed: /srv/app/config.py password=hunter2 "
                           "key=AKIAABCDEFGHIJKLMNOP\nTraceback (most recent call last): ...")
    t = ScriptedTool.builder("t").tool(ToolDef("leaky", "fails"), leaky).build()
    r = t.execute("leaky")
    assert r.exit_code == 1 and r.stderr.count("\n") == 1
    assert "/srv" not in r.stderr and "hunter2" not in r.stderr and "AKIA" not in r.stderr
    assert "Traceback" not in r.stderr


def test_help_and_discover_only_know_registered_tools(tool):
    r = tool.execute("help cat; help ls; discover --search passwd")
    assert "cat" not in r.stdout and r.exit_code != 0


@pytest.mark.parametrize("args", ["--n abc", "--n 99999999999999999999999", "--name " + "x" * 10_000,
                                  "--n", "--json '{\"n\": \"x\"}'", "--json '[1]'", "--json '{'"])
def test_bad_tool_input_is_a_flag_error(tool, args):
    r = tool.execute(f"probe {args}")
    assert r.exit_code == 2 and r.stderr.startswith("probe: ") and "Traceback" not in r.stderr


def test_binary_and_invalid_utf8_on_stdin(tool):
    data = bytes(range(256)).decode("latin-1") + "\udcff\udcfe"
    r = tool.execute("probe | jq .stdin_bytes; wc -c | tr -d ' '; tr -d 'a' | head -c 3 | od -c >/dev/null; echo ok",
                     stdin=data)
    assert "Traceback" not in r.stderr and r.stdout.endswith("ok\n")


# ---------------------------------------------------------------- fuzzing (bounded)

WORDS = st.sampled_from(["echo", "x", "$x", "${x:-d}", "$((1+2))", "'q'", '"dq $x"', "a=1", "{1..3}",
                         "|", "&&", "||", ";", "\n", "(", ")", "{", "}", "if", "then", "fi", "for",
                         "in", "do", "done", "case", "esac", ")", "[[", "]]", "$(", "`", "<<EOF",
                         "EOF", "jq", ".", "grep", "-v", "sed", "s/a/b/", "awk", "'{print}'", "2>&1",
                         ">/dev/null", "f()", "local", "return", "break", "!", "*", "?", "[a-z]"])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(WORDS, max_size=25))
def test_fuzz_grammar_words_never_crash(words):
    t = ScriptedTool.builder("fuzz").limits(ExecutionLimits(timeout_seconds=1, max_commands=10_000)).build()
    r = t.execute(" ".join(words))
    assert r.error != "internal", r.stderr
    assert "Traceback" not in r.stderr


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=200))
def test_fuzz_arbitrary_text_never_crashes(text):
    t = ScriptedTool.builder("fuzz").limits(ExecutionLimits(timeout_seconds=1, max_commands=10_000)).build()
    r = t.execute(text)
    assert r.error != "internal", r.stderr


@settings(max_examples=150, deadline=None)
@given(st.lists(st.text(max_size=12), max_size=8))
def test_fuzz_tool_flags_never_crash(argv):
    from scripted_kernel.tools.flags import FlagError, FlagParser
    parser = FlagParser("probe", {"type": "object", "properties": {
        "n": {"type": "integer"}, "tags": {"type": "array", "items": {"type": "string"}},
        "opts": {"type": "object"}, "on": {"type": "boolean"}}, "additionalProperties": False})
    try:
        parsed = parser.parse(argv)
        parser.validate(parsed.params)
    except FlagError as e:
        assert "\n" not in str(e) and "Traceback" not in str(e)
        return
    assert set(parsed.params) <= {"n", "tags", "opts", "on"}, parsed.params


def test_cancel_stops_quickly_and_keeps_output():
    """Cancelled by another thread once the script has printed (an event, not a timer: a
    loaded machine cannot make the cancel arrive before the first output)."""
    import threading
    from scripted_kernel import CancelToken
    token = CancelToken()
    endless = ExecutionLimits(max_commands=10**9, max_loop_iterations=10**9, timeout_seconds=3600)
    t = ScriptedTool.builder("t").limits(endless).build()       # only the cancel ends the loop
    cancelling = []

    def on_output(stream, text):
        if not cancelling:
            cancelling.append(threading.Thread(target=token.cancel))
            cancelling[0].start()
    r = t.execute("echo partial; while :; do x=$((x+1)); done", cancel=token, on_output=on_output)
    assert r.stdout == "partial\n" and r.error == "cancelled"     # no limit came first
    assert t.execute("echo next").stdout == "next\n"


def test_huge_sparse_index_is_cheap(tool):
    r = tool.execute("a[2**62]=1; a[-1]+=2; echo ${#a[@]} ${!a[@]} ${a[@]}")
    assert r.stdout == "1 4611686018427387904 12\n" and r.error is None     # not the 3 s deadline


def test_a_defect_while_compiling_is_reported_without_a_traceback(tool, monkeypatch):
    """An engine defect in the parse or compile stage ends the call with a one-line message
    and status 1, as one while running does; nothing of Python leaks, the next call works."""
    from scripted_kernel.shell import interpreter

    class BrokenCompiler:           # (the compiled Compiler's methods cannot be patched)
        def __init__(self, source):
            pass

        def compile_program(self, tree):
            raise AttributeError("'Assign' object has no attribute 'parts' in /host/path/compile.py")

    class BrokenStream:             # a script compiled one command at a time
        syntax_error = None

        def __init__(self, text, max_depth):
            self.compiler = BrokenCompiler(None)

        def next_unit(self):
            return self.compiler.compile_program(None)
    monkeypatch.setattr(interpreter, "SCRIPT_CACHE", interpreter.ScriptCache())   # nothing cached
    monkeypatch.setattr(interpreter, "Compiler", BrokenCompiler)
    monkeypatch.setattr(interpreter, "StreamedScript", BrokenStream)
    for _ in range(2):              # streamed when new, then (seen before) kept and compiled whole
        r = tool.execute("echo never")
        assert (r.exit_code, r.error, r.stdout) == (1, "internal", "")
        assert r.stderr == "bash: internal error (AttributeError)\n"
    monkeypatch.undo()
    assert tool.execute("echo alive").stdout == "alive\n"


@pytest.mark.parametrize("unit", ["x[$((", "$((", "((", "echo a;", "f() { :; }; ", "a && "])
@pytest.mark.parametrize("stop", ["deadline", "cancel"])
def test_parsing_is_under_the_deadline_and_the_cancel(unit, stop):
    """A script's text is parsed (and compiled) under its deadline and its cancel token: some
    texts cost far more to parse than their size suggests (each `$((` of `x[$((x[$((...` looks
    ahead to the end of the script for its `))`; 1 MiB of it took 13 s against a 1 s timeout).
    With the deadline already past, or the call already cancelled, nothing runs: not even the
    first command, which is read and run before the rest of the text is parsed."""
    from scripted_kernel import CancelToken
    token = CancelToken()
    timeout = COUNTED.timeout_seconds
    if stop == "cancel":
        token.cancel()
    else:
        timeout = 1e-9
    t = ScriptedTool.builder("t").limits(ExecutionLimits(timeout_seconds=timeout)).build()
    r = t.execute("echo started\n" + unit * 20_000, cancel=token)
    assert (r.stdout, r.error) == ("", "timeout" if stop == "deadline" else "cancelled"), r.stderr
    assert r.exit_code == (124 if stop == "deadline" else 130) and r.stderr.count("\n") == 1


@pytest.mark.parametrize("script,stdout", [
    ("echo \ud800", "\ufffd\n"),
    ("x=a\udfffb; echo ${#x} $x", "3 a\ufffdb\n"),
    ("printf '%s' \ud800 | wc -c", "3\n"),
    ("echo \ud800 | jq -R .", '"\ufffd"\n'),
    ("echo \ud800 > f; cat f; rm f", "\ufffd\n"),
    ("echo $V; cat", "a\ufffdb\nin\ufffd\n"),
    ("lone", "x\ufffdy\n"),
    ("printf '\\xff' | od -An -tx1", " ff\n"),        # a byte that is not UTF-8 stays that byte
])
def test_a_lone_surrogate_from_the_host_is_a_replacement_character(script, stdout):
    # a JSON string from a model or an MCP client can carry "\ud800": no character and no
    # byte; before, any script holding one ended in an internal error (UnicodeEncodeError)
    scripted = (ScriptedTool.builder("t").env("V", "a\ud800b").filesystem(MemoryFs())
                .tool(ToolDef("lone", "a lone surrogate"), lambda args: "x\udc00y\n").build())
    bash = BashTool.builder().env("V", "a\ud800b").builtin("lone", lambda args, stdin: "x\udc00y\n").build()
    for tool in (scripted, bash):
        r = tool.execute(script, stdin="in\udfff\n")
        assert (r.stdout, r.stderr, r.exit_code) == (stdout, "", 0), type(tool).__name__


@pytest.mark.parametrize("script", ["`" * 1_000_000, "echo " + "`:`" * 330_000])
def test_many_backtick_substitutions_are_read_under_the_clock(script):
    # each `...` body is read by a parser of its own, whose count of work never reached the
    # clock check: 1 MiB of backticks was read for 14 s past a 3 s deadline; and once read, the
    # 500,000 empty substitutions ran no command, so never read the clock (7 s past a 2 s
    # deadline). The work is some 7 s here: a deadline of 0.5 s ends it on any machine (the
    # bound below is generous: the clock is read every 64 substitutions, a few milliseconds)
    start = time.monotonic()
    r = ScriptedTool.builder("t").limits(ExecutionLimits(timeout_seconds=0.5)).build().execute(script)
    assert (r.exit_code, r.error) == (124, "timeout")
    assert time.monotonic() - start < 0.5 + 3


@pytest.mark.parametrize("script", [": {1..100000}$() {1..100000}$() {1..100000}$()", ": {1..99999}$()$()$()$()$()"])
def test_words_of_empty_substitutions_run_under_the_clock(script):
    """A short text whose brace expansion makes 100,000 words of empty substitutions runs no
    command: making the words and running the substitutions read the clock themselves (before,
    7-9 s past a 0.5 s deadline, and then exit status 0)."""
    start = time.monotonic()
    r = ScriptedTool.builder("t").limits(ExecutionLimits(timeout_seconds=0.5)).build().execute(script)
    assert (r.exit_code, r.error) == (124, "timeout")
    assert time.monotonic() - start < 0.5 + 3


@pytest.mark.parametrize("word, words", [("{" * 200_000, 1),                   # never closed
                                         ("{a}" * 100_000, 1),                  # neither alternatives nor a sequence
                                         ("{1" * 100_000 + "}" * 100_000, 1),   # nested non-sequences
                                         ("{x," * 1000 + "y" + "}" * 1000, 1001)])     # alternatives 1,000 deep
def test_brace_expansion_takes_time_in_proportion_to_the_text(word, words):
    """Each brace was matched by scanning to the end of the word, and the rest after it was
    sliced and expanded again, recursively: 100,000 braces never closed took minutes, past the
    deadline (the scan never read the clock), recursing on the C stack when compiled. (Each
    takes under 0.3 s here, pure or compiled: the deadline leaves a slow machine room.)"""
    start = time.monotonic()
    r = ScriptedTool.builder("t").limits(ExecutionLimits(timeout_seconds=10)).build().execute(
        f"printf '%s\\n' {word} | wc -l")
    assert (r.exit_code, r.stdout) == (0, f"{words}\n"), r.stderr[-200:]
    assert time.monotonic() - start < 10 + 3


def test_brace_groups_beyond_the_word_limit_stop_before_they_are_made():
    """100,000 groups of two: the limit is reached at the 17th group, not after every group's
    expansion of the rest was made (that took 80 s, and gigabytes past 30,000 groups)."""
    start = time.monotonic()
    r = ScriptedTool.builder("t").limits(ExecutionLimits(timeout_seconds=10)).build().execute(
        "echo " + "{a,b}" * 100_000)
    assert r.error == "limit:max_brace_expansion" and "max_brace_expansion" in r.stderr
    assert time.monotonic() - start < 10 + 3


def test_brace_alternatives_nested_too_deep_are_an_error_not_a_crash():
    """Alternatives inside alternatives past 1,000 levels stop the script alike on the pure and
    the compiled build (whose recursion Python's recursion limit does not watch)."""
    r = ScriptedTool.builder("t").build().execute("echo " + "{x," * 5000 + "y" + "}" * 5000 + "; echo after")
    assert (r.exit_code, r.stdout) == (1, "") and "maximum nesting depth exceeded" in r.stderr


@pytest.mark.parametrize("command", ["ls", "grep a", "stat", "find", "du", "xargs", "realpath", "tar -cf a.tar",
                                     "tar -xf", "unzip", "gzip", "cd", "source", "cat", "wc -c", "cp a", "rm",
                                     "echo hi >", "", "ln -s"])
def test_a_diagnostic_quotes_at_most_4_kib_of_an_operand(command):
    # an operand may be as long as a string (16 MiB here): each message quoted it whole, and
    # forty of them took a notebook kernel past 800 MB
    bash = BashTool.builder().limits(ExecutionLimits(max_output_bytes=64 << 20)).build()
    r = bash.execute(f'x=$(printf "%09000000d" 0); {command} $x; echo status=$?')
    assert r.stdout.rstrip().rsplit("=", 1)[-1] in ("1", "2", "9", "127")     # (unzip's 9: no such zipfile)
    assert r.stderr and max(len(line) for line in r.stderr.splitlines()) < 2 * 4096 + 300, r.stderr[:80]
