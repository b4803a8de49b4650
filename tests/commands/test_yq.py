"""yq against Debian's yq (python-yq 3.1, a jq wrapper; `/usr/bin/yq`): each script runs in real
bash in an empty temporary directory and in a BashTool over a MemoryFs with the same files;
stdout, the exit status and stderr must match. The filters avoid what differs between the
jq 1.6 that Debian's yq runs and our libjq 1.8 (error wording, number formatting)."""
import shutil

import pytest

from support import ours_with_files as ours, real_with_files as real
from scripted_kernel import BashTool

pytest.importorskip("yaml")
YQ = shutil.which("yq")
needs_yq = pytest.mark.skipif(YQ is None or shutil.which("jq") is None,
                              reason="Debian's yq (and jq) are not installed")

FILES = {
    "a.yaml": "a: 1\nb:\n  - x\n  - y: on\nc: 2024-01-02\nname: demo\n",
    "b.yaml": "b: 2\n",
    "multi.yaml": "a: 1\n---\nb: 2\n---\n- 3\n- four\n",
    "tags.yaml": ("a: &x [1, 2]\nb: *x\nc: !custom {k: v}\nd: !!str 12\ne: \"quoted\"\nf: [1, 2]\n"
                  "g: |\n  block\n  text\nh: 'single'\ni:\n  - !item one\n  - \"two\"\n  - [3]\n"),
    "scalars.yaml": ("k: 2024-01-02T03:04:05Z\nm: 0x1F\no: 0o17\np: 017\nq: 1_000\nr: 1:30\ns: yes\n"
                     "t: ~\nu: =\nv: 3.25\nw: -7\nx: true\ny: ''\nz: null\nnested: {l: [1, {m: n}]}\n"),
    "merge.yaml": "base: &b {x: 1, y: 2}\nderived:\n  <<: *b\n  y: 3\n",
    "config.json": '{"servers": [{"host": "a", "port": 80}, {"host": "b", "port": 443}], "debug": false}\n',
    "bad.yaml": "a: [1\n",
    "half.yaml": "a: 1\n---\nb: [\n",
    "recursive.yaml": "&a [*a]\n",
    "keys.yaml": "a: 1\na: 2\n? [x]\n: 3\n",
    "unicode.yaml": "name: ünïcode ☃\nlong: " + "word " * 30 + "\n",
    "strings.yaml": "s1: 'on'\ns2: 'yes'\ns3: '123'\ns4: 'null'\ns5: ''\ns6: 'a: b'\ns7: \"line\\nbreak\"\n",
}

CASES = {
    "select": "yq .b a.yaml",
    "raw": "yq -r '.b[0], .name' a.yaml",
    "compact": "yq -c . a.yaml",
    "yaml output": "yq -y . a.yaml",
    "yaml output of a part": "yq -y '.b' a.yaml",
    "y in short options": "yq -ry .b a.yaml; yq -cy .b a.yaml",
    "y before another letter": "yq -yr .b a.yaml; echo rc=$?",
    "long options": "yq --yaml-output '.a' a.yaml; yq --yml-output .b a.yaml",
    "multi documents": "yq -c . multi.yaml; yq -y . multi.yaml",
    "slurp": "yq -c -s . a.yaml b.yaml",
    "null input with inputs": "yq -n -c '[inputs]' a.yaml b.yaml",
    "null input": "yq -n '1 + 1'",
    "exit status": "yq -e .zz a.yaml; echo rc=$?; yq -e .a a.yaml; echo rc=$?",
    "arg": "yq --arg who world -r '\"hello \" + $who' a.yaml; yq -r --arg n 1 '.name + $n' a.yaml",
    "argjson": "yq -c --argjson v '{\"k\": [1]}' '$v' b.yaml",
    "indent": "yq --indent 1 . b.yaml",
    "tab": "yq --tab .b a.yaml",
    "sort keys": "yq -S -c . scalars.yaml",
    "stdin": "cat a.yaml | yq -c .b; printf 'k: v\\n' | yq -y .",
    "dash is stdin": "cat b.yaml | yq -c . a.yaml - b.yaml",
    "json input": "yq -c '.servers[] | select(.port > 100)' config.json; yq -y . config.json",
    "scalars": "yq -c . scalars.yaml; yq -y . scalars.yaml",
    "grammar 1.2": "yq -y --yaml-output-grammar-version 1.2 . strings.yaml; yq -y --yml-out-ver 1.1 . strings.yaml",
    "bad grammar": "yq -y --yml-out-ver 1.3 . a.yaml; echo rc=$?",
    "roundtrip": "yq -Y . tags.yaml; yq -Y .i tags.yaml",
    "tags dropped in json": "yq -c . tags.yaml; yq -y . tags.yaml",
    "merge keys": "yq -c .derived merge.yaml",
    "width": "yq -y -w 20 . unicode.yaml; yq -y --width=30 .long unicode.yaml",
    "indentless": "yq -y --indentless-lists . a.yaml",
    "explicit start and end": "yq -y --explicit-start --explicit-end . b.yaml",
    "strings stay strings": "yq -y . strings.yaml",
    "missing file": "yq . nofile.yaml; echo rc=$?",
    "directory": "mkdir d; yq . d; echo rc=$?",
    "in place": "cp a.yaml e.yaml; yq -i -y '.a = 5' e.yaml; cat e.yaml; yq -yi '.b = 1' e.yaml b.yaml; "
                "cat e.yaml b.yaml",
    "in place without yaml": "cp a.yaml e.yaml; yq -i .a e.yaml; echo rc=$?; cat e.yaml",
    "in place on stdin": "echo 'x: 1' | yq -i -y .; echo rc=$?",
    "jq error status": "yq '.a | error(\"boom\")' a.yaml; echo rc=$?",
    "unicode": "yq -r .name unicode.yaml; yq -y .name unicode.yaml",
    "from file": "echo '.a' > prog.jq; yq -f prog.jq a.yaml",
    "args": "yq -n -c '$ARGS.positional' --args x y",
}


@needs_yq
@pytest.mark.parametrize("name", sorted(CASES))
def test_like_debians_yq(name):
    script = CASES[name]
    assert ours(script, FILES) == real(script, FILES)


# Documents that cannot be read: Debian's yq prints PyYAML's exception with its class name
# ("yq: Error running jq: ParserError: while parsing ..." over three lines); ours says the same
# in one line, without the class. The output before the error and the status are Debian's.
ERROR_CASES = {
    "syntax error": ("yq . bad.yaml; echo rc=$?; yq -y . bad.yaml; echo rc=$?",
                     "yq: Error: bad.yaml: line 2, column 1: did not find expected ',' or ']' "
                     "(while parsing a flow sequence)\n" * 2),
    # (through a pipe: Debian's jq outlives yq and writes after it has exited)
    "error after a document": ("yq -c . half.yaml | cat; echo rc=${PIPESTATUS[0]}; yq -y . half.yaml; echo rc=$?",
                               "yq: Error: half.yaml: line 4, column 1: did not find expected node "
                               "content (while parsing a flow node)\n" * 2),
    "recursive node": ("yq . recursive.yaml; echo rc=$?",
                       "yq: Error: recursive.yaml: line 1, column 1: found unconstructable recursive node\n"),
    "unhashable key": ("yq -c . keys.yaml; echo rc=$?",
                       "yq: Error: keys.yaml: line 3, column 3: found unhashable key "
                       "(while constructing a mapping)\n"),
    "yaml of raw output fails": ("yq -y -r .name a.yaml; echo rc=$?",
                                 "yq: Error: jq's output is not JSON: Expecting value (line 1, column 1); "
                                 "-y and -Y need JSON, not raw output\n"),
}


@needs_yq
@pytest.mark.parametrize("name", sorted(ERROR_CASES))
def test_unreadable_documents_like_debians_yq_in_one_line(name):
    script, stderr = ERROR_CASES[name]
    out, err, status = ours(script, FILES)
    real_out, _, real_status = real(script, FILES)
    assert (out, status) == (real_out, real_status)
    assert err == stderr


def test_parse_errors_name_no_exception_class():
    """YAML and TOML that cannot be read: the file, the place and the problem, in one line."""
    pytest.importorskip("tomllib")
    files = {"tab.yaml": "a:\n\tb: 1\n", "bad.toml": "a = \n", "ts.yaml": "? !!timestamp 2024-01-01\n: 1\n"}
    r = BashTool.builder().files(files).build().execute(
        "yq . tab.yaml; printf 'a: b: c\\n' | yq .; printf 'a: \\xff\\n' | yq .; yq -c . ts.yaml; "
        "tomlq . bad.toml; printf 'a = \"\\xff\"\\n' | tomlq .; echo rc=$?")
    assert r.stdout == "rc=1\n"
    lines = r.stderr.splitlines()
    assert len(lines) == 6, r.stderr
    assert lines[0].startswith("yq: Error: tab.yaml: line 2, column 1: ")
    assert lines[1].startswith("yq: Error: <stdin>: line 1, column 5: ")
    assert lines[2] == "yq: Error: <stdin>: the document is not valid UTF-8"
    assert lines[3].startswith("yq: Error: ts.yaml: ")
    assert lines[4].startswith("tomlq: Error: bad.toml: ") and "line 1, column 5" in lines[4]
    assert lines[5] == "tomlq: Error: <stdin>: the document is not valid UTF-8"
    assert not any(word in r.stderr for word in ("Error running jq", "Exception", "ScannerError",
                                                 "ParserError", "TypeError", "TOMLDecodeError"))


def test_tomlq_reads_toml():
    pytest.importorskip("tomllib")
    toml = 'title = "demo"\n[server]\nport = 8080\nhosts = ["a", "b"]\nwhen = 2024-01-02\n'
    r = BashTool.builder().files({"c.toml": toml}).build().execute(
        "tomlq -c . c.toml; tomlq -r .server.hosts[1] c.toml; tomlq -y .server c.toml")
    assert r.stdout == ('{"title":"demo","server":{"port":8080,"hosts":["a","b"],"when":"2024-01-02"}}\n'
                        'b\nport: 8080\nhosts:\n  - a\n  - b\nwhen: \'2024-01-02\'\n')
    assert r.exit_code == 0


def test_outputs_yq_cannot_write_are_refused():
    r = BashTool.builder().files(FILES).build().execute("yq -x . a.yaml; echo rc=$?; yq -t . a.yaml; echo rc=$?")
    assert r.stdout == "rc=1\nrc=1\n"
    assert r.stderr == "yq: Error: XML output (-x) is not available\nyq: Error: TOML output (-t) is not available\n"


def test_absent_in_logic_mode():
    from scripted_kernel import ScriptedTool
    r = ScriptedTool.builder("t").build().execute("echo 'a: 1' | yq .a")
    assert r.exit_code == 127
