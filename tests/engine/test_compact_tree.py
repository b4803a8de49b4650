"""The syntax tree is small. A script keeps the tree of every function it defines while it
runs (most are never called), and the cyclic collector walks all of it: a word of plain literal
text is one object until its parts are asked for, an empty list of assignments, words or
redirections is the empty tuple, and a body of one command is that command."""
import gc

from scripted_kernel.shell import nodes as N
from scripted_kernel.shell.compile import Compiler
from scripted_kernel.shell.interpreter import execute
from scripted_kernel.shell.lexer import Source
from scripted_kernel.shell.parser import Parser, parse

DEFINITION = ('f7() {\n  local x="$1" n=7\n  if [[ -n $x ]]; then echo "$x:$n"; else echo none; fi\n}\n')
CASE = 'case "$v3" in\n  a*|b5) r=1 ;;\n  *_5) r=2 ;;\n  *) r=3 ;;\nesac\n'


def only(script):
    tree = parse(script)
    assert len(tree.items) == 1 and len(tree.items[0].items) == 1
    return tree.items[0].items[0]


def tracked_objects(root) -> int:
    """The objects the collector tracks that `root` keeps alive, root included (classes,
    which an instance refers to, are not the tree's)."""
    seen: set = set()
    stack = [root]
    while stack:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, type) or not gc.is_tracked(obj):
            continue
        seen.add(id(obj))
        stack.extend(gc.get_referents(obj))
    return len(seen)


def test_a_definition_and_a_case_statement_keep_few_objects():
    # (68 and 61 when each word was a Word, a list and a Lit and every field a list)
    assert tracked_objects(only(DEFINITION)) <= 40
    assert tracked_objects(only(CASE)) <= 32


def test_a_literal_word_is_its_text_until_its_parts_are_asked_for():
    command = only("echo hi 'q' $x")
    name, literal, quoted, expansion = command.words
    assert (name.text, literal.text, quoted.text, expansion.text) == ("echo", "hi", None, None)
    assert literal == N.Word(literal.pos, [N.Lit(literal.pos, "hi")])       # the same word
    assert literal.parts == [N.Lit(literal.pos, "hi", False)] and literal.literal() == "hi"
    assert quoted.literal() is None and isinstance(quoted.parts[0], N.SingleQuoted)


def test_compiling_and_running_a_script_does_not_grow_its_tree():
    text = DEFINITION + "f7 a\nf7\n" + CASE + "v3=b5\n" + CASE + 'echo "$r"\n'
    source = Source(text)
    tree = Parser(text, source=source).parse_program()
    before = tracked_objects(tree)
    assert execute(text).stdout == "a:7\nnone\n1\n"
    Compiler(source).compile_program(tree)          # every word compiled from its text
    assert tracked_objects(tree) == before


def test_empty_fields_are_the_empty_tuple_and_a_body_of_one_command_is_the_command():
    node = only("if true; then echo a; fi")
    (cond, body), = node.clauses
    assert type(cond) is N.SimpleCommand and type(body) is N.SimpleCommand
    assert node.redirects == () and body.assigns == () and body.redirects == ()
    group = only("{ a; b & } > out")
    assert type(group.body) is N.CommandList and len(group.body.items) == 2
    assert type(group.body.items[1]) is N.Background
    assert [r.op for r in group.redirects] == [">"]
    assert type(only("f() { x & }").body.body) is N.Background
    assert only("r=1 >&2").assigns[0].value.text == "1"
