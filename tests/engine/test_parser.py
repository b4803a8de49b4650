"""The parser: typed nodes with positions, bash's grammar, bash-like syntax errors."""
import pytest

from scripted_kernel.shell import nodes as N
from scripted_kernel.base.errors import ShellSyntaxError
from scripted_kernel.shell.parser import parse


def only(script):
    tree = parse(script)
    assert len(tree.items) == 1 and len(tree.items[0].items) == 1
    return tree.items[0].items[0]


def walk(node):
    yield node
    if isinstance(node, N.NodeBase):
        for name in node.FIELDS:
            yield from walk(getattr(node, name))
    elif isinstance(node, (list, tuple)):
        for x in node:
            yield from walk(x)


def test_every_node_has_its_fields_slots_and_a_position():
    script = (
        'f() { local x=${1:-d}; echo "$x" | grep -c x; }\n'
        "for ((i=0;i<2;i++)); do case $i in 0) [[ $i =~ ^0$ ]] && (( i += 0 ));; esac; done\n"
        "a=(1 [3]=x); cat <<END\n"
        "$(echo `echo hi`) $((1+2))\n"
        "END\n")
    seen = 0
    for node in walk(parse(script)):
        if isinstance(node, N.NodeBase):
            assert not hasattr(node, "__dict__"), type(node)          # slots, or a compiled class
            assert node.FIELDS[0] == "pos" and isinstance(node.pos, int) and node.pos >= 0, type(node)
            assert eval(repr(node), vars(N)) == node, type(node)      # the repr shows every field
            seen += 1
    assert seen > 40


def test_positions_point_at_the_source():
    script = "echo one\n  grep two"
    tree = parse(script)
    second = tree.items[1].items[0]
    assert script[second.pos:].startswith("grep two")


def test_pipeline_and_list_structure():
    node = only("! a | b |& c")
    assert isinstance(node, N.Pipeline) and node.negate and node.stderr_too == [False, True]
    andor = only("a && b || c")
    assert isinstance(andor, N.AndOr) and [op for op, _ in andor.rest] == ["&&", "||"]


def test_compound_commands():
    assert isinstance(only("if a; then b; elif c; then d; else e; fi"), N.If)
    assert isinstance(only("while a; do b; done"), N.While)
    assert only("until a; do b; done").until
    assert isinstance(only("for x in a b; do c; done"), N.For)
    assert isinstance(only("for ((i=0; i<3; i++)); do :; done"), N.ArithFor)
    assert isinstance(only("case x in a|b) c;; *) d;& e) f;;& esac"), N.Case)
    assert isinstance(only("(( x = 1 + 2 ))"), N.ArithCommand)
    assert isinstance(only("( (echo) )"), N.Subshell)      # not arithmetic
    assert isinstance(only("[[ -n x && ( a < b || ! c ) ]]"), N.CondCommand)
    assert isinstance(only("function f { :; }"), N.FunctionDef)
    assert isinstance(only("f() ( : )"), N.FunctionDef)


def test_assignments_and_arrays():
    cmd = only("a=1 b+=2 c[1+2]=3 d=(x [5]=y) env")
    assert [a.name for a in cmd.assigns] == ["a", "b", "c", "d"]
    assert cmd.assigns[1].append and cmd.assigns[2].index is not None
    assert [e.key is not None for e in cmd.assigns[3].array] == [False, True]


def test_parameter_expansion_forms():
    ops = []
    for text in ["${x:-a}", "${x#p}", "${x//a/b}", "${x:1:2}", "${x^^}", "${x@Q}", "${#x}", "${!x}",
                 "${a[@]}", "${!p*}"]:
        part = only(f"echo {text}").words[1].parts[0]
        assert isinstance(part, N.ParamExp)
        ops.append(part.op)
    assert ops[:6] == [":-", "#", "//", ":", "^^", "@"]


def test_heredocs_several_on_one_line_and_inside_substitution():
    cmd = only("cat <<A <<-'B'\none $x\nA\n\ttwo $y\n\tB")
    a, b = cmd.redirects
    assert not a.target.quoted and b.target.quoted and b.target.strip_tabs
    assert b.target.body.parts[0].text == "two $y\n"
    sub = only("x=$(cat <<E\nin\nE\n)")
    assert isinstance(sub.assigns[0].value.parts[0], N.CommandSub)


@pytest.mark.parametrize("script,token,line", [
    ("if true; then\nfi", "fi", 2),
    ("echo a\necho )", ")", 2),
    ("for x in a b; echo x; done", "echo", 1),
    ("case x in a) ;; esac esac", "esac", 1),
])
def test_syntax_errors_name_the_token_line_and_column(script, token, line):
    with pytest.raises(ShellSyntaxError) as info:
        parse(script)
    e = info.value
    assert e.message == f"syntax error near unexpected token `{token}'"
    assert e.line == line and e.col >= 1
    assert f"line {line}:" in e.render() and "column" in e.render()


def test_unterminated_constructs_report_end_of_file():
    for script in ["if true; then echo", "echo 'abc", 'echo "abc', "echo $(echo", "echo ${x",
                   "echo $[1+2 ; echo x", "echo " + "$[" * 50_000]:
        with pytest.raises(ShellSyntaxError) as info:
            parse(script)
        assert info.value.eof, script


def test_nesting_depth_is_limited():
    with pytest.raises(ShellSyntaxError) as info:
        parse("$(" * 300 + ")" * 300)
    assert "nesting too deep" in info.value.message
    with pytest.raises(ShellSyntaxError):
        parse("{ " * 300 + "}" * 300, max_depth=50)
