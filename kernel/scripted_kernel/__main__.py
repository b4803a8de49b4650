"""Command line: `python -m scripted_kernel run [-c SCRIPT | FILE | -]`."""
from __future__ import annotations

import argparse
import json
import sys

from .base.limits import CancelToken
from .tools import ScriptedTool
from .tools.loading import ToolSpecError, apply_filesystem, load_tools


def _script_and_stdin(args) -> tuple:
    """The script (-c, a FILE, or standard input) and the standard input it gets; None for the
    script when its file cannot be read (the error printed)."""
    if args.command is not None:
        return args.command, "" if sys.stdin is None or sys.stdin.isatty() else sys.stdin.read()
    if args.file in (None, "-"):
        return sys.stdin.read(), ""
    try:
        with open(args.file, encoding="utf-8", errors="surrogateescape") as f:
            script = f.read()
    except OSError as e:
        print(f"scripted_kernel: {args.file}: {e.strerror}", file=sys.stderr)
        return None, ""
    return script, "" if sys.stdin is None or sys.stdin.isatty() else sys.stdin.read()


def _tool_for(args):
    if args.tools:
        tool = load_tools(args.tools)
    else:
        builder = ScriptedTool.builder("cli")
        if args.tools_dir:
            builder.executables(args.tools_dir)
        tool = builder.build()
    apply_filesystem(tool, args.fs)
    return tool


def _check(args) -> int:
    """`check`: the script's diagnostics, one a line; status 1 when there is any."""
    script, _ = _script_and_stdin(args)
    if script is None:
        return 127
    found = _tool_for(args).check(script)
    for diagnostic in found:
        print(diagnostic)
    return 1 if found else 0


def _run(args) -> int:
    script, script_stdin = _script_and_stdin(args)
    if script is None:
        return 127
    tool = _tool_for(args)

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


def launch_kernel(argv) -> int:
    """What Jupyter runs (kernel.json): the kernel on the given connection file."""
    from pathlib import Path
    if sys.path and (sys.path[0] == "" or Path(sys.path[0]) == Path.cwd()):
        del sys.path[0]            # a file in the notebook's folder must not shadow a module
    from ipykernel.kernelapp import IPKernelApp
    from .kernel import ScriptedKernel
    IPKernelApp.launch_instance(argv=argv, kernel_class=ScriptedKernel)
    return 0


def install_kernelspec(argv) -> int:
    """python -m scripted_kernel install [--user | --sys-prefix | --prefix P] [--name N]"""
    import tempfile
    from pathlib import Path
    from jupyter_client.kernelspec import KernelSpecManager
    parser = argparse.ArgumentParser(prog="python -m scripted_kernel install")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--user", action="store_true", help="install for the current user")
    where.add_argument("--sys-prefix", action="store_true", help="install into sys.prefix (the venv)")
    where.add_argument("--prefix", help="install under PREFIX/share/jupyter/kernels")
    parser.add_argument("--name", default="scripted")
    args = parser.parse_args(argv)
    source = Path(__file__).resolve().parents[2] / "share" / "jupyter" / "kernels" / "scripted"
    with tempfile.TemporaryDirectory() as tmp:
        spec = json.loads((source / "kernel.json").read_text()) if source.exists() else {
            "display_name": "Scripted Tool", "language": "bash", "interrupt_mode": "signal"}
        spec["argv"] = [sys.executable, "-m", "scripted_kernel", "-f", "{connection_file}"]
        (Path(tmp) / "kernel.json").write_text(json.dumps(spec, indent=1))
        for logo in ("logo-32x32.png", "logo-64x64.png"):
            if (source / logo).exists():
                (Path(tmp) / logo).write_bytes((source / logo).read_bytes())
        dest = KernelSpecManager().install_kernel_spec(
            tmp, args.name, user=args.user, prefix=sys.prefix if args.sys_prefix else args.prefix)
    print(f"Installed kernelspec {args.name} in {dest}")
    return 0


def run_notebook(argv) -> int:
    """Execute a notebook headlessly through its kernel and print each cell's output. Like
    `jupyter nbconvert --execute`, it stops at the first error of a cell not tagged
    `raises-exception` (status 1); a tagged cell's error is shown and the run goes on."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError
    parser = argparse.ArgumentParser(prog="python -m scripted_kernel notebook")
    parser.add_argument("path")
    parser.add_argument("--kernel", help="kernel name (default: the notebook's)")
    parser.add_argument("--output", help="also save the executed notebook here")
    args = parser.parse_args(argv)
    nb = nbformat.read(args.path, as_version=4)
    kernel = args.kernel or nb.metadata.get("kernelspec", {}).get("name", "")
    client = NotebookClient(nb, timeout=None, kernel_name=kernel)
    ran = set()
    client.on_cell_start = lambda cell, cell_index: ran.add(cell_index)
    stopped = None
    try:
        client.execute()
    except CellExecutionError as e:
        stopped = e
    for k, cell in enumerate(nb.cells, 1):
        if cell.cell_type != "code" or k - 1 not in ran:
            continue
        print(f"--- cell {k}: {cell.source.splitlines()[0] if cell.source else ''}")
        for out in cell.get("outputs", []):
            if out.output_type == "stream":
                (sys.stdout if out.name == "stdout" else sys.stderr).write(out.text)
            elif out.output_type in ("display_data", "execute_result"):
                print(out.data.get("text/plain", ""))
            elif out.output_type == "error":
                print(f"{out.ename}: {out.evalue}")
        sys.stdout.flush()
        sys.stderr.flush()
    if args.output:
        nbformat.write(nb, args.output)
    if stopped is not None:
        print(f"stopped: a cell without the raises-exception tag failed ({stopped.ename}: {stopped.evalue})",
              file=sys.stderr)
        return 1
    return 0


def serve_mcp(argv) -> int:
    """python -m scripted_kernel mcp --tools MODULE:OBJECT [--tools-dir DIR] [--discovery]
    [--http [--host H] [--port P] [--workers N] [--token T]] [--approve] [--task-after-seconds S]
    [--bash [--max-sessions N] [--max-sessions-bytes B] [--session-idle-seconds S]
            [--session-store URL [--session-max-bytes B]]]"""
    import os
    from .tools.mcp import serve
    from .tools.mcp_service import ServiceConfig
    from .tools.toolset import DiscoveryMode
    defaults = ServiceConfig()
    parser = argparse.ArgumentParser(prog="python -m scripted_kernel mcp")
    parser.add_argument("--tools", metavar="MODULE:OBJECT")
    parser.add_argument("--tools-dir", metavar="DIR")
    parser.add_argument("--discovery", action="store_true", help="compact prompt plus a <name>_discover tool")
    parser.add_argument("--http", action="store_true",
                        help="an HTTP service (MCP streamable HTTP at /mcp, /healthz, /readyz) instead of stdio")
    parser.add_argument("--host", default="127.0.0.1", help="bind address (beyond loopback a token is required)")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--workers", type=int, default=1,
                        help="worker processes (HTTP); one that dies is replaced")
    parser.add_argument("--token", default=os.environ.get("SCRIPTED_MCP_TOKEN", ""),
                        help="bearer token clients must send (default: $SCRIPTED_MCP_TOKEN)")
    parser.add_argument("--max-request-bytes", type=int, default=defaults.max_request_bytes,
                        help="HTTP: a request body past this is refused (413), however it is sent")
    parser.add_argument("--header-timeout-seconds", type=float, default=defaults.header_timeout_seconds,
                        help="HTTP: a request's head must arrive within this (else the connection is closed)")
    parser.add_argument("--body-timeout-seconds", type=float, default=defaults.body_timeout_seconds,
                        help="HTTP: a request's body must arrive within this (else 408)")
    parser.add_argument("--fs", choices=("none", "scratch"), default="none",
                        help="files for scripts: none (logic mode) or scratch (empty per call)")
    parser.add_argument("--bash", action="store_true",
                        help="serve a BashTool (persistent shell and virtual filesystem per session) instead")
    parser.add_argument("--max-sessions", type=int, default=defaults.max_sessions,
                        help="--bash: sessions kept at once (per worker, or in the store)")
    parser.add_argument("--max-sessions-bytes", type=int, default=defaults.max_sessions_bytes,
                        help="--bash: bytes of files and shell state of a worker's sessions together")
    parser.add_argument("--session-idle-seconds", type=float, default=defaults.session_idle_seconds,
                        help="--bash: a session unused this long is dropped (0: never)")
    parser.add_argument("--session-ttl-seconds", type=float, default=defaults.session_ttl_seconds,
                        help="--bash: a session handle is good for this long")
    parser.add_argument("--session-store", default=os.environ.get("SCRIPTED_MCP_SESSION_STORE", ""),
                        metavar="URL", help="--bash over HTTP: keep sessions in file:///path or "
                        "redis://host:port/db, so that any worker serves any session (key: "
                        "$SCRIPTED_MCP_SESSION_KEY)")
    parser.add_argument("--session-max-bytes", type=int, default=defaults.session_max_bytes,
                        help="--session-store: a session's snapshot past this is not kept (0: the limits')")
    parser.add_argument("--approve", action="store_true",
                        help="ask the client's user before each tool call (2026-07-28: input_required; 2025 "
                             "clients: elicitation, refused every call without it)")
    parser.add_argument("--task-after-seconds", type=float, default=defaults.task_after_seconds,
                        help="a call still running after this becomes a task, for clients of the tasks "
                             "extension (0: only when the client asks)")
    parser.add_argument("--task-ttl-seconds", type=float, default=defaults.task_ttl_seconds,
                        help="a finished task's result is kept this long")
    args = parser.parse_args(argv)
    config = ServiceConfig(tools=args.tools or "", tools_dir=args.tools_dir or "", discovery=args.discovery,
                           bash=args.bash, fs=args.fs, token=args.token, host=args.host,
                           max_request_bytes=args.max_request_bytes,
                           header_timeout_seconds=args.header_timeout_seconds,
                           body_timeout_seconds=args.body_timeout_seconds, max_sessions=args.max_sessions,
                           max_sessions_bytes=args.max_sessions_bytes,
                           session_idle_seconds=args.session_idle_seconds,
                           session_ttl_seconds=args.session_ttl_seconds,
                           session_store=args.session_store,
                           session_key=os.environ.get("SCRIPTED_MCP_SESSION_KEY", ""),
                           session_max_bytes=args.session_max_bytes, approve=args.approve,
                           task_after_seconds=args.task_after_seconds, task_ttl_seconds=args.task_ttl_seconds)
    if args.http:
        return _serve_http(config, args.port, args.workers)
    if args.bash:
        from .tools import BashTool
        serve(BashTool(), DiscoveryMode.ALL, session_tools=BashTool, options=config.server_options())
        return 0
    from .tools.mcp_service import scripted_tool
    serve(scripted_tool(config), DiscoveryMode.WITH_DISCOVERY if args.discovery else DiscoveryMode.ALL,
          options=config.server_options())
    return 0


def _serve_http(config, port: int, workers: int) -> int:
    """The ASGI service on uvicorn; the workers read their configuration from the environment."""
    import os
    from .tools import mcp_service
    try:
        config.check()
    except ValueError as e:
        print(f"scripted_kernel mcp: {e}", file=sys.stderr)
        return 2
    os.environ.update(config.to_env())
    return mcp_service.run_workers(config.host, port, workers, token_required=bool(config.token))


JUPYTER = ("IPython", "ipykernel", "ipywidgets", "jupyter_client", "nbclient", "nbformat")


def main(argv=None) -> int:
    try:
        return _main(sys.argv[1:] if argv is None else argv)
    except ToolSpecError as e:             # --tools that names no ScriptedTool
        raise SystemExit(str(e)) from None
    except ModuleNotFoundError as e:       # the kernel, `notebook` or `install` without Jupyter
        if (e.name or "").split(".")[0] not in JUPYTER:
            raise
        raise SystemExit(f"scripted_kernel: the notebook needs Jupyter ({e.name} is not installed): "
                         "pip install 'scripted-kernel[notebook]'") from None


def _main(argv: list) -> int:
    if argv[:1] == ["-f"] or any(a.startswith("--ConnectionFileMixin") for a in argv):
        return launch_kernel(argv)
    if argv[:1] == ["install"]:
        return install_kernelspec(argv[1:])
    if argv[:1] == ["notebook"]:
        return run_notebook(argv[1:])
    if argv[:1] == ["mcp"]:
        return serve_mcp(argv[1:])
    parser = argparse.ArgumentParser(prog="python -m scripted_kernel",
                                     description="Scripted tools: bash scripts in a logic-only interpreter.")
    sub = parser.add_subparsers(dest="action", required=True)
    run = sub.add_parser("run", help="run a script (-c SCRIPT, a FILE, or - for standard input)")
    check = sub.add_parser("check", help="check a script without running it: unknown commands and flags, "
                                         "wrong values, jq that does not compile, syntax errors")
    for command in (run, check):
        command.add_argument("-c", dest="command", metavar="SCRIPT", help="the script text")
        command.add_argument("file", nargs="?", help="a script file, or - to read the script from stdin")
        command.add_argument("--tools", metavar="MODULE:OBJECT", help="against this ScriptedTool")
        command.add_argument("--tools-dir", metavar="DIR", help="add the self-describing executables of DIR")
        command.add_argument("--fs", choices=("none", "scratch"), default="none",
                             help="files for the script: none (logic mode) or scratch (an empty virtual filesystem)")
    prompt = sub.add_parser("prompt", help="print the system prompt of a ScriptedTool")
    prompt.add_argument("--tools", metavar="MODULE:OBJECT", required=True)
    catalog_cmd = sub.add_parser("catalog", help="print the tools of a folder of self-describing executables")
    catalog_cmd.add_argument("directory")
    catalog_cmd.add_argument("--stub", action="store_true",
                             help="run the executables with SCRIPTED_KERNEL_STUB=1: canned data, no backends")
    # handled above, before this parser; listed so that --help names every command
    sub.add_parser("notebook", help="execute a notebook through its kernel (see notebook --help)")
    sub.add_parser("mcp", help="serve the tools over MCP, stdio or HTTP (see mcp --help)")
    sub.add_parser("install", help="install the Jupyter kernelspec (see install --help)")
    args = parser.parse_args(argv)
    if args.action == "catalog":
        from .tools.executables import catalog
        sys.stdout.write(json.dumps(catalog(args.directory, args.stub), indent=2) + "\n")
        return 0
    if args.action == "prompt":
        sys.stdout.write(load_tools(args.tools).system_prompt())
        return 0
    if args.action == "check":
        return _check(args)
    if args.action == "run":
        for stream in (sys.stdout, sys.stderr):
            try:
                # (typed TextIO, which has no reconfigure; a replaced stream may lack it)
                stream.reconfigure(errors="surrogateescape")  # type: ignore[union-attr]
            except AttributeError:
                pass
        return _run(args)
    return 2


if __name__ == "__main__":
    sys.exit(main())
