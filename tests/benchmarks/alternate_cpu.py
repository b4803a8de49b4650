"""CPU time of bench_tools.py's 1,000 tool calls in two or more source trees, alternating:

    python tests/benchmarks/alternate_cpu.py TREE [TREE ...] [--rounds N]

Each round runs one fresh process per tree (its `kernel/` first on the import path); a process
warms up, then prints the median CPU milliseconds of 31 new scripts. Rounds alternate the
trees, so a machine whose speed drifts treats each alike; the median of the rounds is printed
per tree. A tree is a checkout, compiled or not (see shell/native.py).
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys

BENCHMARKS = os.path.dirname(os.path.abspath(__file__))
MEASURE = f"""
import gc, statistics, sys, time
sys.path.insert(0, {BENCHMARKS!r})
from bench_tools import LOOP_1000, ours
tool = ours()
gc.disable()
for k in range(5):
    tool.execute(f"{{LOOP_1000}} # warm {{k}}")
times = []
for k in range(31):
    start = time.process_time()
    tool.execute(f"{{LOOP_1000}} # {{k}} {{time.time()}}")
    times.append((time.process_time() - start) * 1000)
print(statistics.median(times))
"""


def one_round(tree: str) -> float:
    env = {**os.environ, "PYTHONPATH": os.path.join(os.path.abspath(tree), "kernel")}
    done = subprocess.run([sys.executable, "-c", MEASURE], env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{tree}: {done.stderr.strip().splitlines()[-1] if done.stderr.strip() else done.returncode}")
    return float(done.stdout)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("trees", nargs="+")
    parser.add_argument("--rounds", type=int, default=8)
    args = parser.parse_args(argv)
    results: dict = {tree: [] for tree in args.trees}
    for _ in range(args.rounds):
        for tree in args.trees:
            results[tree].append(one_round(tree))
    for tree, times in results.items():
        print(f"{tree}: median {statistics.median(times):.2f} ms CPU "
              f"(rounds: {', '.join(f'{t:.2f}' for t in times)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
