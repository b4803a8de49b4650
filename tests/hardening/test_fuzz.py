"""A seeded mutation fuzzer over the test corpora: every string literal of the test suite that
looks like a script, mutated (characters and shell tokens inserted, deleted, duplicated,
swapped), must run to bash's answer or a clean error, never to an internal error.

The default run is small enough for CI; the issue's figure is
    SCRIPTED_FUZZ_CASES=10000 python -m pytest tests/hardening/test_fuzz.py
Small count limits end runaway mutants by count, not by the clock, so the run is deterministic.
"""
import ast
import os
import random
from pathlib import Path

import pytest

from scripted_kernel import ExecutionLimits, ScriptedTool, ToolDef

CASES = int(os.environ.get("SCRIPTED_FUZZ_CASES", "1500"))
SEED = int(os.environ.get("SCRIPTED_FUZZ_SEED", "13"))
TESTS = Path(__file__).resolve().parent.parent

TOKENS = ["$", "${", "}", "$(", ")", "((", "))", "[[", "]]", "'", '"', "\\", "`", "|", "||", "&&",
          ";", "&", "<", ">", ">>", "<<", "<<<", "*", "?", "[", "]", "{", "}", "@(", "!(", "+(",
          "#", "%", "/", "//", ":-", ":=", ":?", "=", "+=", "\n", " ", "-", "--", "0", "1", "-1",
          "99999999999999999999", "é", "\x00", "\udcff", "$@", "$*", "$#", "${#", "${!", "[@]",
          "eval ", "declare -A ", "local ", "set -e; ", "shopt -s extglob; ", "| jq .", "| awk '{print}'",
          "| sed s/a/b/", "| sort", "| tr a-z A-Z", "printf '%s' ", "read -r x", "case x in ", " esac",
          " do ", " done", " then ", " fi", "function ", "()", "{ ", "; }", "probe --n 3"]


def _corpus() -> list[str]:
    """String literals of the test files that look like scripts."""
    found = set()
    for path in sorted(TESTS.rglob("*.py")):
        if path.name == Path(__file__).name:
            continue
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                text = node.value
                if 4 <= len(text) <= 400 and any(c in text for c in " ;|$") and "\x00" not in text:
                    found.add(text)
    return sorted(found)


def _mutate(rng: random.Random, text: str) -> str:
    for _ in range(rng.randint(1, 4)):
        i = rng.randrange(len(text) + 1)
        kind = rng.randrange(5)
        if kind == 0:
            text = text[:i] + rng.choice(TOKENS) + text[i:]
        elif kind == 1 and text:
            j = min(len(text), i + rng.randint(1, 6))
            text = text[:i] + text[j:]
        elif kind == 2 and text:
            j = min(len(text), i + rng.randint(1, 12))
            text = text[:j] + text[i:j] + text[j:]
        elif kind == 3 and len(text) > 2:
            j = rng.randrange(len(text))
            a, b = sorted((i % len(text), j))
            text = text[:a] + text[b:b + 1] + text[a + 1:b] + text[a:a + 1] + text[b + 1:]
        else:
            text = text[:i] + chr(rng.choice([rng.randrange(32, 127), rng.randrange(0x80, 0x800)])) + text[i:]
    return text


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
    corpus = _corpus()
    assert len(corpus) > 500, "the corpus should come from the whole test suite"
    rng = random.Random(SEED)
    failures = []
    for case in range(CASES):
        script = _mutate(rng, rng.choice(corpus))
        r = tool.execute(script)
        # (a syntax error message quotes the script's line: text the script holds is not news)
        leaked_traceback = "Traceback" in r.stderr and "Traceback" not in script
        reported = "internal error" in r.stderr and "internal error" not in script
        if r.error == "internal" or reported or leaked_traceback:
            failures.append((case, script, r.stderr[-200:]))
    assert not failures, failures[:5]
