"""The Jupyter kernel: an IPythonKernel whose cells are scripts.

An input transformer (first in IPython's cleanup chain) rewrites a script cell into one call
of the `%%scripted` magic, so the notebook and the extension share one code path and IPython
keeps doing execution counts, history, errors, widgets and interrupts. `%%python` cells run as
Python in the user namespace, where `@tool` functions register; other magics pass through.
"""
from __future__ import annotations

import inspect
import os
import re

from ipykernel.ipkernel import IPythonKernel

from . import __version__
from .commands import COMMANDS
from .shell.builtins import load as load_builtins
from .shell.errors import ShellSyntaxError
from .shell.parser import Parser
from .tools import catalog

TOOLS_ENV = "SCRIPTED_KERNEL_TOOLS"          # MODULE:OBJECT[,MODULE:OBJECT]: tools to preload
TOOLS_DIR_ENV = "SCRIPTED_KERNEL_TOOLS_DIR"  # a folder of self-describing executables


def cell_kind(code: str) -> str:
    first = next((ln for ln in code.splitlines() if ln.strip()), "")
    if first.split()[:1] == ["%%python"]:
        return "python"
    if first.startswith("%"):
        return "magic"
    return "script"


def route_cell(lines: list) -> list:
    """IPython cleanup transformer: a script cell becomes one `%%scripted` call."""
    src = "".join(lines)
    kind = cell_kind(src)
    if kind == "python":                 # keep line numbers: replace the first line, do not drop it
        i = next(i for i, ln in enumerate(lines) if ln.strip())
        return lines[:i] + ["# %%python\n"] + lines[i + 1:]
    if kind == "magic" or not src.strip():
        return lines
    return [f"get_ipython().run_cell_magic('scripted', '', {src!r})\n"]


class ScriptedKernel(IPythonKernel):
    implementation = "scripted_kernel"
    implementation_version = __version__
    banner = ("Scripted Tool kernel: cells are bash scripts against tools registered in Python; "
              "start a cell with %%python for Python (define tools with @tool there).")
    language_info = {"name": "bash", "version": "5.2", "mimetype": "text/x-sh",
                     "file_extension": ".sh", "pygments_lexer": "bash", "codemirror_mode": "shell",
                     "nbconvert_exporter": "script"}
    help_links = [{"text": "Scripted tools (README)", "url": "https://pypi.org/project/scripted-kernel/"},
                  {"text": "GNU Bash manual", "url": "https://www.gnu.org/software/bash/manual/"},
                  {"text": "jq manual", "url": "https://jqlang.github.io/jq/manual/"}]

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        from scripted_magic import load_ipython_extension
        load_ipython_extension(self.shell)
        self.shell.input_transformers_cleanup.insert(0, route_cell)
        self._preload_tools()

    def _preload_tools(self):
        """Tools from the environment: MODULE:OBJECT ScriptedTools and an executables folder."""
        from scripted_magic.magics import shell_state
        from .tools.loading import add_executables, load_tools
        target = shell_state(self.shell).tools.tool
        for spec in filter(None, os.environ.get(TOOLS_ENV, "").split(",")):
            source = load_tools(spec.strip())
            for name, registered in source.tools.items():
                if name not in target.tools:
                    target.register(registered.tool_def, registered.callback, registered.is_async)
        folder = os.environ.get(TOOLS_DIR_ENV)
        if folder:
            add_executables(target, folder)

    def _tool(self):
        from scripted_magic.magics import shell_state
        return shell_state(self.shell).tools.current()

    # ------------------------------------------------------------ completion and inspection

    async def do_complete(self, code, cursor_pos):
        cursor_pos = len(code) if cursor_pos is None else cursor_pos
        if cell_kind(code) != "script":
            res = super().do_complete(code.replace("%%python", "#%python", 1), cursor_pos)
            return await res if inspect.isawaitable(res) else res
        line = code[code.rfind("\n", 0, cursor_pos) + 1:cursor_pos]
        word = re.search(r"[^\s|;&()]*$", line).group(0)
        start = cursor_pos - len(word)
        segment = re.split(r"[|;&()]", line[:len(line) - len(word)])[-1].split()
        tool = self._tool()
        if word.startswith("$"):
            names = set(re.findall(r"\b([A-Za-z_][A-Za-z0-9_]*)=", code[:cursor_pos]))
            names |= set(re.findall(r"\bfor\s+([A-Za-z_][A-Za-z0-9_]*)\s", code[:cursor_pos]))
            candidates = [("$" + n, "variable") for n in sorted(names)]
        elif not segment or segment[-1] in ("then", "do", "else", "!", "xargs", "timeout"):
            functions = set(re.findall(r"^\s*(?:function\s+)?([A-Za-z_][\w-]*)\s*\(\)", code, re.M))
            candidates = ([(n, "function") for n in sorted(tool.tools)] +
                          [(n, "builtin") for n in sorted(set(load_builtins()) | {"help", "discover"})] +
                          [(n, "command") for n in sorted(COMMANDS)] +
                          [(n, "function") for n in sorted(functions)])
        elif word.startswith("-") and segment[0] in tool.tools:
            rows = catalog.flag_rows(tool.tools[segment[0]].tool_def)
            candidates = [(f"--{r['name']}", r["type"]) for r in rows]
        else:
            candidates = []
        hits = []
        for text, kind in candidates:
            if text.startswith(word) and text not in (h[0] for h in hits):
                hits.append((text, kind))
        return {"status": "ok", "matches": [h[0] for h in hits], "cursor_start": start,
                "cursor_end": cursor_pos,
                "metadata": {"_jupyter_types_experimental": [
                    {"start": start, "end": cursor_pos, "text": t, "type": k} for t, k in hits]}}

    async def do_inspect(self, code, cursor_pos, detail_level=0, omit_sections=()):
        if cell_kind(code) != "script":
            res = super().do_inspect(code, cursor_pos, detail_level, omit_sections)
            return await res if inspect.isawaitable(res) else res
        cursor_pos = len(code) if cursor_pos is None else cursor_pos
        left = re.search(r"[\w.-]*$", code[:cursor_pos]).group(0)
        right = re.match(r"[\w.-]*", code[cursor_pos:]).group(0)
        name = left + right
        registered = self._tool().tools.get(name)
        if registered is None:
            return {"status": "ok", "found": False, "data": {}, "metadata": {}}
        d = registered.tool_def
        return {"status": "ok", "found": True, "metadata": {},
                "data": {"text/plain": catalog.tool_help_text(d), "text/markdown": catalog.tool_markdown(d)}}

    async def do_is_complete(self, code):
        if cell_kind(code) != "script":
            res = super().do_is_complete(code)
            return await res if inspect.isawaitable(res) else res
        stripped = code.rstrip()
        if stripped.endswith(("\\", "|", "&&", "||")):
            return {"status": "incomplete", "indent": ""}
        parser = Parser(code)
        try:
            parser.parse_program()
        except ShellSyntaxError as e:
            return {"status": "incomplete", "indent": ""} if e.eof else {"status": "invalid"}
        if parser.lex.heredoc_at_eof:          # bash would read on until the delimiter
            return {"status": "incomplete", "indent": ""}
        return {"status": "complete"}
