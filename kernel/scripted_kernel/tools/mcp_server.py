"""A ScriptedTool served over MCP (PyPI `mcp` >= 2.3): the 2026-07-28 revision and the 2025
revisions its SDK negotiates, over stdio here and streamable HTTP through mcp_service.

One MCP tool carries a script (`commands` in; stdout, stderr, exit code, what stopped it and
the tool-call log out, as `structuredContent` under a declared `outputSchema`) and its
description is the system prompt; DiscoveryMode.WITH_DISCOVERY adds `<name>_discover`. A
stateful tool (a BashTool) also offers `<name>_session_open` and `<name>_session_close`: a
session handle (mcp_sessions.SessionHandles) named by the script tool's optional `session`
argument, so that a 2026-07-28 client, which has no `Mcp-Session-Id`, keeps a shell and files
across calls; a 2025-era client keeps its `Mcp-Session-Id` session as before.

Per call: the run's cancel flag (a CancelToken) is cancelled when the client goes away or
cancels; `_meta.progressToken` streams the output as progress notifications; a client that
declares the tasks extension may get a task instead (mcp_tasks.py); `_meta.traceparent`
parents the SDK's server span, under which our `execute_tool` span and each tool call's span
nest; with `approve`, each tool call is put to the client's user: an `elicitation/create`
request on a 2025-era connection, an `input_required` result on a 2026-07-28 one (the paused
run's continuation sealed in `requestState`, resumed by whichever worker gets the retry).
"""
from __future__ import annotations

import asyncio
import base64
import collections
import contextvars
import dataclasses
import json
import logging
import os
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Optional

from ..base.limits import CancelToken
from .containment import valid_unicode
from .mcp_client import McpError
from .mcp_results import OUTPUT_SCHEMA, trace_entries
# the session classes, for the imports of older code
from .mcp_sessions import SessionLimits, SessionPool, SessionRefused, StoredSessions, kept_bytes  # noqa: F401
from .scripted_tool import ScriptedTool, ToolResponse
from .toolset import DiscoveryMode, ScriptingToolSet

_CALLS = logging.getLogger("scripted_kernel.mcp")

TOOLS_TTL_MS = 300_000          # tools/list: the tools never change while a server lives
SESSION_ARGUMENT = {"type": "string", "description": "a session handle from <tool>_session_open: the call runs in "
                                                     "that session's shell and files"}
MAX_IDEMPOTENCY_KEY = 128           # (a key is kept with each session's record)
IDEMPOTENCY_ARGUMENT = {"type": "string", "minLength": 1, "maxLength": MAX_IDEMPOTENCY_KEY,
                        "description": "a key of your choosing: a call retried with the same key returns the "
                                       "first call's outcome instead of running again"}


@dataclass
class ServerOptions:
    """How the server treats calls (the service sets these from its configuration)."""
    approve: bool = False                 # every tool call is put to the client's user first
    task_after_seconds: float = 0.0       # a call still running after this becomes a task (0: only if asked)
    task_ttl_seconds: float = 600.0       # a finished task's result is kept this long
    task_max_bytes: int = 64 << 20        # the finished tasks' results kept, in all
    tasks: bool = True                    # offer the tasks extension
    key: Optional[bytes] = None           # seals requestState, signs handles and continuations (None: random)
    handle_ttl_seconds: float = 86400.0   # a session handle's lifetime
    request_state_seconds: float = 3600.0     # how long an approval may wait for its answer


# ---------------------------------------------------------------- one call

@dataclass
class Call:
    """One `tools/call` as a script run sees it: who asked (principal), on which protocol era,
    the run's cancel flag, and where its progress goes."""
    ctx: Any                              # the SDK's ServerRequestContext
    principal: str
    modern: bool
    cancel: CancelToken = field(default_factory=CancelToken)
    allowed: set = field(default_factory=set)      # tools the user allowed for all of this run
    progress: Optional["Progress"] = None
    output: Any = None                    # mcp_tasks.Output: what the run wrote so far, when kept
    http: Any = None                      # mcp_service.HttpExchange of the request, or None
    loop: Any = None                      # the request's event loop
    job: Any = None                       # the mcp_sessions.Job the call runs
    round: int = 0                        # approval rounds so far (2026-07-28 retries)

    def detach(self):
        """The run goes on without its request (it became a task): the client leaving no
        longer cancels it, and its progress goes nowhere."""
        if self.http is not None:
            self.http.forget(self.cancel)
        if self.progress is not None:
            self.progress.stop()


def make_call(ctx) -> Call:
    """The Call of a request: its principal (the digest of the bearer token it was let in
    with), its era, and the HTTP exchange it came on, which cancels the run if the client
    leaves."""
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS
    request = ctx.request
    http = None
    principal = ""
    if request is not None:
        http = request.scope.get("scripted.exchange")
        principal = request.scope.get("scripted.principal", "")
    call = Call(ctx, principal, ctx.protocol_version in MODERN_PROTOCOL_VERSIONS, http=http,
                loop=asyncio.get_running_loop())
    if http is not None:
        http.on_disconnect(call.cancel)
    meta = ctx.meta or {}
    # a client that asked for progress sent a token; in-process (the SDK's direct dispatcher)
    # the dispatcher holds it instead
    if meta.get("progress_token", meta.get("progressToken")) is not None or (request is None and call.modern):
        call.progress = Progress(ctx)
    return call


class Progress:
    """The output of a run as `notifications/progress` (progress: characters so far; message:
    the new text), for a client that asked for progress. Chunks written on the runner thread
    are put on the loop and sent in order, coalesced while a send is under way."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.loop = asyncio.get_running_loop()
        self.sent = 0
        self.pending: list = []
        self.sending: Optional[asyncio.Task] = None
        self.stopped = False

    def write(self, stream: str, text: str):
        """on_output: called on the runner thread."""
        if not self.stopped and text:
            self.loop.call_soon_threadsafe(self._queue, text)

    def _queue(self, text: str):
        self.pending.append(text)
        if self.sending is None or self.sending.done():
            self.sending = self.loop.create_task(self._send())

    async def _send(self):
        while self.pending and not self.stopped:
            text, self.pending = "".join(self.pending), []
            self.sent += len(text)
            try:
                await self.ctx.session.report_progress(self.sent, None, valid_unicode(text))
            except Exception:               # the client went away: its result has nowhere to go either
                self.stopped = True

    async def flush(self):
        """Let the last chunks out before the result."""
        if self.sending is not None:
            await asyncio.gather(self.sending, return_exceptions=True)

    def stop(self):
        self.stopped = True


# ---------------------------------------------------------------- the server

class ScriptServer:
    """The handlers of one MCP server: tools/list, tools/call (the script tool, the discover
    tool, the session tools), and the tasks extension's methods."""

    def __init__(self, tool: ScriptedTool, discover, runs, options: ServerOptions):
        from .mcp_tasks import Tasks
        self.options = options
        self.key = options.key or os.urandom(32)
        self.tool = tool
        self.discover = discover
        self.runs = runs                   # mcp_sessions: FreshRuns, PooledSessions or StoredSessions
        self.name = tool.name
        self.tasks = Tasks(options) if options.tasks else None
        self.handles = None
        if runs.keeps_sessions:
            from .mcp_sessions import SessionHandles
            self.handles = SessionHandles(self.key, options.handle_ttl_seconds)

    # -------------------------------------------------------- tools/list

    def tool_list(self) -> list:
        from mcp_types import Tool
        schema = json.loads(json.dumps(self.tool.input_schema()))
        schema.setdefault("properties", {})["idempotency_key"] = IDEMPOTENCY_ARGUMENT
        if self.handles is not None:
            schema["properties"]["session"] = SESSION_ARGUMENT
        tools = [Tool(name=self.name, description=self.tool.system_prompt(), input_schema=schema,
                      output_schema=OUTPUT_SCHEMA)]
        if self.discover is not None:
            tools.append(Tool(name=self.discover.name, description=self.discover.description(),
                              input_schema=self.discover.input_schema(), output_schema=OUTPUT_SCHEMA))
        if self.handles is not None:
            tools += self.handles.tools(self.name)
        return tools

    async def list_tools(self, ctx, params):
        from mcp_types import ListToolsResult
        return ListToolsResult(tools=self.tool_list(), ttl_ms=TOOLS_TTL_MS, cache_scope="private")

    # -------------------------------------------------------- tools/call

    async def call_tool(self, ctx, params):
        started = time.perf_counter()
        arguments = params.arguments or {}
        if params.name == self.name:
            return await self._script(ctx, params, arguments, started)
        if self.discover is not None and params.name == self.discover.name:
            commands = _text_argument(arguments, "commands")
            if commands is None:
                return _argument_error(self.discover.name, "commands")
            response = await asyncio.to_thread(contextvars.copy_context().run, self.discover.execute,
                                               {"commands": commands})
            return script_result(self.discover.name, started, response)
        if self.handles is not None and params.name in self.handles.tool_names(self.name):
            return await self.handles.serve(params.name, self.name, arguments, make_call(ctx), self.runs)
        from mcp.shared.exceptions import MCPError
        from mcp_types import INVALID_PARAMS
        raise MCPError(code=INVALID_PARAMS, message=f"unknown tool: {params.name}")

    async def _script(self, ctx, params, arguments: dict, started: float):
        from .mcp_tasks import Output
        commands = _text_argument(arguments, "commands")
        if commands is None:
            return _argument_error(self.name, "commands")
        key = arguments.get("idempotency_key")
        if key is not None and not (isinstance(key, str) and 0 < len(key) <= MAX_IDEMPOTENCY_KEY):
            return _argument_error(self.name, "idempotency_key", f"a string of 1 to {MAX_IDEMPOTENCY_KEY} characters")
        call = make_call(ctx)
        defer = self.tasks is not None and self.tasks.may_defer(ctx, params)
        if defer or call.progress is not None:
            call.output = Output(call.progress.write if call.progress is not None else None)
        try:
            call.job = self._job(call, arguments, commands)
        except McpError as refused:
            return script_result(self.name, started, _refusal(str(refused), "session"))
        answer = self.answer_for(call, started)
        if params.request_state is not None:
            try:
                state = json.loads(params.request_state)
                response = await self.resumed(call, state, (params.input_responses or {}).get(state["ask"]))
            except (ValueError, KeyError, TypeError):
                response = _refusal("the approval's state is not one this server made", "paused")
            return await answer(response)
        run = self._run(call)
        if defer and self.tasks is not None:
            return await self.tasks.run_or_defer(call, params, run, answer)
        return await answer(await run)

    def _job(self, call: Call, arguments: dict, commands: str):
        from .mcp_sessions import Job
        job = Job(commands, call.cancel, call.output.write if call.output is not None else None,
                  principal=call.principal, idempotency=arguments.get("idempotency_key"))
        handle = arguments.get("session")
        if handle is not None:
            if self.handles is None:
                raise McpError("this server keeps no sessions: call it without `session`")
            if not isinstance(handle, str):
                raise McpError("`session` is a handle from " + self.handles.open_name(self.name))
            job.session = self.handles.verify(handle, call.principal)
        elif self.runs.keeps_sessions:
            job.session = self.runs.connection_session(call)
        return job

    async def _run(self, call: Call) -> ToolResponse:
        _REQUEST.set(call)                         # for the approval hook, on the runner thread
        try:
            return await self.runs.run(call.job)
        finally:
            if call.http is not None:
                call.http.forget(call.cancel)

    async def resumed(self, call: Call, state: dict, answer) -> ToolResponse:
        """A paused run going on with the user's answer (a 2026-07-28 retry, or a task's
        tasks/update), from its continuation, in this process or another."""
        continuation = base64.b64decode(state["continuation"])
        decision, allow_all = approval_decision(answer)
        call.allowed = set(state.get("allowed", ()))
        if allow_all:
            call.allowed.add(state.get("tool", ""))
        call.job.version = state.get("version")
        call.round = state.get("round", 0) + 1
        _REQUEST.set(call)
        return await self.runs.resume(call.job, continuation, decision)

    def answer_for(self, call: Call, started: float):
        """answer(response): the result of a finished run: paused on a 2026-07-28 connection,
        the approval as input_required; otherwise the script's result."""
        async def answer(response: ToolResponse):
            if call.progress is not None:
                await call.progress.flush()
            if response.status == "paused" and call.modern and response.continuation is not None:
                return approval_round(call, call.job, response)
            gone_at = call.http.gone_at if call.http is not None else None
            return script_result(self.name, started, response, gone_at=gone_at)
        return answer


def _text_argument(arguments: dict, name: str) -> Optional[str]:
    value = arguments.get(name)
    return value if isinstance(value, str) else None


def _argument_error(tool: str, name: str, what: str = "a string"):
    from mcp_types import CallToolResult, TextContent
    return CallToolResult(content=[TextContent(type="text", text=f"{tool}: `{name}` must be {what}")],
                          is_error=True)


def _refusal(message: str, error: str) -> ToolResponse:
    return ToolResponse("", f"bash: {message}\n", 1, error)


# ---------------------------------------------------------------- results

def script_result(name: str, started: float, response: ToolResponse, gone_at: Optional[float] = None):
    """A response as MCP carries it (undecodable bytes become U+FFFD), logged as one line. A
    failing script is an error result (isError: true) that still carries its stdout, stderr
    and exit code: a client that only looks at isError knows it failed, a model reads why."""
    from mcp_types import CallToolResult, TextContent
    output = {"stdout": valid_unicode(response.stdout), "stderr": valid_unicode(response.stderr),
              "exit_code": response.exit_code, "error": response.error, "trace": trace_entries(response)}
    log_call(name, started, response, gone_at)
    text = _indented_json({k: output[k] for k in ("stdout", "stderr", "exit_code")})
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=output,
                          is_error=response.exit_code != 0)


def _indented_json(fields: dict) -> str:
    """json.dumps(fields, indent=2) of a flat object, without it: with an indent, json builds
    its encoder as closures that refer to each other, a cycle of some 30 objects per call that
    only the cyclic collector frees (a string or number alone takes the C encoder)."""
    members = ",\n".join(f"  {json.dumps(key)}: {json.dumps(value)}" for key, value in fields.items())
    return "{\n" + members + "\n}"


def log_call(name: str, started: float, response: ToolResponse, gone_at: Optional[float] = None):
    """One JSON line per call; for a client that went away, how soon after its run stopped."""
    line = {"event": "call", "tool": name, "pid": os.getpid(),
            "duration_ms": round((time.perf_counter() - started) * 1000, 1), "exit_code": response.exit_code,
            "bytes_out": len(response.stdout) + len(response.stderr), "error": response.error}
    if gone_at is not None:
        line["client_gone"] = True
        line["stopped_after_ms"] = round((time.monotonic() - gone_at) * 1000, 1)
    _CALLS.info(json.dumps(line))


def log_to_stderr():
    """The server's log: one JSON line per event on stderr (logger scripted_kernel.mcp), never
    on stdout, which may be the stdio transport; the SDK's per-request lines stay below WARNING."""
    if not _CALLS.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        _CALLS.addHandler(handler)
        _CALLS.setLevel(logging.INFO)
        _CALLS.propagate = False
    for noisy in ("mcp", "uvicorn.error", "httpx2", "httpx"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


# ---------------------------------------------------------------- approval

# The call a script runs for: the runner thread sees it (the run copies the caller's context),
# and the approval hook asks that call's client.
_REQUEST: contextvars.ContextVar = contextvars.ContextVar("scripted_mcp_call", default=None)
APPROVAL_SCHEMA = {"type": "object", "required": ["decision"], "properties": {
    "decision": {"type": "string", "title": "Decision", "enum": ["allow", "allow_all", "deny"],
                 "enumNames": ["Allow", "Allow all calls of this tool", "Deny"]}}}


class _AllowedAll:
    """The tools a 2025-era connection's user allowed for all its calls ("Allow all"), for the
    last 4,096 connections."""

    def __init__(self, capacity: int = 4096):
        self.capacity = capacity
        self.names: collections.OrderedDict = collections.OrderedDict()
        self.lock = threading.Lock()

    def get(self, connection: str) -> set:
        with self.lock:
            return set(self.names.get(connection, ()))

    def add(self, connection: str, name: str):
        with self.lock:
            self.names.setdefault(connection, set()).add(name)
            self.names.move_to_end(connection)
            while len(self.names) > self.capacity:
                self.names.popitem(last=False)


_ALLOWED_ALL = _AllowedAll()


def connection_key(ctx) -> str:
    """What names a 2025-era connection: its Mcp-Session-Id over HTTP; stdio has one."""
    request = ctx.request
    if request is None:
        return "stdio"
    return request.headers.get("mcp-session-id", "")


def approval_hook(call):
    """A before_tool hook that puts each call to the MCP client's user. On a 2026-07-28
    connection the run pauses (the call is answered as input_required and resumed on the
    retry); on a 2025-era one the user is asked by an elicitation request, and a client without
    elicitation is refused every call. Outside an MCP request nothing runs unapproved."""
    from .hooks import Deny, Pause
    request: Optional[Call] = _REQUEST.get()
    if request is None:
        return Deny("approval required, and no MCP client to ask")
    if call.name in request.allowed:
        return None
    if request.modern:
        return Pause("approval required")
    return _ask_by_elicitation(request, call)


def _ask_by_elicitation(request: Call, call):
    from .hooks import Deny
    ctx = request.ctx
    capabilities = ctx.session.client_capabilities
    if capabilities is None or capabilities.elicitation is None:
        return Deny("approval required, and this MCP client cannot be asked (no elicitation support)")
    connection = connection_key(ctx)
    if call.name in _ALLOWED_ALL.get(connection):
        return None
    future = asyncio.run_coroutine_threadsafe(
        ctx.session.elicit_form(approval_question(call), APPROVAL_SCHEMA, related_request_id=ctx.request_id),
        request.loop)
    from ..base.limits import check_stop
    while True:                        # within the script's deadline and cancel flag
        try:
            answer = future.result(timeout=0.05)
            break
        except TimeoutError:
            try:
                check_stop()
            except BaseException:
                future.cancel()
                raise
        except Exception:              # the client failed the request
            return Deny("the client did not answer")
    decision, allow_all = approval_decision(answer)
    if allow_all:
        _ALLOWED_ALL.add(connection, call.name)
    return decision if decision != "allow" else None


def approval_question(call) -> str:
    return (f"The script wants to run `{' '.join(map(str, call.argv))}`"
            f" ({call.name} with {json.dumps(call.params, default=str)}). Allow it?")


def approval_decision(answer) -> tuple:
    """(the decision for tool.resume / the hook: "allow" or a Deny, whether to allow every call
    of the tool from now on) from an elicitation's answer."""
    from .hooks import Deny
    action = getattr(answer, "action", None)
    content = getattr(answer, "content", None)
    if isinstance(answer, dict):
        action, content = answer.get("action"), answer.get("content")
    decision = (content or {}).get("decision") if action == "accept" else None
    if decision in ("allow", "allow_all"):
        return "allow", decision == "allow_all"
    return Deny("the user declined" if decision == "deny" or action != "cancel" else "the user cancelled"), False


def approval_round(call: Call, job, response: ToolResponse):
    """A paused run as a 2026-07-28 `input_required` result: the pending call as an elicitation,
    the continuation (and what the retry needs to resume it) as `requestState`, which the SDK
    seals and checks on the retry."""
    from mcp_types import ElicitRequest, ElicitRequestFormParams, InputRequiredResult
    pending = response.pending
    ask = f"approve-{call.round}"          # a new key each round
    state = {"continuation": base64.b64encode(response.continuation or b"").decode("ascii"), "ask": ask,
             "tool": pending.name if pending is not None else "", "allowed": sorted(call.allowed),
             "version": job.version, "round": call.round}
    question = ElicitRequest(params=ElicitRequestFormParams(
        message=approval_question(pending) if pending is not None else "Allow the script to go on?",
        requested_schema=APPROVAL_SCHEMA))
    return InputRequiredResult(input_requests={ask: question}, request_state=json.dumps(state))


# ---------------------------------------------------------------- building

def build_server(tool: ScriptedTool, mode: DiscoveryMode = DiscoveryMode.ALL, *, session_tools=None,
                 session_limits: Optional[SessionLimits] = None, stored_sessions=None,
                 approve: bool = False, options: Optional[ServerOptions] = None):
    """The MCP server (the SDK's low-level Server) offering `tool`. `session_tools`: a factory
    of one tool per session (a BashTool's shell and files are a session's own), kept in this
    process within `session_limits`; `stored_sessions`: sessions kept in a session store
    instead (mcp_sessions.StoredSessions); neither: a fresh interpreter per call."""
    from mcp.server import Server
    from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity

    from .. import __version__
    from .mcp_sessions import FreshRuns, PooledSessions
    options = options or ServerOptions(approve=approve)
    if approve:
        options = dataclasses.replace(options, approve=True)
    offered = ScriptingToolSet(tool, mode).tools()
    if stored_sessions is not None:
        runs = stored_sessions
    elif session_tools is not None:
        runs = PooledSessions(session_tools, session_limits or SessionLimits())
    else:
        runs = FreshRuns(offered[0])
    if options.approve:
        runs.add_hook(approval_hook)
    scripts = ScriptServer(offered[0], offered[1] if len(offered) > 1 else None, runs, options)
    server = Server(scripts.name, version=__version__, instructions=scripts.tool.short_description or None,
                    on_list_tools=scripts.list_tools, on_call_tool=scripts.call_tool)
    security = RequestStateSecurity(keys=[_derived(scripts.key, "request-state")],
                                    ttl=options.request_state_seconds, bind_principal=_principal_of)
    server.middleware.append(RequestStateBoundary(security, default_audience=scripts.name))
    if scripts.tasks is not None:
        scripts.tasks.install(server, scripts)
    server.scripts = scripts                 # type: ignore[attr-defined]  # for the service and tests
    log_to_stderr()
    return server


def _derived(key: bytes, purpose: str) -> bytes:
    import hashlib
    import hmac
    return hmac.new(key, f"scripted-mcp/{purpose}".encode(), hashlib.sha256).digest()


def _principal_of(ctx) -> Optional[str]:
    """A sealed requestState is good only for the principal it was made for: the digest of the
    bearer token (mcp_service puts it on the request); none on stdio and tokenless loopback."""
    request = ctx.request
    principal = request.scope.get("scripted.principal", "") if request is not None else ""
    return principal or None


async def serve_stdio(server):
    from mcp.server.stdio import stdio_server
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def serve(tool: ScriptedTool, mode: DiscoveryMode = DiscoveryMode.ALL, approve: bool = False,
          session_tools=None, options: Optional[ServerOptions] = None):
    """Serve over stdio until the client goes away (HTTP: mcp_service.create_app). While it
    serves, the process's file descriptor 1 points at stderr, so that nothing printed by a
    callback reaches the protocol."""
    import anyio
    server = build_server(tool, mode, approve=approve, session_tools=session_tools, options=options)
    anyio.run(serve_stdio, server)


__all__ = ["Call", "ServerOptions", "build_server", "script_result", "serve"]
