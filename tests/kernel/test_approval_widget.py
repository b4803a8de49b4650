"""`%scripted approve on` in a real kernel: the question is a widget, a click on its Deny
button (a comm message, as JupyterLab sends it) reaches the waiting script while the cell still
runs, and the denied call fails its command."""
import os
import time

import pytest

pytest.importorskip("ipywidgets")
from jupyter_client.manager import start_new_kernel  # noqa: E402


@pytest.fixture(scope="module")
def kernel():
    env = {**os.environ, "JPY_SESSION_NAME": "approval-test"}      # as under a Jupyter server: widgets live
    km, kc = start_new_kernel(kernel_name="scripted", startup_timeout=60, env=env)
    yield kc
    kc.stop_channels()
    km.shutdown_kernel(now=True)


def _buttons(kc, msg_id, deadline):
    """The comm ids of the buttons the running cell displayed, by label (once displayed: a
    front-end can only click what it shows)."""
    buttons, stream, shown = {}, [], False
    while time.monotonic() < deadline and (len(buttons) < 3 or not shown):
        msg = kc.get_iopub_msg(timeout=max(0.1, deadline - time.monotonic()))
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if msg["msg_type"] == "comm_open":
            state = msg["content"]["data"].get("state", {})
            if state.get("_model_name") == "ButtonModel":
                buttons[state["description"]] = msg["content"]["comm_id"]
        elif msg["msg_type"] == "display_data":
            shown = True
        elif msg["msg_type"] == "stream":
            stream.append(msg["content"]["text"])
    return buttons, stream


def test_a_click_on_deny_fails_the_call_while_the_cell_runs(kernel):
    kc = kernel
    kc.execute_interactive("%%python\n@tool\ndef double(x: int) -> int:\n    '''Double.'''\n    return 2 * x\n",
                           timeout=60)
    kc.execute_interactive("%scripted approve on", timeout=60)
    msg_id = kc.execute("double --x 1; echo status=$?; echo done")
    deadline = time.monotonic() + 60
    buttons, before = _buttons(kc, msg_id, deadline)
    assert set(buttons) == {"Allow", "Allow all double", "Deny", "Decide later"}
    assert "status=" not in "".join(before)                     # the script waits for the answer
    kc.session.send(kc.shell_channel.socket, "comm_msg",
                    {"comm_id": buttons["Deny"], "data": {"method": "custom", "content": {"event": "click"}}})
    out, err = [], []
    reply = None
    while time.monotonic() < deadline and reply is None:
        msg = kc.get_iopub_msg(timeout=max(0.1, deadline - time.monotonic()))
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if msg["msg_type"] == "stream":
            (out if msg["content"]["name"] == "stdout" else err).append(msg["content"]["text"])
        elif msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            reply = kc.get_shell_msg(timeout=10)
    assert "".join(out) == "status=126\ndone\n"
    assert "double: denied: not approved in the notebook" in "".join(err)
    assert reply is not None and reply["content"]["status"] == "ok"
