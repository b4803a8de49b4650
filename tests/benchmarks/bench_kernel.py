"""Round trip of a trivial cell: `echo hi` in the scripted kernel against `pass` in a stock
ipykernel, interleaved in one run.

    python tests/benchmarks/bench_kernel.py [--n 300]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

from jupyter_client.manager import start_new_kernel


def main(argv=None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=300)
    args = parser.parse_args(argv)
    os.environ.setdefault("IPYTHONDIR", tempfile.mkdtemp(prefix="ipython-bench-"))
    ours = start_new_kernel(kernel_name="scripted", startup_timeout=60)
    stock = start_new_kernel(kernel_name="python3", startup_timeout=60)
    samples = {"scripted: echo hi": [], "python3: pass": [], "python3: print('hi')": []}
    try:
        for _ in range(20):               # warm up both
            ours[1].execute_interactive("echo hi", output_hook=lambda m: None)
            stock[1].execute_interactive("pass", output_hook=lambda m: None)
        for _ in range(args.n):
            for label, (_km, kc), code in (("scripted: echo hi", ours, "echo hi"), ("python3: pass", stock, "pass"),
                                           ("python3: print('hi')", stock, "print('hi')")):
                start = time.perf_counter()
                kc.execute_interactive(code, output_hook=lambda m: None, timeout=30)
                samples[label].append(time.perf_counter() - start)
    finally:
        for km, kc in (ours, stock):
            kc.stop_channels()
            km.shutdown_kernel(now=True)
    ours_ms = statistics.median(samples["scripted: echo hi"]) * 1000
    stock_ms = statistics.median(samples["python3: pass"]) * 1000
    ratio = ours_ms / stock_ms
    print(f"{'cell':22} {'median ms':>10}")
    print(f"{'scripted: echo hi':22} {ours_ms:10.2f}")
    print(f"{'python3: pass':22} {stock_ms:10.2f}")
    print_ms = statistics.median(samples["python3: print('hi')"]) * 1000
    print(f"{'python3: print(hi)':22} {print_ms:10.2f}")
    print(f"ratio {ratio:.2f}x (target 1.2x){'  (over target)' if ratio > 1.2 else ''}")
    return 0 if ratio <= 1.2 else 1


if __name__ == "__main__":
    sys.exit(main())
