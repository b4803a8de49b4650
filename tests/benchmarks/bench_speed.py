"""The speed targets where users feel them, side by side with bashkit's ScriptedTool (PyPI
`bashkit`) in one process, ours and bashkit's calls interleaved.

    python tests/benchmarks/bench_speed.py [--runs 3] [--samples 5] [--only NAME] [--consecutive]
    python tests/benchmarks/bench_speed.py --memory 1000
    python tests/benchmarks/bench_speed.py --peak
    python tests/benchmarks/bench_speed.py --awk

Every call sends a new script text (a unique comment), as an LLM does, so no cache helps;
the repeated-text figure is printed separately for the 300-line script. Each run prints, per
workload, the median of its samples for both engines and the ratio ours / bashkit's; the
summary gives the median ratio over the runs and its spread (min-max). The first line says
whether the front end (lexer, parser, compile stage) is the compiled one; `SCRIPTED_KERNEL_PURE=1` measures the
pure-Python ones.
"""
from __future__ import annotations

import argparse
import gc
import itertools
import json
import os
import statistics
import sys
import time

from scripted_kernel import ExecutionLimits, ScriptedTool, ToolDef
from scripted_kernel.shell import COMPILED_FRONT_END

LIMITS = dict(max_commands=10_000_000, max_loop_iterations=10_000_000)
ORDERS = [{"id": k, "qty": k % 37, "sku": f"SKU-{k:06d}", "note": "x" * 20} for k in range(62_000)]
ORDERS_JSON = json.dumps(ORDERS) + "\n"          # about 5 MB


def script_300_lines() -> str:
    """100 functions, 100 `$(f | tr)` and 100 `case` statements: 300 lines a model might send."""
    lines = [f"f{k}() {{ echo \"item-{k} $1\"; }}" for k in range(100)]
    lines += [f"v{k}=$(f{k} x | tr a-z A-Z)" for k in range(100)]
    lines += [f"case $v{k} in ITEM-{k}*) n=$((n+1)) ;; *) ;; esac" for k in range(100)]
    return "n=0\n" + "\n".join(lines) + "\necho $n $v99\n"


BIG_STATE = """for ((i=0; i<1000; i++)); do printf -v "var_$i" '%05d' "$i"; done
big=(); for ((i=0; i<10000; i++)); do big[i]=$i; done
s=0; for ((i=0; i<500; i++)); do s=$(( s + $(echo $i) )); done
echo $s ${#big[@]} $var_999
"""

JQ_5MB = "list_orders | jq '[.[] | select(.qty > 10)] | length'"

PIPELINE = ("seq 1 100000 | awk '{print $1 % 97, $1}' | grep -v '^0 ' | sort -n | cut -d' ' -f1 "
            "| uniq -c | sort -rn | head -5")

# name → (script, target ratio)
WORKLOADS = {
    "execute('true')": ("true", 0.8),
    "new 300-line script": (script_300_lines(), 1.0),
    "1k vars + 10k array, 500 $(echo)": (BIG_STATE, 1.0),
    "5 MB JSON | jq select | length": (JQ_5MB, 1.0),
    "seq|awk|grep|sort|cut|uniq|sort|head": (PIPELINE, 1.0),
}


def list_orders(_args=None, _stdin=None) -> str:
    return ORDERS_JSON


def ours() -> ScriptedTool:
    return (ScriptedTool.builder("bench")
            .tool(ToolDef("list_orders", "All orders", {"type": "object", "properties": {}}),
                  lambda args: list_orders())
            .limits(ExecutionLimits(timeout_seconds=600, **LIMITS))
            .build())


def peer():
    try:
        from bashkit.scripted import ScriptedTool as BashkitTool
    except ImportError:
        return None
    tool = BashkitTool("bench", **LIMITS)
    tool.add_tool("list_orders", "All orders", lambda params, stdin=None: list_orders(),
                  {"type": "object", "properties": {}})
    return tool


_counter = itertools.count()


def unique(script: str) -> str:
    return f"{script}\n# call {next(_counter)}\n"


def sample(run, script: str, calls: int, fresh: bool) -> tuple[float, str]:
    """Milliseconds per call, and the last output."""
    texts = [unique(script) if fresh else script for _ in range(calls)]
    start = time.perf_counter()
    for text in texts:
        out = run(text)
    return (time.perf_counter() - start) * 1000 / calls, out


def one_run(names, mine, theirs, samples: int, consecutive: bool = False) -> dict:
    """Interleaved samples of each workload: ours, bashkit's, ours, ... Returns name → ratio.
    `consecutive`: all of ours, then all of bashkit's (each call finds the caches as its own
    engine's previous call left them; the difference from the interleaved figure is what a
    call pays for starting with caches the other engine filled)."""
    ratios = {}
    for name in names:
        script, target = WORKLOADS[name]
        calls = 200 if script == "true" else 1
        ours_ms, peer_ms = [], []
        for _ in range(samples):
            ms, our_out = sample(mine, script, calls, fresh=True)
            ours_ms.append(ms)
            if theirs is not None and not consecutive:
                ms, peer_out = sample(theirs, script, calls, fresh=True)
                peer_ms.append(ms)
        for _ in range(samples if theirs is not None and consecutive else 0):
            ms, peer_out = sample(theirs, script, calls, fresh=True)
            peer_ms.append(ms)
        mine_median = statistics.median(ours_ms)
        if theirs is None:
            print(f"  {name:38} ours {mine_median:9.3f} ms")
            continue
        if our_out.strip() != peer_out.strip():
            print(f"  output differs for {name!r}: ours {our_out[:80]!r} bashkit {peer_out[:80]!r}")
        peer_median = statistics.median(peer_ms)
        ratios[name] = mine_median / peer_median
        print(f"  {name:38} ours {mine_median:9.3f} ms  bashkit {peer_median:9.3f} ms  "
              f"ratio {ratios[name]:5.2f}x  (target {target}x)")
    return ratios


def memory_run(mine, scripts: int) -> bool:
    """`scripts` different 300-line scripts (each small enough for the script cache) in this
    process, each sent twice (the cache keeps a script from its second sight), each followed
    by a small script: resident memory after, and the small script's 99th-percentile time
    against its median (collector pauses show there).

    The percentile is judged on the thread's CPU time: a collector pause is CPU time, while
    wall-clock time also counts the moments the machine gave the CPU to other processes (on a
    busy 2-core machine that alone moves the wall-clock p99 between 1.7x and 3x). Both are
    printed."""
    text = script_300_lines()[:7000].rsplit("\n", 1)[0]
    wall, cpu = [], []
    collections = [0, 0, 0]        # by generation, during the small scripts

    def count(phase, info):
        if phase == "stop":
            collections[info["generation"]] += 1
    for k in range(scripts):
        mine(f"{text}\n# {k}\n")
        mine(f"{text}\n# {k}\n")
        gc.callbacks.append(count)
        start, start_cpu = time.perf_counter(), time.thread_time()
        mine(f"x={k}; echo $((x + 1))")
        cpu.append(time.thread_time() - start_cpu)
        wall.append(time.perf_counter() - start)
        gc.callbacks.remove(count)
    rss_mb = int(open("/proc/self/statm").read().split()[1]) * os.sysconf("SC_PAGE_SIZE") >> 20
    print(f"  after {scripts} different 300-line scripts, each twice: resident {rss_mb} MB (target < 300)")
    print(f"  collections during the small scripts, by generation: {collections}")
    ratios = {}
    for name, times in (("CPU time", cpu), ("wall-clock", wall)):
        times.sort()
        median, p99 = statistics.median(times), times[int(len(times) * 0.99)]
        ratios[name] = p99 / median
        print(f"  small script, {name:10}: median {median * 1000:.3f} ms, p99 {p99 * 1000:.3f} ms "
              f"= {ratios[name]:.2f}x the median" + (" (target < 2)" if name == "CPU time" else ""))
    return rss_mb < 300 and ratios["CPU time"] < 2


BIG_DATA = ("seq 1 1000000 | awk '{print $1 % 97, $1}' | sort -n | uniq -c | tail -3", 150)
BIG_JSON_OBJECTS = 500_000


def _peak_rss_of(code: str) -> tuple[int, str]:
    """Peak resident MB of a fresh interpreter running `code` (which prints its result), and
    that result."""
    import subprocess
    # VmHWM, not ru_maxrss: that keeps the peak of the process that spawned this one
    probe = code + "\nprint(int(open('/proc/self/status').read().split('VmHWM:')[1].split()[0]) // 1024)"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True).stdout.rstrip("\n").rsplit("\n", 1)
    return int(out[-1]), out[0] if len(out) > 1 else ""


AWK_RECORDS = 100_000
AWK_PROGRAMS = ("{print $1 % 97, $1}", "{s += $1} END {print s}", "$1 % 3 == 0 {n++} END {print n}")
AWK_TARGET_US = 3.0


def awk_run() -> bool:
    """awk's cost per simple record: a pipeline through awk less the same pipeline without it,
    over 100k records (the best of five calls, each a new text)."""
    tool = ours()
    mine = lambda script: tool.execute(script).stdout
    best_ms = lambda script: min(sample(mine, script, 1, fresh=True)[0] for _ in range(5))
    feed = f"seq 1 {AWK_RECORDS}"
    feed_ms = best_ms(feed + " > /dev/null")
    met = True
    for program in AWK_PROGRAMS:
        us = (best_ms(f"{feed} | awk '{program}' > /dev/null") - feed_ms) * 1000 / AWK_RECORDS
        print(f"  awk '{program}': {us:.2f} µs per record (target <= {AWK_TARGET_US})")
        met &= us <= AWK_TARGET_US
    return met


def peak_run() -> bool:
    """Big data in little memory: the peak resident size of a process that runs a million-line
    pipeline (target 150 MB), and the extra memory jq's worker needs for a 500k-object JSON
    (target 1.5x the text)."""
    script, target = BIG_DATA
    tool = ("from scripted_kernel import ScriptedTool, ExecutionLimits\n"
            "t = ScriptedTool.builder('t').limits(ExecutionLimits(timeout_seconds=600, "
            "max_commands=10**8, max_loop_iterations=10**8)).build()\n")
    mb, out = _peak_rss_of(tool + f"print(repr(t.execute({script!r}).stdout))")
    print(f"  {script}\n    peak resident {mb} MB (target < {target} MB), output {out}")
    met = mb < target
    import tempfile
    program = "[.[] | select(.qty > 10)] | length"
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        for k in range(BIG_JSON_OBJECTS):
            f.write(("[" if k == 0 else ",") + json.dumps({"id": k, "qty": k % 37, "sku": f"SKU-{k:06d}"}))
        f.write("]\n")
    text_mb = os.path.getsize(f.name) / 2 ** 20
    # the child reads the text, then samples its resident size while jq runs (as the jq
    # worker runs it): the peak above what it had before
    runner = ("import gc, threading, time\nfrom scripted_kernel.commands.jq.program import run_program\n"
              "from scripted_kernel.commands.jq.worker import CapturedOutput\n"
              "def rss():\n    return int(open('/proc/self/statm').read().split()[1]) * 4096\n"
              f"text = open({f.name!r}).read()\n"
              "io = CapturedOutput(text, 1 << 20)\ndel text\ngc.collect()\n"
              "before = peak = rss()\ndone = False\n"
              "def sample():\n    global peak\n    while not done:\n"
              "        peak = max(peak, rss())\n        time.sleep(0.002)\n"
              "sampler = threading.Thread(target=sample)\nsampler.start()\n"
              "defaults = dict(r=False, j=False, c=True, n=False, s=False, e=False, a=False, "
              "S=False, R=False, indent='  ', seq=False, raw0=False)\n"
              f"run_program(io, defaults, {{}}, [], {program!r}, {{}})\n"
              "done = True\nsampler.join()\n"
              "print((peak - before) >> 20, ''.join(io.out_parts).strip())")
    try:
        _, line = _peak_rss_of(runner)
    finally:
        os.unlink(f.name)
    extra, result = line.split(" ", 1)
    print(f"  jq '{program}' over {BIG_JSON_OBJECTS} objects ({text_mb:.0f} MB): +{extra} MB "
          f"(target < {1.5 * text_mb:.0f} MB), result {result}")
    return met and int(extra) < 1.5 * text_mb


def main(argv=None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--samples", type=int, default=5)
    parser.add_argument("--only", help="run only the workloads whose name contains this")
    parser.add_argument("--consecutive", action="store_true",
                        help="each engine's samples back to back instead of interleaved")
    parser.add_argument("--memory", type=int, metavar="SCRIPTS",
                        help="only the memory run: this many different 300-line scripts")
    parser.add_argument("--peak", action="store_true",
                        help="only the big-data memory run: peak resident sizes")
    parser.add_argument("--awk", action="store_true", help="only awk's cost per simple record")
    args = parser.parse_args(argv)
    print("front end (lexer, parser, compile stage):", "compiled (mypyc)" if COMPILED_FRONT_END
          else "pure Python")
    if args.peak:
        return 0 if peak_run() else 1
    if args.awk:
        return 0 if awk_run() else 1
    if args.memory:
        tool = ours()
        return 0 if memory_run(lambda script: tool.execute(script).stdout, args.memory) else 1
    names = [n for n in WORKLOADS if not args.only or args.only in n]
    tool, theirs_tool = ours(), peer()
    mine = lambda script: tool.execute(script).stdout
    theirs = (lambda script: theirs_tool.execute_sync(script).stdout) if theirs_tool else None
    runs = []
    for k in range(args.runs):
        print(f"run {k + 1}")
        runs.append(one_run(names, mine, theirs, args.samples, args.consecutive))
    if "new 300-line script" in names:
        script = WORKLOADS["new 300-line script"][0]
        repeat_ms, _ = sample(mine, script, 20, fresh=False)
        print(f"  (the same 300-line text sent again: ours {repeat_ms:.3f} ms a call, from the cache)")
    if theirs is None:
        print("bashkit is not installed (pip install bashkit): no ratios")
        return 0
    print("summary: median ratio over the runs (min-max), target")
    missed = False
    for name in names:
        values = [r[name] for r in runs]
        target = WORKLOADS[name][1]
        median = statistics.median(values)
        missed |= median > target
        print(f"  {name:38} {median:5.2f}x ({min(values):.2f}-{max(values):.2f})  target {target}x"
              + ("  MISSED" if median > target else ""))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
