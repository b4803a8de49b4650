"""The Jupyter kernel: an IPythonKernel whose cells are scripts.

An input transformer (first in IPython's cleanup chain) rewrites a script cell into one call
of the `%%scripted` magic, so the notebook and the extension share one code path and IPython
keeps doing execution counts, history, errors, widgets and interrupts. `%%python` cells run as
Python in the user namespace, where `@tool` functions register; other magics pass through.
"""
from __future__ import annotations

import inspect
import os
import json
import re

from IPython.core.interactiveshell import InteractiveShell
from ipykernel.ipkernel import IPythonKernel

from . import __version__
from .commands import COMMANDS, usage_of
from .shell.api import ExecutionLimits, builtin_names, read_status
from .tools import catalog, manual

TOOLS_ENV = "SCRIPTED_KERNEL_TOOLS"          # MODULE:OBJECT[,MODULE:OBJECT]: tools to preload
TOOLS_DIR_ENV = "SCRIPTED_KERNEL_TOOLS_DIR"  # a folder of self-describing executables


def split_cell(code: str) -> tuple:
    """(kind, n): "python" for a `%%python` cell, "magic" for a cell magic or a cell of line
    magics only, else "script" whose first n lines are line magics (`%scripted limits ...`),
    run by IPython before the script that follows them."""
    lines = code.splitlines(keepends=True)
    first = next((ln.strip() for ln in lines if ln.strip()), "")
    if first.split()[:1] == ["%%python"]:
        return "python", 0
    if first.startswith("%%"):
        return "magic", 0
    n = 0
    for ln in lines:
        if ln.strip() and not ln.lstrip().startswith("%"):
            return "script", n
        n += 1
    return ("magic" if first else "script"), 0


def route_cell(lines: list) -> list:
    """IPython cleanup transformer: a script cell becomes one `%%scripted` call, after the
    line magics it starts with (kept as they are, for IPython to run)."""
    src = "".join(lines)
    kind, n = split_cell(src)
    if kind == "python":                 # keep line numbers: replace the first line, do not drop it
        i = next(i for i, ln in enumerate(lines) if ln.strip())
        return lines[:i] + ["# %%python\n"] + lines[i + 1:]
    if kind == "magic" or not src.strip():
        return lines
    head = src.splitlines(keepends=True)[:n]
    body = "".join(src.splitlines(keepends=True)[n:])
    head = [ln if ln.endswith("\n") else ln + "\n" for ln in head]
    return head + [f"get_ipython().run_cell_magic('scripted', '', {body!r})\n"]


class ScriptedKernel(IPythonKernel):
    shell: InteractiveShell      # (a trait that may be None; IPythonKernel.__init__ makes it)
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

    def _script_at(self, code: str, cursor_pos: int):
        """(script, offset) when the cursor is in a cell's script part, else None: the script
        starts after the line magics that lead the cell."""
        kind, n = split_cell(code)
        if kind != "script":
            return None
        offset = sum(len(ln) for ln in code.splitlines(keepends=True)[:n])
        if cursor_pos < offset:
            return None
        return code[offset:], offset

    async def do_complete(self, code, cursor_pos):
        cursor_pos = len(code) if cursor_pos is None else cursor_pos
        found = self._script_at(code, cursor_pos)
        if found is None:
            res = super().do_complete(code.replace("%%python", "#%python", 1), cursor_pos)
            return await res if inspect.isawaitable(res) else res
        script, offset = found
        start, hits = complete_script(script, cursor_pos - offset, self._tool(), self._files())
        start += offset
        return {"status": "ok", "matches": [h[0] for h in hits], "cursor_start": start,
                "cursor_end": cursor_pos,
                "metadata": {"_jupyter_types_experimental": [
                    {"start": start, "end": cursor_pos, "text": t, "type": k} for t, k in hits]}}

    def _files(self):
        """The session's filesystem and the directory a new cell starts in."""
        from scripted_magic.magics import shell_state
        state = shell_state(self.shell)
        cwd = state.session.shell_session.cwd if state.session is not None else None
        return state.fs, cwd or getattr(state.fs, "home", "/home/user")

    async def do_inspect(self, code, cursor_pos, detail_level=0, omit_sections=()):
        cursor_pos = len(code) if cursor_pos is None else cursor_pos
        if self._script_at(code, cursor_pos) is None:
            res = super().do_inspect(code, cursor_pos, detail_level, omit_sections)
            return await res if inspect.isawaitable(res) else res
        left_match = re.search(r"[\w.\[:-]*$", code[:cursor_pos])
        right_match = re.match(r"[\w.\]-]*", code[cursor_pos:])
        assert left_match is not None and right_match is not None   # (each matches the empty string)
        left, right = left_match.group(0), right_match.group(0)
        name = left + right
        tool = self._tool()
        registered = tool.tools.get(name)
        if registered is not None:
            from scripted_magic.widgets import tool_page
            return {"status": "ok", "found": True, "metadata": {}, "data": tool_page(registered.tool_def)}
        text = manual.page(name, tool)
        if not text:
            return {"status": "ok", "found": False, "data": {}, "metadata": {}}
        return {"status": "ok", "found": True, "metadata": {}, "data": {"text/plain": text}}

    async def do_is_complete(self, code):
        kind, n = split_cell(code)
        if kind != "script":
            res = super().do_is_complete(code)
            return await res if inspect.isawaitable(res) else res
        return script_completeness("".join(code.splitlines(keepends=True)[n:]), self._tool().limits)


# A console asks is_complete at every Enter (JupyterLab's waits 250 ms, then runs the cell
# anyway), so its parse is bounded by size and by time, and not only by the run's limits: some
# texts cost far more to parse than their size suggests (`let x[` repeated takes the pure-Python
# parser 0.34 s for 4 KiB and 1.9 s for 8 KiB; `x[$((` repeated, 35 s for 1 MiB). The clock
# stops most of them, at the parser's next check; 4 KiB keeps the worst found under 0.2 s.
IS_COMPLETE_CHARS = 4 * 1024
IS_COMPLETE_SECONDS = 0.1


def script_completeness(code: str, limits: ExecutionLimits, seconds: float = IS_COMPLETE_SECONDS) -> dict:
    """The is_complete reply for a script: "incomplete" where bash would read on (an open
    quote, block or heredoc, a trailing `|`, `&&` or `\\`), "invalid" for a syntax error or a
    script the run would refuse (max_script_bytes, max_parser_depth), else "complete". A script
    longer than IS_COMPLETE_CHARS, or whose parse takes more than `seconds`, is "complete":
    the front-end then sends it to run (every front-end runs a cell on any answer but
    "incomplete"), and the run, under the session's limits, says what is wrong with it. At
    worst a console runs a long cell that should have gone on to a new line."""
    if code.rstrip().endswith(("\\", "|", "&&", "||")):
        return {"status": "incomplete", "indent": ""}
    if len(code) > limits.max_script_bytes or (      # as the run measures it (shell/interpreter.py)
            not code.isascii() and len(code.encode("utf-8", "surrogateescape")) > limits.max_script_bytes):
        return {"status": "invalid"}
    if len(code) > IS_COMPLETE_CHARS:
        return {"status": "complete"}
    status = read_status(code, limits.max_parser_depth, seconds)
    return {"status": status, "indent": ""} if status == "incomplete" else {"status": status}


# words that start a command where a command may start
_COMMAND_POSITION = ("then", "do", "else", "elif", "if", "while", "until", "!", "xargs", "timeout",
                     "command", "builtin", "exec", "time", "{", "env", "sudo")
_NAME_TAKERS = {"help": "names", "man": "names", "type": "names", "which": "names", "command": "names"}
KEYWORDS = ("if", "then", "elif", "else", "fi", "for", "in", "do", "done", "while", "until", "case",
            "esac", "select", "function", "time", "[[", "]]", "{", "}", "!")


def complete_script(script: str, cursor: int, tool, files) -> tuple:
    """(start, [(text, type)]): what Tab offers at `cursor` in a script, as bash does: command
    names (tools, builtins, keywords, text commands, the cell's functions) where a command
    starts; a command's flags after `-`; `$NAME` variables; paths of the session's files,
    directories with a `/`."""
    line = script[script.rfind("\n", 0, cursor) + 1:cursor]
    word_match = re.search(r"[^\s|;&()<>]*$", line)
    assert word_match is not None       # (it matches the empty string at the end)
    word = word_match.group(0)
    start = cursor - len(word)
    before = line[:len(line) - len(word)]
    segment = re.split(r"\|\||&&|[|;&()]", before)[-1].split()
    if word.startswith("$"):
        names = set(re.findall(r"\b([A-Za-z_][A-Za-z0-9_]*)=", script[:cursor]))
        names |= set(re.findall(r"\bfor\s+([A-Za-z_][A-Za-z0-9_]*)\s", script[:cursor]))
        names |= set(re.findall(r"\b(?:read|local|declare|export)\s+(?:-\w+\s+)*([A-Za-z_]\w*)", script[:cursor]))
        shell_names = {"HOME", "PWD", "OLDPWD", "USER", "PATH", "RANDOM", "LINENO", "BASH_VERSION"}
        cands = [("$" + n, "variable") for n in sorted(names) + sorted(shell_names - names)]
        brace = word.startswith("${")
        if brace:
            cands = [("${" + n[1:] + "}", "variable") for n, _ in cands]
        return start, _hits(cands, word)
    command_position = not segment or segment[-1] in _COMMAND_POSITION
    if command_position and "/" not in word:
        functions = set(re.findall(r"^\s*(?:function\s+)?([A-Za-z_][\w-]*)\s*\(\)", script, re.M))
        functions |= set(re.findall(r"^\s*function\s+([A-Za-z_][\w-]*)", script, re.M))
        cands = ([(n, "function") for n in sorted(tool.tools)] +
                 [(n, "keyword") for n in KEYWORDS] +
                 [(n, "builtin") for n in sorted(set(builtin_names()) - {"help_bash", "set_prompt"}
                                                 | {"help", "discover"})] +
                 [(n, "command") for n in sorted(set(tool.commands()) - set(tool.tools))] +
                 [(n, "function") for n in sorted(functions)])
        return start, _hits(cands, word)
    name = segment[0] if segment else ""
    if word.startswith("-") and "=" not in word:
        return start, _hits(_flags(name, tool), word)
    if name in tool.tools:              # a flag's value: its choices, where the schema lists them
        flag, equals, _ = word.partition("=") if word.startswith("--") else (segment[-1], "", "")
        choices = [f"{flag}={c}" if equals else c for c in _choices(tool.tools[name].tool_def, flag)]
        if choices:
            return start, _hits([(c, "choice") for c in choices], word)
    if name in _NAME_TAKERS and len(segment) == 1:
        cands = ([(n, "function") for n in sorted(tool.tools)] +
                 [(n, "builtin") for n in sorted(set(manual.BUILTINS) | set(manual.KEYWORDS))] +
                 [(n, "command") for n in sorted(COMMANDS)])
        return start, _hits(cands, word)
    # a path: after `--flag=` or a redirection the path starts later in the word
    cut = max(word.rfind("="), -1) + 1
    at = start + cut
    return at, _paths(word[cut:], *files)


def _hits(candidates, word):
    hits: list[tuple[str, str]] = []     # (text, kind)
    for text, kind in candidates:
        if text.startswith(word) and text not in (h[0] for h in hits):
            hits.append((text, kind))
    return hits


def _flags(name: str, tool) -> list:
    if name in tool.tools:
        return [(f"--{r['name']}", r["type"]) for r in catalog.flag_rows(tool.tools[name].tool_def)]
    usage = usage_of(name)
    if usage is not None:
        flags = []
        for line in usage.options:          # "-n, --lines=NUM   description": the part before the gap
            head = line.strip().split("  ")[0]
            flags += [(flag, "flag") for flag in re.findall(r"(?<![\w-])(--?[A-Za-z0-9][\w-]*)", head)]
        flags += [("--help", "flag"), ("--version", "flag")]
        return flags
    return [(f, "flag") for f in manual.builtin_flags(name)]


def _choices(tool_def, flag: str) -> list:
    """The values a tool's `--flag` takes when its schema lists them (an enum, true/false)."""
    for row in catalog.flag_rows(tool_def):
        if f"--{row['name']}" == flag:
            if row["enum"]:
                return [v if isinstance(v, str) else json.dumps(v) for v in row["enum"] if v is not None]
            return ["true", "false"] if row["type"] == "boolean" else []
    return []


def _paths(word: str, fs, cwd: str) -> list:
    """Entries of the session's filesystem that complete `word` (relative to cwd, `~` is the
    home directory); directories end in `/`."""
    if fs is None or not hasattr(fs, "listdir"):
        return []
    home = getattr(fs, "home", "/home/user")
    directory, slash, prefix = word.rpartition("/")
    typed_dir = directory + slash
    if word.startswith("~"):
        base = home + directory[1:] if slash else None
        if base is None:
            return [("~/", "path")] if "~/".startswith(word) else []
    elif word.startswith("/"):
        base = directory or "/"
    else:
        base = cwd.rstrip("/") + "/" + directory if slash else cwd
    try:
        names = sorted(fs.listdir(base))
    except Exception:                # no such directory, not one, no permission
        return []
    hits = []
    for name in names:
        if not name.startswith(prefix) or (name.startswith(".") and not prefix.startswith(".")):
            continue
        try:
            is_dir = fs.stat(base.rstrip("/") + "/" + name).is_dir
        except Exception:
            is_dir = False
        hits.append((typed_dir + name + ("/" if is_dir else ""), "path"))
    return hits
