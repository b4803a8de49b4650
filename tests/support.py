"""What the tests share besides fixtures (those are in conftest.py): the real bash the
differential tests compare with, running a script with files in both, the corpus of the test
suite's scripts and their seeded mutations, a real redis-server on a free port, and the scale of
the seeded and generated tests. Tests import it as `support` (tests/ is on the path: conftest.py
is there)."""
import ast
import os
import random
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

import pytest

from scripted_kernel import BashTool

BASH = shutil.which("bash")

# The seeded and generated tests (random scripts, command lines, token streams, nesting depths)
# run a size that keeps the default run fast; SCRIPTED_KERNEL_TEST_SCALE=N runs N times more.
TEST_SCALE = max(1, int(os.environ.get("SCRIPTED_KERNEL_TEST_SCALE") or 1))


def scaled(cases: int) -> int:
    return cases * TEST_SCALE


def bash_version_ok() -> bool:
    if BASH is None:
        return False
    out = subprocess.run([BASH, "-c", "echo ${BASH_VERSINFO[0]}"], capture_output=True, text=True).stdout
    return out.strip().isdigit() and int(out) >= 5


HAVE_BASH5 = bash_version_ok()


# Signals whose disposition a child inherits when it is ignored: under `nohup`, or as a shell's
# background job, SIGINT and SIGQUIT are ignored, and bash then lists them in `trap` (and cannot
# trap them). The oracle must start as bash does from a terminal.
_RESET_SIGNALS = [getattr(signal, name) for name in ("SIGINT", "SIGQUIT", "SIGHUP", "SIGTERM", "SIGTSTP",
                                                     "SIGTTIN", "SIGTTOU", "SIGUSR1", "SIGUSR2", "SIGPIPE",
                                                     "SIGALRM", "SIGCHLD")
                  if hasattr(signal, name)]


def default_signals():
    """In the child, before exec: every signal the oracle may meet back at its default."""
    for sig in _RESET_SIGNALS:
        signal.signal(sig, signal.SIG_DFL)


def run_bash(script: str, stdin: str = "", tmp_path=None):
    """Real bash, as the conformance oracle runs it: empty environment, C.UTF-8, default
    signal dispositions whatever the test run inherited."""
    env = {"PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8", "HOME": "/home/user"}
    p = subprocess.run([BASH, "--norc", "--noprofile", "-c", script], input=stdin.encode(),
                       capture_output=True, env=env, timeout=20, cwd=tmp_path, preexec_fn=default_signals)
    return p.stdout.decode("utf-8", "surrogateescape"), p.returncode


def real_with_files(script: str, files: dict, stdin: str = "", timeout: float = 60) -> tuple:
    """(stdout, stderr, status) of real bash run in a new empty directory holding `files`
    (name -> text or bytes): the oracle of the differential command tests."""
    with tempfile.TemporaryDirectory() as tmp:
        for name, content in files.items():
            (Path(tmp) / name).write_bytes(content if isinstance(content, bytes) else content.encode())
        p = subprocess.run(["bash", "--norc", "--noprofile", "-c", script], input=stdin.encode(),
                           capture_output=True, cwd=tmp, timeout=timeout,
                           env={"PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8", "HOME": tmp})
    return (p.stdout.decode("utf-8", "surrogateescape"), p.stderr.decode("utf-8", "surrogateescape"),
            p.returncode)


def ours_with_files(script: str, files: dict, stdin: str = "") -> tuple:
    """(stdout, stderr, status) of a BashTool over a MemoryFs holding `files`."""
    r = BashTool.builder().files(dict(files)).build().execute(script, stdin=stdin)
    return r.stdout, r.stderr, r.exit_code


def script_corpus(skip: str = "") -> list[str]:
    """String literals of the test files that look like scripts (but those of the file named skip)."""
    found = set()
    for path in sorted(Path(__file__).resolve().parent.rglob("*.py")):
        if path.name == skip:
            continue
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                text = node.value
                if 4 <= len(text) <= 400 and any(c in text for c in " ;|$") and "\x00" not in text:
                    found.add(text)
    return sorted(found)


def mutate(rng: random.Random, text: str, tokens: list[str]) -> str:
    """text with one to four random edits: a token inserted; a span deleted, duplicated or
    swapped; a character inserted."""
    for _ in range(rng.randint(1, 4)):
        i = rng.randrange(len(text) + 1)
        kind = rng.randrange(5)
        if kind == 0:
            text = text[:i] + rng.choice(tokens) + text[i:]
        elif kind == 1 and text:
            j = min(len(text), i + rng.randint(1, 6))
            text = text[:i] + text[j:]
        elif kind == 2 and text:
            j = min(len(text), i + rng.randint(1, 12))
            text = text[:j] + text[i:j] + text[j:]
        elif kind == 3 and len(text) > 2:
            j = rng.randrange(len(text))
            a, b = sorted((i % len(text), j))
            text = text[:a] + text[b:b + 1] + text[a + 1:b] + text[a:a + 1] + text[b + 1:]
        else:
            text = text[:i] + chr(rng.choice([rng.randrange(32, 127), rng.randrange(0x80, 0x800)])) + text[i:]
    return text




# A child process's own peak resident memory in KiB, as an expression for the code it runs:
# VmHWM starts afresh at exec, while getrusage's ru_maxrss keeps the peak of the process that
# spawned the child (the test run's own, past 1 GB late in a whole-suite run).
PEAK_RSS_KIB = "int(open('/proc/self/status').read().split('VmHWM:')[1].split()[0])"


def free_port() -> int:
    """A TCP port free on the loopback interface now."""
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RedisServer:
    """A real `redis-server` on a free loopback port, without persistence, for the session
    store's tests (skipped when the Debian package or the PyPI client is absent)."""

    def __init__(self):
        import time
        server = shutil.which("redis-server")
        if server is None:
            pytest.skip("redis-server is not installed (Debian package redis-server)")
        redis = pytest.importorskip("redis")
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc = subprocess.Popen([server, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                                      "--appendonly", "no"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        client = redis.Redis(port=self.port)
        deadline = time.monotonic() + 30
        while True:
            try:
                client.ping()
                break
            except redis.exceptions.ConnectionError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    self.stop()
                    pytest.skip("redis-server did not start")
                time.sleep(0.1)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(30)
