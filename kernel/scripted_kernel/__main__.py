"""Command line: `python -m scripted_kernel run [-c SCRIPT | FILE | -]`."""
from __future__ import annotations

import argparse
import json
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
    if args.tools:
        tool = load_tools(args.tools)
    else:
        builder = ScriptedTool.builder("cli")
        if args.tools_dir:
            builder.executables(args.tools_dir)
        tool = builder.build()

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


def load_tools(spec: str) -> ScriptedTool:
    """MODULE:OBJECT or path/to/file.py:OBJECT → a ScriptedTool."""
    import importlib
    import importlib.util
    import os
    module_name, _, attr = spec.rpartition(":")
    if not module_name or not attr:
        raise SystemExit(f"scripted_kernel: --tools expects MODULE:OBJECT, got {spec!r}")
    if module_name.endswith(".py") or os.sep in module_name:
        loader = importlib.util.spec_from_file_location("scripted_tools_module", module_name)
        if loader is None:
            raise SystemExit(f"scripted_kernel: cannot load {module_name}")
        module = importlib.util.module_from_spec(loader)
        loader.loader.exec_module(module)
    else:
        module = importlib.import_module(module_name)
    obj = getattr(module, attr, None)
    if not isinstance(obj, ScriptedTool):
        raise SystemExit(f"scripted_kernel: {spec} is not a ScriptedTool")
    return obj


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripted_kernel",
                                     description="Scripted tools: bash scripts in a logic-only interpreter.")
    sub = parser.add_subparsers(dest="action", required=True)
    run = sub.add_parser("run", help="run a script (-c SCRIPT, a FILE, or - for standard input)")
    run.add_argument("-c", dest="command", metavar="SCRIPT", help="the script text")
    run.add_argument("file", nargs="?", help="a script file, or - to read the script from stdin")
    run.add_argument("--tools", metavar="MODULE:OBJECT", help="run against this ScriptedTool")
    run.add_argument("--tools-dir", metavar="DIR", help="add the self-describing executables of DIR")
    prompt = sub.add_parser("prompt", help="print the system prompt of a ScriptedTool")
    prompt.add_argument("--tools", metavar="MODULE:OBJECT", required=True)
    catalog_cmd = sub.add_parser("catalog", help="print the tools of a folder of self-describing executables")
    catalog_cmd.add_argument("directory")
    catalog_cmd.add_argument("--stub", action="store_true", help="set SHELLCLAW_STUB=1")
    args = parser.parse_args(argv)
    if args.action == "catalog":
        from .tools.executables import catalog
        sys.stdout.write(json.dumps(catalog(args.directory, args.stub), indent=2) + "\n")
        return 0
    if args.action == "prompt":
        sys.stdout.write(load_tools(args.tools).system_prompt())
        return 0
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
