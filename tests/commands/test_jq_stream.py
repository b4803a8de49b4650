"""A large array whose program only goes through its elements (`.[] | F`, `[.[] | F] |
length`) is run element by element as it is parsed. The output must be what the usual path
(all values parsed first, or libjq) prints: every case runs both ways and compares."""
import json
import random

import pytest

from scripted_kernel.commands.jq import program as jq_command
from scripted_kernel.commands.jq.worker import CapturedOutput

OPTIONS = dict(r=False, j=False, c=False, n=False, s=False, e=False, a=False, S=False, R=False,
               indent="  ", seq=False, raw0=False)


def run(text: str, program: str, stream_from: int, **options) -> tuple:
    saved = jq_command.STREAM_FROM
    jq_command.STREAM_FROM = stream_from
    try:
        io = CapturedOutput(text, 1 << 24)
        try:
            status = jq_command.run_program(io, {**OPTIONS, **options}, {}, [], program, {})
        except jq_command.JqFailure as e:
            io.err(e.message + "\n")
            status = e.status
        return "".join(io.out_parts), "".join(io.err_parts), status
    finally:
        jq_command.STREAM_FROM = saved


def both_ways(text: str, program: str, **options):
    streamed = run(text, program, 0, **options)
    usual = run(text, program, 1 << 40, **options)
    assert streamed == usual, f"{program!r} on {text[:200]!r}"
    return streamed


def test_the_shapes_that_stream():
    assert jq_command.fast.compile_stream(".[] | .a", {}) is not None
    assert jq_command.fast.compile_stream("[.[] | select(.q > 1)] | length", {})[1] is True
    for other in (".[], 1", "[.[] | .a] + [1] | length", ".[]?", "map(.a)", ".[0]"):
        assert jq_command.fast.compile_stream(other, {}) is None, other


def test_elements_are_parsed_one_at_a_time_where_the_program_allows(monkeypatch):
    monkeypatch.setattr(jq_command, "STREAM_FROM", 0)
    text = json.dumps([{"q": k} for k in range(50)])
    assert jq_command._stream(text, {**OPTIONS, "c": True}, "[.[] | select(.q > 9)] | length",
                              {}) == ("40\n", True, 40)
    assert jq_command._stream(text, OPTIONS, "map(.q)", {}) is None
    assert jq_command._stream(text + " 1", OPTIONS, ".[]", {}) is None       # two documents
    assert jq_command._stream('[1.50, 2]', OPTIONS, ".[]", {}) is None      # libjq keeps 1.50


SPACING = ["", " ", "\n", " \t\r\n "]
PROGRAMS = [".[]", ".[] | .a", ".[] | select(.n > 3) | .s", "[.[] | select(.n > 3)] | length",
            "[.[]] | length", ".[] | {s, twice: (.n * 2)}", ".[] | .a[0]", ".[] | tostring",
            ".[] | .n + 1", ".[] | keys"]


def _element(rng: random.Random):
    kind = rng.random()
    if kind < 0.7:
        return {"n": rng.randint(0, 9), "s": rng.choice(["x", "é", ""]), "a": [rng.randint(0, 3)]}
    if kind < 0.8:
        return rng.choice([1.5, 1.50, 2e3, -0, 12345678901234567890, 0.1])   # numbers whose text matters
    return rng.choice([None, "str", [1, 2], {"n": "text"}, 3])               # errors for some programs


@pytest.mark.parametrize("seed", range(12))
def test_generated_arrays_stream_as_the_usual_path_prints(seed):
    rng = random.Random(seed)
    elements = [_element(rng) for _ in range(rng.randint(0, 8))]
    pieces = [json.dumps(e) for e in elements]
    if rng.random() < 0.3 and pieces:
        pieces[0] = pieces[0].replace("1.5", "1.50")
    space = lambda: rng.choice(SPACING)   # noqa: E731
    text = space() + "[" + space() + ("," + space()).join(p + space() for p in pieces) + "]" + space()
    for program in PROGRAMS:
        for options in ({}, {"c": True}, {"r": True}, {"e": True}):
            both_ways(text, program, **options)


def test_broken_and_trailing_text_takes_the_usual_path():
    for text in ('[1, 2', '[1 2]', '[1,]', '[1] [2]', '[1] x', '[{"a": nan}]', '[1, -0]'):
        both_ways(text, ".[]")
