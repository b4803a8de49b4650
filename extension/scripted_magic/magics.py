"""`%%scripted` and `%scripted`: run scripts against tools from an IPython session.

The Jupyter kernel routes every script cell here too, so the notebook and the magic share one
code path: streaming output, errors that stop Run All, help/discover widgets, traces.
"""
from __future__ import annotations

import dataclasses
import json
import os
import re
import sys
import threading
from dataclasses import dataclass, field
from typing import Optional

from IPython.core.interactiveshell import InteractiveShell
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython import get_ipython
from IPython.display import clear_output, display

from scripted_kernel import Deny, MemoryFs, ScriptedTool
from scripted_kernel.tools.containment import left_running
from scripted_kernel.tools.definitions import REGISTRY
from scripted_kernel.tools.scripted_tool import Session

from . import frontend
from .approval import ALLOW, DENIED_REASON, Approval, describe
from .jsonview import MAX_TREE_CHARS, json_bundle, json_result
from .limits import hint as limit_hint, notebook_limits
from .markup import html, join
from .pending import AfterReplay, DecisionRefused, PausedCell, PausedView, PendingRuns, pause_line_start
from .session_history import NotebookHistory
from .tracebacks import FailureRecorder, format_exception
from .widgets import rich_bundle, tool_page

_LONE_BROWSER = re.compile(r"\A\s*(help|discover)((?:[ \t]+[^\s|;&<>()`$]+)*)[ \t]*;?\s*\Z")
_LONE_MAN = re.compile(r"\A\s*man[ \t]+([^\s|;&<>()`$]+)[ \t]*;?\s*\Z")
# what `clear` prints (ncurses' clear for xterm); a notebook clears the cell's output instead
_CLEAR = re.compile(r"(?:\x1b\[H)?\x1b\[2J(?:\x1b\[3J)?|\x1bc")


def _colours(shell=None) -> bool:
    """Whether to colour: not with `--colors=NoColor`, nor in a terminal session whose output
    is not a terminal."""
    shell = shell or get_ipython()
    scheme = str(getattr(shell, "colors", "NoColor"))
    return not (scheme.lower() == "nocolor" or (getattr(shell, "kernel", None) is None and not sys.stdout.isatty()))


def _red(text: str) -> str:
    """`text` in IPython's error colour, when colours are on."""
    return f"\x1b[0;31m{text}\x1b[0m" if _colours() else text


STDERR_KEPT = 64 * 1024     # characters of a failed script's stderr its ScriptError keeps (the last ones)


class ScriptError(Exception):
    """A script that ended with a non-zero status: the cell fails, Run All stops here. Its
    stderr was already shown as it streamed, so the error names only the status; `stderr` is
    its end (IPython keeps the last error, whatever the script wrote)."""

    def __init__(self, status: int, stderr: str = "", hint: str = ""):
        super().__init__(f"exit status {status}")
        self.status = status
        self.stderr = stderr[-STDERR_KEPT:]
        self.hint = hint          # a limit stopped the script: which, and the magic that raises it

    def _render_traceback_(self):
        return [_red(f"ScriptError: exit status {self.status}")] + ([self.hint] if self.hint else [])


class MagicUsageError(Exception):
    """The magic was misused (an unknown tool, --json on output that is not JSON): one line,
    no traceback from inside the package."""

    def _render_traceback_(self):
        return [_red(f"{type(self).__name__}: {self}")]


class ScriptInterrupted(KeyboardInterrupt):
    """The user interrupted the cell. `left`: the tools whose callbacks were still running
    (Python cannot stop a thread: they go on, and the notebook says so)."""

    def __init__(self, left: Optional[list] = None):
        super().__init__()
        self.left = left or []

    def _render_traceback_(self):
        line = _red("Interrupted") + " (the output so far is kept)"
        return [line + ("; " + left_running(self.left) if self.left else "")]


class ScriptPaused(Exception):
    """The cell's run waits before a tool call left for a decision later: the cell stops here
    (Run All too), and the view below its output takes the decision."""

    def __init__(self, call, reason: str):
        super().__init__(f"{describe(call)} waits for a decision ({reason})")
        self.call = call

    def _render_traceback_(self):
        return [_red(f"Paused: {self}") + "; Allow or Deny it above"]


class _CallsInFlight:
    """The tool calls of one cell that started and have not returned, seen through a last
    before_tool hook and an after_tool hook: what an interrupt leaves running."""

    def __init__(self):
        self._names: list = []
        self._lock = threading.Lock()

    def started(self, call):
        with self._lock:
            self._names.append(call.name)

    def returned(self, call, _result):
        with self._lock:
            if call.name in self._names:       # not there when an earlier hook denied the call
                self._names.remove(call.name)

    def names(self) -> list:
        with self._lock:
            return list(dict.fromkeys(self._names))


_CELL_ERRORS = (ScriptError, ScriptInterrupted, MagicUsageError, ScriptPaused)


def _bare(error: BaseException) -> BaseException:
    """`error` without the frames it was raised through, nor the exception it was raised while
    handling. IPython keeps the last error with its traceback, in a reference cycle (run_code's
    result, the error, its traceback, run_code's frame) that only the collector's rare full
    pass frees; the frames under a magic hold the cell's output (the response, the result: up
    to max_output_bytes each), so every failing cell that printed much kept it (64 MiB of
    output a cell grew the kernel by 200 MB a cell until it died). The error shows one line
    (_render_traceback_), which needs none of them."""
    error.__context__ = None
    return error.with_traceback(None)


@dataclass
class ScriptResult:
    """What `%%scripted --result VAR` stores."""
    stdout: str
    stderr: str
    exit_code: int
    trace: list = field(default_factory=list)
    error: str = ""            # what stopped the script: "timeout", "limit:max_commands", ... ("" if none)
    value: object = field(default=None, repr=False)     # the JSON document the cell printed, if any

    def json(self):
        return json.loads(self.stdout)


def _clear(sh, argv):
    """`clear`: the terminal's clear sequence, which a notebook turns into clearing the cell."""
    sh.out("\x1b[H\x1b[2J" + ("" if "-x" in argv[1:] else "\x1b[3J"))
    return 0


class _NotebookTool(ScriptedTool):
    """The session's ScriptedTool: the notebook's limits (no wall clock; see limits.py), tool
    errors unsanitised for their authors (`%scripted sanitize on` shows what a model sees), a
    `clear` command, each result checked against its tool's result shape (an author sees a
    wrong shape at once). Every fresh shell starts with the carried parameters (the variables
    set by `# Parameters` cells)."""

    def __init__(self, fs: MemoryFs):
        super().__init__("notebook", "Tools defined in this notebook", filesystem=fs,
                         limits=getattr(fs, "limits", None) or notebook_limits(), sanitize_errors=False)
        self.validate_output = True
        self.parameters: dict = {}

    def commands(self) -> dict:
        table = super().commands()
        table.setdefault("clear", _clear)
        return table

    def _shell_config(self, table: dict, journal):
        """ScriptedTool's, with the carried parameters for every shell that starts."""
        return dataclasses.replace(super()._shell_config(table, journal), start_variables=self.parameters)

    def paused_call(self, continuation: bytes) -> tuple:
        """(the ToolCall a paused run waits before, the reason its hook gave), as the
        continuation says: ContinuationError for one that is damaged. The notebook's
        continuations are not signed: they stay in the kernel, or go into the user's own
        snapshot file with the session (pending_io.py), and a key of the kernel's would not
        outlive a restart; a key kept in the file would sign nothing (SECURITY.md, approval)."""
        loaded = self._load_continuation(continuation, None)
        return loaded.pending, loaded.reason

    def resume_in_cell(self, continuation: bytes, decision, on_output, session: Optional[Session]):
        """ScriptedTool.resume, with what it does not take: the output streamed to `on_output`
        (the cell's view) and the run in `session`'s shell (`%scripted session on`)."""
        loaded = self._load_continuation(continuation, None)
        loaded.journal.decision = decision
        return self._replay(loaded, on_output, session.shell_session if session is not None else None)


class NotebookTools:
    """The tools of a session: every @tool-decorated function, plus tools added with
    `tools.add_tool(...)`/`tools.register(...)` on the `tools` object in the namespace."""

    def __init__(self, fs: MemoryFs):
        self.tool = _NotebookTool(fs)

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
    """The JSON document `text` holds, or None: for text that is not one, or is longer than
    MAX_TREE_CHARS (shown as text, and not kept as the cell's Out[n]: parsed, a document takes
    up to twenty times its text's size, and IPython keeps every Out[n])."""
    text = text.strip()
    if not text or text[0] not in "{[" or len(text) > MAX_TREE_CHARS:
        return None
    try:
        return json.loads(text)
    except (ValueError, RecursionError):       # deeper than Python's stack allows
        return None


TRACE_ROWS = 200      # tool calls a trace table shows; the result's trace (--result VAR) has them all


def _trace_table(trace) -> dict:
    """The cell's tool calls as a table: the first TRACE_ROWS of them, then how many more."""
    shown = trace[:TRACE_ROWS]
    more = f"... {len(trace) - TRACE_ROWS} more tool calls\n" if len(trace) > TRACE_ROWS else ""
    rows = join(html("<tr><td>{}</td><td><code>{}</code></td><td>{}</td><td>{}</td></tr>",
                     e.name, json.dumps(e.params), e.exit_code, f"{e.duration_ms:.2f} ms") for e in shown)
    text = "".join(f"{e.name:16} {json.dumps(e.params):40} {e.exit_code:3} {e.duration_ms:8.2f} ms\n"
                   for e in shown) or "(no tool calls)\n"
    return {"text/plain": "tool trace:\n" + text + more,
            "text/html": html("<table><thead><tr><th>tool</th><th>params</th><th>status</th><th>duration</th>"
                              "</tr></thead><tbody>{}</tbody></table>{}", rows,
                              html("<p>{}</p>", more) if more else "")}


ORDERED_SWITCHES = 500       # switches between stdout and stderr shown in order, per cell
JSON_HOLD_ENV = "SCRIPTED_JSON_HOLD_SECONDS"   # how long a notebook holds back JSON-looking stdout


def _json_hold_seconds() -> float:
    try:
        return float(os.environ.get(JSON_HOLD_ENV, "0.5"))
    except ValueError:
        return 0.5


class _CellOutput:
    """Where a cell's output goes while it runs. stderr always streams. stdout either streams
    ("stream"), is only collected ("capture": --out and --json show it their own way), or
    ("json", the notebook's default) is held back while it could be one JSON document and the
    cell is younger than half a second (JSON_HOLD_ENV), so that a quick JSON result is shown once, as a
    tree, instead of as text and then as a tree. Nothing is kept but what is held back: the
    engine's response has the whole output (within max_output_bytes), and a second copy here
    doubled what a cell's output cost the kernel."""

    def __init__(self, stdout_mode: str, in_kernel: bool = False):
        self.mode = stdout_mode
        self.in_kernel = in_kernel
        self.failures: Optional[FailureRecorder] = None
        self.last = ""                  # the stream written last: the other is flushed first
        self.switches = 0
        self.held: list = []            # stdout held back while it may be a JSON document
        self.held_chars = 0
        self.looks_like_json = False    # the held text's first non-blank character is { or [
        self.holding = stdout_mode == "json"
        self._lock = threading.RLock()        # a tool's traceback is written while a write holds it
        self._timer = None
        if self.holding:
            self._timer = threading.Timer(_json_hold_seconds(), self._release)
            self._timer.daemon = True
            self._timer.start()

    def write(self, name: str, text: str):
        with self._lock:
            if name != "stdout":
                self._show("stderr", text)
                if self.failures is not None:
                    self.failures.after_stderr(text)
                return
            if self.mode == "capture":
                return
            if self.holding:
                self.held.append(text)
                self.held_chars += len(text)
                if not self.looks_like_json:
                    first = text.lstrip()[:1]
                    self.looks_like_json = first in ("{", "[")
                    if first and not self.looks_like_json:
                        self._release_locked()
                if self.held_chars > MAX_TREE_CHARS:      # too long to be shown as a document
                    self._release_locked()
                return
            self._show("stdout", text)

    def write_held(self, text: str):
        with self._lock:
            self._show("stdout", text)

    def note(self, text: str):
        """Text for the reader that is not the script's output (a tool's traceback)."""
        with self._lock:
            self._show("stderr", text)

    def _show(self, name: str, text: str):
        """Write to the notebook in the order the script wrote: stdout and stderr are two
        streams, each buffered by the kernel, so the other one is flushed at each switch (the
        first ORDERED_SWITCHES of a cell: past them, each stream is sent as the kernel buffers
        it, so that a loop alternating thousands of times stays fast and a few outputs long)."""
        if self.last and self.last != name:
            self.switches += 1
            if self.switches <= ORDERED_SWITCHES:
                (sys.stdout if self.last == "stdout" else sys.stderr).flush()
        self.last = name
        if name == "stdout" and self.in_kernel and ("\x1b[2J" in text or "\x1bc" in text):
            parts = _CLEAR.split(text)
            for k, part in enumerate(parts):
                if k:
                    sys.stdout.flush()
                    clear_output()
                if part:
                    sys.stdout.write(part)
            return
        (sys.stdout if name == "stdout" else sys.stderr).write(text)

    def _release(self):
        with self._lock:
            self._release_locked()

    def _release_locked(self):
        if self.holding:
            self.holding = False
            held, self.held = "".join(self.held), []
            if held:
                self._show("stdout", held)

    def finish(self) -> Optional[str]:
        """Stop holding; the stdout text if it is still held back, else None."""
        if self._timer is not None:
            self._timer.cancel()
        with self._lock:
            holding, self.holding = self.holding, False
            held, self.held = "".join(self.held), []
        return held if holding else None


def run_script(shell, code: str, tool: Optional[ScriptedTool] = None, *, trace: bool = False,
               env: Optional[dict] = None, no_raise: bool = False, stdout: str = "",
               session: Optional[Session] = None, result_value: bool = False,
               resume: Optional[tuple] = None) -> ScriptResult:
    """Run one cell's script, its output streaming to the front-end as it is produced.
    `stdout`: "stream", "capture" or "json" (see _CellOutput); by default "json" in a
    notebook and "stream" in terminal IPython. `session`: run in that session's shell.
    `result_value`: a JSON document the cell printed is not displayed but left in the result's
    `value`, for the magic to return (the cell's Out[n]); else it is displayed. `resume`:
    (PausedCell, decision): continue that paused run rather than run `code` (pending.py).
    A run of the session's tools, with approval on, may pause: ScriptPaused, and a view that
    takes the decision."""
    state = shell_state(shell)
    tool = tool or state.tools.current()
    in_kernel = getattr(shell, "kernel", None) is not None
    lone = _LONE_BROWSER.match(code)
    if lone and not env:
        shown = _show_browser(tool, lone.group(1), lone.group(2).split(), frontend.widgets_live(shell), in_kernel)
        if shown:
            return ScriptResult("", "", 0)
    man = _LONE_MAN.match(code)
    if man and not env:
        return _page(tool, man.group(1), no_raise)
    saved_env = tool.env
    if env:
        tool.env = {**tool.env, **env}
    start = _start_of(state, tool, session, resume, stdout)
    if resume is None:
        def go(write):
            return (session or tool).execute(code, on_output=write)
    else:
        paused, decision = resume

        def go(write):          # (a paused run is always of the session's tools: _start_of)
            return state.tools.tool.resume_in_cell(paused.continuation, decision, AfterReplay(write, paused.shown),
                                                   session)
    hook = (state.approval.hook, False)
    borrowed = state.approval.on and hook not in tool.hooks.before     # a tool named in the cell asks too
    if borrowed:
        tool.hooks.before.append(hook)
    in_flight = _CallsInFlight()
    watch = ((in_flight.started, False), (in_flight.returned, False))
    tool.hooks.before.append(watch[0])       # the last: a call it sees is about to run
    tool.hooks.after.append(watch[1])
    output = _CellOutput(stdout or ("json" if in_kernel else "stream"), in_kernel)
    colours = _colours(shell)
    recorder = None
    if not state.sanitize and isinstance(tool, ScriptedTool):
        recorder = output.failures = FailureRecorder(tool, lambda e: output.note(format_exception(shell, e, colours)))
    state.approval.can_wait = start is not None
    try:
        if recorder is not None:
            with recorder:
                response = go(output.write)
        else:
            response = go(output.write)
    except KeyboardInterrupt:
        sys.stdout.write(output.finish() or "")      # the output so far is kept
        raise ScriptInterrupted(in_flight.names()) from None
    finally:
        state.approval.can_wait = False
        tool.env = saved_env
        if borrowed:
            tool.hooks.before.remove(hook)
        tool.hooks.before.remove(watch[0])
        tool.hooks.after.remove(watch[1])
    untold = recorder.finish() if recorder is not None else 0
    if untold:
        output.note(f"({untold} more tool calls failed; their tracebacks are not shown)\n")
    # no explicit flush: the kernel flushes the streams before display() and before its reply
    result = ScriptResult(response.stdout, response.stderr, response.exit_code, list(response.trace),
                          response.error or "")
    paused_cell = _paused_cell(state, shell, response, start, resume, session)
    held = output.finish()
    if held is not None:
        document = _json_document(held)
        if document is None or paused_cell is not None:   # a paused run's output is text: the rest follows it
            output.write_held(held)
        elif result_value:
            result.value = json_result(document, held)
        else:
            display(json_bundle(document, held), raw=True)
    if getattr(response, "stdout_truncated", False):
        output.note(_red(f"[output cut at {limits_describe('max_output_bytes', tool.limits.max_output_bytes)} "
                         "(max_output_bytes): %scripted limits --max-output SIZE raises it]") + "\n")
    if trace or state.trace:
        display(_trace_table(result.trace), raw=True)
    if response.error == "cancelled":
        raise ScriptInterrupted(in_flight.names())
    if paused_cell is not None:
        state.wait_for_decision(shell, paused_cell)
        if not no_raise:
            raise ScriptPaused(paused_cell.call, paused_cell.reason)
    elif result.exit_code and not no_raise:
        raise ScriptError(result.exit_code, result.stderr, limit_hint(response.error, tool.limits))
    return result


def _paused_cell(state, shell, response, start: Optional[tuple], resume, session) -> Optional[PausedCell]:
    """The run as a cell that waits for a decision, if it paused where the notebook can resume it."""
    if start is None or response.status != "paused" or response.continuation is None:
        return None
    label = resume[0].label if resume is not None else f"In [{getattr(shell, 'execution_count', '?')}]"
    call, reason = state.tools.tool.paused_call(response.continuation)
    return PausedCell(label, call, reason, response.continuation, start, state.history.capture()[0],
                      session is not None, (len(response.stdout), pause_line_start(response.stderr)))


def _start_of(state, tool, session, resume, stdout: str) -> Optional[tuple]:
    """The session as the cell began, when its run may pause for a decision later: a run of the
    session's own tools in the cell's shell, its output shown (not kept for --out), with approval
    on and fewer than MAX_PENDING runs waiting (pending.py); or the resumed run's start."""
    if resume is not None:
        return resume[0].start
    if not (state.approval.on and tool is state.tools.tool and session is state.session and stdout != "capture"
            and state.pending.room()):
        return None
    try:
        return state.history.capture()
    except Exception:                 # a session the history cannot capture: no decide later
        return None


def _page(tool, name: str, no_raise: bool) -> ScriptResult:
    """`man NAME` as a whole cell: the page about NAME in the pager, as `obj?` in IPython."""
    from scripted_kernel.tools import manual
    text = manual.page(name, tool)
    if not text:
        message = f"No manual entry for {name}\n"
        sys.stderr.write(message)
        if no_raise:
            return ScriptResult("", message, 16)
        raise ScriptError(16, message)
    from IPython.core import page
    page.page({"text/plain": text})
    return ScriptResult("", "", 0)


def _show_browser(tool, command: str, args: list, widgets: bool, rich: Optional[bool] = None) -> bool:
    """`help` / `discover ...` as a whole cell: the tool browser (a live widget where the
    front-end shows widgets, else its HTML) instead of text; `help TOOL`: the tool's page."""
    query = category = tag = ""
    if command == "help":
        if len(args) == 1 and args[0] in tool.tools and (widgets if rich is None else rich):
            display(tool_page(tool.tools[args[0]].tool_def), raw=True)
            return True
        if args and args != ["--list"]:
            return False                 # the help command's own text (or its error)
    else:
        if len(args) != 2 or args[0] not in ("--search", "--category", "--tag"):
            return False
        key, value = args
        query, category, tag = (value if key == "--search" else "", value if key == "--category" else "",
                                value if key == "--tag" else "")
    display(rich_bundle(tool, query, category, tag, widgets=widgets), raw=True)
    return True


def limits_describe(field: str, value) -> str:
    from .limits import describe
    return describe(field, value)


# papermill's injected cell starts with this line; so should the cell a user tags `parameters`
_PARAMETERS_CELL = re.compile(r"\A\s*#\s*parameters\s*$", re.I | re.M)


class _State:
    """A session's tools and files. Every cell runs a fresh interpreter, but files written by
    one cell are there for the next (one MemoryFs per session), the variables of `# Parameters`
    cells reach every later cell, and `%scripted session on` carries the whole shell over."""

    def __init__(self, shell=None):
        self.fs = MemoryFs(limits=notebook_limits())     # one limits object: the files' and the tool's
        self.tools = NotebookTools(self.fs)
        self.approval = Approval(shell)      # `%scripted approve on`: asked before each tool call
        self.pending = PendingRuns()         # cells that wait for a decision (pending.py)
        self.tools.tool.before_tool(self.approval.hook)
        self.trace = False
        self.sanitize = False        # `%scripted sanitize on`: tool errors as a model sees them
        self.session: Optional[Session] = None      # `%scripted session on`
        self._parameters: Optional[Session] = None
        self.history = NotebookHistory(self)        # a commit per cell that changes something

    def reset_files(self):
        self.fs = MemoryFs(limits=self.tools.tool.limits)
        self.tools.tool.filesystem = self.fs
        self._parameters = None                      # their shells hold the old files
        if self.session is not None:
            self.session = self.tools.tool.session()

    def set_session(self, on: bool):
        self.session = self.tools.tool.session() if on else None

    def committed(self, shell, run, label: str = ""):
        """run(), then the session committed if the cell changed it (`%scripted history`)."""
        try:
            self.history.before_cell()
        except Exception as e:                    # the history never stops a cell
            print(f"scripted: history: {e}", file=sys.stderr)
        try:
            return run()
        finally:
            try:
                self.history.after_cell(label or f"In [{getattr(shell, 'execution_count', '?')}]")
            except Exception as e:
                print(f"scripted: history: {e}", file=sys.stderr)

    def wait_for_decision(self, shell, paused: PausedCell):
        """Keep the paused run and show its view, whose Allow / Deny resumes it."""
        self.pending.add(paused)
        self.show_view(shell, paused)

    def show_view(self, shell, paused: PausedCell):
        display(PausedView(paused, lambda run_id, answer: self.decide(shell, run_id, answer)).box)

    def decide(self, shell, run_id: str, answer: str):
        """Allow or deny the call a paused run waits before, and resume the run: on the session
        as the cell began it, which must be as the cell left it (else the replay would see
        other files and shell state than the run did). The rest of its output goes where the
        caller's output goes; a failure or a new pause is one line, as a cell's would be."""
        paused = self.pending.take(run_id)
        if paused is None:
            raise DecisionRefused("this run was decided already", final=True)
        if paused.in_session != (self.session is not None) or self.history.changed_since(paused.at_pause):
            self.pending.put_back(paused)
            raise DecisionRefused(f"the session's files or shell changed since {paused.label} paused, and a "
                                  "resumed run replays on the session as it left it: undo the change, or "
                                  "run the cell again")
        self.history.install(*paused.start)
        decision = "allow" if answer == ALLOW else Deny(DENIED_REASON)

        def run():
            return run_script(shell, "", self.tools.current(), stdout="stream", session=self.session,
                              resume=(paused, decision))
        try:
            self.committed(shell, run, f"{paused.label} resumed")
        except _CELL_ERRORS as e:
            print("\n".join(e._render_traceback_()), file=sys.stderr)

    def run_cell(self, shell, cell: str) -> ScriptResult:
        return self.committed(shell, lambda: self._run_cell(shell, cell))

    def _run_cell(self, shell, cell: str) -> ScriptResult:
        """A notebook cell with no options: in the session when it is on; a parameters cell
        in the parameters' own shell, whose new variables are then carried."""
        if self.session is not None or not _PARAMETERS_CELL.match(cell):
            return run_script(shell, cell, session=self.session, result_value=True)
        if self._parameters is None:
            self._parameters = self.tools.tool.session()
        try:
            return run_script(shell, cell, session=self._parameters, result_value=True)
        finally:
            self._carry_parameters()

    def _carry_parameters(self):
        tool = self.tools.tool
        parameters = self._parameters
        if parameters is None or not parameters.shell_session:
            return
        fresh = tool.session()
        fresh.execute("")
        preset = set(fresh.shell_session.variables()) - set(tool.parameters)
        tool.parameters = {name: var for name, var in parameters.shell_session.variables().items()
                           if name not in preset}


def shell_state(ipython) -> _State:
    """The extension's state of an IPython shell (made on first use, kept on the shell)."""
    state = getattr(ipython, "_scripted_state", None)
    if state is None:
        state = _State(ipython)
        ipython._scripted_state = state
    return state


@magics_class
class ScriptedMagics(Magics):
    shell: InteractiveShell         # (None in Magics until registered; these are made on a shell)

    @magic_arguments(name="%scripted")           # its usage line reads `%%scripted ...`
    @argument("tool", nargs="?", help="a ScriptedTool in the namespace (default: the @tool functions)")
    @argument("-h", "--help", action="store_true", help="show this usage and do nothing else")
    @argument("--trace", action="store_true", help="show the tool calls after the cell")
    @argument("--out", metavar="VAR",
              help="store stdout, a string, in VAR instead of showing it (as %%%%bash --out does); "
                   "with --json, the parsed JSON")
    @argument("--result", metavar="VAR",
              help="store the result object (stdout, stderr, exit_code, trace, error) in VAR")
    @argument("--json", action="store_true",
              help="parse stdout as JSON: store it in --out VAR, or show it as a JSON tree")
    @argument("--env", metavar="NAME=VALUE", action="append", default=[],
              help="an environment variable for the script; VALUE may be $python_variable")
    @argument("--no-raise", action="store_true", help="do not fail the cell on a non-zero status")
    @cell_magic("scripted")
    def scripted_cell(self, line, cell):
        """Run the cell as a bash script against tools registered in Python. A cell whose
        whole output is one JSON document returns it: it is the cell's Out[n]."""
        try:
            return self._scripted_cell(line, cell)
        except _CELL_ERRORS as e:
            raise _bare(e) from None

    def _scripted_cell(self, line, cell):
        if not line.strip():                 # every kernel cell comes this way: no options
            return shell_state(self.shell).run_cell(self.shell, cell).value
        args = parse_argstring(self.scripted_cell, line)
        if args.help:
            print(self.scripted_cell.__doc__)
            return None
        tool = None
        if args.tool:
            tool = self.shell.user_ns.get(args.tool)
            if not isinstance(tool, ScriptedTool):
                raise MagicUsageError(f"{args.tool} is not a ScriptedTool in the namespace")
        state = shell_state(self.shell)
        session = state.session if tool is None else None
        env = self._env(args.env) or None

        def run():
            return run_script(self.shell, cell, tool, trace=args.trace, env=env, no_raise=True,
                              stdout="capture" if args.out or args.json else "", session=session,
                              result_value=True)
        result = run() if tool is not None else state.committed(self.shell, run)
        failed = result.exit_code and not args.no_raise
        if args.result:
            self.shell.user_ns[args.result] = result
        shown = None
        if args.json and not failed and not args.out and len(result.stdout) > MAX_TREE_CHARS:
            sys.stdout.write(result.stdout)      # too long for a tree or an Out[n]: see _json_document
        elif args.json and not failed:
            parsed = self._parse_json(result.stdout)
            if args.out:
                self.shell.user_ns[args.out] = parsed
            elif parsed is not None:
                shown = json_result(parsed, json.dumps(parsed, indent=2)) if isinstance(parsed, (dict, list)) else None
                if shown is None:
                    display({"application/json": parsed, "text/plain": json.dumps(parsed)}, raw=True)
        elif args.out:
            self.shell.user_ns[args.out] = result.stdout
        elif args.json:
            sys.stdout.write(result.stdout)      # a failed --json cell: its output as text
        else:
            shown = result.value
        if failed:
            limits = (tool or shell_state(self.shell).tools.tool).limits
            raise ScriptError(result.exit_code, result.stderr, limit_hint(result.error, limits))
        return shown

    def _env(self, pairs: list) -> dict:
        env = {}
        for pair in pairs:
            name, eq, value = pair.partition("=")
            if not eq or not name:
                raise MagicUsageError(f"--env expects NAME=VALUE, got {pair!r}")
            if value.startswith("$") and value[1:] in self.shell.user_ns:
                value = self.shell.user_ns[value[1:]]
            env[name] = str(value)
        return env

    @staticmethod
    def _parse_json(text: str):
        """stdout as JSON (None when empty); text that is not JSON is shown, then refused."""
        if not text.strip():
            return None
        try:
            return json.loads(text)
        except json.JSONDecodeError as e:
            sys.stdout.write(text)               # captured, not shown yet: nothing is lost
            raise MagicUsageError(f"--json: the output is not JSON ({e.msg} at line {e.lineno} "
                                  f"column {e.colno})") from None
        except RecursionError:
            sys.stdout.write(text)
            raise MagicUsageError("--json: the output is nested too deeply to parse") from None

    @line_magic("scripted")
    def scripted_line(self, line):
        """%scripted help|discover ... | prompt [TOOL] | trace on|off | session on|off | approve on|off | pending
        | limits [--timeout SECONDS --max-output SIZE ... | --reset] | sanitize on|off | files
        | mount HOST_DIR [AT] | fs reset | undo | history | checkout N | save FILE | load FILE
        | SCRIPT"""
        try:
            self._scripted_line(line)
        except _CELL_ERRORS as e:
            raise _bare(e) from None

    def _scripted_line(self, line):
        words = line.split()
        state = shell_state(self.shell)
        if not words:
            print(_LINE_USAGE)
            return
        if words[0] == "limits":
            self._limits_command(state, words[1:])
            return
        if words[0] == "sanitize":
            if words[1:] not in (["on"], ["off"]):
                raise MagicUsageError("usage: %scripted sanitize on|off")
            state.sanitize = words[1] == "on"
            state.tools.tool.sanitize_errors_enabled = state.sanitize
            print("sanitize on: a failing tool shows the one sanitised line a model would see" if state.sanitize
                  else "sanitize off: a failing tool shows its message and its Python traceback")
            return
        if words[0] == "session":
            if words[1:] not in (["on"], ["off"]):
                raise MagicUsageError("usage: %scripted session on|off")
            state.set_session(words[1] == "on")
            print("session on: variables, functions and the working directory carry over between cells"
                  if state.session else "session off: every cell starts a fresh interpreter")
            return
        if words[0] in ("files", "mount", "fs"):
            self._files_command(state, words)
            return
        if words[0] == "approve":
            if words[1:] not in (["on"], ["off"]):
                raise MagicUsageError("usage: %scripted approve on|off")
            state.approval.on = words[1] == "on"
            state.approval.allowed_all.clear()
            print("approve on: each tool call is asked before it runs (Allow / Allow all of the tool / Deny; "
                  "in a notebook, Decide later pauses the cell)"
                  if state.approval.on else "approve off: tool calls run without asking")
            return
        if words[0] in ("undo", "history", "checkout", "save", "load"):
            self._history_command(state, words)
            return
        if words == ["pending"]:
            self._pending_command(state)
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
            widgets = frontend.widgets_live(self.shell)
            if not _show_browser(tool, words[0], words[1:], widgets, getattr(self.shell, "kernel", None) is not None):
                run_script(self.shell, line, tool, no_raise=True)
        else:
            run_script(self.shell, line, tool)


    def _limits_command(self, state: _State, words: list):
        """Show the session's limits, or set some: `--timeout 300 --max-output 50M`."""
        from . import limits as notebook
        current = state.tools.tool.limits
        if words == ["--reset"]:
            for name, value in notebook.NOTEBOOK_DEFAULTS.items():
                setattr(current, name, value)
            for name in notebook.FIELDS:
                if name not in notebook.NOTEBOOK_DEFAULTS:
                    setattr(current, name, getattr(notebook.ExecutionLimits(), name))
        elif words:
            try:
                notebook.apply(current, words)
            except ValueError as e:
                raise MagicUsageError(f"%scripted limits: {e}") from None
        bundle = notebook.table(current)
        if getattr(self.shell, "kernel", None) is None:
            print(bundle["text/plain"], end="")
        else:
            display(bundle, raw=True)

    def _pending_command(self, state: _State):
        """The runs that wait for a decision: a view of each (its Allow / Deny resume it, the
        rest of its output shown there) where widgets show, else a line each."""
        runs = list(state.pending.runs.values())
        if not runs:
            print("no run waits for a decision")
        for paused in runs:
            if frontend.widgets_live(self.shell):
                state.show_view(self.shell, paused)
            else:
                print(f"{paused.label} waits before {describe(paused.call)}: {paused.reason}")

    def _history_command(self, state: _State, words: list):
        """undo | history | checkout N | save FILE | load FILE"""
        from scripted_kernel.tools.snapshot import SnapshotError
        verb, rest = words[0], words[1:]
        try:
            if verb == "undo" and not rest:
                done = state.history.undo()
                print("undone: the session is back before the last cell that changed it" if done
                      else "nothing to undo")
            elif verb == "history" and not rest:
                display(state.history.bundle(), raw=True)
            elif verb == "checkout" and len(rest) == 1:
                ref = int(rest[0]) if rest[0].lstrip("-").isdigit() else rest[0]
                print(f"the session is at commit {state.history.checkout(ref)[:8]}")
            elif verb == "save" and len(rest) == 1:
                size = state.history.save(os.path.expanduser(rest[0]))
                print(f"session saved to {rest[0]} ({size} bytes)")
            elif verb == "load" and len(rest) == 1:
                runs = state.history.load(os.path.expanduser(rest[0]))
                state.history.after_cell(f"load {os.path.basename(rest[0])}")
                print(f"session loaded from {rest[0]}" +
                      ("; session on: its shell state is back" if state.session is not None else "") +
                      (f"; approve on: {runs} {'run waits' if runs == 1 else 'runs wait'} for a decision "
                       "(%scripted pending)" if runs else ""))
            else:
                raise MagicUsageError("usage: %scripted undo | history | checkout N | save FILE | load FILE")
        except KeyError as e:
            raise MagicUsageError(f"%scripted {verb}: {e.args[0]}") from None
        except (SnapshotError, OSError) as e:
            raise MagicUsageError(f"%scripted {verb}: {e}") from None

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


_LINE_USAGE = """usage: %scripted help [--list] | discover --search TEXT | prompt [TOOL]
       %scripted trace on|off | session on|off | sanitize on|off | approve on|off | pending
       %scripted limits [--timeout SECONDS] [--max-output SIZE] [--max-commands N] ... | --reset
       %scripted files | mount HOST_DIR [AT] | fs reset
       %scripted undo | history | checkout N | save FILE | load FILE
       %scripted SCRIPT                      (one line of script)
       %%scripted --help                     (the cell magic's options)"""


def files_bundle(fs: MemoryFs, widgets: bool) -> dict:
    """The session's files as a table (HTML in a notebook) with a plain-text fallback."""
    rows = [(path, st) for path, st in fs.tree().items()]
    def size(st):
        return "" if st.kind == "d" else f"{st.size} B"
    text = "\n".join(f"{path}{'/' if st.kind == 'd' else ''}  {size(st)}".rstrip() for path, st in rows)
    bundle = {"text/plain": text or "(no files)"}
    if widgets:
        cells = join(html("<tr><td><code>{}</code></td><td style='text-align:right'>{}</td></tr>",
                          path + ("/" if st.kind == "d" else ""), size(st)) for path, st in rows)
        bundle["text/html"] = (html("<table class='scripted-files'><tr><th>path</th><th>size</th></tr>{}</table>",
                                    cells) if rows else html("<p>(no files)</p>"))
    return bundle


def load(ipython):
    """Register the magics and put `tool` (the decorator) and `tools` (the session's
    ScriptedTool) in the namespace, unless the user has a variable of that name: it is kept,
    and a note says where the decorator is."""
    ipython.register_magics(ScriptedMagics)
    frontend.watch(getattr(ipython, "kernel", None))
    state = shell_state(ipython)
    from scripted_kernel import tool as tool_decorator
    ours = {"tool": tool_decorator, "tools": state.tools.tool}
    ns = ipython.user_ns
    kept = [name for name, value in ours.items() if name in ns and ns[name] is not value]
    ipython.push({name: value for name, value in ours.items() if name not in kept})
    if kept:
        print(f"scripted_magic: kept your {' and '.join(f'`{k}`' for k in kept)}; the tool decorator is "
              "`from scripted_kernel import tool`, the session's tools are `scripted_magic.session_tools()`",
              file=sys.stderr)
