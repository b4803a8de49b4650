"""Command line: `python -m scripted_kernel run [-c SCRIPT | FILE | -]`."""
from __future__ import annotations

import argparse
import sys

from .shell.limits import CancelToken
from .tools import ScriptedTool


def _run(args) -> int:
    if args.command is not None:
        script = args.command
        script_stdin = "" if sys.stdin is None or sys.stdin.isatty() else sys.stdin.read()
    elif args.file in (None, "-"):
        script = sys.stdin.read()
        script_stdin = ""
    else:
        try:
            with open(args.file, encoding="utf-8", errors="surrogateescape") as f:
                script = f.read()
        except OSError as e:
            print(f"scripted_kernel: {args.file}: {e.strerror}", file=sys.stderr)
            return 127
        script_stdin = "" if sys.stdin is None or sys.stdin.isatty() else sys.stdin.read()
    tool = ScriptedTool.builder("cli").build()

    def stream(name, text):
        target = sys.stdout if name == "stdout" else sys.stderr
        target.write(text)
        target.flush()

    cancel = CancelToken()
    try:
        result = tool.execute(script, stdin=script_stdin, cancel=cancel, on_output=stream)
    except KeyboardInterrupt:
        return 130
    return result.exit_code


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripted_kernel",
                                     description="Scripted tools: bash scripts in a logic-only interpreter.")
    sub = parser.add_subparsers(dest="action", required=True)
    run = sub.add_parser("run", help="run a script (-c SCRIPT, a FILE, or - for standard input)")
    run.add_argument("-c", dest="command", metavar="SCRIPT", help="the script text")
    run.add_argument("file", nargs="?", help="a script file, or - to read the script from stdin")
    args = parser.parse_args(argv)
    if args.action == "run":
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.reconfigure(errors="surrogateescape")
            except AttributeError:
                pass
        return _run(args)
    return 2


if __name__ == "__main__":
    sys.exit(main())
