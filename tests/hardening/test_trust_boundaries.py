"""What crosses from a less trusted process into the host is data, never code: the jq worker's
replies are length-prefixed frames of JSON and UTF-8 text, bounded before they are read, and a
reply that breaks the protocol (a pickle, an oversized length, garbage) ends the worker and
fails the command with one line."""
import ast
import pickle
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from scripted_kernel import ExecutionLimits, ScriptedTool
from scripted_kernel.commands.jq import command as jq_command, worker as jq_worker
from scripted_kernel.commands.jq.program import run_program

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="jq workers use select.poll")

LIMITS = ExecutionLimits(max_output_bytes=1000, timeout_seconds=30)
TEXT_BOUND = 4 * (LIMITS.max_output_bytes + 1)        # UTF-8 bytes of a reply's text at most


def test_the_worker_protocol_unpickles_and_evaluates_nothing():
    tree = ast.parse(Path(jq_worker.__file__).read_text())
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom) and node.module}
    called = {node.func.id for node in ast.walk(tree)
              if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}
    assert not imported & {"pickle", "_pickle", "marshal", "shelve", "dill", "cloudpickle"}
    assert not called & {"eval", "exec", "compile", "__import__"}


class _Creates:
    """Unpickling this opens `path` for writing, creating it."""

    def __init__(self, path: Path):
        self.path = path

    def __reduce__(self):
        return open, (str(self.path), "w")


def frame(payload: bytes) -> bytes:
    return struct.pack(">Q", len(payload)) + payload


def ok_header(status: int = 0) -> bytes:
    return frame(b'{"status":%d}' % status)


def malicious_replies(marker: Path) -> dict:
    creates = pickle.dumps(_Creates(marker))
    return {
        "a pickle for the whole reply": frame(creates),
        "a pickle for the stdout text": ok_header() + frame(creates) + frame(b""),
        "a pickle without a frame": creates,
        "an oversized reply length": struct.pack(">Q", 2 ** 63 - 1),
        "a reply length past its bound": struct.pack(">Q", jq_worker.REPLY_HEADER_BOUND + 1),
        "a stdout length past its bound": ok_header() + struct.pack(">Q", TEXT_BOUND + 1),
        "a stderr length past its bound": ok_header() + frame(b"x") + struct.pack(">Q", TEXT_BOUND + 1),
        "garbage": frame(b"\x00\xff garbage \x80"),
        "python source": frame(b"__import__('os').system('touch " + str(marker).encode() + b"')"),
        "a status that is text": frame(b'{"status":"0"}'),
        "a status that is true": frame(b'{"status":true}'),
        "a status past 255": frame(b'{"status":256}'),
        "a negative status": frame(b'{"status":-1}'),
        "an extra field": frame(b'{"status":0,"eval":"x"}'),
        "another error": frame(b'{"error":"other"}'),
        "a list": frame(b"[0]"),
        "nesting": frame(b"[" * 20 + b"]" * 20),
        "spaced JSON": frame(b'{"status": 0}') + frame(b"") + frame(b""),
        "a status with a leading zero": frame(b'{"status":01}') + frame(b"") + frame(b""),
        "text that is not UTF-8": ok_header() + frame(b"\xff\xfe") + frame(b""),
        "bytes after the reply": ok_header() + frame(b"ok\n") + frame(b"") + b"extra",
    }


FAKE_CHILD = """
import os, sys
os.write(1, bytes.fromhex(sys.argv[1]))
sys.stdin.buffer.read()          # then wait for the host to hang up (or kill it)
"""


class FakeChildren:
    """A pool whose children send `reply` to any request."""

    def __init__(self, reply: bytes):
        self.reply = reply
        self.started: list = []
        self.pool = jq_worker.Pool()
        self.pool._spawner.start_child = self.start

    def start(self):
        proc = subprocess.Popen([sys.executable, "-c", FAKE_CHILD, self.reply.hex()],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.started.append(proc)
        return jq_worker._Child(proc)

    def close(self):
        for proc in self.started:
            proc.kill()
            proc.wait()
            proc.stdin.close()
            proc.stdout.close()


@pytest.fixture
def fake_children(monkeypatch):
    made = []

    def install(reply: bytes) -> FakeChildren:
        fake = FakeChildren(reply)
        made.append(fake)
        monkeypatch.setattr(jq_command, "POOL", fake.pool)
        return fake
    yield install
    for fake in made:
        fake.close()


def test_the_pickle_payload_would_run_if_unpickled(tmp_path):
    """The payloads below are live: unpickling one creates its file."""
    pickle.loads(pickle.dumps(_Creates(tmp_path / "control"))).close()
    assert (tmp_path / "control").exists()


@pytest.mark.parametrize("kind", sorted(malicious_replies(Path("x"))))
def test_a_malicious_reply_is_refused_and_its_worker_stopped(kind, tmp_path, fake_children):
    marker = tmp_path / "created"
    fake = fake_children(malicious_replies(marker)[kind])
    tool = ScriptedTool.builder("t").limits(LIMITS).build()
    response = tool.execute("""echo '{"a": 1}' | jq '.a + 1'; echo "status $?" """)
    assert response.stdout == "status 5\n" and response.error is None
    assert response.stderr.startswith("jq: error: the jq worker process sent an invalid reply (")
    assert response.stderr.endswith(") and was stopped\n") and response.stderr.count("\n") == 1
    assert not marker.exists()
    (proc,) = fake.started
    assert proc.wait(timeout=10) is not None            # killed, not kept warm
    assert fake.pool._idle == [] and fake.pool._alive == 0


def test_an_oversized_length_is_refused_before_anything_is_read(fake_children):
    """The length says 2**63 - 1 bytes and none follow: the call ends on the length, without
    waiting for (or allocating) the rest, which would end at the deadline instead."""
    fake = fake_children(struct.pack(">Q", 2 ** 63 - 1))
    request = jq_worker.Request(".a + 1", {}, {}, [], {}, "{}", LIMITS.max_output_bytes)
    expected = f"a frame of {2 ** 63 - 1} bytes, more than {jq_worker.REPLY_HEADER_BOUND}"
    with pytest.raises(jq_worker.BadReply, match=expected):
        fake.pool.run(request, time.monotonic() + 30, lambda: False)


@pytest.mark.parametrize("text", ["plain", "x\x00y", "caf\u00e9 \U0001F600", "bad \udcff byte"])
def test_texts_cross_the_worker_boundary_unchanged(text):
    """An input, an argument and an environment variable with NULs, non-BMP characters and
    lone surrogates: a worker answers as the same program run in this process."""
    options = dict(r=False, j=False, c=True, n=False, s=False, e=False, a=False, S=False, R=True,
                   indent="  ", seq=False, raw0=False)
    request = jq_worker.Request("[., $x, $ENV.X, length]", options, {"x": text}, [], {"X": text},
                                text, 1 << 20)
    in_process = jq_worker.CapturedOutput(request.input, request.output_limit)
    status = run_program(in_process, request.options, request.named, request.positional, request.filter,
                         request.env)
    reply = jq_worker.POOL.run(request, None, lambda: False)
    assert reply == ("".join(in_process.out_parts), "".join(in_process.err_parts), status)
