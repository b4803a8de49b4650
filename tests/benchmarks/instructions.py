"""Instructions per new 300-line script, by stage, counted by valgrind's callgrind: the same
figure on a busy machine as on an idle one, so two versions can be compared where wall-clock
timings (±30 % here) cannot tell them apart.

    python tests/benchmarks/instructions.py            # parse, compile, run
    python tests/benchmarks/instructions.py --scripts 10
    python tests/benchmarks/instructions.py --tool-calls   # 1,000 tool calls, ours and bashkit's
    python tests/benchmarks/instructions.py --startup-rows # bench_startup.py's rows of new text, ours and bashkit's

Each stage is counted as the difference between a process that handles `--scripts` new texts
and one that handles none, so imports and start-up cancel out. The collector is off in both
(its cost is not deterministic; bench_speed.py measures it). Needs valgrind (Debian package
`valgrind`).
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys

STAGES = ("parse", "compile", "run")
TOOL_CALLS = ("ours", "bashkit")      # bench_tools.py's 1,000 tool calls, in our tool and bashkit's
# bench_startup.py's texts, each executed new (a unique comment) by our tool and bashkit's
STARTUP_ROWS = {"100 function definitions": "functions_100", "100 case statements": "cases_100",
                "300-line script": "script_300"}
ROW_WORK = tuple(f"row:{who}:{row}" for who in TOOL_CALLS for row in STARTUP_ROWS.values())


def work(stage: str, scripts: int):
    """In the measured process: parse (and compile, and run) `scripts` new texts."""
    import gc
    if stage in TOOL_CALLS:
        return tool_calls(stage, scripts)
    if stage in ROW_WORK:
        return startup_row(stage, scripts)

    from bench_speed import ours, script_300_lines
    from scripted_kernel.shell import compile as compile_stage
    from scripted_kernel.shell.lexer import Source
    from scripted_kernel.shell.parser import Parser
    tool, text = ours(), script_300_lines()

    def compile_tree(tree, source):
        try:                              # a compiler per text (this version)
            compiler = compile_stage.Compiler(source)
        except TypeError:                 # one shared compiler (a checkout before, for "before")
            return compile_stage.COMPILER.compile_program(tree, source)
        return compiler.compile_program(tree)
    gc.disable()
    for k in range(scripts + 1):          # the first warms what is built once per process
        script = f"# {k}\n{text}"
        if stage == "run":                # execute parses and compiles it too
            tool.execute(script)
            continue
        source = Source(script)
        tree = Parser(script, source=source).parse_program()
        if stage == "compile":
            compile_tree(tree, source)


def tool_calls(which: str, scripts: int):
    """In the measured process: `scripts` new scripts of 1,000 tool calls each."""
    import gc

    import bench_tools
    tool = bench_tools.ours() if which == "ours" else bench_tools.peer()
    run = tool.execute if which == "ours" else tool.execute_sync
    gc.disable()
    for k in range(scripts + 1):
        run(f"{bench_tools.LOOP_1000} # {k}")


def startup_row(stage: str, scripts: int):
    """In the measured process: `scripts` new texts of one bench_startup.py row."""
    import gc

    import bench_startup
    _, who, row = stage.split(":")
    if who == "ours":
        from scripted_kernel import ExecutionLimits, ScriptedTool
        run = ScriptedTool.builder("b").limits(ExecutionLimits(timeout_seconds=600)).build().execute
    else:
        from bashkit.scripted import ScriptedTool as PeerTool
        run = PeerTool("b").execute_sync
    text = getattr(bench_startup, row)()
    gc.disable()
    for k in range(scripts + 1):          # the first warms what is built once per process
        run(f"{text}# new text {k}\n")


def _interpreter() -> str:
    """The interpreter to run under valgrind: this one by the path it was started with (a
    virtual environment's `python` is a link whose path tells Python which environment it is),
    unless that path is a launcher script (pyenv's shims), which valgrind cannot run."""
    with open(sys.executable, "rb") as f:
        binary = f.read(4) == b"\x7fELF"
    return sys.executable if binary else os.path.realpath(sys.executable)


def instructions(stage: str, scripts: int) -> int:
    out = subprocess.run(
        ["setarch", "-R", "valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
         _interpreter(), __file__, "--work", stage, "--scripts", str(scripts)],
        capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": "0"}, check=True)
    return int(re.search(r"Collected : (\d+)", out.stderr).group(1))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scripts", type=int, default=5)
    parser.add_argument("--tool-calls", action="store_true", help="count bench_tools.py's 1,000 tool calls instead")
    parser.add_argument("--startup-rows", action="store_true",
                        help="count bench_startup.py's rows of new text instead, ours and bashkit's")
    parser.add_argument("--work", choices=STAGES + TOOL_CALLS + ROW_WORK, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.work:
        work(args.work, args.scripts)
        return 0
    if shutil.which("valgrind") is None or shutil.which("setarch") is None:
        print("valgrind is not installed (apt-get install valgrind): nothing counted")
        return 0
    if args.tool_calls:
        return count_tool_calls(args.scripts)
    if args.startup_rows:
        return count_startup_rows(args.scripts)
    from scripted_kernel.shell import COMPILED_FRONT_END
    print("front end (lexer, parser, compile stage):", "compiled (mypyc)" if COMPILED_FRONT_END
          else "pure Python")
    cumulative = {stage: (instructions(stage, args.scripts) - instructions(stage, 0)) / args.scripts
                  for stage in STAGES}
    previous = 0.0
    for stage in STAGES:
        print(f"  {stage:8} {(cumulative[stage] - previous) / 1e6:6.1f} M instructions per script")
        previous = cumulative[stage]
    print(f"  {'total':8} {cumulative['run'] / 1e6:6.1f} M")
    return 0


def count_tool_calls(scripts: int) -> int:
    import bench_tools
    counted = {which: (instructions(which, scripts) - instructions(which, 0)) / scripts
               for which in TOOL_CALLS if which == "ours" or bench_tools.peer() is not None}
    print("1,000 tool calls (bench_tools.py), instructions per script:")
    for which, count in counted.items():
        print(f"  {which:8} {count / 1e6:6.1f} M")
    if len(counted) == 2:
        print(f"  ratio    {counted['ours'] / counted['bashkit']:6.2f}x")
    return 0


def count_startup_rows(scripts: int) -> int:
    import bench_tools
    whose = TOOL_CALLS if bench_tools.peer() is not None else ("ours",)
    from scripted_kernel.shell import COMPILED_FRONT_END
    print("bench_startup.py's rows, instructions per new text "
          f"({'compiled' if COMPILED_FRONT_END else 'pure Python'} front end):")
    for label, row in STARTUP_ROWS.items():
        counted = {who: (instructions(f"row:{who}:{row}", scripts) - instructions(f"row:{who}:{row}", 0)) / scripts
                   for who in whose}
        ratio = f"  {counted['ours'] / counted['bashkit']:5.2f}x" if len(counted) == 2 else ""
        print(f"  {label:26}" + "".join(f" {who} {n / 1e6:5.1f} M" for who, n in counted.items()) + ratio)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    sys.exit(main())
