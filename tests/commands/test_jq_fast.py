"""jq_fast, the direct evaluator for common jq programs, against libjq itself: generated
programs over generated JSON values must give the same results, and where libjq reports an
error jq_fast must step aside (Unsupported) instead of printing something."""
import json
import random

import pytest

from scripted_kernel.commands.jq import fast as jq_fast
from scripted_kernel.commands.jq.values import dump

libjq = pytest.importorskip("jq")

KEYS = ["a", "b", "qty", "name", "tags"]
PATHS = [".", ".a", ".b", ".qty", ".name", ".tags", ".[0]", ".[-1]", ".a.b", ".tags[1]", '.["name"]',
         ".[]", ".tags[]", ".a?", ".[]?", ".name?", ".a[0]?"]
LITERALS = ["1", "0", "-2", "2.5", '"x"', '"name"', "null", "true", "false", "[]", "{}", "[1,2]",
            '{"a": 1}']
UNARY = ["length", "keys", "keys_unsorted", "not", "type", "tostring", "sort", "unique", "add",
         "reverse", "min", "max", "to_entries", "ascii_downcase", "ascii_upcase", "first", "last",
         "any", "all", "tojson", "floor", "tonumber", "empty"]
ONE_ARG = ["select", "map", "map_values", "sort_by", "group_by", "unique_by", "min_by", "max_by",
           "first", "any", "all", "has", "join", "startswith", "endswith", "split", "ltrimstr",
           "rtrimstr"]
BINARY = ["+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">=", "and", "or", "//"]


def program(rng: random.Random, depth: int = 0) -> str:
    if depth > 3 or rng.random() < 0.3:
        return rng.choice(PATHS + LITERALS + UNARY + ["$v"])
    form = rng.randrange(9)
    sub = lambda: program(rng, depth + 1)
    if form == 0:
        return f"{sub()} | {sub()}"
    if form == 1:
        return f"{sub()}, {sub()}"
    if form == 2:
        return f"({sub()}) {rng.choice(BINARY)} ({sub()})"
    if form == 3:
        return f"{rng.choice(ONE_ARG)}({sub()})"
    if form == 4:
        return f"[{sub()}]"
    if form == 5:
        key = rng.choice(KEYS)
        return rng.choice([f"{{{key}: {sub()}}}", f"{{{key}}}", f'{{"{key}": ({sub()}), b: 1}}',
                           f"{{({sub()}): 1}}"])
    if form == 6:
        return f'"<\\({sub()})>"'
    if form == 7:
        return f"if {sub()} then {sub()} elif {sub()} then {sub()} else {sub()} end"
    return f"({sub()})?"


def value(rng: random.Random, depth: int = 0):
    kind = rng.randrange(8 if depth < 3 else 5)
    if kind == 0:
        return rng.choice([None, True, False])
    if kind == 1:
        return rng.choice([0, 1, -3, 2.5, 10, 1e300, 7])
    if kind in (2, 3):
        return rng.choice(["", "x", "name", "a,b", "Hello World", "tags", "1.5"])
    if kind == 4:
        return rng.choice(["b", "qty", 3])
    if kind in (5, 6):
        return [value(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {k: value(rng, depth + 1) for k in rng.sample(KEYS, rng.randrange(4))}


COMPILE_ERROR = object()


def libjq_results(text: str, data, named: dict):
    """libjq's results as printed, None for a run-time error, COMPILE_ERROR when libjq
    refuses the program (the jq command compiles with libjq first: jq_fast never sees it)."""
    try:
        program = libjq.compile(text, args=named)
    except ValueError:
        return COMPILE_ERROR
    try:
        return [dump(r, None, False, False) for r in program.input_value(data).all()]
    except ValueError:
        return None


@pytest.mark.parametrize("seed", range(int(__import__("os").environ.get("JQ_FAST_SEEDS", 40))))
def test_generated_programs_agree_with_libjq(seed):
    rng = random.Random(seed)
    accepted = 0
    for _ in range(50):
        text = program(rng)
        data = value(rng)
        named = {"v": rng.choice(["x", 1, None])}
        compiled = jq_fast.compile_program(text, named)
        want = libjq_results(text, data, named)
        if compiled is None or want is COMPILE_ERROR:
            continue
        try:
            got = [dump(r, None, False, False) for r in compiled(data)]
        except jq_fast.Unsupported:
            continue
        accepted += 1
        assert want is not None, f"libjq fails, jq_fast printed {got}: {text!r} on {json.dumps(data)}"
        assert got == want, f"{text!r} on {json.dumps(data)}"
    assert accepted >= 5, "jq_fast should take many of the generated programs"


@pytest.mark.parametrize("text", [
    ".items[] | select(.qty > 10) | .name", "[.[] | select(.qty > 10)] | length", "map(.a) | add",
    '.[] | "\\(.name): \\(.qty)"', "{name, total: (.qty * 2)}", ".a // \"none\"", "sort_by(.qty) | .[0]",
    "to_entries | map(.key) | join(\",\")", "[.[] | .tags[]?] | unique", "length", ".a.b?.c",
])
def test_common_programs_are_evaluated_directly(text):
    """The programs scripts send most often do not need libjq."""
    assert jq_fast.compile_program(text, {}) is not None


@pytest.mark.parametrize("text", ["reduce .[] as $x (0; . + $x)", ".[] as $x | $x", "@csv", "..",
                                  ".a = 1", "$ENV", "input", "def f: .; f", ".[1:2]", "1 < 2 < 3",
                                  "test(\"a\")", "$__loc__", "limit(1; .[])"])
def test_other_programs_go_to_libjq(text):
    assert jq_fast.compile_program(text, {}) is None


def test_errors_are_left_to_libjq_and_question_mark_silences_them(run):
    r = run("echo '[1, \"a\"]' | jq '.[] | .x'; echo st=$?")
    assert r.stdout == "st=5\n" and "Cannot index number with string (\"x\")" in r.stderr
    assert run("echo '[1, {\"x\": 2}]' | jq -c '[.[] | .x?]'").stdout == "[2]\n"
