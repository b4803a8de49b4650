"""`%%scripted` and `%scripted`: run scripts against tools from an IPython session.

The Jupyter kernel routes every script cell here too, so the notebook and the magic share one
code path: streaming output, errors that stop Run All, help/discover widgets, traces.
"""
from __future__ import annotations

import html
import json
import os
import re
import sys
from dataclasses import dataclass, field
from typing import Optional

from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import display

from scripted_kernel import MemoryFs, ScriptedTool
from scripted_kernel.tools.definitions import REGISTRY

from .widgets import rich_bundle

_LONE_BROWSER = re.compile(r"\A\s*(help|discover)((?:[ \t]+[^\s|;&<>()`$]+)*)[ \t]*;?\s*\Z")


class ScriptError(Exception):
    """A script that ended with a non-zero status: the cell fails, Run All stops here."""

    def __init__(self, status: int, stderr_tail: str = ""):
        super().__init__(f"exit status {status}")
        self.status = status
        self.stderr_tail = stderr_tail

    def _render_traceback_(self):
        lines = [line for line in self.stderr_tail.splitlines() if line.strip()][-5:]
        return lines + [f"\x1b[0;31mScriptError: exit status {self.status}\x1b[0m"]


class MagicUsageError(Exception):
    """The magic was misused (an unknown tool, --json on output that is not JSON): one line,
    no traceback from inside the package."""

    def _render_traceback_(self):
        return [f"{type(self).__name__}: {self}"]


class ScriptInterrupted(KeyboardInterrupt):
    def _render_traceback_(self):
        return ["\x1b[0;31mInterrupted\x1b[0m (the output so far is kept)"]


@dataclass
class ScriptResult:
    """What `%%scripted --out VAR` stores."""
    stdout: str
    stderr: str
    exit_code: int
    trace: list = field(default_factory=list)

    def json(self):
        return json.loads(self.stdout)


class NotebookTools:
    """The tools of a session: every @tool-decorated function, plus tools added with
    `tools.add_tool(...)`/`tools.register(...)` on the `tools` object in the namespace."""

    def __init__(self, fs: MemoryFs):
        self.tool = ScriptedTool("notebook", "Tools defined in this notebook", filesystem=fs)

    def current(self) -> ScriptedTool:
        for decorated in list(REGISTRY):
            known = self.tool.tools.get(decorated.tool_def.name)
            if known is None:
                self.tool.add(decorated)
            elif known.callback is not decorated.callback:      # redefined in a later cell
                del self.tool.tools[decorated.tool_def.name]
                self.tool.add(decorated)
        return self.tool


def _json_document(text: str):
    text = text.strip()
    if not text or text[0] not in "{[":
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def _trace_table(trace) -> dict:
    rows = "".join(f"<tr><td>{e.name}</td><td><code>{json.dumps(e.params)}</code></td><td>{e.exit_code}</td>"
                   f"<td>{e.duration_ms:.2f} ms</td></tr>" for e in trace)
    text = "".join(f"{e.name:16} {json.dumps(e.params):40} {e.exit_code:3} {e.duration_ms:8.2f} ms\n"
                   for e in trace) or "(no tool calls)\n"
    return {"text/plain": "tool trace:\n" + text,
            "text/html": "<table><thead><tr><th>tool</th><th>params</th><th>status</th><th>duration</th>"
                         f"</tr></thead><tbody>{rows}</tbody></table>"}


def run_script(shell, code: str, tool: Optional[ScriptedTool] = None, *, trace: bool = False,
               env: Optional[dict] = None, no_raise: bool = False) -> ScriptResult:
    """Run one cell's script: output streams to the front-end as it is produced."""
    state = shell_state(shell)
    tool = tool or state.tools.current()
    widgets = getattr(shell, "kernel", None) is not None
    lone = _LONE_BROWSER.match(code)
    if lone and not env:
        shown = _show_browser(tool, lone.group(1), lone.group(2).split(), widgets)
        if shown:
            return ScriptResult("", "", 0)
    saved_env = tool.env
    if env:
        tool.env = {**tool.env, **env}
    out_chunks, err_chunks = [], []

    def stream(name, text):
        (out_chunks if name == "stdout" else err_chunks).append(text)
        target = sys.stdout if name == "stdout" else sys.stderr
        target.write(text)

    try:
        response = tool.execute(code, on_output=stream)
    except KeyboardInterrupt:
        raise ScriptInterrupted() from None
    finally:
        tool.env = saved_env
    # no explicit flush: the kernel flushes the streams before display() and before its reply
    result = ScriptResult("".join(out_chunks), "".join(err_chunks), response.exit_code, list(tool.last_trace))
    if widgets:
        document = _json_document(result.stdout)
        if document is not None:
            summary = f"<JSON {type(document).__name__} of {len(document)} items>"
            display({"application/json": document, "text/plain": summary}, raw=True)
    if trace or state.trace:
        display(_trace_table(result.trace), raw=True)
    if response.error == "cancelled":
        raise ScriptInterrupted()
    if result.exit_code and not no_raise:
        raise ScriptError(result.exit_code, result.stderr)
    return result


def _show_browser(tool, command: str, args: list, widgets: bool) -> bool:
    """`help` / `discover ...` as a whole cell: the tool browser instead of text."""
    query = category = tag = ""
    if command == "help":
        if args and args != ["--list"]:
            return False                 # help TOOL stays text
    else:
        if len(args) != 2 or args[0] not in ("--search", "--category", "--tag"):
            return False
        key, value = args
        query, category, tag = (value if key == "--search" else "", value if key == "--category" else "",
                                value if key == "--tag" else "")
    display(rich_bundle(tool, query, category, tag, widgets=widgets), raw=True)
    return True


class _State:
    """A session's tools and files: every cell runs a fresh interpreter, but files written
    by one cell are there for the next (one MemoryFs per session)."""

    def __init__(self):
        self.fs = MemoryFs()
        self.tools = NotebookTools(self.fs)
        self.trace = False

    def reset_files(self):
        self.fs = MemoryFs()
        self.tools.tool.filesystem = self.fs


def shell_state(shell) -> _State:
    state = getattr(shell, "_scripted_state", None)
    if state is None:
        state = _State()
        shell._scripted_state = state
    return state


@magics_class
class ScriptedMagics(Magics):
    @magic_arguments()
    @argument("tool", nargs="?", help="a ScriptedTool in the namespace (default: the @tool functions)")
    @argument("--trace", action="store_true", help="show the tool calls after the cell")
    @argument("--out", metavar="VAR", help="store the result (stdout, stderr, exit_code, trace) in VAR")
    @argument("--json", action="store_true", help="parse stdout as JSON (into --out VAR, or display it)")
    @argument("--env", metavar="NAME=VALUE", action="append", default=[],
              help="an environment variable for the script; VALUE may be $python_variable")
    @argument("--no-raise", action="store_true", help="do not fail the cell on a non-zero status")
    @cell_magic("scripted")
    def scripted_cell(self, line, cell):
        """Run the cell as a bash script against tools registered in Python."""
        if not line.strip():                 # every kernel cell comes this way: no options
            run_script(self.shell, cell)
            return
        args = parse_argstring(self.scripted_cell, line)
        tool = None
        if args.tool:
            tool = self.shell.user_ns.get(args.tool)
            if not isinstance(tool, ScriptedTool):
                raise MagicUsageError(f"{args.tool} is not a ScriptedTool in the namespace")
        env = {}
        for pair in args.env:
            name, eq, value = pair.partition("=")
            if not eq:
                raise ValueError(f"--env expects NAME=VALUE, got {pair!r}")
            if value.startswith("$") and value[1:] in self.shell.user_ns:
                value = self.shell.user_ns[value[1:]]
            env[name] = str(value)
        result = run_script(self.shell, cell, tool, trace=args.trace, env=env or None,
                            no_raise=args.no_raise or bool(args.out))
        if args.json:
            parsed = _json_document(result.stdout) if result.stdout.strip() else None
            if parsed is None and result.stdout.strip():
                try:
                    parsed = json.loads(result.stdout)
                except ValueError as e:
                    raise MagicUsageError(f"--json: the output is not JSON ({e})") from None
            if args.out:
                self.shell.user_ns[args.out] = parsed
            else:
                display({"application/json": parsed, "text/plain": json.dumps(parsed, indent=2)}, raw=True)
        elif args.out:
            self.shell.user_ns[args.out] = result
            if result.exit_code and not args.no_raise:
                raise ScriptError(result.exit_code, result.stderr)

    @line_magic("scripted")
    def scripted_line(self, line):
        """%scripted help|discover ... | prompt [TOOL] | trace on|off | files | mount HOST_DIR [AT]
        | fs reset"""
        words = line.split()
        state = shell_state(self.shell)
        if not words:
            print("usage: %scripted help [--list] | discover --search TEXT | prompt [TOOL] | "
                  "trace on|off | files | mount HOST_DIR [AT] | fs reset")
            return
        if words[0] in ("files", "mount", "fs"):
            self._files_command(state, words)
            return
        tool = state.tools.current()
        if len(words) > 1 and words[0] == "prompt":
            candidate = self.shell.user_ns.get(words[1])
            if not isinstance(candidate, ScriptedTool):
                raise MagicUsageError(f"{words[1]} is not a ScriptedTool in the namespace")
            tool = candidate
        if words[0] == "prompt":
            print(tool.system_prompt(), end="")
        elif words[0] == "trace":
            state.trace = len(words) > 1 and words[1] == "on"
            print(f"tool trace {'on' if state.trace else 'off'}")
        elif words[0] in ("help", "discover"):
            widgets = getattr(self.shell, "kernel", None) is not None
            if not _show_browser(tool, words[0], words[1:], widgets):
                run_script(self.shell, line, tool, no_raise=True)
        else:
            run_script(self.shell, line, tool)


    def _files_command(self, state: _State, words: list):
        """The session's files: list them, mount a host folder read-only, or empty them."""
        if words[0] == "files":
            widgets = getattr(self.shell, "kernel", None) is not None
            display(files_bundle(state.fs, widgets), raw=True)
        elif words[0] == "mount":
            if len(words) < 2:
                print("usage: %scripted mount HOST_DIR [AT]")
                return
            host = os.path.expanduser(words[1])
            at = words[2] if len(words) > 2 else "/mnt/" + os.path.basename(os.path.abspath(host))
            try:
                state.fs.mount(at, host, read_only=True)
            except (ValueError, OSError) as e:
                print(f"mount: {e}", file=sys.stderr)
                return
            print(f"{host} is mounted read-only at {at}")
        elif words[1:] == ["reset"]:
            state.reset_files()
            print("files emptied")
        else:
            print("usage: %scripted fs reset")


def files_bundle(fs: MemoryFs, widgets: bool) -> dict:
    """The session's files as a table (HTML in a notebook) with a plain-text fallback."""
    rows = [(path, st) for path, st in fs.tree().items()]
    def size(st):
        return "" if st.kind == "d" else f"{st.size} B"
    text = "\n".join(f"{path}{'/' if st.kind == 'd' else ''}  {size(st)}".rstrip() for path, st in rows)
    bundle = {"text/plain": text or "(no files)"}
    if widgets:
        cells = "".join(f"<tr><td><code>{html.escape(path)}{'/' if st.kind == 'd' else ''}</code></td>"
                        f"<td style='text-align:right'>{size(st)}</td></tr>" for path, st in rows)
        bundle["text/html"] = (f"<table class='scripted-files'><tr><th>path</th><th>size</th></tr>{cells}</table>"
                               if rows else "<p>(no files)</p>")
    return bundle


def load(ipython):
    ipython.register_magics(ScriptedMagics)
    state = shell_state(ipython)
    from scripted_kernel import tool as tool_decorator
    ipython.push({"tool": tool_decorator, "tools": state.tools.tool})
