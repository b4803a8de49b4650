"""jq 1.7+ keeps the text of a number it was handed (its decNumber form: `1.50`, `1E+2`,
digits beyond a double's) until arithmetic makes a double of it. The bundled libjq is 1.8;
jq 1.6 (Debian's, which the differential tests run) printed doubles, so these cases state the
1.8 answers, and the generated ones check the command against libjq's own `tojson`."""
import json
import random

import jq as libjq
import pytest

from scripted_kernel import ScriptedTool

TOOL = ScriptedTool.builder("t").build()


def run(script: str):
    return TOOL.execute(script)


def test_input_numbers_keep_their_text():
    data = '{"p": 1.50, "id": 123456789012345678901, "e": 1e2, "s": 0.00001, "n": [1.0, -0.0]}'
    r = run(f"echo '{data}' | jq -c .")
    assert r.stdout == '{"p":1.50,"id":123456789012345678901,"e":1E+2,"s":0.00001,"n":[1.0,-0.0]}\n'
    r = run(f"echo '{data}' | jq -c '.p, .id, .e, (.p + 1), (.id + 0), [.n[] | . * 2]'")
    assert r.stdout == "1.50\n123456789012345678901\n1E+2\n2.5\n123456789012345680000\n[2,-0]\n"


def test_pretty_sorted_raw_and_ascii_output_of_kept_numbers():
    r = run("""echo '{"b": [1.10, {}], "a": {"z": [], "y": "é"}}' | jq -S .""")
    assert r.stdout == ('{\n  "a": {\n    "y": "é",\n    "z": []\n  },\n  "b": [\n    1.10,\n'
                        '    {}\n  ]\n}\n')
    r = run("""echo '{"b": 1.10, "a": "é😀"}' | jq -a --indent 1 .""")
    assert r.stdout == '{\n "b": 1.10,\n "a": "\\u00e9\\ud83d\\ude00"\n}\n'
    r = run("""echo '[1.50, "x"]' | jq -r '.[]'; echo '1.0 2.0' | jq -j .; echo""")
    assert r.stdout == "1.50\nx\n1.02.0\n"


def test_program_literals_tojson_tonumber_slurp_and_arguments():
    r = run("jq -n -c '1.0, 1E2, 100000000000000000000001, ([1.000] | tojson)'")
    assert r.stdout == '1.0\n1E+2\n100000000000000000000001\n"[1.000]"\n'
    r = run("""echo '"1.50" "7"' | jq -c 'tonumber'""")
    assert r.stdout == "1.50\n7\n"
    r = run("echo '1.0 2.50' | jq -c -s .; echo '1.0 2.50' | jq -c -n '[inputs]'")
    assert r.stdout == "[1.0,2.50]\n[1.0,2.50]\n"
    r = run("""echo '{"a": 3.10}' | jq -c --arg k a '.[$k], input_line_number'""")
    assert r.stdout == "3.10\n1\n"


def test_exit_status_of_a_kept_number_and_a_wrapped_program_that_closes_itself():
    assert run("echo '0.0' | jq -e .").exit_code == 0
    assert run("echo '1.0' | jq -e 'null'").exit_code == 1
    r = run("jq -n '1) | (2'")
    assert r.exit_code == 3 and r.stdout == "" and "syntax error" in r.stderr
    r = run("jq -n '1.0 # a comment'")
    assert r.stdout == "1.0\n"


def _number_text(rng: random.Random) -> str:
    whole = rng.choice(["0", "1", "7", "10", "123", "-4", "123456789012345678901234"])
    text = whole
    if rng.random() < 0.6:
        text += "." + rng.choice(["0", "5", "50", "000", "25", "0001", "123456789012345678901"])
    if rng.random() < 0.3:
        text += rng.choice(["e", "E"]) + rng.choice(["", "+", "-"]) + str(rng.randint(0, 40))
    return text


def _document(rng: random.Random, depth: int = 0) -> str:
    kind = rng.random()
    if depth > 2 or kind < 0.5:
        return _number_text(rng) if rng.random() < 0.8 else json.dumps(rng.choice(["s", "é", True, None]))
    if kind < 0.75:
        return "[" + ", ".join(_document(rng, depth + 1) for _ in range(rng.randint(0, 3))) + "]"
    keys = rng.sample("abcdef", rng.randint(0, 3))
    return "{" + ", ".join(f'"{k}": {_document(rng, depth + 1)}' for k in keys) + "}"


PROGRAMS = [".", ".[]?", "[.[]?]", "map(.)?", "tojson", "[paths]", "..", "[.. | numbers]", "[.. | numbers | -.]"]


@pytest.mark.parametrize("seed", range(20))
def test_generated_documents_print_as_libjq_writes_them(seed):
    """Each program's output, compact, is what libjq's own tojson writes for it."""
    rng = random.Random(seed)
    docs = [_document(rng) for _ in range(4)]
    text = "\n".join(docs)
    for program in PROGRAMS:
        want = "".join(result + "\n" for doc in docs
                       for result in libjq.compile(f"[({program}) | tojson]").input_text(doc).first())
        got = run(f"printf '%s\\n' '{text}' | jq -c '{program}'")
        assert (got.stdout, got.exit_code) == (want, 0), f"{program!r} on {text!r}: {got.stderr}"
