"""python3 under attack: a program reaches no host file, host variable, network or process; the
deadline, a cancel and the memory and output bounds stop it with a named error; a worker that dies
fails one command only; the host's memory stays small whatever the program builds."""
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from scripted_kernel import BashTool, ExecutionLimits
from scripted_kernel.base.limits import CancelToken
from support import PEAK_RSS_KIB

pytest.importorskip("pydantic_monty", reason="the python extra (pydantic-monty) is not installed")
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

GIB = 1 << 30
# Host content and host paths; a mark the program itself names may come back quoted in its traceback.
HOST_MARKS = ("root:x:", "HOST_FILE_ATTEMPTS", "site-packages", "pydantic_monty", sys.prefix,
              str(Path(__file__).parent))


def run(script: str, **limits):
    return BashTool.builder().limits(ExecutionLimits(**limits)).build().execute(script)


def python(program: str) -> str:
    """A `python3 -c` command line running `program` (quoted for bash)."""
    return "python3 -c '" + program.replace("'", "'\\''") + "'"


def assert_nothing_of_the_host(r, program: str):
    text = r.stdout + r.stderr
    for mark in HOST_MARKS:
        assert mark in program or mark not in text, (mark, text)


# ---------------------------------------------------------------- what a program can reach

HOST_FILE_ATTEMPTS = [
    "print(open('/etc/passwd').read())",
    "print(open('../../../../../../etc/passwd').read())",
    f"print(open({__file__!r}).read())",
    "import os; print(os.listdir('/etc'))",
    "import os; print(os.listdir('/proc/self'))",
    "print(open('/proc/self/environ').read())",
    "from pathlib import Path; print([str(p) for p in Path('/usr').iterdir()])",
    "import os\nfor root, dirs, files in os.walk('/'):\n    print(root, dirs, files)",
    "from pathlib import Path; print(list(Path('/').glob('**/passwd')))",
    "from pathlib import Path; print(Path('/etc/hostname').read_bytes())",
    "print(open('/tmp/escape').read())",                     # a sandbox link to a host path
    f"import os; print(os.stat({sys.executable!r}))",
]


@pytest.mark.parametrize("program", HOST_FILE_ATTEMPTS)
def test_no_host_file_is_reachable(program):
    r = BashTool().execute("ln -s /etc/passwd /tmp/escape; " + python(program))
    assert_nothing_of_the_host(r, program)
    if r.exit_code == 0:        # a listing of the sandbox's own tree
        assert not ({"etc", "usr", "proc"} & set(r.stdout.replace("'", " ").replace("/", " ").split())), r.stdout


def test_the_sandbox_root_is_the_sandboxs():
    r = BashTool().execute(python("import os; print(sorted(os.listdir('/')))"))
    assert r.stdout == "['dev', 'home', 'tmp']\n"


ENV_ATTEMPTS = [
    "import os; print(os.getenv('SCRIPTED_PY_SECRET'))",
    "import os; print(os.environ.get('SCRIPTED_PY_SECRET'))",
    "import os; print(dict(os.environ))",
    "import os; print(os.environ)",
    "import os; print(os.environ['SCRIPTED_PY_SECRET'])",
    "print(open('/proc/self/environ').read())",
]


@pytest.mark.parametrize("program", ENV_ATTEMPTS)
def test_host_environment_variables_are_invisible(program, monkeypatch):
    monkeypatch.setenv("SCRIPTED_PY_SECRET", "s3cret-of-the-host")
    r = BashTool().execute("export MINE=visible; " + python(program + "\nimport os; print(os.getenv('MINE'))"))
    assert "s3cret-of-the-host" not in r.stdout + r.stderr
    assert r.exit_code != 0 or r.stdout.endswith("visible\n")


ESCAPE_ATTEMPTS = [
    "import socket",
    "import urllib.request; urllib.request.urlopen('http://127.0.0.1:{port}/')",
    "import http.client",
    "import ssl",
    "import subprocess; subprocess.run(['id'])",
    "import ctypes",
    "import importlib",
    "import multiprocessing",
    "__import__('socket')",
    "exec('import socket')",
    "eval(\"__import__('os')\")",
    "import os; os.system('id')",
    "import os; os.popen('id')",
    "import os; os.execv('/bin/sh', ['sh'])",
    "import os; os.fork()",
    "open('/dev/tcp/127.0.0.1/{port}', 'w').write('x')",
    "import asyncio\nasync def main():\n    await asyncio.open_connection('127.0.0.1', {port})\nasyncio.run(main())",
    "print(().__class__.__bases__[0].__subclasses__())",
    "print(getattr(__builtins__, 'open'))",
    "import sys; print(sys.modules['os'])",
    "import sys; sys.path.append('/usr/lib/python3')",
    "import gc; print(gc.get_objects())",
]


def test_no_network_no_process_no_import_tricks():
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        port = server.getsockname()[1]
        for attempt in ESCAPE_ATTEMPTS:
            r = BashTool().execute(python(attempt.format(port=port)) + "; echo status=$?")
            assert r.stdout.endswith("status=1\n"), (attempt, r.stdout, r.stderr)
            last = r.stderr.splitlines()[-1]
            assert ":" in last and last.split(":")[0].replace(".", "").isalnum(), (attempt, r.stderr)
            assert_nothing_of_the_host(r, attempt)
        server.setblocking(False)
        with pytest.raises(BlockingIOError):      # no program connected (they have all ended)
            server.accept()


# ---------------------------------------------------------------- what stops a program

@pytest.mark.parametrize("program", ["while True: pass",
                                     "import time\nwhile True:\n    time.sleep(1)",
                                     "try:\n    while True: pass\nexcept BaseException:\n    while True: pass"])
def test_a_program_that_never_ends_stops_at_the_deadline(program):
    started = time.monotonic()
    r = run(python(program) + "; echo after", timeout_seconds=2)
    assert (r.exit_code, r.stdout) == (124, "")
    assert r.stderr == "bash: execution timed out after 2 s (timeout_seconds)\n"
    assert time.monotonic() - started < 2 + 15


def test_timeout_stops_only_the_program():
    r = run("timeout 1 " + python("while True: pass") + "; echo status=$?", timeout_seconds=60)
    assert (r.stdout, r.exit_code) == ("status=124\n", 0)


def test_a_cancel_stops_the_worker():
    token = CancelToken()
    cancelled_at = []

    def on_output(stream, text):
        if "spinning" in text and not cancelled_at:
            cancelled_at.append(time.monotonic())
            token.cancel()
    r = BashTool.builder().limits(ExecutionLimits(timeout_seconds=120)).build().execute(
        python("print('spinning')\nwhile True: pass"), cancel=token, on_output=on_output)
    assert r.stdout == "spinning\n" and "cancelled" in r.stderr and r.exit_code != 0
    assert time.monotonic() - cancelled_at[0] < 10          # measured: about 0.05 s


MEMORY_BOMBS = [
    "x = []\nwhile True:\n    x.append('a' * 100_000)",
    "x = 'a' * 10**10",
    "s = 'ab'\nwhile True:\n    s = s + s",
    "d = {}\ni = 0\nwhile True:\n    d[i] = [i] * 1000\n    i += 1",
    "x = [0] * 10**9",
]

MEASURE = """
import json, resource, sys
from scripted_kernel import BashTool
outcomes = []
for program in json.loads(sys.argv[1]):
    r = BashTool().execute("python3 -c '" + program.replace("'", "'\\\\''") + "'; echo status=$?")
    outcomes.append([r.stdout, r.stderr])
print(json.dumps({"outcomes": outcomes, "host_kib": PEAK_RSS_KIB}))
""".replace("PEAK_RSS_KIB", PEAK_RSS_KIB)


def test_memory_bombs_stop_at_the_budget_and_the_host_stays_small():
    """Default limits (max_memory_bytes 512 MiB): each bomb ends with the named error, and the host
    (a child process here, measured whole) stays under 1 GiB: what the program builds is in its
    worker, which Monty stops at the limit (its peak measured at 526 MiB)."""
    out = subprocess.run([sys.executable, "-c", MEASURE, json.dumps(MEMORY_BOMBS)], capture_output=True,
                         text=True, timeout=600)
    measured = json.loads(out.stdout)
    for program, (stdout, stderr) in zip(MEMORY_BOMBS, measured["outcomes"]):
        assert stdout == "status=1\n", (program, stdout, stderr)
        assert stderr == ("python3: memory limit exceeded: the program needed more than 536870912 bytes "
                          "(max_memory_bytes)\n"), (program, stderr)
    assert measured["host_kib"] * 1024 < GIB, measured


def test_an_output_flood_stops_at_the_output_limit():
    r = run(python("while True:\n    print('x' * 1000)"), max_output_bytes=200_000, timeout_seconds=60)
    assert r.exit_code == 1 and len(r.stdout) == 200_000
    assert r.stderr == "bash: output limit exceeded: more than 200000 bytes (max_output_bytes); output truncated\n"


DEEP = {
    "recursion": "def f():\n    f()\nf()",
    "json of a deep list": "x = []\nfor i in range(100000):\n    x = [x]\nimport json\nprint(json.dumps(x))",
    "json text nested 100000 deep": "import json\nprint(json.loads('[' * 100000 + ']' * 100000))",
    "100000 parentheses": "(" * 100_000 + ")" * 100_000,
    "100000 unary minuses": "x = " + "-" * 100_000 + "1",
}


@pytest.mark.parametrize("name", sorted(DEEP))
def test_deep_programs_and_data_end_as_python_errors(name):
    """Each ends with a Python error (RecursionError, a nesting limit), not with its worker; CPython's
    parser, which reads the text first on the host, gives up on it without harm."""
    r = run(python(DEEP[name]) + "; echo status=$?", timeout_seconds=60)
    assert r.stdout == "status=1\n", (r.stdout, r.stderr)
    assert r.stderr.splitlines()[-1].split(":")[0].endswith("Error"), r.stderr
    assert "worker" not in r.stderr


def test_a_deep_value_is_a_value():
    r = run(python("x = []\nfor i in range(100000):\n    x = [x]\nprint(x == x, len(repr(x)) > 0)"))
    assert (r.stdout, r.exit_code) == ("True True\n", 0)


def test_a_large_program_runs_unedited():
    """Past source.REWRITE_LIMIT the text is not read with CPython's parser (its syntax tree
    would cost the host ~100 bytes a character): it runs as Monty's sys has it."""
    r = run("for i in $(seq 1 180000); do echo 'x = 1'; done > big.py; echo 'print(x + 1)' >> big.py; "
            "wc -c < big.py; python3 big.py", timeout_seconds=120)
    assert r.stdout.splitlines() == ["1080013", "2"], r.stderr


def test_a_program_that_is_not_utf8_is_refused():
    r = BashTool().execute("printf 'print(1)\\n# \\377\\n' > bad.py; python3 bad.py; echo status=$?")
    assert (r.stdout, r.stderr) == ("status=1\n", "python3: /home/user/bad.py: the program is not UTF-8 text\n")


# ---------------------------------------------------------------- the worker boundary

def test_a_program_waiting_for_a_worker_still_stops_at_its_deadline():
    """Every worker of the pool busy: another program waits for one, and its run's deadline
    ends the wait (124); the busy ones, cancelled, free their workers for the next program."""
    from scripted_kernel.commands.python3 import pool
    tokens = [CancelToken() for _ in range(pool.MAX_WORKERS)]
    running = threading.Semaphore(0)

    def busy(token):
        BashTool.builder().limits(ExecutionLimits(timeout_seconds=300)).build().execute(
            python("print('busy')\nwhile True: pass"), cancel=token,
            on_output=lambda stream, text: running.release())
    threads = [threading.Thread(target=busy, args=(token,)) for token in tokens]
    for thread in threads:
        thread.start()
    try:
        for _ in threads:
            assert running.acquire(timeout=120)
        r = run(python("print('never')"), timeout_seconds=1)
        assert (r.stdout, r.exit_code) == ("", 124) and "timed out" in r.stderr
    finally:
        for token in tokens:
            token.cancel()
        for thread in threads:
            thread.join()
    assert run(python("print('free')")).stdout == "free\n"



def monty_workers(host: int) -> list:
    """The worker processes `host` started (from any of its threads)."""
    pids = []
    for task in Path(f"/proc/{host}/task").iterdir():
        try:
            children = (task / "children").read_text().split()
        except OSError:
            continue
        pids += [int(c) for c in children if _read(f"/proc/{c}/comm").strip() == b"monty"]
    return pids


def _read(path: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError:
        return b""


def ended(pid: int) -> bool:
    """Gone, or a zombie (it burns nothing)."""
    fields = _read(f"/proc/{pid}/stat").rpartition(b") ")[2].split()
    return not fields or fields[0] == b"Z"


def test_a_killed_worker_fails_one_command_and_the_next_works():
    tool = BashTool()

    def kill_the_workers(stream, text):
        if "ready" in text:
            for pid in monty_workers(os.getpid()):
                os.kill(pid, signal.SIGKILL)
    r = tool.execute(python("print('ready')\nwhile True: pass") + "; echo status=$?", on_output=kill_the_workers)
    assert r.stdout == "ready\nstatus=1\n"
    assert r.stderr == "python3: the Python worker stopped unexpectedly; the program did not finish\n"
    r = tool.execute(python("print(6 * 7)"))
    assert (r.stdout, r.exit_code) == ("42\n", 0)


HOST = """
import sys
from scripted_kernel import BashTool, ExecutionLimits
tool = BashTool.builder().limits(ExecutionLimits(timeout_seconds=4)).build()
tool.execute({script!r}, on_output=lambda stream, text: print(text, end="", flush=True))
"""


def test_a_killed_hosts_workers_end_by_its_deadline():
    """The host dies mid-program: its idle workers see their pipe close, and the running one
    stops itself when Monty's clock reaches the time the run had left."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    program = textwrap.dedent("""\
        print('spinning')
        while True: pass""")
    host = subprocess.Popen([sys.executable, "-c", HOST.format(script=python(program))],
                            stdout=subprocess.PIPE, env=env)
    try:
        assert host.stdout.readline() == b"spinning\n"
        workers = monty_workers(host.pid)
        assert workers
    finally:
        host.kill()
        host.wait()
    end = time.monotonic() + 60
    while not all(ended(pid) for pid in workers) and time.monotonic() < end:
        time.sleep(0.1)
    assert all(ended(pid) for pid in workers)
