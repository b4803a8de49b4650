"""Shared by the benchmarks: time the same scripts in our ScriptedTool and in bashkit's, in one
run, and print ours / bashkit's as a ratio against the target."""
from __future__ import annotations

import statistics
import time


def timed(fn, repeat: int) -> tuple[float, object]:
    """(median milliseconds, the last result)."""
    times, out = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000, out


def compare(rows, run_ours, run_peer, repeat: int, width: int = 34) -> bool:
    """rows: (name, script, target ratio, runs per sample). Returns whether a target was missed."""
    print(f"{'benchmark':{width}} {'ours ms':>9} {'bashkit ms':>11} {'ratio':>7} {'target':>7}")
    failed = False
    for name, script, target, inner in rows:
        ours_ms, ours_out = timed(lambda script=script, inner=inner: [run_ours(script) for _ in range(inner)][-1],
                                  repeat)
        ours_ms /= inner
        if run_peer is None:
            print(f"{name:{width}} {ours_ms:9.3f} {'n/a':>11}")
            continue
        peer_ms, peer_out = timed(lambda script=script, inner=inner: [run_peer(script) for _ in range(inner)][-1],
                                  repeat)
        peer_ms /= inner
        if str(ours_out).strip() != str(peer_out).strip():
            print(f"  output differs for {name!r}: ours {ours_out!r} bashkit {peer_out!r}")
        ratio = ours_ms / peer_ms
        failed |= ratio > target
        print(f"{name:{width}} {ours_ms:9.3f} {peer_ms:11.3f} {ratio:6.2f}x {target:6}x"
              + ("  (over target)" if ratio > target else ""))
    if run_peer is None:
        print("bashkit is not installed (pip install bashkit): no ratios")
    return failed
