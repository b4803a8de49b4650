"""Tool-call benchmarks, side by side with bashkit's Python ScriptedTool in one run.

    python tests/benchmarks/bench_tools.py [--repeat N]

Both tools register the same callback (a user record as JSON) with the same schema.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

from scripted_kernel import ExecutionLimits, ScriptedTool, ToolDef

SCHEMA = {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]}
LOOP_1000 = "for ((i=0; i<1000; i++)); do get_user --id $i; done | wc -l"
JQ_200 = "for ((i=0; i<200; i++)); do get_user --id $i | jq -r .name; done | tail -1"


def record(uid) -> str:
    return json.dumps({"id": uid, "name": f"user{uid}", "tier": "gold"}) + "\n"


def ours() -> ScriptedTool:
    return (ScriptedTool.builder("bench")
            .tool(ToolDef("get_user", "Fetch a user", SCHEMA), lambda args: record(args.params["id"]))
            .limits(ExecutionLimits(max_commands=10_000_000, max_loop_iterations=10_000_000))
            .build())


def peer():
    try:
        from bashkit.scripted import ScriptedTool as BashkitTool
    except ImportError:
        return None
    tool = BashkitTool("bench", max_commands=10_000_000, max_loop_iterations=10_000_000)
    tool.add_tool("get_user", "Fetch a user", lambda params, stdin=None: record(params["id"]), SCHEMA)
    return tool


def timed(fn, repeat):
    times, out = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000, out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    mine, theirs = ours(), peer()
    rows = [("1,000 tool calls | wc -l", LOOP_1000, 1.0), ("200 x tool | jq -r .name", JQ_200, 1.0)]
    print(f"{'benchmark':28} {'ours ms':>9} {'bashkit ms':>11} {'ratio':>7} {'target':>7}")
    failed = False
    for name, script, target in rows:
        ours_ms, ours_out = timed(lambda: mine.execute(script).stdout, args.repeat)
        if theirs is None:
            print(f"{name:28} {ours_ms:9.2f} {'n/a':>11}")
            continue
        peer_ms, peer_out = timed(lambda: theirs.execute_sync(script).stdout, args.repeat)
        if ours_out.strip() != peer_out.strip():
            print(f"  output differs: ours {ours_out!r} bashkit {peer_out!r}")
        ratio = ours_ms / peer_ms
        failed |= ratio > target
        print(f"{name:28} {ours_ms:9.2f} {peer_ms:11.2f} {ratio:6.2f}x {target:6}x"
              + ("  (over target)" if ratio > target else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
