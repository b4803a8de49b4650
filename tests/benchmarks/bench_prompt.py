"""What a model reads before it writes a script: the system prompt's size, by mode, beside the
same tools given as OpenAI function specs, and the share of it spent on result shapes; and how
well `discover --search` ranks a 200-tool catalog.

    python tests/benchmarks/bench_prompt.py

Sizes are characters and an estimate of tokens (characters / 4, the usual rule for English
and JSON); a provider's tokenizer gives other absolute numbers but the same ratios.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "examples"), str(ROOT / "tests" / "tools")]

from catalog200 import LEXICAL, QUERIES, catalog  # noqa: E402

from scripted_kernel import ScriptedTool  # noqa: E402
from scripted_kernel.tools.catalog import search  # noqa: E402
from scripted_kernel.tools.toolset import DiscoveryMode, ScriptingToolSet  # noqa: E402


def openai_specs(tool: ScriptedTool) -> str:
    """The same tools as one OpenAI function spec each (what a direct-call agent sends)."""
    specs = [{"type": "function", "function": {"name": d.name, "description": d.description,
                                                "parameters": d.input_schema}} for d in tool.tool_defs()]
    return json.dumps(specs)


def shapes_share(tool: ScriptedTool) -> float:
    """The share of the full prompt that the result shapes take."""
    full = tool.system_prompt()
    shaped = sum(len(line.split(" → ", 1)[1]) + 3 for line in full.splitlines() if " → `" in line)
    return shaped / len(full)


def row(label: str, tool: ScriptedTool):
    full = tool.system_prompt()
    tool.compact = True
    compact = tool.system_prompt()
    tool.compact = False
    discovery = ScriptingToolSet(tool, DiscoveryMode.WITH_DISCOVERY).system_prompt()
    specs = openai_specs(tool)
    print(f"{label:<28} {len(tool.tools):>5} {len(full):>9} {len(compact):>9} {len(discovery):>10} "
          f"{len(specs):>11} {len(full) / len(specs):>8.2f}x {100 * shapes_share(tool):>7.1f} %")


def big_catalog() -> ScriptedTool:
    tool = ScriptedTool("catalog200")
    schema = {"type": "object", "properties": {k: {"type": t} for k, t in
                                               (("id", "string"), ("status", "string"), ("created", "string"),
                                                ("total", "number"))}, "required": ["id", "status"]}
    for d in catalog():
        d.output_schema = schema
        tool.register(d, lambda a: "{}")
    return tool


def main() -> int:
    import ecommerce
    print(f"{'tools':<28} {'count':>5} {'full':>9} {'compact':>9} {'discovery':>10} {'openai specs':>11} "
          f"{'full/specs':>9} {'shapes':>9}")
    row("examples/ecommerce.py", ecommerce.api)
    row("200-tool catalog", big_catalog())
    print("(characters; tokens ≈ characters / 4)")
    defs = catalog()
    groups = (("queries sharing words", QUERIES[:LEXICAL]), ("queries by meaning only", QUERIES[LEXICAL:]))
    for label, queries in groups:
        first = sum(search(defs, q)[:1] and search(defs, q)[0].name == w for q, w in queries)
        top3 = sum(w in [t.name for t in search(defs, q)[:3]] for q, w in queries)
        print(f"discover --search, 200 tools, {label}: first {first}/{len(queries)}, top 3 {top3}/{len(queries)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
