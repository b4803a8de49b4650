"""The notebook's session history through a real kernel (jupyter_client): every cell that
changes the files is committed; undo, history, checkout, and save/load across a kernel restart."""
import pytest

pytest.importorskip("jupyter_client")
from jupyter_client.manager import start_new_kernel  # noqa: E402



def run(kc, code, timeout=60):
    out = []

    def hook(msg):
        if msg["msg_type"] not in ("status", "execute_input"):
            out.append((msg["msg_type"], msg["content"]))
    reply = kc.execute_interactive(code, output_hook=hook, timeout=timeout)
    return reply["content"], out


def streams(out, name="stdout"):
    return "".join(c["text"] for k, c in out if k == "stream" and c["name"] == name)


@pytest.fixture()
def kernel():
    km, kc = start_new_kernel(kernel_name="scripted", startup_timeout=60)
    yield km, kc
    kc.stop_channels()
    km.shutdown_kernel(now=True)


def _ok(kc, code) -> str:
    reply, out = run(kc, code)
    assert reply["status"] == "ok", (code, out)
    return streams(out)


def test_undo_history_and_checkout(kernel):
    _, kc = kernel
    _ok(kc, "echo first > /tmp/notes.txt")
    _ok(kc, "echo second > /tmp/notes.txt; echo x > /tmp/extra")
    _ok(kc, "cat /tmp/notes.txt")                               # changes nothing: no commit
    reply, out = run(kc, "%scripted history")
    shown = [c["data"] for k, c in out if k == "display_data"]
    text = shown[0]["text/plain"]
    assert "+/tmp/notes.txt" in text and "+/tmp/extra ~/tmp/notes.txt" in text
    assert text.count("In [") == 2 and "<table" in shown[0]["text/html"]
    assert "undone" in _ok(kc, "%scripted undo")
    assert _ok(kc, "cat /tmp/notes.txt; ls /tmp") == "first\nnotes.txt\n"
    _ok(kc, "%scripted checkout 2")
    assert _ok(kc, "cat /tmp/notes.txt; ls /tmp") == "second\nextra\nnotes.txt\n"
    _ok(kc, "%scripted checkout 0")
    assert _ok(kc, "ls -A /tmp") == ""
    reply, out = run(kc, "%scripted checkout 99")
    assert reply["status"] == "error" and "no commit number 99" in "".join(reply["traceback"])


def test_save_and_load_across_a_kernel_restart(kernel, tmp_path):
    km, kc = kernel
    path = tmp_path / "session.snap"
    _ok(kc, "%scripted session on")
    _ok(kc, "mkdir -p ~/work && cd ~/work && echo kept > data.txt; total=42; greet() { echo \"hi $1\"; }")
    assert "saved" in _ok(kc, f"%scripted save {path}")
    km.restart_kernel(now=True)
    kc.wait_for_ready(timeout=60)
    assert _ok(kc, "ls ~/work 2>&1; echo \"[${total:-}]\"").startswith("ls: cannot access")
    assert "session on" in _ok(kc, f"%scripted load {path}")
    assert _ok(kc, 'pwd; cat data.txt; echo "$total"; greet Ada') == "/home/user/work\nkept\n42\nhi Ada\n"
    # a damaged file is refused, and the session stays as it was
    path.write_bytes(path.read_bytes()[:-3])
    reply, out = run(kc, f"%scripted load {path}")
    assert reply["status"] == "error" and "truncated" in "".join(reply["traceback"])
    assert _ok(kc, "cat data.txt") == "kept\n"
