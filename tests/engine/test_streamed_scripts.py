"""A script seen once is read as bash reads one: each top-level command is parsed, compiled
and run before the next is read (interpreter.StreamedScript). A call then holds one command's
syntax tree and closures at a time instead of the whole script's, memory that a script seen
once touches only once (new to the processor's caches on every call)."""
import itertools
import tracemalloc

from scripted_kernel import ScriptedTool
from scripted_kernel.shell.interpreter import SCRIPT_CACHE, CompiledScript, StreamedScript
from scripted_kernel.shell.parser import Parser

_texts = itertools.count()


def script(lines: int = 2000) -> str:
    """Lines of every common kind, a function and a here-document among them; a new text."""
    body = [f"f{k}() {{ echo \"item-{k} $1\"; }}" for k in range(10)]
    body += [f"x=$(f{k % 10} x | tr a-z A-Z); case $x in ITEM-{k % 10}*) n=$((n + 1)) ;; esac"
             for k in range(lines)]
    body += ["cat <<EOF", "total $n", "EOF"]
    return "n=0\n" + "\n".join(body) + f"\n# text {next(_texts)}\n"


def traced_peak(work) -> int:
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        work()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def test_a_script_seen_once_holds_one_command_at_a_time():
    text = script()
    tree_bytes = traced_peak(lambda: Parser(text).parse_program())
    tool = ScriptedTool.builder("t").build()
    tool.execute(script(10))                 # what a first call builds once (commands, tables)
    results = []
    call_bytes = traced_peak(lambda: results.append(tool.execute(text)))
    r = results[0]
    assert r.exit_code == 0 and r.stdout == "total 2000\n", r.stderr
    # the whole tree alone is several times what the whole call needs at its peak
    assert call_bytes * 4 < tree_bytes, (call_bytes, tree_bytes)


def test_only_a_script_the_cache_will_not_keep_is_streamed():
    text = script(5)
    first = SCRIPT_CACHE.get(text, 100, stream=True)
    second = SCRIPT_CACHE.get(text, 100, stream=True)      # seen before: compiled whole and kept
    third = SCRIPT_CACHE.get(text, 100, stream=True)
    assert type(first) is StreamedScript and type(second) is CompiledScript and third is second
    assert type(SCRIPT_CACHE.get(script(5), 100)) is CompiledScript     # eval, source: whole


def test_a_streamed_script_runs_the_commands_before_a_syntax_error():
    tool = ScriptedTool.builder("t").build()
    r = tool.execute("echo one\ncat <<EOF\ntwo\nEOF\nif then\necho never\n")
    assert (r.stdout, r.exit_code) == ("one\ntwo\n", 2)
    assert r.stderr == ("bash: line 5: syntax error near unexpected token `then' (column 4)\n"
                        "bash: line 5: `if then'\n")
