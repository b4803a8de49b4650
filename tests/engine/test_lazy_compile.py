"""Function bodies, `case` arms and `$( )` bodies are compiled when they first run
(Compiler.later): what a script defines but never runs costs no compiling, while parse errors,
line numbers, tracing and sharing between threads stay as they were."""
import gc
import shutil
import subprocess
import threading

from scripted_kernel.shell.compile import COMPILE_COUNTS, COMPILER, Compiler
from scripted_kernel.shell.interpreter import SCRIPT_CACHE, execute
from scripted_kernel.base.limits import ExecutionLimits
from scripted_kernel.shell.lexer import Source
from scripted_kernel.shell.parser import Parser


def compiled(text: str):
    source = Source(text)
    return Compiler(source).compile_program(Parser(text, source=source).parse_program())


def test_a_function_defined_but_never_called_compiles_nothing():
    before = COMPILE_COUNTS["later"]
    r = execute("\n".join(f"f{k}() {{ echo $(date) | tr a b; case x in y) z;; esac; }}"
                          for k in range(50)) + "\necho done")
    assert r.stdout == "done\n" and r.exit_code == 0
    assert COMPILE_COUNTS["later"] == before


def test_only_the_arm_taken_and_the_substitutions_run_are_compiled():
    before = COMPILE_COUNTS["later"]
    r = execute("case b in a) echo A;; b) echo B;; c) echo C;; esac\n"
                "f() { echo in-f; }\nx=$(echo sub)\ntrue || y=$(echo never)\necho $x\n")
    assert r.stdout == "B\nsub\n"
    # one arm and one substitution; the other arms, f's body and the substitution not run wait
    assert COMPILE_COUNTS["later"] - before == 2


def test_a_compiled_script_run_again_does_not_compile_its_bodies_again():
    text = "f() { echo $(echo one); }\nf; f\ncase a in a) echo two;; esac\n"
    first = execute(text)
    before = COMPILE_COUNTS["later"]
    second = execute(text)               # the cache keeps it from the second time it is seen
    third = execute(text)
    assert first.stdout == second.stdout == third.stdout == "one\none\ntwo\n"
    assert COMPILE_COUNTS["later"] - before <= 3     # second compiled afresh, third none
    before = COMPILE_COUNTS["later"]
    execute(text)
    assert COMPILE_COUNTS["later"] == before


def test_a_syntax_error_in_a_body_never_run_is_still_reported_before_anything_runs():
    r = execute("echo first\nf() { case x in y) echo $(if then);; esac; }\necho last\n")
    assert "syntax error" in r.stderr
    assert "last" not in r.stdout


def test_errors_inside_lazily_compiled_bodies_name_their_lines():
    r = execute("f() {\n  true\n  nosuchcmd1\n}\n"
                "case a in\n  a)\n    nosuchcmd2\n    ;;\nesac\n"
                "x=$(\n  true\n  nosuchcmd3\n)\n"
                "f\necho \"$LINENO ${FUNCNAME[0]-none}\"\n")
    assert "line 3: nosuchcmd1: command not found" in r.stderr
    assert "line 7: nosuchcmd2: command not found" in r.stderr
    assert "line 12: nosuchcmd3: command not found" in r.stderr
    assert r.stdout == "15 none\n"


def test_trace_recursion_nesting_and_declare_f_are_unchanged():
    r = execute("fact() { if (( $1 <= 1 )); then echo 1; else echo $(( $1 * $(fact $(( $1 - 1 ))) )); fi; }\n"
                "fact 6\n"
                "outer() { inner() { echo \"inner ${FUNCNAME[1]}\"; }; }\n"
                "outer; outer; inner\n"
                "declare -f inner\n"
                "set -x\ncase q in q) : arm;; esac\n")
    assert r.stdout.splitlines()[:2] == ["720", "inner "]
    assert "inner () \n{ \n    echo \"inner ${FUNCNAME[1]}\"\n}" in r.stdout
    assert "+ case q in\n+ : arm\n" in r.stderr


def test_export_f_reaches_a_child_bash():
    r = execute("g() { echo exported $1; }\nexport -f g\nbash -c 'g ok'\n")
    assert r.stdout == "exported ok\n"


def test_a_body_first_run_by_many_threads_at_once_is_compiled_to_the_same_behaviour():
    """The cached script is shared: its bodies are first run, so compiled, by 8 threads at once."""
    text = ("# threads\nf() { local i s=0; for i in 1 2 3; do s=$((s + i)); done; "
            "case $1 in even) echo \"$1 $s $(echo sub)\";; *) echo \"odd $s\";; esac; }\n"
            "f $ARG\n")
    depth = ExecutionLimits().max_parser_depth
    shared = SCRIPT_CACHE.get(text, depth)
    assert SCRIPT_CACHE.get(text, depth) is not shared       # seen twice: kept from now on
    shared = SCRIPT_CACHE.get(text, depth)
    start = threading.Barrier(8)
    outs = [None] * 8

    def worker(k):
        start.wait()
        outs[k] = execute(text, env={"ARG": "even" if k % 2 else "odd"}).stdout
    threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert SCRIPT_CACHE.get(text, depth) is shared
    assert outs == ["odd 6\n", "even 6 sub\n"] * 4
    before = COMPILE_COUNTS["later"]
    assert execute(text, env={"ARG": "even"}).stdout == "even 6 sub\n"
    assert COMPILE_COUNTS["later"] == before                  # all compiled once and kept


EVAL_DEFINES = "eval $'\\n\\nf() {\\n  echo $LINENO\\n  g() { echo $LINENO; }\\n}\\n'\n\n\n\nf; g; echo $LINENO\n"


def test_a_body_compiled_on_its_first_run_keeps_the_line_numbers_of_its_own_text():
    """A function defined by eval's text and first run from the script's: its compiler is the
    one of the text that defined it (bash 5.2 prints 4, 5 and 5)."""
    assert execute(EVAL_DEFINES).stdout == "4\n5\n5\n"
    if shutil.which("bash"):
        assert subprocess.run(["bash", "-c", EVAL_DEFINES], capture_output=True, text=True).stdout == "4\n5\n5\n"


def test_a_compiled_script_leaves_no_reference_cycle():
    """A compiler per text: the closures keep it and it keeps its text, but nothing keeps the
    closures again, so a script is freed as soon as it is dropped (nothing left for the
    collector, which a cycle per script would need)."""
    text = "f() { echo $(g) <(h); case $1 in a) x=1;; esac; }\nfor i in 1 2; do f a; done\n"
    enabled = gc.isenabled()
    gc.disable()
    try:
        gc.collect()
        script = compiled(text)
        assert len(script.units) == 2
        del script
        assert gc.collect() == 0
    finally:
        if enabled:
            gc.enable()


def test_scripts_compiled_by_many_threads_at_once_keep_their_own_line_numbers():
    start = threading.Barrier(8)
    outs = [None] * 8

    def worker(k):
        text = "\n" * k + f"# {k}\nf() {{\n  echo $LINENO; }}\ncase x in x) echo $LINENO;; esac\nf\n"
        start.wait()
        outs[k] = execute(text).stdout
    threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert outs == [f"{k + 4}\n{k + 3}\n" for k in range(8)]
    assert COMPILER.source is None
