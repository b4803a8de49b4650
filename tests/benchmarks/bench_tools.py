"""Tool-call benchmarks, side by side with bashkit's Python ScriptedTool in one run.

    python tests/benchmarks/bench_tools.py [--repeat N]

Both tools register the same callback (a user record as JSON) with the same schema.
"""
from __future__ import annotations

import argparse
import json
import sys

from scripted_kernel import ExecutionLimits, ScriptedTool, ToolDef
from side_by_side import compare

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


def main(argv=None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    mine, theirs = ours(), peer()
    rows = [("1,000 tool calls | wc -l", LOOP_1000, 0.7, 1), ("200 x tool | jq -r .name", JQ_200, 1.0, 1)]
    failed = compare(rows, lambda script: mine.execute(script).stdout,
                     (lambda script: theirs.execute_sync(script).stdout) if theirs else None, args.repeat)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
