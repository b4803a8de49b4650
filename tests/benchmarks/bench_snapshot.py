"""What snapshots cost: a BashTool session with 1,000 files / 50 MB and 10,000 variables.

    python tests/benchmarks/bench_snapshot.py [--files 1000] [--mb 50] [--variables 10000]
    python tests/benchmarks/bench_snapshot.py --execute-only     # just execute("true"), for a
                                                                 # before/after comparison

Prints the time and size of snapshot() (plain and compressed), restore(), from_snapshot(),
commit() (the first, and one after a small change: unchanged files are shared), and the
latency of a plain execute("true") on that session before any snapshot and after snapshots
and commits: snapshots copy nothing until asked, so the two must match. To compare with a
tree without snapshots, run `--execute-only` with PYTHONPATH pointing at that tree's kernel/.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "kernel"))

from scripted_kernel import BashTool  # noqa: E402
from scripted_kernel.base.limits import ExecutionLimits  # noqa: E402


def build(files: int, mb: int, variables: int) -> BashTool:
    limits = ExecutionLimits(max_fs_bytes=(mb + 16) << 20, max_file_count=files + 100,
                             max_shell_state_bytes=64 << 20)
    tool = BashTool(limits=limits)
    fs = tool.filesystem
    size = (mb << 20) // files
    for i in range(files):
        # random contents: nothing shared or compressible by accident (compress=True's figure
        # is its worst case)
        fs.add_file(f"/home/user/data/d{i % 20}/f{i}.bin", os.urandom(size))
    tool.execute(f"for ((i=0; i<{variables}; i++)); do printf -v \"v$i\" '%s' \"value number $i\"; done; "
                 "f() { echo f; }; cd data")
    return tool


SCRIPT = "echo $v1 > /tmp/x; n=$((n+1))"


def timed(fn, repeat: int = 1):
    best, value = float("inf"), None
    for _ in range(repeat):
        started = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - started)
    return best, value


def execute_true(tool: BashTool, n: int = 300, script: str = "true") -> tuple:
    times = []
    for _ in range(n):
        started = time.perf_counter()
        tool.execute(script)
        times.append(time.perf_counter() - started)
    times.sort()
    return statistics.median(times) * 1e6, times[int(len(times) * 0.95)] * 1e6


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--mb", type=int, default=50)
    parser.add_argument("--variables", type=int, default=10000)
    parser.add_argument("--execute-only", action="store_true")
    args = parser.parse_args()

    started = time.perf_counter()
    tool = build(args.files, args.mb, args.variables)
    print(f"session: {args.files} files, {tool.filesystem.used_bytes / 2**20:.1f} MiB, "
          f"{len(tool._shell.shell.globals)} variables (built in {time.perf_counter() - started:.1f} s)")
    p50, p95 = execute_true(tool)
    print(f"execute('true') before any snapshot: p50 {p50:.0f} us, p95 {p95:.0f} us")
    p50, p95 = execute_true(tool, script=SCRIPT)
    print(f"execute({SCRIPT!r}) before any snapshot: p50 {p50:.0f} us, p95 {p95:.0f} us")
    if args.execute_only:
        return

    t, data = timed(tool.snapshot, 3)
    print(f"snapshot():               {t * 1000:7.0f} ms  {len(data) / 2**20:7.1f} MiB")
    t, packed = timed(lambda: tool.snapshot(compress=True), 1)
    print(f"snapshot(compress=True):  {t * 1000:7.0f} ms  {len(packed) / 2**20:7.1f} MiB")
    t, signed = timed(lambda: tool.snapshot(key=b"k"), 1)
    print(f"snapshot(key=...):        {t * 1000:7.0f} ms  {len(signed) / 2**20:7.1f} MiB")
    limits = tool.limits
    target = BashTool(limits=limits)
    t, _ = timed(lambda: target.restore(data), 3)
    print(f"restore():                {t * 1000:7.0f} ms")
    t, _ = timed(lambda: BashTool.builder().limits(limits).from_snapshot(packed).build(), 1)
    print(f"from_snapshot(compressed):{t * 1000:7.0f} ms")
    t, _ = timed(tool.commit, 1)
    print(f"commit() (first):         {t * 1000:7.0f} ms  history {tool.history.used_bytes / 2**20:.1f} MiB")
    tool.execute("echo changed > f0.txt; v1=changed")
    t, _ = timed(tool.commit, 1)
    print(f"commit() (small change):  {t * 1000:7.0f} ms  history {tool.history.used_bytes / 2**20:.1f} MiB")
    t, _ = timed(lambda: tool.checkout(0), 1)
    print(f"checkout():               {t * 1000:7.0f} ms")
    p50, p95 = execute_true(tool)
    print(f"execute('true') after snapshots and commits: p50 {p50:.0f} us, p95 {p95:.0f} us")
    p50, p95 = execute_true(tool, script=SCRIPT)
    print(f"execute({SCRIPT!r}) after snapshots and commits: p50 {p50:.0f} us, p95 {p95:.0f} us")


if __name__ == "__main__":
    main()
