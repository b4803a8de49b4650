"""Text-command benchmarks, side by side with bashkit's ScriptedTool in one run.

    python tests/benchmarks/bench_commands.py [--repeat N]
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

from scripted_kernel import ExecutionLimits, ScriptedTool, ToolDef

SCHEMA = {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]}
JQ_LOOP = "for ((i=0; i<200; i++)); do get_user --id $((i % 7)) | jq -r .name; done | sort | uniq -c"
PIPELINE = ("seq 1 100000 | awk '{print $1 % 97, $1}' | grep -v '^0 ' | sort -n | cut -d' ' -f1 "
            "| uniq -c | sort -rn | head -5")


def record(uid) -> str:
    return json.dumps({"id": uid, "name": f"user{uid}"}) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    ours = (ScriptedTool.builder("bench").tool(ToolDef("get_user", "u", SCHEMA), lambda a: record(a.params["id"]))
            .limits(ExecutionLimits(max_commands=10_000_000, max_loop_iterations=10_000_000,
                                    timeout_seconds=600)).build())
    try:
        from bashkit.scripted import ScriptedTool as BashkitTool
        peer = BashkitTool("bench", max_commands=10_000_000, max_loop_iterations=10_000_000)
        peer.add_tool("get_user", "u", lambda params, stdin=None: record(params["id"]), SCHEMA)
    except ImportError:
        peer = None
    rows = [("200 x tool | jq | sort | uniq -c", JQ_LOOP, 0.5), ("seq|awk|grep|sort|cut|uniq|sort|head", PIPELINE, 1.0)]
    print(f"{'benchmark':40} {'ours ms':>9} {'bashkit ms':>11} {'ratio':>7} {'target':>7}")
    failed = False
    for name, script, target in rows:
        times, out = [], None
        for _ in range(args.repeat):
            start = time.perf_counter()
            out = ours.execute(script).stdout
            times.append(time.perf_counter() - start)
        ours_ms = statistics.median(times) * 1000
        if peer is None:
            print(f"{name:40} {ours_ms:9.1f} {'n/a':>11}")
            continue
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            peer_out = peer.execute_sync(script).stdout
            times.append(time.perf_counter() - start)
        peer_ms = statistics.median(times) * 1000
        if out != peer_out:
            print(f"  output differs: ours {out!r} bashkit {peer_out!r}")
        ratio = ours_ms / peer_ms
        failed |= ratio > target
        print(f"{name:40} {ours_ms:9.1f} {peer_ms:11.1f} {ratio:6.2f}x {target:6}x"
              + ("  (over target)" if ratio > target else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
