"""`%scripted approve on` with Decide later, through a real kernel: the cell ends paused with a
view of the waiting call; Allow or Deny on that view (a comm message, as JupyterLab sends it)
resumes the run there, and what the cell and the view showed together is what a run approved
at once shows. A stale click and a forged decision are refused with one line."""
import os
import time
from collections import defaultdict

import pytest

pytest.importorskip("ipywidgets")
from jupyter_client.manager import start_new_kernel  # noqa: E402

# the first call appends to a file, the second waits: a resume that replayed on the files as the
# cell left them (not as it found them) would count two lines
SCRIPT = ("echo a >> /tmp/log; double --x 1; echo mid >&2; double --x 2; echo st=$?; "
          "wc -l < /tmp/log; double --x 3; echo end")
PAUSE_LINE = "bash: paused before double: left for a decision in the notebook\n"


def _start():
    env = {**os.environ, "JPY_SESSION_NAME": "decide-later-test"}    # as under a Jupyter server: widgets live
    return start_new_kernel(kernel_name="scripted", startup_timeout=60, env=env)


def _with_double(kc):
    kc.execute_interactive("%%python\n@tool\ndef double(x: int) -> int:\n    '''Double.'''\n    return 2 * x\n",
                           timeout=60)


@pytest.fixture(scope="module")
def kernel():
    km, kc = _start()
    _with_double(kc)
    kc.execute_interactive("%scripted approve on", timeout=60)
    yield kc
    kc.stop_channels()
    km.shutdown_kernel(now=True)


class Front:
    """A front-end in miniature: it answers the approval questions a request shows, in order,
    and notes the paused views (their buttons and box) and what each request printed."""

    def __init__(self, kc):
        self.kc = kc
        self.views: list = []

    def send(self, comm_id: str, content: dict) -> str:
        msg = self.kc.session.send(self.kc.shell_channel.socket, "comm_msg",
                                   {"comm_id": comm_id, "data": {"method": "custom", "content": content}})
        return msg["header"]["msg_id"]

    def click(self, comm_id: str) -> str:
        return self.send(comm_id, {"event": "click"})

    def drive(self, msg_id: str, answers=(), timeout: float = 60) -> dict:
        """Until the kernel is idle again after `msg_id`: its streams, its error, the buttons
        clicked by the answers ("Allow", "Deny", "Decide later"), one per question."""
        answers = list(answers)
        streams = defaultdict(str)
        shown: dict = {}
        error = None
        deadline = time.monotonic() + timeout
        while True:
            msg = self.kc.get_iopub_msg(timeout=max(0.1, deadline - time.monotonic()))
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            kind, content = msg["msg_type"], msg["content"]
            if kind == "stream":
                streams[content["name"]] += content["text"]
            elif kind == "error":
                error = content
            elif kind == "comm_open":
                state = content["data"].get("state", {})
                if state.get("_model_name") == "ButtonModel":
                    shown[state["description"]] = content["comm_id"]
                elif "scripted-paused" in state.get("_dom_classes", ()):
                    shown["box"] = content["comm_id"]
            elif kind == "display_data" and shown:
                if "Allow all double" in shown:             # a question: answer it
                    self.click(shown[answers.pop(0)])
                else:                                        # a paused cell's view
                    self.views.append(shown)
                shown = {}
            elif kind == "status" and content["execution_state"] == "idle":
                assert not answers, f"questions not asked: {answers}"
                return {"stdout": streams["stdout"], "stderr": streams["stderr"], "error": error}


def _run(front, answers):
    front.kc.execute_interactive("rm -f /tmp/log", timeout=60)
    return front.drive(front.kc.execute(SCRIPT), answers)


@pytest.mark.parametrize("decision", ["Allow", "Deny"])
def test_a_paused_cell_resumed_from_its_view_shows_what_an_immediate_answer_shows(kernel, decision):
    front = Front(kernel)
    at_once = _run(front, ["Allow", decision, "Allow"])
    assert at_once["error"] is None
    assert at_once["stdout"] == ("2\n4\nst=0\n1\n6\nend\n" if decision == "Allow" else "2\nst=126\n1\n6\nend\n")

    paused = _run(front, ["Allow", "Decide later"])
    assert paused["error"]["ename"] == "ScriptPaused" and "double --x 2" in paused["error"]["evalue"]
    assert paused["stdout"] == "2\n" and paused["stderr"] == "mid\n" + PAUSE_LINE
    view = front.views[-1]
    rest = front.drive(front.click(view[decision]), ["Allow"])     # the third call is asked as a new one
    assert paused["stdout"] + rest["stdout"] == at_once["stdout"]
    assert paused["stderr"][:-len(PAUSE_LINE)] + rest["stderr"] == at_once["stderr"]


def test_a_stale_click_and_a_forged_decision_are_refused_with_one_line(kernel):
    front = Front(kernel)
    _run(front, ["Allow", "Decide later"])
    view = front.views[-1]
    forged = front.drive(front.send(view["box"], {"decide": "allow", "run": "0" * 32}))
    assert forged["stderr"] == f"scripted: decision refused: no paused run {'0' * 32!r} in this view\n"
    malformed = front.drive(front.send(view["box"], {"decide": "run it", "run": ["x"]}))
    assert malformed["stderr"].count("\n") == 1 and "decision refused" in malformed["stderr"]
    assert front.drive(front.click(view["Deny"]), ["Allow"])["stdout"] == "st=126\n1\n6\nend\n"
    stale = front.drive(front.click(view["Allow"]))
    assert stale == {"stdout": "", "stderr": "scripted: decision refused: this run was decided already\n",
                     "error": None}


def test_scripted_pending_lists_the_waiting_runs_and_its_view_decides_too(kernel):
    front = Front(kernel)
    _run(front, ["Allow", "Decide later"])
    in_cell = front.views[-1]
    listing = front.drive(kernel.execute("%scripted pending"))
    assert listing["error"] is None and len(front.views) == 2
    rest = front.drive(front.click(front.views[-1]["Allow"]), ["Allow"])
    assert rest["stdout"] == "4\nst=0\n1\n6\nend\n"
    refused = front.drive(front.click(in_cell["Deny"]))
    assert refused["stderr"] == "scripted: decision refused: this run was decided already\n"
    assert front.drive(kernel.execute("%scripted pending"))["stdout"] == "no run waits for a decision\n"


def test_a_json_document_printed_before_the_pause_is_shown_as_text(kernel):
    """A cell's lone JSON document is held back to be shown as a tree when the cell ends; a
    paused cell shows it as the text it is, and the resumed run goes on after it."""
    front = Front(kernel)
    paused = front.drive(kernel.execute("""echo '{"a": 1}'; double --x 1; echo done"""), ["Decide later"])
    assert paused["stdout"] == '{"a": 1}\n'
    assert front.drive(front.click(front.views[-1]["Allow"]))["stdout"] == "2\ndone\n"


def test_a_paused_run_saved_with_the_session_resumes_after_a_kernel_restart(tmp_path):
    """`%scripted save`, a restart, `%scripted load`: the run waits again, `%scripted pending`
    shows its view, and Allow there shows what a run approved at once shows."""
    km, kc = _start()
    try:
        _with_double(kc)
        kc.execute_interactive("%scripted approve on", timeout=60)
        front = Front(kc)
        at_once = _run(front, ["Allow", "Allow", "Allow"])
        paused = _run(front, ["Allow", "Decide later"])
        assert paused["error"]["ename"] == "ScriptPaused"
        path = tmp_path / "session.snap"
        assert front.drive(kc.execute(f"%scripted save {path}"))["stdout"].startswith("session saved")
        km.restart_kernel(now=True)
        kc.wait_for_ready(timeout=60)
        _with_double(kc)                     # the tool's cell, run again; the load turns approve on
        loaded = front.drive(kc.execute(f"%scripted load {path}"))
        assert loaded["stdout"] == (f"session loaded from {path}; approve on: 1 run waits for a decision "
                                    "(%scripted pending)\n")
        views = len(front.views)
        assert front.drive(kc.execute("%scripted pending"))["error"] is None and len(front.views) == views + 1
        rest = front.drive(front.click(front.views[-1]["Allow"]), ["Allow"])      # the third call is asked
        assert paused["stdout"] + rest["stdout"] == at_once["stdout"] == "2\n4\nst=0\n1\n6\nend\n"
        assert paused["stderr"][:-len(PAUSE_LINE)] + rest["stderr"] == at_once["stderr"]
        assert front.drive(kc.execute("cat /tmp/log"))["stdout"] == "a\n"
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
