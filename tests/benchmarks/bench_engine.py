"""Engine benchmarks, side by side with bashkit's ScriptedTool (PyPI `bashkit`) in one run.

    python tests/benchmarks/bench_engine.py [--repeat N]

Prints one row per benchmark: our median time, bashkit's, the ratio (ours / bashkit) and the
target from the engine work item. Both engines run the same scripts and must print the same
output. Scripts that must be parsed every time get a unique comment so no cache can help.
"""
from __future__ import annotations

import argparse
import sys

from scripted_kernel import ExecutionLimits, ScriptedTool
from side_by_side import compare

ARITH_LOOP = "x=0; for ((i=0; i<10000; i++)); do x=$((x+i)); done; echo $x"

PARAM_LOOP = """s=banana_split_xyz; arr=()
for ((i=0; i<5000; i++)); do
  t="${s//a/b} ${#s} ${s:1:3} ${s%%x*}"
  case $t in *split*) arr+=("$i") ;; esac
done
echo ${#arr[@]} "$t"
"""

FUNCTIONS = """fib() {
  if (( $1 < 2 )); then r=$1; return; fi
  local a
  fib $(( $1 - 1 )); a=$r
  fib $(( $1 - 2 )); r=$(( a + r ))
}
fib 14; echo $r
n=0
inc() { n=$(( n + 1 )); }
for ((k=0; k<2000; k++)); do inc; done
echo $n
"""


def script_300_lines() -> str:
    """A 300-line script of the shapes LLM scripts have; defining is most of its work."""
    blocks = []
    for k in range(30):
        blocks.append(f"""process_{k}() {{
  local item="$1" count=0
  if [[ -z "$item" ]]; then
    echo "missing item" >&2; return 1
  elif [[ $item == *_{k} ]]; then
    count=$(( count + {k} ))
  fi
  case "$item" in
    a*|b*) echo "ab:${{item#?}}" ;;
    *) echo "other:${{item%%_*}}:$count" ;;
  esac
}}""")
    body = "\n".join(blocks)
    return body + "\nprocess_3 apple_3\n"


def script_300_executed() -> str:
    """300 lines that all run: assignments, tests, case, loops, printf -v, arrays."""
    blocks = ["total=0 others=0; skipped=()"]
    for k in range(30):
        blocks.append(f"""name_{k}="item_{k}"
count_{k}=$(( {k} * 3 + 1 ))
if [[ $name_{k} == item_* && $count_{k} -gt 5 ]]; then
  total=$(( total + count_{k} ))
else
  skipped+=("$name_{k}")
fi
case ${{name_{k}##*_}} in 1*) ones=1 ;; *) others=$(( others + 1 )) ;; esac
for part in a b c; do label="${{label:-}}$part{k}"; done
printf -v line_{k} '%s=%d' "$name_{k}" "$count_{k}"
""")
    blocks.append('echo "$total ${#skipped[@]} $others ${#label} $line_29"')
    return "\n".join(blocks)


def bashkit_tool():
    try:
        from bashkit.scripted import ScriptedTool as BashkitTool
    except ImportError:
        return None
    return BashkitTool("bench", max_commands=10_000_000, max_loop_iterations=10_000_000)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args(argv)
    ours = ScriptedTool.builder("bench").limits(ExecutionLimits(max_commands=10_000_000,
                                                                max_loop_iterations=10_000_000,
                                                                timeout_seconds=600)).build()
    peer = bashkit_tool()
    counter = [0]

    def unique(script: str) -> str:
        counter[0] += 1
        return f"{script}\n# run {counter[0]}\n"

    big = script_300_lines()
    executed = script_300_executed()
    rows = [
        ("execute('true')", "true", 1.0, 200),
        ("10k arithmetic loop", ARITH_LOOP, 2.0, 1),
        ("5k parameter-expansion loop", PARAM_LOOP, 0.5, 1),
        ("fib 14 + 2,000 calls", FUNCTIONS, 2.0, 1),
    ]
    run_ours = lambda script: ours.execute(script).stdout
    run_peer = (lambda script: peer.execute_sync(script).stdout) if peer is not None else None
    failed = compare(rows, run_ours, run_peer, args.repeat)
    # scripts parsed anew each time: a unique comment defeats every cache
    failed |= compare([("parse 300 lines (30 functions)", big, 1.5, 1),
                       ("parse + run 300 executed lines", executed, 1.5, 1)],
                      lambda script: run_ours(unique(script)),
                      (lambda script: run_peer(unique(script))) if run_peer else None, args.repeat)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
