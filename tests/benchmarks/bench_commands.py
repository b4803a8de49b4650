"""Text-command benchmarks, side by side with bashkit's ScriptedTool in one run.

    python tests/benchmarks/bench_commands.py [--repeat N]
"""
from __future__ import annotations

import argparse
import json
import sys

from scripted_kernel import ExecutionLimits, ScriptedTool, ToolDef
from side_by_side import compare

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
    rows = [("200 x tool | jq | sort | uniq -c", JQ_LOOP, 0.5, 1),
            ("seq|awk|grep|sort|cut|uniq|sort|head", PIPELINE, 1.0, 1)]
    failed = compare(rows, lambda script: ours.execute(script).stdout,
                     (lambda script: peer.execute_sync(script).stdout) if peer else None, args.repeat, width=40)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
