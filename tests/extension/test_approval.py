"""`%scripted approve on`: each tool call is asked first; a denied call fails its command (126)."""
import subprocess
import sys
import threading

import pytest

IPython = pytest.importorskip("IPython")
from scripted_magic.approval import ALLOW, ALLOW_ALL, DENY, WidgetQuestion, ask_with_input  # noqa: E402
from scripted_magic.magics import shell_state  # noqa: E402

@pytest.fixture
def ip(ip):
    """The shared shell (conftest.py), with approval switched off again afterwards."""
    yield ip
    approval = shell_state(ip).approval
    approval.on, approval.ask = False, None
    approval.allowed_all.clear()


def test_the_text_question_allows_denies_and_allows_all(ip, capsys, monkeypatch):
    replies = iter(["y", "n", "a"])
    prompts = []

    def fake_input(prompt=""):
        prompts.append(prompt)
        return next(replies)
    monkeypatch.setattr("builtins.input", fake_input)
    ip.run_line_magic("scripted", "approve on")
    result = ip.run_cell("%%scripted\ndouble --x 1; double --x 2; echo status=$?; double --x 3; double --x 4; "
                         "f() { double --x 5; }; f")
    assert result.success, result.error_in_exec
    out, err = capsys.readouterr()
    assert out.endswith("2\nstatus=126\n6\n8\n10\n")
    assert "double: denied: not approved in the notebook" in err
    assert len(prompts) == 3 and prompts[0].startswith("scripted: run double --x 1 ?")


def test_a_denied_last_call_fails_the_cell(ip, monkeypatch):
    monkeypatch.setattr("builtins.input", lambda prompt="": "no")
    ip.run_line_magic("scripted", "approve on")
    result = ip.run_cell("%%scripted\ndouble --x 1")
    assert not result.success and result.error_in_exec.status == 126
    ip.run_line_magic("scripted", "approve off")
    assert ip.run_cell("%%scripted\ndouble --x 1").success


def test_the_widget_asks_and_its_buttons_answer(ip, capsys):
    questions = []

    def ask(call):                         # the widget, answered by a click from another thread
        question = WidgetQuestion(call)
        questions.append(question)
        answer = [DENY, ALLOW_ALL][len(questions) - 1]
        threading.Timer(0.05, question.click, [answer]).start()
        return question.wait()
    approval = shell_state(ip).approval
    approval.ask = ask
    ip.run_line_magic("scripted", "approve on")
    result = ip.run_cell("%%scripted\ndouble --x 1; echo status=$?; double --x 2; double --x 3")
    assert result.success
    out = capsys.readouterr().out                 # the widgets' text forms (no front-end here), then ...
    assert "status=126\n" in out and out.endswith("\n4\n6\n") and "run <code>double --x 1</code>?" in out
    assert len(questions) == 2 and all(b.disabled for q in questions for b in q.buttons.values())
    assert approval.allowed_all == {"double"}


def test_a_tool_named_in_the_cell_is_asked_about_too(ip, capsys, monkeypatch):
    from scripted_kernel import ScriptedTool
    ip.user_ns["api"] = ScriptedTool.builder("api").function(add).build()
    monkeypatch.setattr("builtins.input", lambda prompt="": "n")
    ip.run_line_magic("scripted", "approve on")
    result = ip.run_cell("%%scripted api\nadd --a 1 --b 2; echo status=$?")
    assert result.success and capsys.readouterr().out.endswith("status=126\n")
    assert ip.user_ns["api"].hooks.before == []            # the notebook's hook was lent for the cell only


def add(a: int, b: int) -> int:
    """Add."""
    return a + b


def test_input_answers():
    class Call:
        name, argv, params = "t", ["t", "--x", "1"], {"x": 1}
    assert [ask_with_input(Call(), lambda p, r=r: r) for r in ("y", "YES", "a", "", "n", "whatever")] == \
        [ALLOW, ALLOW, ALLOW_ALL, DENY, DENY, DENY]

    def eof(prompt):
        raise EOFError
    assert ask_with_input(Call(), eof) == DENY


def test_terminal_ipython_asks_on_its_standard_input():
    code = "\n".join(["%load_ext scripted_magic",
                      "@tool",
                      "def double(x: int) -> int:",
                      "    '''Double.'''",
                      "    return 2 * x",
                      "",
                      "get_ipython().run_line_magic('scripted', 'approve on')",
                      "get_ipython().run_cell('%%scripted\\ndouble --x 1; double --x 2; echo status=$?')"])
    p = subprocess.run([sys.executable, "-m", "IPython", "--colors=Neutral", "-c", code], input="y\nn\n",
                       capture_output=True, text=True, timeout=120)
    shown = p.stdout + p.stderr
    assert "scripted: run double --x 1 ?" in shown and "scripted: run double --x 2 ?" in shown
    assert "[N]o: 2\n" in p.stdout and "[N]o: status=126\n" in p.stdout      # each answer, then the output
    assert "double: denied: not approved in the notebook" in p.stderr
