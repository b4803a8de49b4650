"""Fast from the first call, side by side with bashkit (PyPI `bashkit`) in one run:

    python tests/benchmarks/bench_startup.py [--runs N]

- the time of the import a user's first line makes (`from ... import ScriptedTool`), median of
  N fresh processes each;
- a whole process that imports, builds a tool and runs `echo hi` (wall time of the process);
- parsing new text: 100 function definitions, 100 `case` statements, and a 300-line script of
  functions, `$(f | tr a-z A-Z)` substitutions and `case` arms, each with new text every call
  (a unique comment), in this process, interleaved with bashkit's calls.

Goals (issue "Fast from the first call"): the whole process within 3x of bashkit's, the three
parse rows at or below 1.0x compiled (set SCRIPTED_KERNEL_PURE=1 to report the pure path).
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

OURS_IMPORT = "from scripted_kernel import ScriptedTool"
PEER_IMPORT = "from bashkit.scripted import ScriptedTool"
OURS_PROCESS = ("from scripted_kernel import ScriptedTool\n"
                "print(ScriptedTool.builder('t').build().execute('echo hi').stdout, end='')")
PEER_PROCESS = ("from bashkit.scripted import ScriptedTool\n"
                "print(ScriptedTool('t').execute_sync('echo hi').stdout, end='')")


def import_ms(statement: str, runs: int) -> float:
    """The time `statement` (an import) takes in a fresh process, in ms, median of `runs`.
    Timed in the process, not with -X importtime: the package's names are imported when first
    used (base/exports.py), so `import scripted_kernel` alone would leave out what a user's
    first line loads."""
    code = f"import time\nt = time.perf_counter()\n{statement}\nprint(time.perf_counter() - t)"
    times = []
    for _ in range(runs):
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=os.environ)
        times.append(float(done.stdout) * 1000)
    return statistics.median(times)


def process_ms(code: str, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        times.append((time.perf_counter() - start) * 1000)
        assert done.stdout == "hi\n", done.stderr
    return statistics.median(times)


def functions_100() -> str:
    return "\n".join(f"f{k}() {{\n  local x=\"$1\" n={k}\n  if [[ -n $x ]]; then echo \"$x:$n\"; "
                     f"else echo none; fi\n}}" for k in range(100)) + "\nf7 a\n"


def cases_100() -> str:
    return "\n".join(f"case \"$v{k % 7}\" in\n  a*|b{k}) r=1 ;;\n  *_{k}) r=2 ;;\n  *) r=3 ;;\nesac"
                     for k in range(100)) + "\necho $r\n"


def script_300() -> str:
    blocks = []
    for k in range(20):
        blocks.append(f"""up_{k}() {{ echo "$1" | tr a-z A-Z; }}
name_{k}=$(up_{k} item_{k})
case $name_{k} in
  ITEM_1*) kind=one ;;
  ITEM_*) kind=many ;;
  *) kind=none ;;
esac
label_{k}="$(up_{k} "$kind")-{k}"
[[ -n $label_{k} ]] && last=$label_{k}
printf -v line_{k} '%s=%s' "$name_{k}" "$kind"
if [[ $kind == one ]]; then ones=$(( ${{ones:-0}} + 1 )); fi
""")
    return "\n".join(blocks) + 'echo "$last $ones $line_19"\n'


def parse_rows(runs: int):
    from scripted_kernel import ExecutionLimits, ScriptedTool
    from bashkit.scripted import ScriptedTool as PeerTool
    ours = ScriptedTool.builder("b").limits(ExecutionLimits(timeout_seconds=600)).build()
    peer = PeerTool("b")
    counter = [0]

    def unique(text: str) -> str:
        counter[0] += 1
        return f"{text}# new text {counter[0]}\n"
    for label, text in (("100 function definitions", functions_100()), ("100 case statements", cases_100()),
                        ("300-line script", script_300())):
        mine, theirs = [], []
        for _ in range(runs):                     # interleaved: neither engine meets warm caches alone
            a, b = unique(text), unique(text)
            start = time.perf_counter()
            out_ours = ours.execute(a).stdout
            mine.append(time.perf_counter() - start)
            start = time.perf_counter()
            out_peer = peer.execute_sync(b).stdout
            theirs.append(time.perf_counter() - start)
            assert out_ours == out_peer, (label, out_ours, out_peer)
        m, t = statistics.median(mine) * 1000, statistics.median(theirs) * 1000
        yield label, m, t


def main(argv=None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args(argv)
    front = "pure" if os.environ.get("SCRIPTED_KERNEL_PURE") else "compiled"
    print(f"{'row':<34} {'ours ms':>9} {'bashkit ms':>11} {'ratio':>7}   ({front} front end)")
    rows = [("import ScriptedTool", import_ms(OURS_IMPORT, args.runs), import_ms(PEER_IMPORT, args.runs)),
            ("process: import, build, echo hi", process_ms(OURS_PROCESS, args.runs),
             process_ms(PEER_PROCESS, args.runs))]
    rows += list(parse_rows(args.runs * 4))
    for label, ours, peer in rows:
        print(f"{label:<34} {ours:>9.2f} {peer:>11.2f} {ours / peer:>6.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
