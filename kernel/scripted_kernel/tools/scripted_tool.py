"""ScriptedTool: Python tools as commands of a logic-only bash, one fresh shell per call.

The contract follows bashkit's ScriptedTool (execute, help, system_prompt, schemas, status
callbacks, traces) in Python idiom. Each script runs on a runner thread (see containment.py)
while the caller waits within the deadline; there, sync callbacks run inline and async ones on
the caller's event loop under `execute_async`, else on the runner thread's own loop, so
`execute()` also works inside Jupyter's running loop.
"""
from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import functools
import inspect
import json
import re
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Optional, TypeVar

from ..commands import COMMANDS, FILE_COMMANDS
from ..commands.python3 import NAMES as PYTHON_COMMANDS, available as python_available
from ..fs import FileSystem, MemoryFs
from ..base.errors import Cancelled, LimitExceeded, bounded
from ..base.limits import CancelToken, ExecutionLimits, timeout_error, wall_clock
from ..shell.api import (KEYWORDS as SHELL_KEYWORDS, Run, ShellConfig, ShellSession, builtin_names, run_script,
                         suggest)
from . import catalog, telemetry
from .containment import (RUNNERS, WAIT_SLICE, Errand, call_on_own_thread, cannot_print, failure_message, left_running,
                          run_coroutine)
from .definitions import (DecoratedTool, ToolArgs, ToolDef, callback_from_function, is_async_callable, tool,
                          tool_def_from_function)
from .flags import FlagError, FlagParser
from .hooks import DENIED, Deny, Hooks, Pause, Plan, ToolCall, ToolCallResult, Unmade, decide, pending_stdin
from .results import result_text
from .shapes import minimal_instance, result_mismatch

# tools/journal.py (and the signing it loads) is imported by the methods of runs whose hooks
# may pause them, and of resumed runs; commands/urlpolicy.py (ipaddress, urllib) by those of a
# tool given a network allowlist: most processes have neither
if TYPE_CHECKING:
    from ..commands.urlpolicy import NetworkPolicy
    from .journal import Journal

RESERVED_NAMES = {"help", "discover"}
PAUSED = 148                # a paused run's status: bash's for a job stopped by SIGTSTP (128 + 20)
DISCOVER_LIMIT = 10         # tools `discover` lists at most, best first (--limit N for more)


@dataclass(slots=True)
class ToolResponse:
    """What a call of the tool returns: the script's output, its status, and what stopped it."""
    stdout: str
    stderr: str
    exit_code: int
    error: Optional[str] = None
    stdout_truncated: bool = False
    trace: list = field(default_factory=list)      # this run's tool calls (TraceEntry)
    # a run a before_tool hook paused (error "paused", status 148): the call it stopped before,
    # and the bytes tool.resume() continues from
    pending: Optional[ToolCall] = None
    continuation: Optional[bytes] = None

    @property
    def status(self) -> str:
        """"paused" for a run waiting for a decision, else "completed"."""
        return "paused" if self.error == "paused" else "completed"

    def to_dict(self) -> dict:
        return {"stdout": self.stdout, "stderr": self.stderr, "exit_code": self.exit_code}


@dataclass(slots=True)
class ToolStatus:
    """A progress report of `execute_with_status`: phase validate/parse/execute/output/complete;
    an output report carries a chunk (`output`) and its stream ("stdout" or "stderr")."""
    phase: str
    message: Optional[str] = None
    percent_complete: Optional[float] = None
    eta_ms: Optional[int] = None
    output: Optional[str] = None
    stream: Optional[str] = None

    @classmethod
    def stdout(cls, chunk: str) -> "ToolStatus":
        return cls("output", output=chunk, stream="stdout")

    @classmethod
    def stderr(cls, chunk: str) -> "ToolStatus":
        return cls("output", output=chunk, stream="stderr")


@dataclass(slots=True)
class TraceEntry:
    """One call of the run's call log. `status`: done, failed (the callback ran and failed),
    denied (a before_tool hook refused it), not started (its flags were invalid, or the run
    was out of tool calls: nothing ran), left running (the run stopped waiting for it)."""
    name: str
    kind: str                      # tool, builtin, help, discover
    argv: list
    params: Optional[dict]
    exit_code: int
    duration_ms: float
    stdout_bytes: int = 0
    stderr_bytes: int = 0
    status: str = "done"
    output: Optional[str] = None        # what it printed, kept for a tool that has a revert


@dataclass
class RegisteredTool:
    """A tool as the scripted tool keeps it: its definition, callback and flag parser."""
    tool_def: ToolDef
    callback: Callable
    is_async: bool
    parser: FlagParser
    revert: Optional[Callable] = None       # undoes a call: revert(call, output) (tool.rollback)


# ---------------------------------------------------------------- one execution

GRACE = 0.25        # seconds past the deadline (or a cancel) before the caller stops waiting
_LEFT_BEHIND = CancelToken()    # a left run's budget gets this one: the caller's token stays theirs
_LEFT_BEHIND.cancel("abandoned")


class _Execution:
    """One execution: the script runs on a runner thread and reports its output here; the
    caller waits for it, or stops waiting at the deadline and keeps the output so far."""

    def __init__(self, limits: ExecutionLimits, cancel: Optional[CancelToken], on_output: Optional[Callable],
                 caller_loop=None):
        self.inline = False        # the script runs on the caller's thread; callbacks may not
        self.script = ""
        self.limits = limits
        self.cancel = cancel or CancelToken()
        self.execution: Optional[Run] = None    # the interpreter's state of the run: budget, output
        self.on_output = on_output
        self.caller_loop = caller_loop
        self.trace: list[TraceEntry] = []
        self.calling: Optional[tuple] = None    # the callback running now: (name, kind, argv, params, started)
        self.tool_calls = 0                     # tool calls started, against max_tool_calls
        self.in_flight: set = set()     # futures of async callbacks running on caller_loop
        self.closed = False
        self.errand: Optional[Errand] = None    # the runner thread's work, which the caller may leave
        self.shell_slot: Optional[ShellSession] = None     # the session's shell as this run sees it
        self.notify: Optional[Callable] = None     # wakes an async waiter
        self.result = None
        self.failure: Optional[BaseException] = None
        self._lock = threading.Lock()
        self._started = time.monotonic()
        self._cancel_seen: Optional[float] = None
        self.tracer = None         # an OpenTelemetry tracer while tracing is on (telemetry.py)
        self.plan: Optional[Plan] = None     # tool.plan(): the ToolCalls, every tool a dry run
        self.journal: Optional[Journal] = None      # the calls of a run that may pause, or is resumed
        self.continue_as: Optional[Callable] = None     # (ToolCall, reason) -> continuation bytes
        self.watched = False       # a plan or a tracer: tool calls take the slower, observed path

    def start(self, work: Callable):
        """Run the script on a runner thread; `wait` for it. LimitExceeded when no thread
        may or can be had."""
        context = contextvars.copy_context()       # the caller's context (Jupyter's parent header)
        errand = self.errand = Errand()

        def body():
            try:
                self.result = work()
            except BaseException as e:
                self.failure = e
            finally:
                errand.finish()
                if self.notify is not None:
                    try:
                        self.notify()
                    except RuntimeError:       # the waiting loop is gone
                        pass
        RUNNERS.submit(lambda: context.run(body))

    def run_here(self, work: Callable) -> ToolResponse:
        """Run the script on the caller's thread (no hand-over to a runner, ~45 µs less): for
        scripts that name no tool. A callback called anyway runs on a thread of its own."""
        self.inline = True
        self.result = work()
        return self.response()

    def relay(self, stream: str, text: str):
        """The output sinks' listener: streams to the caller; once the caller has stopped
        waiting, the script's next write ends it."""
        if self.closed:
            raise Cancelled("execution abandoned")
        if self.on_output is not None:
            self.on_output(stream, text)

    def give_up_reason(self) -> Optional[str]:
        """'timeout' or 'cancelled' once the script had its chance to stop by itself."""
        now = time.monotonic()
        if self.cancel.cancelled:
            if self._cancel_seen is None:
                self._cancel_seen = now
            elif now - self._cancel_seen > GRACE:
                return "cancelled"
        timeout = self.limits.timeout_seconds
        if timeout and now > self._started + timeout + GRACE:
            return "timeout"
        return None

    def _errand_running(self) -> Errand:
        """The runner thread's errand: waiting and abandoning come only after start()."""
        assert self.errand is not None
        return self.errand

    def wait(self) -> ToolResponse:
        done = self._errand_running().done
        try:
            while not done.wait(WAIT_SLICE):
                reason = self.give_up_reason()
                if reason:
                    return self.abandon(reason)
        except KeyboardInterrupt:              # the user's interrupt: cancel the run, then stop
            self.cancel.cancel("interrupted")
            if not done.wait(GRACE):
                self.abandon("cancelled")
            raise
        return self.response()

    async def wait_async(self) -> ToolResponse:
        import asyncio       # here, not at the top: a synchronous caller never pays its import
        loop = asyncio.get_running_loop()
        finished = loop.create_future()

        def wake():
            if not finished.done():
                finished.set_result(None)
        self.notify = lambda: loop.call_soon_threadsafe(wake)
        errand = self._errand_running()
        if errand.done.is_set():
            wake()
        try:
            while not errand.done.is_set():
                await asyncio.wait({finished}, timeout=WAIT_SLICE * 5)
                reason = None if errand.done.is_set() else self.give_up_reason()
                if reason:
                    return self.abandon(reason)
        except asyncio.CancelledError:
            self.cancel.cancel("cancelled")
            errand.leave()
            for future in list(self.in_flight):     # before the caller's next await resumes them
                future.cancel()
            raise
        return self.response()

    def response(self) -> ToolResponse:
        r = self.result
        if r is None:                          # an engine defect let an exception through
            name = type(self.failure).__name__ if self.failure is not None else "unknown"
            out, err = self.output_so_far()
            return ToolResponse(out, err + f"bash: internal error ({name})\n",
                                1, "internal", trace=self.trace)
        journal = self.journal
        if journal is not None and journal.paused is not None and self.continue_as is not None:
            call, reason = journal.paused
            return ToolResponse(r.stdout, r.stderr, PAUSED, "paused", r.stdout_truncated, self.trace,
                                pending=call, continuation=self.continue_as(call, reason))
        error = "divergence" if journal is not None and journal.diverged else r.error
        return ToolResponse(r.stdout, r.stderr, r.exit_code, error, r.stdout_truncated, self.trace)

    def abandon(self, reason: str) -> ToolResponse:
        with self._lock:
            self.closed = True
            out, err = self.output_so_far()
        self._errand_running().leave()
        stuck = self.calling[0] if self.calling else None
        if self.calling:
            name, kind, argv, params, started = self.calling
            self.trace.append(TraceEntry(name, kind, list(argv), params, -1, (time.perf_counter() - started) * 1000,
                                         status="left running"))
        if reason == "timeout":
            stop = timeout_error(self.limits)
        else:
            stop = Cancelled(f"execution {self.cancel.reason}")
        if self.execution is not None:      # the script stops at its next command, if it gets there
            self.execution.budget.cancel = _LEFT_BEHIND
        message, status = stop.message, stop.status
        if stuck:
            message += f"; {left_running([stuck])}"
        return ToolResponse(out, err + f"bash: {message}\n", status, reason, trace=list(self.trace))

    def refuse(self, message: str, status: int, error: str) -> ToolResponse:
        """The response of a run that could not start (or failed outside the script)."""
        out, err = self.output_so_far()
        return ToolResponse(out, err + f"bash: {message}\n", status, error,
                            trace=list(self.trace))

    def output_so_far(self) -> tuple[str, str]:
        """What the script has written (the interpreter's sinks are the one copy)."""
        if self.execution is None:
            return "", ""
        return self.execution.out.text(), self.execution.err.text()

    def settle(self, session: Optional[ShellSession]):
        """The session's shell after the run: the run's own, unless the run was left running
        (its thread may still be using that shell): then the next call starts a new one."""
        left = self.errand is not None and self.errand.left
        if session is not None:
            if left or self.shell_slot is None:
                session.clear()
            else:
                session.take(self.shell_slot)
        if not left and self.execution is not None:
            # the run and the interpreter's state refer to each other (host, the output relay):
            # once the response is made, the pair goes at once rather than at the next collection
            self.execution.host = None
            self.execution = None


def _tool_run(ctx) -> Optional[_Execution]:
    """The tool layer's state of the run a command belongs to (None for a script run through
    the interpreter directly)."""
    host = ctx.execution.host
    return host if isinstance(host, _Execution) else None


class ScriptedTool:
    """Runs bash scripts in logic mode against registered tools. Build with
    `ScriptedTool.builder(name)` or construct and `add_tool(...)` (bashkit's Python API)."""

    version = "0.1.0"
    python_enabled = False        # python3/python in logic mode too (the builder's .python())

    def __init__(self, name: str, short_description: str = "", env: Optional[dict] = None,
                 limits: Optional[ExecutionLimits] = None, compact_prompt: bool = False,
                 sanitize_errors: bool = True, context: Optional[list] = None, filesystem=None):
        self.name = name
        self._filesystem = filesystem
        self.network_allow: tuple = ()      # URL prefixes curl may fetch; none by default
        self.network_policy: Optional[NetworkPolicy] = None     # the builder's .network(...), in full
        self.short_description = short_description or f"ScriptedTool: {name}"
        self.env = dict(env or {})
        self.limits = limits or ExecutionLimits()
        self.compact = compact_prompt
        self.sanitize_errors_enabled = sanitize_errors
        self.context = list(context or [])
        self.tools: dict[str, RegisteredTool] = {}
        self._commands: Optional[dict] = None
        self._shadowed: dict = {}           # name -> (kind, fn): what tools took the name of (_with_host_commands)
        self._tool_names: "re.Pattern[str] | bool | None" = None   # a pattern of the tool names, once asked
        self._last = threading.local()
        self.hooks = Hooks()                # before_tool / after_tool (hooks.py)
        self.validate_output = False        # check each result against its tool's output schema
        self.continuation_key: Optional[bytes] = None     # signs continuations, and is required of them
        self.telemetry: Optional[telemetry.TelemetryConfig] = None    # None: the global tracer provider

    @property
    def filesystem(self):
        """None: logic mode (no files, no file commands). A MemoryFs: shared by every call. A
        factory (such as the MemoryFs class): a fresh filesystem per call, for scratch files."""
        return self._filesystem

    @filesystem.setter
    def filesystem(self, fs):
        self._filesystem = fs
        self._commands = None         # the file commands come and go with the filesystem

    @property
    def last_trace(self) -> list:
        """The tool calls of the last run started by the calling thread (also `response.trace`)."""
        return getattr(self._last, "trace", None) or []

    def take_last_execution_trace(self) -> Optional[list]:
        """The calling thread's last trace (a list of TraceEntry), cleared; None if there is none."""
        trace = getattr(self._last, "trace", None)
        self._last.trace = None
        return trace

    @staticmethod
    def builder(name: str) -> "ScriptedToolBuilder":
        return ScriptedToolBuilder(name)

    # -------------------------------------------------------- registration

    def register(self, tool_def: ToolDef, callback: Callable, is_async: Optional[bool] = None,
                 revert: Optional[Callable] = None) -> "ScriptedTool":
        """Register a tool; `revert(call, output)` undoes one of its calls (see rollback)."""
        name = tool_def.name
        self._check_name(name, tool_def.shadow)
        if is_async is None:
            is_async = is_async_callable(callback)
        self.tools[name] = RegisteredTool(tool_def, callback, is_async, FlagParser(name, tool_def.input_schema),
                                          revert)
        self._commands = self._tool_names = None
        return self

    def _check_name(self, name: str, shadow: bool = False):
        """Refuse a name no script could call, an earlier tool's, or, unless `shadow`, one that
        a builtin or a command of this tool's shell has (a script's `echo` or `jq` means what
        it means in bash unless the host says otherwise)."""
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.-]*", name) or name in SHELL_KEYWORDS:
            raise ValueError(f"tool name {name!r} is not a valid command name" +
                             (" (it is a shell keyword)" if name in SHELL_KEYWORDS else ""))
        if name in self.tools:
            raise ValueError(f"a tool named {name!r} is already registered")
        owner = self._name_owner(name)
        if owner is not None and not shadow:
            raise ValueError(f"tool name {name!r} is taken by {owner}; pass shadow=True to let the tool "
                             f"take it (then `command {name}` still reaches the shell's own)")

    def _name_owner(self, name: str) -> Optional[str]:
        """What already answers to `name` in this tool's shell, or None. A logic-only tool has
        no file commands, so their names are free there."""
        if name in builtin_names():
            return f"the shell builtin {name!r}"
        if name in RESERVED_NAMES:
            return f"the {name!r} command of every scripted tool"
        present = self.filesystem is not None or name not in FILE_COMMANDS or \
            self.python_enabled and name in PYTHON_COMMANDS
        if name in COMMANDS and present:
            return f"the command {name!r}"
        return None

    def add_tool(self, name: str, description: str, callback: Callable, schema: Optional[dict] = None,
                 shadow: bool = False):
        """bashkit's Python signature: callback(params: dict, stdin: str | None) -> str."""
        tool_def = ToolDef(name, description, schema or {}, shadow=shadow)
        if is_async_callable(callback):
            async def async_adapter(args: ToolArgs):
                return await callback(args.params, args.stdin)
            return self.register(tool_def, async_adapter, True)

        def adapter(args: ToolArgs):
            return callback(args.params, args.stdin)
        return self.register(tool_def, adapter, False)

    def add(self, fn) -> "ScriptedTool":
        """Register an @tool-decorated function (or a plain function, derived the same way)."""
        if not isinstance(fn, DecoratedTool):
            tool_def = tool_def_from_function(fn)
            return self.register(tool_def, callback_from_function(fn, tool_def))
        return self.register(fn.tool_def, fn.callback, fn.is_async, fn.revert)

    # -------------------------------------------------------- introspection

    def tool_defs(self) -> list[ToolDef]:
        return [t.tool_def for t in self.tools.values()]

    def description(self) -> str:
        names = ", ".join(self.tools) or "no tools"
        return f"{self.short_description} (tools: {names})"

    def help(self) -> str:
        lines = [f"# {self.name}", "", self.short_description, "", "## Tool Commands", ""]
        for t in self.tool_defs():
            lines.append(catalog.tool_markdown(t))
        return "\n".join(lines).strip() + "\n"

    def system_prompt(self) -> str:
        return catalog.system_prompt(self.name, self.short_description, self.tool_defs(), self.compact,
                                     self.context, self._files_note())

    def _files_note(self) -> str:
        """What the prompt says about files, by filesystem mode (and python3, where a script has it)."""
        if self.filesystem is None:
            note = "there is no file system"
        elif isinstance(self.filesystem, FileSystem):
            note = "files persist across calls in a virtual file system (/tmp, $HOME)"
        else:
            note = "each call gets an empty virtual file system (stage data in /tmp within one script)"
        if (self.filesystem is not None or self.python_enabled) and python_available() and \
                "python3" not in self.tools:
            note += "; `python3 -c` runs a Python subset (standard modules only)"
        return note

    def input_schema(self) -> dict:
        return {"type": "object",
                "properties": {"commands": {"type": "string",
                                            "description": "A bash script; the tools are commands."}},
                "required": ["commands"]}

    def output_schema(self) -> dict:
        return {"type": "object",
                "properties": {"stdout": {"type": "string"}, "stderr": {"type": "string"},
                               "exit_code": {"type": "integer"}},
                "required": ["stdout", "stderr", "exit_code"]}

    # -------------------------------------------------------- execution

    def commands(self) -> dict:
        if self._commands is None:
            table = dict(COMMANDS)
            if self.filesystem is None:         # logic mode: file commands are not there
                for name in FILE_COMMANDS.difference(PYTHON_COMMANDS if self.python_enabled else ()):
                    del table[name]
            table["help"] = self._help_command
            table["discover"] = self._discover_command
            table = self._with_journaled_programs(table)
            self._commands = self._with_host_commands(table, {name: self._command_for(registered)
                                                   for name, registered in self.tools.items()})
        return self._commands

    @staticmethod
    def _with_journaled_programs(table: dict) -> dict:
        """`table` with the commands that act outside the sandbox (curl) recorded and replayed
        in a journaled run like a tool call: a resumed run does not send their requests again."""
        command = table.get("curl")
        if command is None:
            return table

        def curl(ctx, argv):
            active = _tool_run(ctx)
            journal = active.journal if active is not None else None
            if journal is None:
                return command(ctx, argv)
            call = ToolCall("curl", {"args": list(argv[1:])}, list(argv), 0, "network")

            def live(out, err):
                with _writing_to(ctx, out, err):
                    return command(ctx, argv)
            return journal.perform(ctx.out, ctx.err, call, live, lambda *decided: live(*decided[2:]))
        return {**table, "curl": curl}

    def _with_host_commands(self, table: dict, own: dict) -> dict:
        """`table` with the host's commands `own` in it, each over a builtin or command of the
        same name (which `_check_name` let it take); what they shadow is kept for `builtin`
        and `command`, and the shadowed builtins leave the shell's builtin table."""
        builtins = builtin_names()
        shadowed = {}
        for name, fn in own.items():
            if name in builtins:
                shadowed[name] = ("builtin", None)        # (the shell finds its own builtin)
            elif name in table:
                shadowed[name] = ("command", table[name])
            table[name] = fn
        self._shadowed = shadowed
        return table

    def shadowed_names(self) -> set:
        """The builtins and commands whose names a tool of this one took."""
        self.commands()
        return set(self._shadowed)

    def execute(self, commands, stdin: str = "", cancel: Optional[CancelToken] = None,
                on_output: Optional[Callable] = None, _session: Optional[ShellSession] = None) -> ToolResponse:
        """Run a script (or `{"commands": script}`) in a fresh interpreter. Whatever the script
        and the callbacks do, this returns a response; only the caller's own KeyboardInterrupt
        (its user interrupting it) is raised again, once the run is cancelled."""
        run, work = self._prepare(commands, stdin, cancel, on_output, _session)
        if run.tracer is None:
            response = self._run_and_wait(run, work, _session)
        else:
            with telemetry.script_span(run.tracer, self, run.script, self.telemetry) as span:
                response = self._run_and_wait(run, work, _session)
                telemetry.end_script(span, response)
        self._last.trace = response.trace
        return response

    async def execute_async(self, commands, stdin: str = "", cancel: Optional[CancelToken] = None,
                            on_output: Optional[Callable] = None) -> ToolResponse:
        """Run the script off the loop; async callbacks run on this (the caller's) loop."""
        import asyncio
        run, work = self._prepare(commands, stdin, cancel, on_output, None, asyncio.get_running_loop())
        response = await self._traced_await(run, work, None)
        self._last.trace = response.trace
        return response

    async def _traced_await(self, run: "_Execution", work: Callable, session: Optional[ShellSession]) -> ToolResponse:
        """_run_and_await, in the script's span when tracing is on."""
        if run.tracer is None:
            return await self._run_and_await(run, work, session)
        with telemetry.script_span(run.tracer, self, run.script, self.telemetry) as span:
            response = await self._run_and_await(run, work, session)
            telemetry.end_script(span, response)
        return response

    def plan(self, commands, stdin: str = "") -> list:
        """The tool calls the script makes when every tool answers as `TOOL --dry-run` does, in
        order (a list of ToolCall): what to show a user before running it for real. A plan is
        not a guarantee: the real run may branch differently on the tools' real answers (the
        before_tool hook is the guarantee). A plan has no side effect: no callback and no hook
        is called; a shared MemoryFs is replaced by an empty scratch one, so a plan changes no
        file; curl's requests are judged by the network policy and listed as `curl` calls
        (kind "network", params method and url), never sent."""
        run, work = self._prepare(commands, stdin, None, None, None, plan=True)
        self._run_and_wait(run, work, None)
        return run.plan if run.plan is not None else Plan()

    def check(self, commands) -> list:
        """What a static read of the script finds, without running anything (tools/check.py):
        syntax errors, unknown commands, unknown or ill-typed flags, missing required flags,
        jq programs that do not compile. A list of Diagnostic (`line L, col C: message`)."""
        from .check import check_script
        if isinstance(commands, dict):
            commands = commands.get("commands", "")
        return check_script(self, commands)

    def before_tool(self, fn: Callable) -> "ScriptedTool":
        """fn(call: ToolCall) -> None | Deny | dict, sync or async, before every tool call
        (hooks.py): allow, refuse (status 126), or replace the parameters."""
        self.hooks.before.append((fn, is_async_callable(fn)))
        return self

    def after_tool(self, fn: Callable) -> "ScriptedTool":
        """fn(call: ToolCall, result: ToolCallResult), sync or async, after every tool call."""
        self.hooks.after.append((fn, is_async_callable(fn)))
        return self

    def _run_and_wait(self, run: _Execution, work: Callable, session: Optional[ShellSession]) -> ToolResponse:
        """The run's response: on a runner thread if the script names a tool, else here."""
        try:
            if not self._names_a_tool(run.script):
                return run.run_here(work)
            run.start(work)
            return run.wait()
        except LimitExceeded as e:            # no thread for the run
            return run.refuse(e.message, 1, f"limit:{e.limit}")
        except KeyboardInterrupt:
            raise
        except BaseException as e:            # the caller's on_output raising, say
            return run.refuse(f"internal error ({type(e).__name__})", 1, "internal")
        finally:
            run.settle(session)

    async def _run_and_await(self, run: _Execution, work: Callable, session: Optional[ShellSession]) -> ToolResponse:
        """The run's response, the script on a runner thread, the caller's loop free meanwhile."""
        try:
            run.start(work)
            return await run.wait_async()
        except LimitExceeded as e:
            return run.refuse(e.message, 1, f"limit:{e.limit}")
        finally:
            run.settle(session)

    def _prepare(self, commands, stdin, cancel, on_output, session, caller_loop=None, plan=False,
                 journal: Optional[Journal] = None):
        """The run's state, and the work that runs the script given an output relay. A run that
        a hook may pause keeps a journal (tools/journal.py); `journal`: one to resume."""
        if isinstance(commands, dict):
            commands = commands.get("commands", "")
        if not isinstance(commands, str):
            raise TypeError("commands must be a string (a bash script)")
        run = _Execution(self.limits, cancel, on_output, caller_loop)
        run.script = commands
        run.tracer = telemetry.tracer_for(self.telemetry)
        table, limits = self.commands(), self.limits
        fs = self._filesystem_for_call() if not session else None
        run.watched = run.tracer is not None or plan
        network = self._network_for_run()
        if plan:
            run.plan = Plan()
            network = self._network_for_plan(run.plan)
            if isinstance(fs, FileSystem):      # a plan changes no file of the tool's own
                fs = MemoryFs(limits=limits)
        slot = run.shell_slot = session.copy() if session is not None else None
        observer = telemetry.Observer(run.tracer) if run.tracer is not None else None
        execution = run.execution = Run(limits, run.cancel, run.relay, fs, network,
                                        host=run, observer=observer)
        if journal is None and self.hooks.before and not plan:
            journal = self._new_journal(session)
        if journal is not None:
            self._journal_run(run, journal, commands, stdin)
        config = self._shell_config(table, journal)

        def work():
            return run_script(commands, config, execution, stdin, slot)
        return run, work

    # -------------------------------------------------------- pausing and resuming

    def _new_journal(self, session) -> Journal:
        """The journal of a run whose hooks may pause it."""
        from .journal import Journal
        return Journal(clock=wall_clock(), budget=self.limits.max_output_bytes)

    def _journal_run(self, run: _Execution, journal: Journal, script: str, stdin: str):
        """Give `run` the journal: a resumed run replays the clock it first saw until its paused
        call, and a pause becomes a continuation of this script."""
        assert run.execution is not None        # (_prepare made it)
        budget = run.execution.budget
        if journal.replay or journal.pending is not None:
            budget.clock_offset = journal.clock - wall_clock()
            journal.on_replayed = lambda: setattr(budget, "clock_offset", 0.0)
        run.journal = journal
        key = self.continuation_key
        from .journal import encode
        run.continue_as = lambda call, reason: encode(self.name, script, stdin, journal, call, reason, key)

    def rollback(self, done) -> "Rollback":
        """Undo what a run did: the revert of each call that ran (a ToolResponse's call log, or
        a continuation's journal), newest first. A call whose tool has no revert, or whose
        revert raised, is reported, not retried. Rollback is as good as the reverts the host
        wrote: it undoes nothing else."""
        report = Rollback()
        for call, output in reversed(self._calls_done(done)):
            registered = self.tools.get(call.name)
            if registered is None or registered.revert is None:
                report.irreversible.append(call)
                continue
            try:
                value = registered.revert(call, output)
                if inspect.isawaitable(value):
                    import asyncio
                    asyncio.run(_awaited(value))
            except Exception as e:              # the host's own code: reported as it failed
                report.failed.append((call, failure_message(e)))
            else:
                report.reverted.append(call)
        return report

    def _calls_done(self, done) -> list:
        """(ToolCall, output) of each tool call that ran and succeeded, oldest first."""
        if isinstance(done, ToolResponse):
            return [(ToolCall(e.name, e.params, e.argv), e.output or "") for e in done.trace
                    if e.kind == "tool" and e.status == "done"]
        loaded = self._load_continuation(done, None)
        return [(ToolCall(e.name, e.params, [e.name]), e.stdout) for e in loaded.journal.replay
                if e.kind == "tool" and e.status == 0]

    def resume(self, continuation: bytes, decision="allow", key=None) -> ToolResponse:
        """Continue a paused run (ToolResponse.continuation) to its end or its next pause, in
        this process or another: the paused call is allowed (`"allow"`), refused
        (`Deny(reason)`, status 126 as a hook's refusal) or made with new parameters (a dict).
        Earlier calls are answered from the continuation, not called again; see
        tools/journal.py. ContinuationError, and nothing run, for a continuation that is
        damaged, forged, another tool's, too large, or unsigned when this tool has a key."""
        loaded = self._load_continuation(continuation, key)
        loaded.journal.decision = decision
        return self._resumed(loaded)

    def _load_continuation(self, continuation: bytes, key):
        limits = self.limits
        most = 2 * (limits.max_output_bytes + limits.max_script_bytes + limits.max_fs_bytes
                    + limits.max_shell_state_bytes)
        from .journal import decode
        return decode(continuation, self.name, key if key is not None else self.continuation_key,
                      most, limits.max_script_bytes)

    def _resumed(self, loaded) -> ToolResponse:
        return self._replay(loaded, None, None)

    def _replay(self, loaded, on_output: Optional[Callable], session: Optional[ShellSession]) -> ToolResponse:
        """Run a loaded continuation: its output streamed to `on_output` if given, in
        `session`'s shell if given (BashTool's, the notebook's `%scripted session on`)."""
        run, work = self._prepare(loaded.script, loaded.stdin, None, on_output, session, journal=loaded.journal)
        response = self._run_and_wait(run, work, session)
        self._last.trace = response.trace
        return response

    def _filesystem_for_call(self):
        fs = self.filesystem
        if fs is None or isinstance(fs, FileSystem):
            return fs
        return fs(limits=self.limits) if fs is MemoryFs else fs()

    def _shell_config(self, table: dict, journal: Optional[Journal]) -> ShellConfig:
        """The shell a run of this tool gets: its commands, environment and shadowed names;
        with a journal, $RANDOM from its seed (a replay draws what the first run drew)."""
        return ShellConfig(table, self.env, self._shadowed, random_seed=journal.seed if journal is not None else None)

    def _network_for_run(self):
        """The network policy with this execution's own request and byte counts (() for none)."""
        policy = self.network_policy
        if policy is None or policy.urls != tuple(self.network_allow):    # network_allow set directly
            if not self.network_allow:
                return ()
            from ..commands.urlpolicy import NetworkPolicy
            policy = self.network_policy = NetworkPolicy(self.network_allow)
        return policy.for_run()

    def _network_for_plan(self, plan: list):
        """The network as a plan sees it: requests judged by the policy, listed in the plan as
        `curl` calls (method and URL), never sent."""
        policy = self._network_for_run()
        if isinstance(policy, tuple):           # () without an allowlist (nothing imported)
            return ()
        from ..commands.urlpolicy import DryRunNetwork
        record = lambda method, url: plan.append(               # noqa: E731
            ToolCall("curl", {"method": method, "url": url}, ["curl", "-X", method, url], kind="network"))
        return DryRunNetwork(policy.policy, record)

    def _callback_names(self):
        """The commands that call host code."""
        return self.tools

    def _names_a_tool(self, script: str) -> bool:
        """Whether a tool's name occurs in the script text: then the script runs on a runner
        thread, so a hung callback cannot hold the caller."""
        if self._tool_names is None:
            names = sorted(self._callback_names(), key=len, reverse=True)
            self._tool_names = re.compile("|".join(map(re.escape, names))) if names else False
        pattern = self._tool_names
        return isinstance(pattern, re.Pattern) and pattern.search(script) is not None

    def execute_with_status(self, commands, on_status: Callable[[ToolStatus], None],
                            stdin: str = "") -> ToolResponse:
        """Report validate (0%), parse (10%), execute (20%), output chunks, complete (100%, with
        the exit status as its message); returns the response."""
        on_status(ToolStatus("validate", percent_complete=0))
        if isinstance(commands, dict):
            commands = commands.get("commands", "")
        on_status(ToolStatus("parse", percent_complete=10))
        on_status(ToolStatus("execute", percent_complete=20))
        chunk = {"stdout": ToolStatus.stdout, "stderr": ToolStatus.stderr}
        response = self.execute(commands, stdin, on_output=lambda stream, data: on_status(chunk[stream](data)))
        on_status(ToolStatus("complete", f"exit status {response.exit_code}", percent_complete=100))
        return response

    def session(self) -> "Session":
        """Calls whose shell variables and functions carry over (the default is fresh)."""
        return Session(self)

    def execution(self, args) -> "Execution":
        """The seed's contract: validate the arguments now, run once later."""
        if isinstance(args, str):
            args = {"commands": args}
        if not isinstance(args, dict) or not isinstance(args.get("commands"), str):
            raise ValueError('arguments must be {"commands": "<bash script>"}')
        return Execution(self, args["commands"])

    def to_openai_tool(self) -> dict:
        return {"type": "function", "function": {"name": self.name, "description": self.system_prompt(),
                                                 "parameters": self.input_schema()}}

    def to_anthropic_tool(self) -> dict:
        return {"name": self.name, "description": self.system_prompt(), "input_schema": self.input_schema()}

    # -------------------------------------------------------- commands

    def _command_for(self, registered: RegisteredTool) -> Callable:
        name = registered.tool_def.name
        parser = registered.parser

        def revalidate(params: dict) -> dict:       # a before_tool hook's replacement params
            parser.validate(params, from_json=True)    # checked as JSON values are: types included
            return params

        def run(ctx, argv):
            host = ctx.execution.host          # (_tool_run written out: a call less per tool call)
            active = host if isinstance(host, _Execution) else None
            started = time.perf_counter()
            params = parser.quick(argv)
            watched = active is not None and active.watched           # a plan, or tracing
            if params is None or watched:
                outcome = checked(ctx, argv, active, started)
                if isinstance(outcome, int):
                    return outcome
                params = outcome
            if watched or self.hooks.before or self.hooks.after or active is not None and active.journal:
                call = ToolCall(name, params, list(argv), pending_stdin(ctx.stdin))
                return self._through_hooks(ctx, active, call, lambda c: invoke(ctx, argv, c.params, started, active),
                                           revalidate)
            return invoke(ctx, argv, params, started, active)[0]

        def checked(ctx, argv, active: Optional[_Execution], started: float) -> "dict | int":
            """The parameters of a command line that is not only plain flags (or of any in a
            watched run), parsed and validated; or the status the command ends with: it asked
            for --help, was a dry run, or its flags were wrong."""
            plan = active.plan if active is not None else None        # tool.plan(): all dry runs
            params = None
            dry_run = plan is not None
            try:
                parsed = parser.parse(argv[1:])
                if parsed.help:                     # whatever else is there: help only
                    ctx.out(catalog.tool_help_text(registered.tool_def))
                    return 0
                params = parsed.params
                dry_run = dry_run or parsed.dry_run
                parser.validate(params, parsed.from_json)
            except FlagError as e:
                if plan is not None:
                    plan.unmade.append(Unmade(ctx.lineno, name, list(argv), str(e)))
                if dry_run or "--dry-run" in argv:
                    ctx.out(_dry_run_report(name, params, str(e)))
                    return 1
                ctx.err(bounded(f"{name}: {e}") + "\n")
                self._trace(ctx, name, "tool", argv, params, 2, started, state="not started")
                return 2
            if dry_run:
                if plan is not None:
                    plan.append(ToolCall(name, params, list(argv), pending_stdin(ctx.stdin)))
                ctx.out(_dry_run_answer(registered.tool_def, params))
                return 0
            return params

        def invoke(ctx, argv, params, started, active) -> tuple:
            """Call the callback: (status, stdout bytes, stderr bytes)."""
            # (the calls to _count_call, _contained and _log are written out for the common
            # case below: each was a tenth of a small tool's call)
            if active is not None:
                active.tool_calls += 1
                if active.tool_calls > active.limits.max_tool_calls:
                    _refuse_call(active, name, "tool", argv, params, started)
            tool_args = ToolArgs(params, source=ctx.stdin.read_all)
            calling = (name, "tool", argv, params, started)
            if active is not None and not (registered.is_async or active.inline or ctx.isolate_tools):
                value = _contained_call(active, calling, registered.callback, tool_args)
            elif registered.is_async and active is not None and active.tracer is not None:
                call = telemetry.carry_context(functools.partial(registered.callback, tool_args))
                value = self._contained(ctx, active, name, call, True, calling)
            else:
                value = self._contained(ctx, active, name, registered.callback, registered.is_async, calling, tool_args)
            if isinstance(value, BaseException):
                return self._fail(ctx, name, argv, params, started, self._failure_text(value)), 0, 0
            if type(value) is str and value.isascii():
                out = value                 # the common result, as result_text() would leave it
            else:
                try:
                    out = result_text(value)
                except BaseException as e:    # a cycle, a non-string key, an unprintable object
                    return self._fail(ctx, name, argv, params, started, cannot_print(e)), 0, 0
            if self.validate_output:
                mismatch = self._result_mismatch(registered.tool_def, out)
                if mismatch is not None:
                    return self._fail(ctx, name, argv, params, started, mismatch), 0, 0
            ctx.out(out)
            if active is not None:
                active.trace.append(TraceEntry(name, "tool", list(argv), params, 0,
                                               (time.perf_counter() - started) * 1000, len(out)))
                if registered.revert is not None:
                    active.trace[-1].output = out           # what its revert will be given
            return 0, len(out), 0
        return run

    def _result_mismatch(self, tool_def: ToolDef, out: str) -> Optional[str]:
        """With validate_output on, why a tool's printed result is not what its output schema
        says (None when it is, or when nothing is checked)."""
        schema = tool_def.output_schema
        if not self.validate_output or not schema:
            return None
        try:
            value = json.loads(out)
        except ValueError:
            return "the result is not JSON, but the tool's output schema says what JSON it prints"
        where = result_mismatch(value, schema)
        return None if where is None else f"the result does not match its output schema: {where}"

    def _through_hooks(self, ctx, active: Optional[_Execution], call: ToolCall, invoke: Callable,
                       revalidate: Callable) -> int:
        """A call with its hooks; in a journaled run, replayed, decided or recorded there."""
        journal = active.journal if active is not None else None
        if journal is None:
            return self._guarded(ctx, active, call, invoke, revalidate)
        from .journal import decision_status

        def live(out, err):
            with _writing_to(ctx, out, err):
                return self._guarded(ctx, active, call, invoke, revalidate)

        def decided(paused: ToolCall, decision, out, err):
            started = time.perf_counter()
            with _writing_to(ctx, out, err):
                status = decision_status(paused, decision, ctx.err, lambda c: invoke(c)[0], revalidate)
            if isinstance(decision, Deny):        # (an allowed call is logged by invoke)
                self._trace(ctx, paused.name, paused.kind, paused.argv, paused.params, status, started)
            return status
        # a resumed run's log is the whole run's: the calls answered from the journal are in it
        replayed = journal.replaying
        started = time.perf_counter()
        status = journal.perform(ctx.out, ctx.err, call, live, decided)
        if replayed:
            self._trace(ctx, call.name, call.kind, call.argv, call.params, status, started)
        return status

    def _guarded(self, ctx, active: Optional[_Execution], call: ToolCall, invoke: Callable,
                 revalidate: Callable) -> int:
        """A tool call with its hooks and its span: invoke(call) -> (status, out bytes, err
        bytes) runs only if every before_tool hook allows it."""
        tracer = active.tracer if active is not None else None
        if tracer is None:
            return self._hooked(ctx, call, invoke, revalidate, None).exit_code
        with telemetry.tool_span(tracer, call) as span:
            result = self._hooked(ctx, call, invoke, revalidate, tracer)
            telemetry.end_tool(span, result)
        return result.exit_code

    def _hooked(self, ctx, call: ToolCall, invoke: Callable, revalidate: Callable, tracer) -> ToolCallResult:
        started = time.perf_counter()
        for fn, is_async in self.hooks.before:
            value = self._run_hook(ctx, call.name, lambda fn=fn, call=call: fn(call), is_async, tracer)
            if isinstance(value, Pause):
                value = self._pause(ctx, call, value.reason)
            if isinstance(value, BaseException):
                reason: Optional[str] = f"before_tool failed: {self._shown(failure_message(value))}"
            else:
                try:
                    reason, call = decide(value, call, revalidate)
                except FlagError as e:
                    reason = bounded(f"before_tool gave invalid parameters: {e}")
            if reason is not None:
                message = f"{call.name}: denied: {reason}\n"
                ctx.err(message)
                self._trace(ctx, call.name, call.kind, call.argv, call.params, DENIED, started, 0, len(message))
                result = ToolCallResult(DENIED, 0, len(message), (time.perf_counter() - started) * 1000, reason)
                self._after(ctx, call, result, tracer)
                return result
        status, out_bytes, err_bytes = invoke(call)
        result = ToolCallResult(status, out_bytes, err_bytes, (time.perf_counter() - started) * 1000)
        self._after(ctx, call, result, tracer)
        return result

    @staticmethod
    def _pause(ctx, call: ToolCall, reason: str):
        """Stop the run before `call` (a hook returned Pause): it ends paused, with a
        continuation. A Deny when the run cannot pause (its calls printed more than a
        continuation keeps)."""
        active = _tool_run(ctx)
        journal = active.journal if active is not None else None
        why_not = "this run keeps no journal" if journal is None else journal.can_pause()
        if journal is None or why_not is not None:
            return Deny(f"cannot pause for {reason!r}: {why_not}")
        journal.paused = (call, reason)
        raise Cancelled(f"paused before {call.name}: {reason}", PAUSED)

    def _after(self, ctx, call: ToolCall, result: ToolCallResult, tracer):
        for fn, is_async in self.hooks.after:
            value = self._run_hook(ctx, call.name, lambda fn=fn: fn(call, result), is_async, tracer)
            if isinstance(value, BaseException):
                ctx.err(f"{call.name}: after_tool failed: {self._shown(failure_message(value))}\n")

    def _run_hook(self, ctx, name: str, call: Callable, is_async: bool, tracer):
        """A hook's value, or the exception it raised; contained as a callback is."""
        if is_async and tracer is not None:
            call = telemetry.carry_context(call)
        return self._contained(ctx, _tool_run(ctx), name, call, is_async)

    def _shown(self, message: str) -> str:
        """A host failure's message as a script sees it (redaction.py is imported by the first
        failure, not with the tool layer)."""
        if not self.sanitize_errors_enabled:
            return message
        from .redaction import sanitize
        return sanitize(message)

    @classmethod
    def _contained(cls, ctx, run: Optional[_Execution], name: str, call: Callable, is_async: bool = False,
                   calling: Optional[tuple] = None, *args):
        """What host code, call(*args), returned, or the exception it raised or returned; the
        run knows meanwhile which callback it waits for: `calling`, (name, kind, argv, params,
        started) for its call log, should it stop waiting. Only Cancelled and LimitExceeded are
        raised: the execution stops, not just this command."""
        if run is not None and calling is None:
            calling = (name, "hook", [name], None, time.perf_counter())
        if run is None or is_async or run.inline or ctx.isolate_tools:
            elsewhere = functools.partial(call, *args) if args else call
            return _contained_call(run, calling, cls._call_elsewhere, name, elsewhere, is_async, ctx, run)
        return _contained_call(run, calling, call, *args)      # the common case: a sync callback, here

    @staticmethod
    def _call_elsewhere(name: str, call: Callable, is_async: bool, ctx, run: Optional[_Execution]):
        """call()'s value for a callback not called directly on the runner thread: an async one
        is awaited (on the caller's loop when there is one); under `timeout`
        (ctx.isolate_tools), or when the script runs on the caller's thread, it runs on a thread
        of its own that can be left behind."""
        budget = ctx.budget
        isolate = ctx.isolate_tools or run is None or run.inline
        if is_async:
            caller_loop = run.caller_loop if run is not None else None
            if isolate and caller_loop is None:
                import asyncio
                return call_on_own_thread(name, lambda: asyncio.run(call()), budget)
            return run_coroutine(call, caller_loop, budget, run.in_flight if run is not None else None)
        return call_on_own_thread(name, call, budget)

    def _failure_text(self, error: BaseException) -> str:
        """What a script's stderr says after `tool: ` when the callback raised `error`."""
        return failure_message(error)

    def _fail(self, ctx, name, argv, params, started, message: str, kind: str = "tool") -> int:
        ctx.err(f"{name}: {self._shown(message)}\n")
        self._trace(ctx, name, kind, argv, params, 1, started)
        return 1

    @staticmethod
    def _trace(ctx, name, kind, argv, params, status, started, out_bytes=0, err_bytes=0,
               state: Optional[str] = None):
        run = _tool_run(ctx)
        if run is not None:
            _log(run, name, kind, argv, params, status, started, out_bytes, err_bytes, state)

    @staticmethod
    def _count_call(ctx, name: str, kind: str, argv: list, params, started: float):
        run = _tool_run(ctx)
        if run is not None:
            _count_call(run, name, kind, argv, params, started)

    def _help_command(self, ctx, argv):
        """`help`: the tools; `help NAME`: a tool's flags, or bash's help for a builtin or
        keyword; `-s` the synopsis only, `-d` a one-line description; `--json` for tools."""
        from . import manual
        started = time.perf_counter()
        args = argv[1:]
        as_json = "--json" in args
        mode = next((a for a in args if a in ("-s", "-d", "-m")), "")
        args = [a for a in args if a not in ("--json", "-s", "-d", "-m")]
        defs = self.tool_defs()
        if not args or args == ["--list"]:
            if as_json:
                ctx.out(json.dumps([catalog.tool_json(t) for t in defs]) + "\n")
            else:
                ctx.out(catalog.list_text(defs))
                if not args:
                    ctx.out(("\n" if defs else "") + "Shell builtins and keywords (help NAME; "
                           "text commands: NAME --help):\n" + manual.names_list() + "\n")
            self._trace(ctx, "help", "help", argv, None, 0, started)
            return 0
        status = 0
        for name in args:
            registered = self.tools.get(name)
            if registered is None:
                text = "" if as_json else manual.builtin_help(name, "" if mode == "-m" else mode)
                if text:
                    ctx.out(text)
                    continue
                hint = suggest(name, list(self.tools))
                note = (f" (did you mean {hint!r}?)" if hint else
                        f" (a text command: {name} --help)" if name in self.commands() else "")
                ctx.err(f"help: no tool or builtin named {name!r}{note}\n")
                status = 1
                continue
            d = registered.tool_def
            if as_json:
                ctx.out(json.dumps(catalog.tool_json(d)) + "\n")
            elif mode == "-s":
                ctx.out(f"{d.name}: {catalog.usage_line(d.name, d.input_schema)}\n")
            elif mode == "-d":
                ctx.out(f"{d.name} - {catalog.one_line(d.description)}\n")
            else:
                ctx.out(catalog.tool_help_text(d))
        self._trace(ctx, "help", "help", argv, None, status, started)
        return status

    def _discover_command(self, ctx, argv):
        started = time.perf_counter()
        args = argv[1:]
        as_json = "--json" in args
        args = [a for a in args if a != "--json"]
        defs = self.tool_defs()
        if args[:1] == ["--categories"]:
            counts: dict = {}
            for t in defs:
                if t.category:
                    counts[t.category] = counts.get(t.category, 0) + 1
            if as_json:
                ctx.out(json.dumps([{"category": c, "tools": n} for c, n in sorted(counts.items())]) + "\n")
            else:
                ctx.out("".join(f"{c} ({n})\n" for c, n in sorted(counts.items())))
            self._trace(ctx, "discover", "discover", argv, None, 0, started)
            return 0
        limit = DISCOVER_LIMIT
        if len(args) == 4 and args[2] == "--limit" and args[3].isdigit():
            limit, args = int(args[3]), args[:2]
        if len(args) == 2 and args[0] in ("--category", "--tag", "--search"):
            key, value = args
            if key == "--category":
                found = [t for t in defs if t.category == value]
            elif key == "--tag":
                found = [t for t in defs if value in t.tags]
            else:
                found = catalog.search(defs, value)
            shown = found[:limit]
            if as_json:
                ctx.out(json.dumps([catalog.tool_json(t) for t in shown]) + "\n")
            else:
                ctx.out(catalog.list_text(shown))
                if len(found) > limit:
                    ctx.out(f"({len(found) - limit} more: narrow the search, or add --limit N)\n")
            self._trace(ctx, "discover", "discover", argv, None, 0 if found else 1, started)
            return 0 if found else 1
        ctx.err("discover: usage: discover --categories | --category NAME | --tag TAG | --search TEXT "
               "[--limit N] [--json]\n")
        return 2


def _log(run: _Execution, name, kind, argv, params, status, started, out_bytes=0, err_bytes=0, state=None):
    """One entry of the run's call log."""
    if state is None:
        state = "done" if status == 0 else "denied" if status == DENIED else "failed"
    run.trace.append(TraceEntry(name, kind, list(argv), params, status, (time.perf_counter() - started) * 1000,
                                out_bytes, err_bytes, state))


def _contained_call(run: Optional[_Execution], calling: Optional[tuple], call: Callable, *args):
    """What call(*args) returned, or the exception it raised (only Cancelled and LimitExceeded
    are raised); the run, if any, knows meanwhile which callback it waits for, `calling` (see
    ScriptedTool._contained)."""
    if run is not None:
        run.calling = calling
    try:
        return call(*args)
    except (Cancelled, LimitExceeded):
        raise
    except BaseException as e:    # SystemExit, KeyboardInterrupt on a runner thread ...
        return e
    finally:
        if run is not None:
            run.calling = None


def _count_call(run: _Execution, name: str, kind: str, argv: list, params, started: float):
    """One more tool call of the run: past max_tool_calls it is logged as not started and the
    run ends (LimitExceeded)."""
    run.tool_calls += 1
    if run.tool_calls > run.limits.max_tool_calls:
        _refuse_call(run, name, kind, argv, params, started)


def _refuse_call(run: _Execution, name: str, kind: str, argv: list, params, started: float):
    """The call past max_tool_calls: logged as not started, and the run ends (LimitExceeded)."""
    limit = run.limits.max_tool_calls
    _log(run, name, kind, argv, params, 1, started, state="not started")
    raise LimitExceeded("max_tool_calls", f"tool call limit exceeded: more than {limit} calls "
                                          f"(max_tool_calls); {name} was not called")


@dataclass
class Rollback:
    """What ScriptedTool.rollback did: the calls reverted, those whose revert failed (with the
    message), and those whose tool has no revert."""
    reverted: list = field(default_factory=list)
    failed: list = field(default_factory=list)
    irreversible: list = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return not self.failed and not self.irreversible


async def _awaited(value):
    return await value


@contextlib.contextmanager
def _writing_to(ctx, out: Callable, err: Callable):
    """The command context's output streams replaced for the time of one call (a journal
    records what the call prints)."""
    saved = ctx.out, ctx.err
    ctx.out, ctx.err = out, err
    try:
        yield
    finally:
        ctx.out, ctx.err = saved


def _dry_run_answer(tool_def: ToolDef, params: Optional[dict]) -> str:
    """What a valid `TOOL ... --dry-run` prints: a minimal instance of the tool's result where
    its output schema is known (so a plan follows the script's jq paths), else the report of
    the parsed call."""
    if tool_def.output_schema:
        return json.dumps(minimal_instance(tool_def.output_schema)) + "\n"
    return _dry_run_report(tool_def.name, params)


def _dry_run_report(tool: str, params: Optional[dict], error: Optional[str] = None) -> str:
    """What `TOOL ... --dry-run` prints: the parsed call, without calling the tool."""
    report = {"dry_run": True, "tool": tool, "valid": error is None}
    if error is None:
        report["params"] = params
    else:
        report["error"] = error
    return json.dumps(report, sort_keys=True, separators=(",", ":")) + "\n"


class Session:
    """Successive scripts in one shell: variables and functions persist between calls."""

    def __init__(self, tool: ScriptedTool):
        self.tool = tool
        self.shell_session = ShellSession()

    def execute(self, commands, stdin: str = "", cancel: Optional[CancelToken] = None,
                on_output: Optional[Callable] = None) -> ToolResponse:
        return self.tool.execute(commands, stdin, cancel, on_output, _session=self.shell_session)

    def snapshot(self, key=None, compress: bool = False) -> bytes:
        """The session's shell state and files as bytes (tools/snapshot.py)."""
        from .snapshot import snapshot_of_session
        return snapshot_of_session(self, key, compress)

    def restore(self, data: bytes, key=None):
        """Bring the session back to a snapshot (SnapshotError, and nothing changed, if refused)."""
        from .snapshot import restore_session
        restore_session(self, data, key)


class Execution:
    """A validated, single-use execution (ToolExecution in the seed's contract)."""

    def __init__(self, tool: ScriptedTool, commands: str):
        self.tool = tool
        self.commands = commands
        self.used = False

    def run(self, on_output: Optional[Callable] = None, cancel: Optional[CancelToken] = None) -> ToolResponse:
        if self.used:
            raise RuntimeError("an execution runs once")
        self.used = True
        return self.tool.execute(self.commands, cancel=cancel, on_output=on_output)

    execute = run                    # the seed's name


_B = TypeVar("_B", bound="HostPolicyOptions")


class HostPolicyOptions:
    """The builder options both tools share: what the host allows (network, hooks) and how it
    watches (telemetry). The builders are dataclasses holding these four fields."""
    _network: tuple
    _network_policy: Optional[NetworkPolicy]
    _hooks: Hooks
    _telemetry: Optional[telemetry.TelemetryConfig]

    def network(self: _B, allow: list, credentials: Optional[dict] = None, max_requests: Optional[int] = None,
                max_bytes: Optional[int] = None) -> _B:
        """Let `curl` fetch URLs under these entries (`scheme://host[:port][/path]`, GET and
        HEAD; `(entry, ["POST", ...])` for more methods), nothing else. `credentials`
        ({origin: {header: value}}) are added to requests at the boundary, never shown to the
        script; non-public addresses only when an entry names them; `max_requests` and
        `max_bytes` bound one execution. SECURITY.md, "Network", has the exact rules."""
        from ..commands.urlpolicy import NetworkPolicy
        self._network_policy = NetworkPolicy(allow, credentials, max_requests, max_bytes)
        self._network = self._network_policy.urls
        return self

    def before_tool(self: _B, fn: Callable) -> _B:
        """fn(call: ToolCall) -> None | Deny("reason") | dict of replacement params, sync or
        async, called before every tool call with the call as dispatched (hooks.py); for a
        BashTool's custom builtins the arguments are `call.params["args"]`."""
        self._hooks.before.append((fn, is_async_callable(fn)))
        return self

    def after_tool(self: _B, fn: Callable) -> _B:
        """fn(call: ToolCall, result: ToolCallResult), sync or async, after every tool call."""
        self._hooks.after.append((fn, is_async_callable(fn)))
        return self

    def telemetry(self: _B, tracer_provider=None, record_script: bool = False,
                  enabled: bool = True) -> _B:
        """OpenTelemetry spans (telemetry.py): to `tracer_provider`, or to the global one once
        the host sets it (the default, without calling this); `record_script` adds the
        script's text to its span; `enabled=False` records nothing."""
        self._telemetry = telemetry.TelemetryConfig(tracer_provider, record_script, enabled)
        return self



def _shadowing(tool_def: ToolDef, shadow: Optional[bool]) -> ToolDef:
    """`tool_def`, with `shadow` when one is given."""
    return tool_def if shadow is None else dataclasses.replace(tool_def, shadow=shadow)


@dataclass
class ScriptedToolBuilder(HostPolicyOptions):
    """The seed's builder: ScriptedTool.builder("api").short_description(...).tool(def, cb)...build()."""
    name: str
    _short_description: str = ""
    _validate_output: bool = False
    _continuation_key: Optional[bytes] = None
    _env: dict = field(default_factory=dict)
    _limits: Optional[ExecutionLimits] = None
    _compact: bool = False
    _sanitize: bool = True
    _tools: list = field(default_factory=list)
    _context: list = field(default_factory=list)
    _filesystem: object = None
    _network: tuple = ()
    _network_policy: Optional[NetworkPolicy] = None
    _hooks: Hooks = field(default_factory=Hooks)
    _telemetry: Optional[telemetry.TelemetryConfig] = None
    _python: bool = False

    def short_description(self, text: str) -> "ScriptedToolBuilder":
        self._short_description = text
        return self

    def tool(self, tool_def: ToolDef, callback: Callable, shadow: Optional[bool] = None,
             revert: Optional[Callable] = None) -> "ScriptedToolBuilder":
        """A tool; `shadow=True` lets it take the name of a shell builtin or command;
        `revert(call, output)` undoes one of its calls (ScriptedTool.rollback)."""
        self._tools.append((_shadowing(tool_def, shadow), callback, is_async_callable(callback), revert))
        return self

    def async_tool(self, tool_def: ToolDef, callback: Callable, shadow: Optional[bool] = None,
                   revert: Optional[Callable] = None) -> "ScriptedToolBuilder":
        self._tools.append((_shadowing(tool_def, shadow), callback, True, revert))
        return self

    tool_fn = tool                   # the seed's names
    async_tool_fn = async_tool

    def function(self, fn, shadow: Optional[bool] = None) -> "ScriptedToolBuilder":
        """An @tool-decorated (or plain) Python function, or a bound method; `shadow=True` lets
        it take the name of a shell builtin or command."""
        if shadow is not None:
            fn = fn if isinstance(fn, DecoratedTool) else tool(fn, register=False)
            fn = DecoratedTool(fn.fn, _shadowing(fn.tool_def, shadow), fn.print_none, fn.revert)
        self._tools.append(("function", fn, None, None))
        return self

    def env(self, key: str, value: str) -> "ScriptedToolBuilder":
        self._env[key] = str(value)
        return self

    def limits(self, limits: ExecutionLimits) -> "ScriptedToolBuilder":
        self._limits = limits
        return self

    def continuation_key(self, key: bytes) -> "ScriptedToolBuilder":
        """Sign the continuations of paused runs with `key`, and resume only those signed with
        it (a continuation that leaves the process should be signed)."""
        self._continuation_key = key
        return self

    def validate_output(self, enabled: bool = True) -> "ScriptedToolBuilder":
        """Check each tool's result against its output schema: a result that differs fails
        the call, naming the JSON path that differs."""
        self._validate_output = enabled
        return self

    def compact_prompt(self, compact: bool = True) -> "ScriptedToolBuilder":
        self._compact = compact
        return self

    def sanitize_errors(self, enabled: bool = True) -> "ScriptedToolBuilder":
        self._sanitize = enabled
        return self

    def context(self, markdown: str) -> "ScriptedToolBuilder":
        self._context.append(markdown)
        return self

    def context_dir(self, directory: str) -> "ScriptedToolBuilder":
        """Append each .md file of a folder (in name order) to the system prompt."""
        from .executables import context_blocks
        self._context.extend(context_blocks(directory))
        return self

    def mcp_server(self, command: Optional[list] = None, url: Optional[str] = None,
                   env: Optional[dict] = None) -> "ScriptedToolBuilder":
        """Every tool of an MCP server (a stdio command line, or a streamable-HTTP URL)."""
        from .mcp_client import tools_from_mcp
        for tool_def, callback in tools_from_mcp(command, url, env):
            self._tools.append((tool_def, callback, False, None))
        return self

    def openapi(self, spec, base_url: str, headers: Optional[dict] = None) -> "ScriptedToolBuilder":
        """Every operation of an OpenAPI 3 document, called through HTTP."""
        from .openapi import tools_from_openapi
        for tool_def, callback in tools_from_openapi(spec, base_url, headers):
            self._tools.append((tool_def, callback, False, None))
        return self

    def executables(self, directory: str, stub: bool = False, timeout: float = 30.0) -> "ScriptedToolBuilder":
        """Every self-describing executable of a folder becomes a tool (others cannot run)."""
        from .executables import scan
        for tool_def, callback in scan(directory, stub, timeout):
            self._tools.append((tool_def, callback, False, None))
        return self

    def filesystem(self, fs) -> "ScriptedToolBuilder":
        """Files for scripts: a MemoryFs shared by every call, or a factory such as the MemoryFs
        class itself (a fresh, empty filesystem per call: scratch files in /tmp)."""
        self._filesystem = fs
        return self

    def python(self, enabled: bool = True) -> "ScriptedToolBuilder":
        """`python3` and `python` in a logic-only tool too: Python programs on pydantic-monty,
        with no files (the `python` extra; a tool with a filesystem has them already)."""
        self._python = enabled
        return self

    def build(self) -> ScriptedTool:
        tool = ScriptedTool(self.name, self._short_description, self._env, self._limits,
                            self._compact, self._sanitize, self._context, self._filesystem)
        tool.python_enabled = self._python
        tool.network_allow = self._network
        tool.network_policy = self._network_policy
        tool.hooks = self._hooks.copy()
        tool.telemetry = self._telemetry
        tool.validate_output = self._validate_output
        tool.continuation_key = self._continuation_key
        for tool_def, callback, is_async, revert in self._tools:
            if tool_def == "function":
                tool.add(callback)
            else:
                tool.register(tool_def, callback, is_async, revert)
        return tool
