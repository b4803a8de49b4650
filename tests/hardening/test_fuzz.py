"""A seeded mutation fuzzer over the test corpora: every string literal of the test suite that
looks like a script, mutated (characters and shell tokens inserted, deleted, duplicated,
swapped), must run to bash's answer or a clean error, never to an internal error.

The default run is small enough for CI; the issue's figure is
    SCRIPTED_FUZZ_CASES=10000 python -m pytest tests/hardening/test_fuzz.py
Small count limits end runaway mutants by count, not by the clock, so the run is deterministic.
"""
import os
import random
from pathlib import Path

import pytest

from support import mutate, script_corpus
from scripted_kernel import ExecutionLimits, ScriptedTool, ToolDef

CASES = int(os.environ.get("SCRIPTED_FUZZ_CASES", "1500"))
SEED = int(os.environ.get("SCRIPTED_FUZZ_SEED", "13"))

TOKENS = ["$", "${", "}", "$(", ")", "((", "))", "[[", "]]", "'", '"', "\\", "`", "|", "||", "&&",
          ";", "&", "<", ">", ">>", "<<", "<<<", "*", "?", "[", "]", "{", "}", "@(", "!(", "+(",
          "#", "%", "/", "//", ":-", ":=", ":?", "=", "+=", "\n", " ", "-", "--", "0", "1", "-1",
          "99999999999999999999", "é", "\x00", "\udcff", "$@", "$*", "$#", "${#", "${!", "[@]",
          "eval ", "declare -A ", "local ", "set -e; ", "shopt -s extglob; ", "| jq .", "| awk '{print}'",
          "| sed s/a/b/", "| sort", "| tr a-z A-Z", "printf '%s' ", "read -r x", "case x in ", " esac",
          " do ", " done", " then ", " fi", "function ", "()", "{ ", "; }", "probe --n 3"]


@pytest.fixture(scope="module")
def tool():
    limits = ExecutionLimits(timeout_seconds=5, max_commands=3000, max_loop_iterations=2000,
                             max_function_depth=50, max_output_bytes=1 << 16,
                             max_string_length=1 << 20, max_brace_expansion=2000)
    return (ScriptedTool.builder("fuzz").limits(limits)
            .tool(ToolDef("probe", "echo parameters", {"type": "object", "properties": {
                "n": {"type": "integer"}}}), lambda args: {"params": args.params})
            .build())


def test_mutated_scripts_never_reach_an_internal_error(tool):
    corpus = script_corpus(skip=Path(__file__).name)   # (not its own list of tokens)
    assert len(corpus) > 500, "the corpus should come from the whole test suite"
    rng = random.Random(SEED)
    failures = []
    for case in range(CASES):
        script = mutate(rng, rng.choice(corpus), TOKENS)
        r = tool.execute(script)
        # (a syntax error message quotes the script's line: text the script holds is not news)
        leaked_traceback = "Traceback" in r.stderr and "Traceback" not in script
        reported = "internal error" in r.stderr and "internal error" not in script
        if r.error == "internal" or reported or leaked_traceback:
            failures.append((case, script, r.stderr[-200:]))
    assert not failures, failures[:5]
