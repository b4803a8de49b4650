"""jq's worker processes: none outlives its host, and long programs in some executions leave the
pool's workers to the short programs of others."""
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from scripted_kernel import ExecutionLimits, ScriptedTool
from scripted_kernel.commands.jq import command as jq, worker as jq_worker
from scripted_kernel.base.limits import CancelToken

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

HOST = """
from scripted_kernel import ExecutionLimits, ScriptedTool
print("ready", flush=True)
ScriptedTool.builder("t").limits(ExecutionLimits(timeout_seconds=120)).build().execute({script!r})
"""


def worker_pids(host: int) -> list:
    """The jq workers `host` started (from any of its threads)."""
    pids = []
    for task in Path(f"/proc/{host}/task").iterdir():
        try:
            children = (task / "children").read_text().split()
        except OSError:          # the thread ended
            continue
        pids += [int(c) for c in children if b"jq.worker" in _read(f"/proc/{c}/cmdline")]
    return pids


def _read(path: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError:
        return b""


def _stat(pid: int) -> list:
    """/proc/PID/stat's fields from the state on (empty once the process is gone)."""
    return _read(f"/proc/{pid}/stat").rpartition(b") ")[2].split()


def cpu_seconds(pid: int) -> float:
    fields = _stat(pid)
    return int(fields[11]) / os.sysconf("SC_CLK_TCK") if fields else 0.0


def running(pid: int) -> bool:
    """Alive and not a zombie (an orphan's parent may never reap it; it burns nothing)."""
    fields = _stat(pid)
    return bool(fields) and fields[0] != b"Z"


def poll(condition, seconds: float) -> bool:
    end = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > end:
            return False
        time.sleep(0.05)
    return True


# programs that never end by themselves: one that filled the memory limit could end before the
# test saw it run on a fast machine
@pytest.mark.parametrize("program", ["def f: f; f", "last(range(1e18))"])
def test_a_killed_host_takes_its_running_jq_worker_with_it(program):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    host = subprocess.Popen([sys.executable, "-c", HOST.format(script=f"jq -n '{program}'")],
                            stdout=subprocess.PIPE, env=env)
    workers = []
    try:
        assert host.stdout.readline() == b"ready\n"
        # in the program: past the child's start-up (~0.1 s of CPU)
        assert poll(lambda: workers or workers.extend(worker_pids(host.pid)), 30)
        assert poll(lambda: cpu_seconds(workers[0]) > 0.5, 30)
        host.send_signal(signal.SIGKILL)
        host.wait()
        assert poll(lambda: not any(running(pid) for pid in workers), 10)
    finally:
        host.kill()
        host.wait()
        for pid in workers:
            if running(pid):
                os.kill(pid, signal.SIGKILL)


def test_a_worker_whose_host_is_already_gone_exits_at_start():
    """The host may die before its worker asks for the parent-death signal."""
    gone = subprocess.Popen(["true"])
    gone.wait()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    serve = f"from scripted_kernel.commands.jq.worker import serve; serve({gone.pid})"
    worker = subprocess.Popen([sys.executable, "-c", serve], stdin=subprocess.PIPE, env=env)
    try:
        assert worker.wait(timeout=30) == 0            # its pipe is still open: it did not wait
    finally:
        worker.kill()
        worker.stdin.close()
        worker.wait()


def _request(program: str) -> jq_worker.Request:
    opts, named, positional, text, *_ = jq._parse_args(["jq", "-n", program])
    return jq_worker.Request(text, opts, named, positional, {}, "", 1 << 20)


def test_a_worker_stops_by_itself_once_its_caller_is_out_of_time():
    """Where there is no parent-death signal: a request gets the caller's time left (here none)
    plus a grace in CPU time, then SIGXCPU ends the worker, whoever waits for it."""
    child = jq_worker._Child.start()
    try:
        with pytest.raises(EOFError):
            child.exchange(0, _request("def f: f; f"), lambda: None)
        assert child.proc.wait(timeout=60) == -signal.SIGXCPU
    finally:
        child.kill()


def test_warm_workers_outlive_the_thread_that_started_them():
    """The parent-death signal comes when the *thread* that started a child ends: children are
    started from one thread of the pool's own, so a caller's thread ending kills none."""
    pool = jq_worker.Pool()
    replies = []
    try:
        caller = threading.Thread(target=lambda: replies.append(
            pool.run(_request("[1, 2] | add"), None, lambda: False)))
        caller.start()
        caller.join()
        (child,) = pool._idle
        time.sleep(0.5)
        replies.append(pool.run(_request("[3, 4] | add"), None, lambda: False))
        assert [r.stdout for r in replies] == ["3\n", "7\n"]
        assert pool._idle == [child] and child.proc.poll() is None
    finally:
        for child in pool._idle:
            child.kill()


def test_short_jq_answers_while_other_executions_run_bombs():
    """As many bombs as the pool has workers, each in its own execution, and a 1 ms program in
    another: it answers while all the bombs still run (they are moved aside after a slice)."""
    bombs = jq_worker.MAX_CHILDREN
    cancel = CancelToken()
    ended = []

    def bomb():
        tool = ScriptedTool.builder("t").limits(ExecutionLimits(timeout_seconds=60)).build()
        ended.append(tool.execute("jq -n 'def f: f; f'", cancel=cancel))

    def in_flight():
        pool = jq_worker.POOL
        return pool._alive - len(pool._idle) + pool._aside
    threads = [threading.Thread(target=bomb) for _ in range(bombs)]
    for t in threads:
        t.start()
    try:
        assert poll(lambda: in_flight() == bombs, 30)
        tool = ScriptedTool.builder("t").limits(ExecutionLimits(timeout_seconds=30)).build()
        short = tool.execute("echo '[1, 2]' | jq -c 'map(. * 2)'")
        assert (short.stdout, short.error, ended) == ("[2,4]\n", None, [])
    finally:
        cancel.cancel()
        for t in threads:
            t.join()
    assert [(r.exit_code, r.error) for r in ended] == [(130, "cancelled")] * bombs
    # the bombs' workers were killed, the pool is back within its bound
    assert jq_worker.POOL._aside == 0 and jq_worker.POOL._alive <= jq_worker.MAX_CHILDREN
    assert len(worker_pids(os.getpid())) <= jq_worker.MAX_CHILDREN


def test_calls_moved_aside_are_bounded():
    """Past MAX_ASIDE slow calls, a slow call keeps counting against MAX_CHILDREN: the workers
    alive at once stay under MAX_CHILDREN + MAX_ASIDE."""
    pool = jq_worker.Pool()
    pool._alive = jq_worker.MAX_CHILDREN
    assert all(pool._move_aside() for _ in range(jq_worker.MAX_ASIDE))
    assert not pool._move_aside()
    assert (pool._alive, pool._aside) == (jq_worker.MAX_CHILDREN - jq_worker.MAX_ASIDE,
                                          jq_worker.MAX_ASIDE)
