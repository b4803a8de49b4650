"""Engine benchmarks, side by side with bashkit's ScriptedTool (PyPI `bashkit`) in one run.

    python tests/benchmarks/bench_engine.py [--repeat N]

Prints one row per benchmark: our median time, bashkit's, the ratio (ours / bashkit) and the
target from the engine work item. Both engines run the same scripts and must print the same
output. Scripts that must be parsed every time get a unique comment so no cache can help.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time

from scripted_kernel import ExecutionLimits, ScriptedTool

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


def timed(fn, repeat: int) -> tuple[float, str]:
    times, out = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000, out


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
    cases = [
        ("execute('true')", lambda run: run("true"), 1.0, 200),
        ("10k arithmetic loop", lambda run: run(ARITH_LOOP), 2.0, 1),
        ("5k parameter-expansion loop", lambda run: run(PARAM_LOOP), 0.5, 1),
        ("fib 14 + 2,000 calls", lambda run: run(FUNCTIONS), 2.0, 1),
        ("parse 300 lines (30 functions)", lambda run: run(unique(big)), 1.5, 1),
        ("parse + run 300 executed lines", lambda run: run(unique(executed)), 1.5, 1),
    ]

    def run_ours(script):
        r = ours.execute(script)
        return r.stdout

    def run_peer(script):
        r = peer.execute_sync(script)
        return r.stdout

    print(f"{'benchmark':32} {'ours ms':>9} {'bashkit ms':>11} {'ratio':>7} {'target':>7}")
    failed = False
    for name, body, target, inner in cases:
        ours_ms, ours_out = timed(lambda: [body(run_ours) for _ in range(inner)][-1], args.repeat)
        ours_ms /= inner
        if peer is None:
            print(f"{name:32} {ours_ms:9.3f} {'n/a':>11} {'':>7} {target:>6}x")
            continue
        peer_ms, peer_out = timed(lambda: [body(run_peer) for _ in range(inner)][-1], args.repeat)
        peer_ms /= inner
        if ours_out != peer_out:
            print(f"  output differs for {name!r}: ours {ours_out!r} bashkit {peer_out!r}")
        ratio = ours_ms / peer_ms
        mark = "" if ratio <= target else "  (over target)"
        failed |= ratio > target
        print(f"{name:32} {ours_ms:9.3f} {peer_ms:11.3f} {ratio:6.2f}x {target:6}x{mark}")
    if peer is None:
        print("bashkit is not installed (pip install bashkit): no ratios")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
