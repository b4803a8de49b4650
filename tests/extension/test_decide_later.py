"""Decide later in the extension (the kernel's tests drive it through a real kernel): a paused
cell resumes on the session as it found it, only when nothing changed since it paused, once;
and only a run the notebook can resume is offered the choice."""
import pytest

IPython = pytest.importorskip("IPython")
pytest.importorskip("ipywidgets")
from scripted_kernel import ScriptedTool  # noqa: E402
from scripted_magic.approval import ALLOW, DENY, LATER  # noqa: E402
from scripted_magic.magics import ScriptPaused, shell_state  # noqa: E402
from scripted_magic.pending import DecisionRefused  # noqa: E402


@pytest.fixture
def ip(ip):
    """The shared shell with approval on, answered from `ip.answers` (a list, first first); and
    switched off, with no session and no pending run, afterwards."""
    state = shell_state(ip)
    ip.answers = []
    state.approval.ask = lambda call: ip.answers.pop(0)
    ip.run_line_magic("scripted", "approve on")
    ip.run_cell("%%scripted\nrm -rf /tmp/*")
    yield ip
    state.approval.on, state.approval.ask = False, None
    state.pending.runs.clear()
    state.set_session(False)


def run(ip, capsys, cell: str, answers: list):
    ip.answers[:] = answers
    result = ip.run_cell("%%scripted\n" + cell)
    out, err = capsys.readouterr()
    return result, out, err


def the_paused_run(ip) -> str:
    (run_id,) = shell_state(ip).pending.runs
    return run_id


def test_a_resumed_session_cell_starts_from_the_shell_the_cell_found(ip, capsys):
    ip.run_line_magic("scripted", "session on")
    capsys.readouterr()
    cell = "n=$((n + 1)); echo x >> /tmp/log; double --x $n; double --x 5; echo n=$n; wc -l < /tmp/log"
    _, at_once, _ = run(ip, capsys, cell, [ALLOW, ALLOW])
    assert at_once == "2\n10\nn=1\n1\n"
    ip.run_line_magic("scripted", "session on")          # a fresh shell again: n unset
    ip.run_cell("%%scripted\nrm /tmp/log")
    capsys.readouterr()
    result, before, _ = run(ip, capsys, cell, [ALLOW, LATER])
    assert isinstance(result.error_in_exec, ScriptPaused) and before.startswith("2\n")
    shell_state(ip).decide(ip, the_paused_run(ip), ALLOW)
    after = capsys.readouterr().out
    assert "2\n" + after == at_once
    _, out, _ = run(ip, capsys, "echo n=$n", [])
    assert out == "n=1\n"                                   # the session goes on from the resumed run


def test_a_change_since_the_pause_refuses_the_decision_and_keeps_the_run(ip, capsys):
    run(ip, capsys, "double --x 1; double --x 2; echo done", [ALLOW, LATER])
    run_id = the_paused_run(ip)
    run(ip, capsys, "echo later > /tmp/other", [])
    with pytest.raises(DecisionRefused, match="changed since In") as refused:
        shell_state(ip).decide(ip, run_id, ALLOW)
    assert not refused.value.final and shell_state(ip).pending.runs
    ip.run_line_magic("scripted", "undo")
    shell_state(ip).decide(ip, run_id, DENY)
    out, err = capsys.readouterr()
    assert out.endswith("done\n") and "double: denied: not approved in the notebook" in err
    with pytest.raises(DecisionRefused, match="decided already") as again:
        shell_state(ip).decide(ip, run_id, ALLOW)
    assert again.value.final


def test_a_resumed_run_may_pause_again(ip, capsys):
    run(ip, capsys, "double --x 1; double --x 2; double --x 3", [LATER])
    state = shell_state(ip)
    ip.answers[:] = [LATER]
    state.decide(ip, the_paused_run(ip), ALLOW)
    out, err = capsys.readouterr()
    assert out.startswith("2\n") and "Paused: double --x 2 waits" in err    # the replay's second call
    ip.answers[:] = [ALLOW]
    state.decide(ip, the_paused_run(ip), ALLOW)
    assert capsys.readouterr().out == "4\n6\n"


def test_decide_later_is_offered_only_where_the_notebook_can_resume(ip, capsys):
    ip.user_ns["api"] = ScriptedTool.builder("api").function(add).build()
    ip.answers[:] = [LATER]
    result = ip.run_cell("%%scripted api\nadd --a 1 --b 2; echo status=$?")      # another tool: denied
    assert result.success and capsys.readouterr().out.endswith("status=126\n")
    ip.answers[:] = [LATER]
    result = ip.run_cell("%%scripted --out kept\ndouble --x 1; echo status=$?")   # output kept, not shown
    assert result.success and ip.user_ns["kept"] == "status=126\n"
    assert not shell_state(ip).pending.runs


def add(a: int, b: int) -> int:
    """Add."""
    return a + b


def test_scripted_pending_lists_the_waiting_runs(ip, capsys):
    run(ip, capsys, "double --x 1; echo done", [LATER])
    ip.run_line_magic("scripted", "pending")
    assert capsys.readouterr().out == "In [1] waits before double --x 1: left for a decision in the notebook\n"
    shell_state(ip).decide(ip, the_paused_run(ip), ALLOW)
    assert capsys.readouterr().out == "2\ndone\n"
    ip.run_line_magic("scripted", "pending")
    assert capsys.readouterr().out == "no run waits for a decision\n"


def test_no_more_than_max_pending_runs_wait(ip, capsys, monkeypatch):
    from scripted_magic import pending
    monkeypatch.setattr(pending, "MAX_PENDING", 2)
    for _ in range(2):
        result, _, _ = run(ip, capsys, "double --x 1", [LATER])
        assert isinstance(result.error_in_exec, ScriptPaused)
    result, _, err = run(ip, capsys, "double --x 1; echo status=$?", [LATER])     # the choice is a denial now
    assert result.success and "double: denied: not approved in the notebook" in err
    assert len(shell_state(ip).pending.runs) == 2


def test_the_view_says_what_was_decided_and_a_stale_click_changes_nothing(ip, capsys):
    from scripted_magic.pending import PausedView
    run(ip, capsys, "double --x 1; echo done", [LATER])
    state = shell_state(ip)
    view = PausedView(state.pending.runs[the_paused_run(ip)], lambda run_id, answer: state.decide(ip, run_id, answer))
    view.buttons[DENY].click()
    assert "denied" in view.text.value and all(b.disabled for b in view.buttons.values())
    view.buttons[ALLOW].click()                                     # a click the front-end should not send
    assert "denied" in view.text.value
    assert capsys.readouterr().err.endswith("scripted: decision refused: this run was decided already\n")
