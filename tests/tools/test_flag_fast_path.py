"""A tool call's fast path (FlagParser.quick) reads a command line exactly as parse() and
validate() do, or leaves it to them: every command line below, against every schema, gives the
same parameters or the same error both ways. And numbers no JSON value can hold are one flag
error, not an internal one."""
from __future__ import annotations

import itertools

import pytest

from scripted_kernel import ScriptedTool, ToolDef
from scripted_kernel.tools.flags import FlagError, FlagParser

SCHEMAS = {
    "integer id, required": {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]},
    "text and number": {"type": "object", "properties": {"name": {"type": "string"}, "score": {"type": "number"},
                                                         "user_id": {"type": "integer"}}},
    "an enum": {"type": "object", "properties": {"tier": {"type": "string", "enum": ["gold", "free"]},
                                                 "id": {"type": "integer"}}, "required": ["tier"]},
    "a switch and a list": {"type": "object", "properties": {"verbose": {"type": "boolean"},
                                                             "ids": {"type": "array", "items": {"type": "integer"}},
                                                             "id": {"type": "integer"}}},
    "needs jsonschema": {"type": "object", "properties": {"id": {"type": "integer", "minimum": 3}},
                         "required": ["id"]},
    "open": {"type": "object", "properties": {"id": {"type": "integer"}}, "additionalProperties": True},
    "nullable": {"type": "object", "properties": {"id": {"type": ["integer", "null"]}}},
}

WORDS = ["--id", "5", "007", "-3", "+4", "1.5", "x", "", "--name", "--user_id", "--user-id", "--score",
         "1e3", "--tier", "gold", "platinum", "--verbose", "true", "--ids", "1,2", "--help", "--dry-run",
         "--", "--json", '{"id": 2}', "--id=6", "٣", "99999999999999999999", "null"]


def _both_ways(parser: FlagParser, argv: list):
    quick = parser.quick(["tool", *argv])
    try:
        parsed = parser.parse(argv)
        parser.validate(parsed.params, parsed.from_json)
        slow = ("params", parsed.params, parsed.help, parsed.dry_run)
    except FlagError as e:
        slow = ("error", str(e))
    return quick, slow


@pytest.mark.parametrize("schema", sorted(SCHEMAS))
def test_the_fast_path_reads_a_command_line_as_parse_and_validate_do(schema):
    parser = FlagParser("tool", SCHEMAS[schema])
    for size in (0, 1, 2, 3, 4):
        for argv in itertools.product(WORDS, repeat=size) if size < 3 else _pairs(size):
            quick, slow = _both_ways(parser, list(argv))
            if quick is not None:
                assert slow == ("params", quick, False, False), (argv, quick, slow)


def test_the_fast_path_takes_the_common_command_line():
    assert FlagParser("tool", SCHEMAS["integer id, required"]).quick(["tool", "--id", "5"]) == {"id": 5}
    assert FlagParser("tool", SCHEMAS["text and number"]).quick(
        ["tool", "--name", "a b", "--user_id", "0"]) == {"name": "a b", "user_id": 0}


def _pairs(size: int):
    """Command lines of `size` words made of flag/value pairs (and odd ones out at the end)."""
    flags = [w for w in WORDS if w.startswith("--")]
    values = [w for w in WORDS if not w.startswith("--")]
    for flag_a, value_a, flag_b in itertools.product(flags, values, flags):
        line = [flag_a, value_a, flag_b]
        if size == 3:
            yield line
        else:
            for value_b in values[:4]:
                yield line + [value_b]


def _tool():
    schema = {"type": "object", "properties": {"id": {"type": "integer"}, "x": {"type": "number"},
                                               "ids": {"type": "array", "items": {"type": "integer"}}}}
    return ScriptedTool.builder("t").tool(ToolDef("f", "echo the parameters", schema), lambda a: a.params).build()


@pytest.mark.parametrize("line,flag", [
    ("f --id " + "9" * 5000, "--id"),
    ("f --id=" + "9" * 5000, "--id"),
    ("f --x " + "9" * 5000, "--x"),
    ("f --x 1e999", "--x"),
    ("f --x -1e999", "--x"),
    ("f --ids '[" + "9" * 5000 + "]'", "--ids"),
    ("f --ids '" + "[" * 100_000 + "'", "--ids"),
    ("f --json '{\"id\": " + "9" * 5000 + "}'", "--json"),
])
def test_a_number_no_json_value_holds_is_one_flag_error(line, flag):
    result = _tool().execute(line)
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.startswith(f"f: {flag}") and result.stderr.count("\n") == 1, result.stderr
    assert "internal error" not in result.stderr and "Error" not in result.stderr


def test_plain_flags_reach_the_callback_typed():
    result = _tool().execute("f --id 007 --x 2.5; f --id 3 --id 4")
    assert result.stdout.splitlines() == ['{"id": 7, "x": 2.5}', '{"id": 4}'], result.stderr
