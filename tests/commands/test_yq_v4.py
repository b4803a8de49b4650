"""yq in mikefarah v4's dialect (commands/yq/v4.py, v4_expression.py, v4_formats.py).

mikefarah's yq cannot be installed here (a Go program: no Debian or PyPI package, no Go
toolchain), so the differential tests are against its documentation: DOCUMENTED holds command
lines of v4's operator pages (pkg/yqlib/doc/operators/*.md in mikefarah/yq, generated from its
own tests) with their sample files and the output printed there. The pages write `yq EXPR
file`, which on this machine is python-yq's command line (JSON out), so each is written here as
`yq e EXPR file`, which v4 reads the same way. The rest: which dialect a command line selects,
v4's flag forms, -i, and hostile input (bombs, deep nesting, bad flags) refused in one line."""
import shutil

import pytest

from scripted_kernel import BashTool
from scripted_kernel.base.limits import ExecutionLimits

pytest.importorskip("yaml")


def run(script: str, files: dict = None, limits: ExecutionLimits = None):
    builder = BashTool.builder().files(files or {})
    if limits is not None:
        builder = builder.limits(limits)
    return builder.build().execute(script)


# (name: page and example, files, command line, documented output)
DOCUMENTED = [
    ('assign-update: Create yaml file',
     {},
     'yq e --null-input \'.a.b = "cat" | .x = "frog"\'',
     'a:\n  b: cat\nx: frog\n'),
    ('assign-update: Update node to be the child value',
     {'sample.yml': 'a:\n  b:\n    g: foof\n'},
     "yq e '.a |= .b' sample.yml",
     'a:\n  g: foof\n'),
    ('assign-update: Double elements in an array',
     {'sample.yml': '- 1\n- 2\n- 3\n'},
     "yq e '.[] |= . * 2' sample.yml",
     '- 2\n- 4\n- 6\n'),
    ('assign-update: Update node from another file',
     {'sample.yml': 'a: apples\n', 'another.yml': 'b: bob\n'},
     "yq eval-all 'select(fileIndex==0).a = select(fileIndex==1) | select(fileIndex==0)' sample.yml another.yml",
     'a:\n  b: bob\n'),
    ('assign-update: Update node to be the sibling value',
     {'sample.yml': 'a:\n  b: child\nb: sibling\n'},
     "yq e '.a = .b' sample.yml",
     'a: sibling\nb: sibling\n'),
    ('assign-update: Updated multiple paths',
     {'sample.yml': 'a: fieldA\nb: fieldB\nc: fieldC\n'},
     'yq e \'(.a, .c) = "potato"\' sample.yml',
     'a: potato\nb: fieldB\nc: potato\n'),
    ('assign-update: Update deeply selected results',
     {'sample.yml': 'a:\n  b: apple\n  c: cactus\n'},
     'yq e \'(.a[] | select(. == "apple")) = "frog"\' sample.yml',
     'a:\n  b: frog\n  c: cactus\n'),
    ('assign-update: Update array values',
     {'sample.yml': '- candy\n- apple\n- sandy\n'},
     'yq e \'(.[] | select(. == "*andy")) = "bogs"\' sample.yml',
     '- bogs\n- apple\n- bogs\n'),
    ('assign-update: Update empty object and array',
     {'sample.yml': '{}\n'},
     'yq e \'.a.b.[0] |= "bogs"\' sample.yml',
     'a:\n  b:\n    - bogs\n'),
    ('add: Concatenate arrays',
     {'sample.yml': 'a:\n  - 1\n  - 2\nb:\n  - 3\n  - 4\n'},
     "yq e '.a + .b' sample.yml",
     '- 1\n- 2\n- 3\n- 4\n'),
    ('add: Relative append',
     {'sample.yml': 'a:\n  a1:\n    b:\n      - cat\n  a2:\n    b:\n      - dog\n  a3: {}\n'},
     'yq e \'.a[].b += ["mouse"]\' sample.yml',
     ('a:\n  a1:\n    b:\n      - cat\n      - mouse\n  a2:\n    b:\n      - dog\n      - mouse\n  a3:\n    b:\n'
      '      - mouse\n')),
    ('add: String concatenation',
     {'sample.yml': 'a: cat\nb: meow\n'},
     "yq e '.a += .b' sample.yml",
     'a: catmeow\nb: meow\n'),
    ('add: Increment numbers',
     {'sample.yml': 'a: 3\nb: 5\n'},
     "yq e '.[] += 1' sample.yml",
     'a: 4\nb: 6\n'),
    ('add: Add maps to shallow merge',
     {'sample.yml': ('a:\n  thing:\n    name: Astuff\n    value: x\n  a1: cool\n'
                    'b:\n  thing:\n    name: Bstuff\n    legs: 3\n'
                     '  b1: neat\n')},
     "yq e '.a += .b' sample.yml",
     ('a:\n  thing:\n    name: Bstuff\n    legs: 3\n  a1: cool\n  b1: neat\nb:\n  thing:\n    name: Bstuff\n'
      '    legs: 3\n  b1: neat\n')),
    ('delete: Delete entry in map',
     {'sample.yml': 'a: cat\nb: dog\n'},
     "yq e 'del(.b)' sample.yml",
     'a: cat\n'),
    ('delete: Delete matching entries',
     {'sample.yml': 'a: cat\nb: dog\nc: bat\n'},
     'yq e \'del( .[] | select(. == "*at") )\' sample.yml',
     'b: dog\n'),
    ('delete: Recursively delete matching keys',
     {'sample.yml': 'a:\n  name: frog\n  b:\n    name: blog\n    age: 12\n'},
     'yq e \'del(.. | select(has("name")).name)\' sample.yml',
     'a:\n  b:\n    age: 12\n'),
    ('select: Select elements from array using wildcard prefix',
     {'sample.yml': '- cat\n- goat\n- dog\n'},
     'yq e \'.[] | select(. == "*at")\' sample.yml',
     'cat\ngoat\n'),
    ('has: Has map key',
     {'sample.yml': '- a: yes\n- a: ~\n- a:\n- b: nope\n'},
     'yq e \'.[] | has("a")\' sample.yml',
     'true\ntrue\ntrue\nfalse\n'),
    ('length: Map length',
     {'sample.yml': 'a: cat\nc: dog\n'},
     "yq e 'length' sample.yml",
     '2\n'),
    ('length: String length',
     {'sample.yml': 'a: cat\n'},
     "yq e '.a | length' sample.yml",
     '3\n'),
    ('keys: Map keys',
     {'sample.yml': 'dog: woof\ncat: meow\n'},
     "yq e 'keys' sample.yml",
     '- dog\n- cat\n'),
    ('keys: Retrieve array key',
     {'sample.yml': '- 1\n- 2\n- 3\n'},
     "yq e '.[1] | key' sample.yml",
     '1\n'),
    ('keys: Retrieve map key',
     {'sample.yml': 'a: thing\n'},
     "yq e '.a | key' sample.yml",
     'a\n'),
    ('entries: to_entries Map',
     {'sample.yml': 'a: 1\nb: 2\n'},
     "yq e 'to_entries' sample.yml",
     '- key: a\n  value: 1\n- key: b\n  value: 2\n'),
    ('entries: Use with_entries to update keys',
     {'sample.yml': 'a: 1\nb: 2\n'},
     'yq e \'with_entries(.key |= "KEY_" + .)\' sample.yml',
     'KEY_a: 1\nKEY_b: 2\n'),
    ('entries: Use with_entries to filter the map',
     {'sample.yml': 'a:\n  b: bird\nc:\n  d: dog\n'},
     'yq e \'with_entries(select(.value | has("b")))\' sample.yml',
     'a:\n  b: bird\n'),
    ('sort: Sort by multiple fields',
     {'sample.yml': '- a: dog\n- a: cat\n  b: banana\n- a: cat\n  b: apple\n'},
     "yq e 'sort_by(.a, .b)' sample.yml",
     '- a: cat\n  b: apple\n- a: cat\n  b: banana\n- a: dog\n'),
    ('env-variable-operators: Read string environment variable',
     {},
     'myenv="cat meow" yq e --null-input \'.a = env(myenv)\'',
     'a: cat meow\n'),
    ('env-variable-operators: Read numeric environment variable',
     {},
     'myenv="12" yq e --null-input \'.a = env(myenv)\'',
     'a: 12\n'),
    ('env-variable-operators: Read boolean environment variable as a string',
     {},
     'myenv="true" yq e --null-input \'.a = strenv(myenv)\'',
     'a: "true"\n'),
    ('env-variable-operators: Dynamic key lookup with environment variable',
     {'sample.yml': 'cat: meow\ndog: woof\n'},
     'myenv="cat" yq e \'.[env(myenv)]\' sample.yml',
     'meow\n'),
    ('env-variable-operators: Replace strings with envsubst',
     {},
     'myenv="cat" yq e --null-input \'"the ${myenv} meows" | envsubst\'',
     'the cat meows\n'),
    ('traverse-read: Simple map navigation',
     {'sample.yml': 'a:\n  b: apple\n'},
     "yq e '.a' sample.yml",
     'b: apple\n'),
    ('traverse-read: Splat',
     {'sample.yml': '- b: apple\n- c: banana\n'},
     "yq e '.[]' sample.yml",
     'b: apple\nc: banana\n'),
    ('traverse-read: Optional identifier',
     {'sample.yml': '- 1\n- 2\n- 3\n'},
     "yq e '.a?' sample.yml",
     ''),
    ('recursive-descent-glob: Recurse map (values only)',
     {'sample.yml': 'a: frog\n'},
     "yq e '..' sample.yml",
     'a: frog\nfrog\n'),
    ('recursive-descent-glob: Recursively find nodes with keys',
     {'sample.yml': 'a:\n  name: frog\n  b:\n    name: blog\n    age: 12\n'},
     'yq e \'[.. | select(has("name"))]\' sample.yml',
     '- name: frog\n  b:\n    name: blog\n    age: 12\n- name: blog\n  age: 12\n'),
    ('alternative-default-value: LHS is defined',
     {'sample.yml': 'a: bridge\n'},
     'yq e \'.a // "hello"\' sample.yml',
     'bridge\n'),
    ('alternative-default-value: LHS is not defined',
     {'sample.yml': '{}\n'},
     'yq e \'.a // "hello"\' sample.yml',
     'hello\n'),
    ('multiply-merge: Merge objects together, returning merged result only',
     {'sample.yml': 'a:\n  field: me\n  fieldA: cat\nb:\n  field:\n    g: wizz\n  fieldB: dog\n'},
     "yq e '.a * .b' sample.yml",
     'field:\n  g: wizz\nfieldA: cat\nfieldB: dog\n'),
    ('multiply-merge: Merge objects together, returning parent object',
     {'sample.yml': 'a:\n  field: me\n  fieldA: cat\nb:\n  field:\n    g: wizz\n  fieldB: dog\n'},
     'yq e \'. * {"a":.b}\' sample.yml',
     'a:\n  field:\n    g: wizz\n  fieldA: cat\n  fieldB: dog\nb:\n  field:\n    g: wizz\n  fieldB: dog\n'),
    ('string-operators: Split strings',
     {'sample.yml': 'cat; meow; 1; ; true\n'},
     'yq e \'split("; ")\' sample.yml',
     '- cat\n- meow\n- "1"\n- ""\n- "true"\n'),
    ('string-operators: Join strings',
     {'sample.yml': '- cat\n- meow\n- 1\n- null\n- true\n'},
     'yq e \'join("; ")\' sample.yml',
     'cat; meow; 1; ; true\n'),
    ('string-operators: Test using regex',
     {'sample.yml': '- cat\n- dog\n'},
     'yq e \'.[] | test("at")\' sample.yml',
     'true\nfalse\n'),
    ('string-operators: Interpolation',
     {'sample.yml': 'value: things\nanother: stuff\n'},
     'yq e \'.message = "I like \\(.value) and \\(.another)"\' sample.yml',
     'value: things\nanother: stuff\nmessage: I like things and stuff\n'),
    ('string-operators: Substitute / Replace string',
     {'sample.yml': 'a: dogs are great\n'},
     'yq e \'.a |= sub("dogs", "cats")\' sample.yml',
     'a: cats are great\n'),
    ('map: Map array',
     {'sample.yml': '- 1\n- 2\n- 3\n'},
     "yq e 'map(. + 1)' sample.yml",
     '- 2\n- 3\n- 4\n'),
    ('map: Map object values',
     {'sample.yml': 'a: 1\nb: 2\nc: 3\n'},
     "yq e 'map_values(. + 1)' sample.yml",
     'a: 2\nb: 3\nc: 4\n'),
    ('unique: Unique array of scalars (string/numbers)',
     {'sample.yml': '- 2\n- 1\n- 3\n- 2\n'},
     "yq e 'unique' sample.yml",
     '- 2\n- 1\n- 3\n'),
    ('reduce: Sum numbers',
     {'sample.yml': '- 10\n- 2\n- 5\n- 3\n'},
     "yq e '.[] as $item ireduce (0; . + $item)' sample.yml",
     '20\n'),
    ('reduce: Merge all yaml files together',
     {'sample.yml': 'a: cat\n', 'another.yml': 'b: dog\n'},
     "yq eval-all '. as $item ireduce ({}; . * $item )' sample.yml another.yml",
     'a: cat\nb: dog\n'),
    ('document-index: Filter by document index',
     {'sample.yml': 'a: cat\n---\na: frog\n'},
     "yq e 'select(document_index == 1)' sample.yml",
     'a: frog\n'),
    ('file-operators: Get filename',
     {'sample.yml': 'a: cat\n'},
     "yq e 'filename' sample.yml",
     'sample.yml\n'),
    ('parent: Simple example',
     {'sample.yml': 'a:\n  nested: cat\n'},
     "yq e '.a.nested | parent' sample.yml",
     'nested: cat\n'),
    ('path: Map path',
     {'sample.yml': 'a:\n  b: cat\n'},
     "yq e '.a.b | path' sample.yml",
     '- a\n- b\n'),
    ('tag: Get tag',
     {'sample.yml': 'a: cat\nb: 5\nc: 3.2\ne: true\nf: []\n'},
     "yq e '.. | tag' sample.yml",
     '!!map\n!!str\n!!int\n!!float\n!!bool\n!!seq\n'),
    ('csv-tsv: Encode array of objects to csv',
     {'sample.yml': ("- name: Gary\n  numberOfCats: 1\n  likesApples: true\n  height: 168.8\n"
                    "- name: Samantha's Rabbit\n"
                     '  numberOfCats: 2\n  likesApples: false\n  height: -188.8\n\n')},
     'yq e -o=csv sample.yml',
     "name,numberOfCats,likesApples,height\nGary,1,true,168.8\nSamantha's Rabbit,2,false,-188.8\n"),
    ('csv-tsv: Encode TSV simple',
     {'sample.yml': '- [i, like, csv]\n- [because, excel, is, cool]\n'},
     'yq e -o=tsv sample.yml',
     'i\tlike\tcsv\nbecause\texcel\tis\tcool\n'),
    ('csv-tsv: Parse CSV into an array of objects',
     {'sample.csv': ('name,numberOfCats,likesApples,height,facts\nGary,1,true,168.8,cool: true\n'
                     "Samantha's Rabbit,2,false,-188.8,tall: indeed\n\n")},
     'yq e -p=csv sample.csv',
     ('- name: Gary\n  numberOfCats: 1\n  likesApples: true\n  height: 168.8\n  facts:\n    cool: true\n'
      "- name: Samantha's Rabbit\n  numberOfCats: 2\n  likesApples: false\n  height: -188.8\n  facts:\n"
      '    tall: indeed\n')),
    ('csv-tsv: Round trip',
     {'sample.csv': "name,numberOfCats,likesApples,height\nGary,1,true,168.8\nSamantha's Rabbit,2,false,-188.8\n\n"},
     'yq e -p=csv -o=csv \'(.[] | select(.name == "Gary") | .numberOfCats) = 3\' sample.csv',
     "name,numberOfCats,likesApples,height\nGary,3,true,168.8\nSamantha's Rabbit,2,false,-188.8\n"),
    ('convert: Roundtrip multi-document JSON',
     {'sample.json': ('{\n\t"this": "is a multidoc json file"\n}\n{\n\t"it": [\n\t\t"has",\n\t\t"consecutive",\n'
                      '\t\t"json documents"\n\t]\n}\n{\n\t"a number": 4\n}\n\n')},
     'yq e -p=json -o=json -I=2 sample.json',
     ('{\n  "this": "is a multidoc json file"\n}\n{\n  "it": [\n    "has",\n    "consecutive",\n'
      '    "json documents"\n  ]\n}\n{\n  "a number": 4\n}\n')),
    ('collect-into-array: Collect many',
     {'sample.yml': 'a: cat\nb: dog\n'},
     "yq e '[.a, .b]' sample.yml",
     '- cat\n- dog\n'),
    ('boolean-operators: Null is considered to be false',
     {},
     "yq e --null-input '~ | not'",
     'true\n'),
    ('first: First matching element from array',
     {'sample.yml': '- a: banana\n- a: cat\n- a: apple\n'},
     'yq e \'first(.a == "cat")\' sample.yml',
     'a: cat\n'),
    ('filter: Filter array',
     {'sample.yml': '- 1\n- 2\n- 3\n'},
     "yq e 'filter(. < 3)' sample.yml",
     '- 1\n- 2\n'),
    ('variable-operators: Single value variable',
     {'sample.yml': 'a: cat\n'},
     "yq e '.a as $foo | $foo' sample.yml",
     'cat\n'),
    ('sort-keys: Sort keys recursively',
     {'sample.yml': ('bParent:\n  c: dog\n  array:\n    - 3\n    - 1\n    - 2\n'
                    'aParent:\n  z: donkey\n  x:\n    - c: yum\n'
                     '      b: delish\n    - b: ew\n      a: apple\n')},
     "yq e 'sort_keys(..)' sample.yml",
     ('aParent:\n  x:\n    - b: delish\n      c: yum\n    - a: apple\n      b: ew\n  z: donkey\nbParent:\n'
      '  array:\n    - 3\n    - 1\n    - 2\n  c: dog\n')),
    ('pick: Pick keys from map',
     {'sample.yml': 'myMap:\n  cat: meow\n  dog: bark\n  thing: hamster\n  hamster: squeak\n'},
     'yq e \'.myMap |= pick(["hamster", "cat", "goat"])\' sample.yml',
     'myMap:\n  hamster: squeak\n  cat: meow\n'),
    ('equals: Match string',
     {'sample.yml': '- cat\n- goat\n- dog\n'},
     'yq e \'.[] | (. == "*at")\' sample.yml',
     'true\ntrue\nfalse\n'),
    ('slice-array: Slicing arrays',
     {'sample.yml': '- cat\n- dog\n- frog\n- cow\n'},
     "yq e '.[1:3]' sample.yml",
     '- dog\n- frog\n'),
    ('convert: Encode json: simple',
     {'sample.yml': 'cat: meow\n'},
     "yq e -o=json '.' sample.yml",
     '{\n  "cat": "meow"\n}\n'),
    ('convert: Encode json: simple - in one line',
     {'sample.yml': 'cat: meow # this is a comment, and it will be dropped.\n'},
     "yq e -o=json -I=0 '.' sample.yml",
     '{"cat":"meow"}\n'),
    ('convert: Parse json: simple',
     {'sample.json': '{"cat": "meow"}\n'},
     'yq e -p=json sample.json',
     'cat: meow\n'),
    ('convert: Roundtrip JSON Lines / NDJSON',
     {'sample.json': ('{"this": "is a multidoc json file"}\n'
                     '{"each": ["line is a valid json document"]}\n{"a number": 4}\n\n')},
     'yq e -p=json -o=json -I=0 sample.json',
     '{"this":"is a multidoc json file"}\n{"each":["line is a valid json document"]}\n{"a number":4}\n'),
    ('create-collect-into-object: Creating yaml from scratch',
     {},
     'yq e --null-input \'{"wrap": "frog"}\'',
     'wrap: frog\n'),
    ('multiply-merge: Merge arrays',
     {'sample.yml': 'a:\n  - 1\n  - 2\n  - 3\nb:\n  - 3\n  - 4\n  - 5\n'},
     'yq e \'. * {"a":.b}\' sample.yml',
     'a:\n  - 3\n  - 4\n  - 5\nb:\n  - 3\n  - 4\n  - 5\n'),
    ('sort: Sort by string field',
     {'sample.yml': '- a: banana\n- a: cat\n- a: apple\n'},
     "yq e 'sort_by(.a)' sample.yml",
     '- a: apple\n- a: banana\n- a: cat\n'),
    ('unique: Unique array of objects by a field',
     {'sample.yml': '- name: harry\n  pet: cat\n- name: billy\n  pet: dog\n- name: harry\n  pet: dog\n'},
     "yq e 'unique_by(.name)' sample.yml",
     '- name: harry\n  pet: cat\n- name: billy\n  pet: dog\n'),
    ('with: Update multiple deeply nested properties',
     {'sample.yml': 'a:\n  deeply:\n    nested: value\n    other: thing\n'},
     'yq e \'with(.a.deeply; .nested = "newValue" | .other= "newThing")\' sample.yml',
     'a:\n  deeply:\n    nested: newValue\n    other: newThing\n'),
    ('compare: Compare numbers (>)',
     {'sample.yml': 'a: 5\nb: 4\n'},
     "yq e '.a > .b' sample.yml",
     'true\n'),
]


@pytest.mark.parametrize("name, files, script, output", DOCUMENTED, ids=[case[0] for case in DOCUMENTED])
def test_documented_example(name, files, script, output):
    r = run(script, files)
    assert (r.stdout, r.stderr, r.exit_code) == (output, "", 0)


def test_enough_documented_command_lines():
    assert len(DOCUMENTED) >= 40


SAMPLE = {"f.yaml": "a:\n  b: apple\nlist:\n  - x\n  - y\n", "g.json": '{"k": [1, 2]}\n'}

# command line -> stdout: which dialect it selects
DIALECTS = {
    # python-yq's: jq's language, JSON out
    "yq .a f.yaml": '{\n  "b": "apple"\n}\n',
    "yq -r .a.b f.yaml": "apple\n",
    "yq -y .a f.yaml": "b: apple\n",
    "yq --indent 1 .a f.yaml": '{\n "b": "apple"\n}\n',
    "yq -e -c .list f.yaml": '["x","y"]\n',
    # v4's: YAML out
    "yq e .a f.yaml": "b: apple\n",
    "yq eval .a f.yaml": "b: apple\n",
    "yq -n e '.x = 1'": "x: 1\n",
    "yq -o yaml .a f.yaml": "b: apple\n",
    "yq -P .a f.yaml": "b: apple\n",
    "yq -I 4 '.' f.yaml": "a:\n    b: apple\nlist:\n    - x\n    - y\n",
    "yq -N e '.list[]' f.yaml": "x\ny\n",
    "yq e f.yaml": "a:\n  b: apple\nlist:\n  - x\n  - y\n",
    "yq e .k g.json": '[\n  1,\n  2\n]\n',
    "yq e -oy .k g.json": "- 1\n- 2\n",
    "yq e -p json -o yaml . g.json": "k:\n  - 1\n  - 2\n",
    "cat f.yaml | yq e .a.b": "apple\n",
    "cat f.yaml | yq e .a.b -": "apple\n",
    "yq e -e .nothing f.yaml; echo rc=$?": "null\nrc=1\n",
    "yq e '.list | length' f.yaml": "2\n",
    "yq e --unwrapScalar=false -o json .a.b f.yaml": '"apple"\n',
    "yq e --expression .a.b f.yaml": "apple\n",
}


@pytest.mark.parametrize("script", sorted(DIALECTS))
def test_dialect_of_a_command_line(script):
    r = run(script, SAMPLE)
    assert (r.stdout, r.stderr) == (DIALECTS[script], "")


@pytest.mark.parametrize("flags", ["-o json", "-o=json", "-oj", "-ojson", "--output-format json",
                                   "--output-format=json", "-o j"])
def test_output_format_flag_forms(flags):
    r = run(f"yq {flags} .a f.yaml", SAMPLE)
    assert (r.stdout, r.exit_code) == ('{\n  "b": "apple"\n}\n', 0)


def test_json_output_indent_and_unwrap():
    r = run("yq -o=json -I=0 . f.yaml; yq -oj -I0 -r .a.b f.yaml; yq -oj .a.b f.yaml", SAMPLE)
    assert r.stdout == '{"a":{"b":"apple"},"list":["x","y"]}\napple\n"apple"\n'


def test_props_csv_tsv_out():
    files = {"t.yaml": "- {name: a b, n: 1}\n- {name: 'c,d', n: 2}\n"}
    r = run("yq -o props . t.yaml; yq -o csv . t.yaml; yq -o tsv . t.yaml", files)
    assert r.stdout == ("0.name = a b\n0.n = 1\n1.name = c,d\n1.n = 2\n"
                        'name,n\na b,1\n"c,d",2\n' "name\tn\na b\t1\nc,d\t2\n")


def test_input_formats_by_extension_and_flag():
    files = {"c.csv": "a,b\n1,x\n", "p.properties": "k.v = 1\n", "d.tsv": "a\tb\n1\tx\n"}
    r = run("yq e .[0].b c.csv; yq e -o yaml . p.properties; yq e -oy . d.tsv; "
            "cat c.csv | yq e -p csv -o json -I 0 .", files)
    assert r.stdout == 'x\nk:\n  v: "1"\n- a: 1\n  b: x\n[{"a":1,"b":"x"}]\n'


def test_in_place_edits_the_file():
    r = run("yq -i '.a.b = \"pear\"' f.yaml; cat f.yaml; yq e -i 'del(.list)' f.yaml; cat f.yaml; "
            "yq -i '.k += [3]' g.json; cat g.json", SAMPLE)
    assert r.stdout == ("a:\n  b: pear\nlist:\n  - x\n  - y\n" "a:\n  b: pear\n"
                        '{\n  "k": [\n    1,\n    2,\n    3\n  ]\n}\n')
    assert (r.stderr, r.exit_code) == ("", 0)


def test_a_failing_in_place_edit_leaves_the_file():
    r = run("yq -i '.a.b = (.a.b + 1)' f.yaml; echo rc=$?; cat f.yaml", SAMPLE)
    assert r.stdout == "rc=1\n" + SAMPLE["f.yaml"]
    assert r.stderr == 'yq: Error: string ("apple") and number (1) cannot be added\n'


def test_in_place_with_python_yq_flags_or_a_reading_expression_stays_python_yq():
    r = run("yq -yi '.a.b = 1' f.yaml; cat f.yaml; yq -i .a f.yaml; echo rc=$?", SAMPLE)
    assert r.stdout == "a:\n  b: 1\nlist:\n  - x\n  - y\nrc=1\n"
    assert r.stderr == "yq: -i/--in-place can only be used with -y/-Y\n"


def test_in_place_on_a_missing_file_and_a_read_only_mount(tmp_path):
    (tmp_path / "f.yaml").write_text("a: 1\n")
    tool = BashTool.builder().mount("/data", str(tmp_path)).build()
    r = tool.execute("yq -i '.a = 2' nofile.yaml; echo rc=$?; yq -i '.a = 2' /data/f.yaml; echo rc=$?; "
                     "yq e -i . ; echo rc=$?")
    assert r.stdout == "rc=1\nrc=1\nrc=1\n"
    assert r.stderr == ("yq: Error: open nofile.yaml: no such file or directory\n"
                        "yq: Error: /data/f.yaml: Read-only file system\n"
                        "yq: write in place flag only applicable when giving an expression and at least one file\n")
    assert (tmp_path / "f.yaml").read_text() == "a: 1\n"


def test_environment_of_the_script_only():
    r = run("export SEEN=1; yq -n e '[env(SEEN), strenv(SEEN), strenv(HOME_OF_HOST)]' -o json -I 0; "
            "yq -n e 'env(NOT_SET)'; echo rc=$?")
    assert r.stdout == '[1,"1",""]\nrc=1\n'
    assert r.stderr == "yq: Value for env variable 'NOT_SET' not provided in env()\n"


def test_key_parent_and_path():
    files = {"k.yaml": "a:\n  b: [x, y]\n  c: 1\n"}
    r = run("yq e -o json -I 0 '[.a.b[] | key], (.a.c | parent | keys), (.a.b[1] | path), "
            "[.a[] | select(key == \"c\")]' k.yaml; yq e 'key' k.yaml", files)
    assert r.stdout == '[0,1]\n["b","c"]\n["a","b",1]\n[1]\n'


# command line -> the one line it is refused with (status 1)
REFUSALS = {
    "yq -o xml . f.yaml": "yq: the xml output format is not supported here (use one of yaml, json, props, csv, tsv)",
    "yq -o nope . f.yaml": "yq: unknown output format 'nope' (use one of yaml, json, props, csv, tsv)",
    "yq -p lua . f.yaml": "yq: the lua input format is not supported here "
                          "(use one of yaml, json, props, csv, tsv, toml)",
    "yq -o": "yq: flag needs an argument: 'o' in -o",
    "yq e -I 1000000000 . f.yaml": "yq: indent must be from 0 to 9, not 1000000000",
    "yq e -I 99999999999999999999 . f.yaml": "yq: invalid argument \"99999999999999999999\" for \"-I\" flag: "
                                             "value out of range",
    "yq e -I x . f.yaml": "yq: invalid argument \"x\" for \"-I\" flag: not an integer",
    "yq e -I -1 . f.yaml": "yq: indent must be from 0 to 9, not -1",
    "yq e --bogus . f.yaml": "yq: unknown flag: --bogus",
    "yq e -Z . f.yaml": "yq: unknown shorthand flag: 'Z' in -Z",
    "yq -o json -y . f.yaml": "yq: -y is python-yq's; it cannot be combined with v4's command line (use -o yaml)",
    "yq e -n . f.yaml": "yq: cannot pass files in when using null-input flag",
    "yq e '.a | line_comment' f.yaml": "yq: the v4 operator 'line_comment' is not supported: comments are not kept",
    "yq e '.a *+ .b' f.yaml": "yq: the merge flags of '*+' are not supported",
    "yq e '.list | map(key)' f.yaml": "yq: 'key', 'parent' and 'path' inside map(...) are not supported",
    "yq e '.a | load(\"/etc/passwd\")' f.yaml": "yq: the v4 operator 'load' is not supported: "
                                                 "loading files from an expression is not available",
    "yq e '.a[' f.yaml": "yq: unclosed '[' in the expression",
    "yq e '.a.b | envsubst(nu)' f.yaml": "yq: envsubst's options (nu, ne, ff) are not supported",
    "yq e '\"abc' f.yaml": "yq: unterminated string in the expression",
    "yq e '.a | error(\"boom\")' f.yaml": "yq: Error: boom",
    "yq e '.a.b + 1' f.yaml": 'yq: Error: string ("apple") and number (1) cannot be added',
    "yq e --unwrapScalar=maybe . f.yaml": 'yq: invalid argument "maybe" for "--unwrapScalar" flag: not a boolean',
}


@pytest.mark.parametrize("script", sorted(REFUSALS))
def test_refused_in_one_yq_line(script):
    r = run(script, SAMPLE)
    assert (r.stdout, r.stderr, r.exit_code) == ("", REFUSALS[script] + "\n", 1)


def test_a_jq_syntax_error_is_one_line_without_the_program():
    r = run("yq e '.a | | .b' f.yaml", SAMPLE)
    assert r.exit_code == 1 and r.stderr.count("\n") == 1 and r.stderr.startswith("yq: Error: syntax error")
    assert "__yq" not in r.stderr and "def " not in r.stderr


# ---- hostile input

def billion_laughs() -> str:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(8):
        this, prev = chr(98 + i), chr(97 + i)
        lines.append(f"{this}: &{this} [" + ",".join([f"*{prev}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def test_alias_bombs_are_refused_in_every_v4_path():
    bomb = billion_laughs()
    cell = "col\n\"" + bomb.replace("\"", "\"\"") + "\"\n"
    r = run("yq e . lol.yaml; yq -o json .i lol.yaml; yq -i '.x = 1' lol.yaml; yq ea '.' lol.yaml; "
            "yq -p csv . cell.csv; cat lol.yaml | yq e -p yaml '.b[0]'; echo rc=$?",
            {"lol.yaml": bomb, "cell.csv": cell})
    assert r.stdout == "rc=1\n"
    assert r.stderr == "yq: Error: detected unsafe YAML entity expansion\n" * 6


@pytest.mark.parametrize("name, text", [
    ("deep.yaml", "[" * 200_000 + "]" * 200_000),
    ("deep.json", "[" * 200_000 + "]" * 200_000),
    ("deep.properties", ".".join(["k"] * 5000) + " = v\n"),
])
def test_deep_documents_are_refused(name, text):
    r = run(f"yq e . {name}; echo rc=$?", {name: text})
    assert r.stdout == "rc=1\n"
    assert r.stderr.startswith("yq: Error: ") and "nested deeper than 1000 levels" in r.stderr
    assert r.stderr.count("\n") == 1


def test_deep_expression_is_refused():
    r = run("yq e -n '" + "(" * 100_000 + "1" + ")" * 100_000 + "'")
    assert (r.stderr, r.exit_code) == ("yq: the expression is nested deeper than 200 levels\n", 1)


def test_a_v4_expression_stops_at_the_deadline():
    # a loop in constant memory: [range(1e9)] raced the memory limit, which a fast machine
    # reached before the deadline
    r = run("yq e -n 'last(range(1e18))'; echo after", limits=ExecutionLimits(timeout_seconds=1))
    assert r.exit_code == 124 and "after" not in r.stdout


@pytest.mark.skipif(shutil.which("yq") is None, reason="Debian's yq is not installed")
def test_usage_names_both_dialects():
    r = run("yq --help")
    assert "mikefarah" in r.stdout and "python-yq" in r.stdout and r.exit_code == 0
