"""A ScriptedTool served over MCP (PyPI `mcp`, v1 API): one MCP tool (`commands` in; stdout,
stderr, exit_code out) whose description is the system prompt, with `<name>_discover` in
DiscoveryMode.WITH_DISCOVERY; BashTool sessions kept per MCP session within limits."""
from __future__ import annotations

import asyncio
import contextvars
import json
import logging
import os
import sys
import time
import weakref
from dataclasses import dataclass
from typing import Optional, TypedDict

from .mcp_client import McpError
from .containment import valid_unicode
from .scripted_tool import ScriptedTool
from .toolset import DiscoveryMode, ScriptingToolSet


class ScriptOutput(TypedDict):
    """The structured result of one script run."""
    stdout: str
    stderr: str
    exit_code: int


# ---------------------------------------------------------------- serve

_CALLS = logging.getLogger("scripted_kernel.mcp")


def build_server(tool: ScriptedTool, mode: DiscoveryMode = DiscoveryMode.ALL, host: str = "127.0.0.1",
                 port: int = 8000, *, stateless: bool = False, session_tools=None, check_host: bool = True,
                 session_limits: Optional["SessionLimits"] = None,
                 stored_sessions: Optional["StoredSessions"] = None, approve: bool = False):
    """A FastMCP server offering `tool` (and its discover tool). `stateless`: MCP's stateless
    streamable-HTTP mode with JSON responses; `session_tools`: a factory of one tool per MCP
    session (a BashTool's shell and files are a session's own), bounded by `session_limits`;
    `check_host`: refuse Host headers other than loopback (DNS rebinding protection; off when
    a token guards the server); `stored_sessions`: BashTool sessions kept in a session store,
    named by the request's Mcp-Session-Id (mcp_service mints and checks it), served statelessly;
    `approve`: every tool call is first put to the client's user as an elicitation (Allow /
    Allow all of this tool / Deny; see ask_client)."""
    from mcp.server.fastmcp import FastMCP
    from mcp.server.transport_security import TransportSecuritySettings
    if approve:
        tool.before_tool(ask_client)
        if session_tools is not None:
            session_tools = _with_approval(session_tools)
    offered = ScriptingToolSet(tool, mode).tools()
    tool = offered[0]
    security = None if check_host else TransportSecuritySettings(enable_dns_rebinding_protection=False)
    server = FastMCP(tool.name, instructions=tool.short_description or None, host=host, port=port,
                     log_level="WARNING", stateless_http=stateless, json_response=stateless,
                     transport_security=security)
    # the server's version, which the MCP package otherwise looks up in the installed
    # distributions on every stateless request
    from .. import __version__
    server._mcp_server.version = __version__
    _log_calls_to_stderr()
    sessions = SessionPool(session_tools, session_limits or SessionLimits()) if session_tools else None

    async def run_script(commands: str):
        started = time.perf_counter()
        _REQUEST.set((server.get_context(), asyncio.get_running_loop()))     # for ask_client
        if stored_sessions is not None:
            request = server.get_context().request_context.request
            sid = request.headers.get("mcp-session-id", "") if request is not None else ""
            response = await stored_sessions.execute(sid, commands)
        elif sessions is not None:
            response = await sessions.execute(server.get_context().session, commands)
        else:
            # each request runs on a runner thread of its own: a hung tool never blocks the others
            response = await tool.execute_async(commands)
        return _result(tool.name, started, response)

    _add_script_tool(server, run_script, tool.name, tool.system_prompt())
    if len(offered) > 1:
        discover = offered[1]

        async def lookup(commands: str):
            started = time.perf_counter()
            response = await asyncio.to_thread(discover.execute, {"commands": commands})
            return _result(discover.name, started, response)
        _add_script_tool(server, lookup, discover.name, discover.description())
    return server


def _add_script_tool(server, fn, name: str, description: str):
    """Offer `fn` with ScriptOutput as its output schema. It returns a finished CallToolResult,
    which the MCP package checks with the output model only, not again with jsonschema (that
    second check cost more than running the script)."""
    from typing import Annotated
    from mcp.types import CallToolResult
    fn.__annotations__["return"] = Annotated[CallToolResult, ScriptOutput]
    server.add_tool(fn, name=name, description=description, structured_output=True)


@dataclass
class SessionLimits:
    """Bounds on the tools kept per MCP session (a BashTool's shell and files each)."""
    max_sessions: int = 16
    # the files and shell state of all the sessions together (what each keeps is measured
    # after each of its calls; a running call's reserve is all it may still grow by)
    max_bytes: int = 512 * 1024 * 1024
    idle_seconds: float = 900.0       # a session unused this long is dropped (0: never)


class SessionRefused(McpError):
    """No session can be opened now: too many, or their memory budget is spent."""


class _Session:
    __slots__ = ("tool", "lock", "busy", "kept", "granted", "last_used", "files_limit")

    def __init__(self, tool):
        self.tool = tool
        self.lock = asyncio.Lock()      # one call of a session at a time: one worker each
        self.busy = False
        self.kept = 0                   # bytes of files and shell state after its last call
        self.granted = 0                # while busy: the most it may keep by the call's end
        self.last_used = time.monotonic()
        self.files_limit = tool.limits.max_fs_bytes      # as configured, before any share


class SessionPool:
    """The tools of the MCP sessions of one server, made on a session's first call.

    At most `max_sessions` at once and `max_bytes` of files and shell state among them: a
    call's files may grow only into what the others leave (its max_fs_bytes is set to that
    share before the call), and a new session needs room for a shell's state. Sessions idle
    for `idle_seconds` are dropped; the next call of such a session starts a new shell over
    new files, with a note on stderr. Calls run on the pool's own executor, one worker per
    session (a session's calls queue on its lock, not on a worker), so one session's slow
    call never delays another's."""

    MIN_FILES = 1 << 20               # a new session is refused unless this much can be written

    def __init__(self, factory, limits: SessionLimits):
        from concurrent.futures import ThreadPoolExecutor
        self.factory = factory
        self.limits = limits
        self.sessions: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()   # MCP session → _Session
        self.expired: weakref.WeakSet = weakref.WeakSet()
        self.executor = ThreadPoolExecutor(max_workers=max(1, limits.max_sessions),
                                           thread_name_prefix="scripted-mcp-session")
        self._sweeper: Optional[asyncio.TimerHandle] = None

    async def execute(self, key, commands: str):
        session, note = self._session(key)
        async with session.lock:
            self._grant(session)
            try:
                response = await asyncio.get_running_loop().run_in_executor(     # the request's context
                    self.executor, contextvars.copy_context().run, session.tool.execute, commands)
            finally:
                session.busy = False
                session.last_used = time.monotonic()
                session.kept = kept_bytes(session.tool)
        if note:
            response.stderr = note + response.stderr
        return response

    def _session(self, key) -> tuple:
        """The session's tool (made now if new) and a note for its caller ("" or why it is new)."""
        session = self.sessions.get(key)
        if session is not None:
            return session, ""
        self.expire_idle()
        if len(self.sessions) >= self.limits.max_sessions:
            raise SessionRefused(f"too many sessions: {len(self.sessions)} are open (max_sessions "
                                 f"{self.limits.max_sessions}); try again when one ends or idles out")
        session = _Session(self.factory())
        session.kept = kept_bytes(session.tool)
        if self._free() - session.kept < session.tool.limits.max_shell_state_bytes + self.MIN_FILES:
            raise SessionRefused(f"the sessions' memory budget is spent ({self.limits.max_bytes} bytes "
                                 f"of files and shell state in all, max_sessions_bytes); try again later")
        self.sessions[key] = session
        self._arm_sweeper()
        if key in self.expired:
            self.expired.discard(key)
            return session, (f"bash: note: this session was idle for more than "
                             f"{self.limits.idle_seconds:g} s; its shell and files were reset\n")
        return session, ""

    def _reserved(self, session: _Session) -> int:
        return session.granted if session.busy else session.kept

    def _free(self, but=None) -> int:
        return self.limits.max_bytes - sum(self._reserved(s) for s in self.sessions.values() if s is not but)

    def _grant(self, session: _Session):
        """Before a call: its files may grow into the room the other sessions leave, keeping a
        whole shell state's budget for its variables."""
        tool = session.tool
        state_limit = tool.limits.max_shell_state_bytes
        room = self._free(but=session) - state_limit
        tool.limits.max_fs_bytes = max(0, min(session.files_limit, room))
        session.granted = tool.limits.max_fs_bytes + state_limit
        session.busy = True

    def expire_idle(self):
        if not self.limits.idle_seconds:
            return
        cutoff = time.monotonic() - self.limits.idle_seconds
        for key, session in list(self.sessions.items()):
            if not session.busy and session.last_used < cutoff and not session.lock.locked():
                del self.sessions[key]
                self.expired.add(key)

    def _arm_sweeper(self):
        """Idle sessions go even when no call comes to notice them."""
        if self._sweeper is None and self.limits.idle_seconds:
            self._sweeper = asyncio.get_running_loop().call_later(self.limits.idle_seconds, self._sweep)

    def _sweep(self):
        self._sweeper = None
        self.expire_idle()
        if self.sessions:
            self._arm_sweeper()


class StoredSessions:
    """BashTool sessions kept in a SessionStore (tools/session_store.py), so that any worker
    process serves any session: each call loads the session's latest snapshot, runs in a
    BashTool rebuilt from it, and saves the new snapshot only if no other call of the session
    saved one meanwhile (compare and set). On a conflict the call runs again on the newer
    state, up to `retries` times, then fails with a clear error; its changes are not kept.
    Calls of one session in one process take turns (a lock), so conflicts come only from
    other processes. A snapshot over the store's per-session limit is not kept: the call
    fails, saying so. `key`: snapshots are signed (HMAC) and unsigned or forged ones refused."""

    def __init__(self, store, key: Optional[bytes] = None, retries: int = 2, limits=None,
                 max_workers: int = 16):
        from concurrent.futures import ThreadPoolExecutor
        self.store = store
        self.key = key or None
        self.retries = retries
        self.limits = limits
        self.locks: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
        self.executor = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="scripted-mcp-stored")

    async def execute(self, sid: str, commands: str):
        lock = self.locks.get(sid)
        if lock is None:
            lock = self.locks[sid] = asyncio.Lock()
        loop = asyncio.get_running_loop()
        async with lock:
            for _ in range(self.retries + 1):
                response, saved = await loop.run_in_executor(self.executor, self._run, sid, commands)
                if saved:
                    return response
        from .scripted_tool import ToolResponse
        return ToolResponse("", "bash: another request of this session changed it at the same time, "
                            f"{self.retries + 1} times; this call's changes were not kept: try again\n",
                            1, "conflict")

    def _tool(self, data: Optional[bytes]):
        from .bash_tool import BashTool
        builder = BashTool.builder().snapshot_key(self.key)
        if self.limits is not None:
            from dataclasses import replace
            builder = builder.limits(replace(self.limits))
        if data:
            builder = builder.from_snapshot(data)
        return builder.build()

    def _run(self, sid: str, commands: str) -> tuple:
        """(response, whether it may stand: saved, or a failure that changed nothing)."""
        from .scripted_tool import ToolResponse
        from .session_store import SessionTooLarge, StoreError
        from .snapshot import SnapshotError
        try:
            record = self.store.load(sid)
        except (StoreError, OSError) as e:
            return ToolResponse("", f"bash: the session store cannot be read: {e}\n", 1, "store"), True
        if record is None:
            return ToolResponse("", "bash: this session is unknown or expired: start a new one\n", 1,
                                "session"), True
        version, data = record
        try:
            tool = self._tool(data)
        except SnapshotError as e:
            return ToolResponse("", f"bash: the stored session cannot be restored: {e}\n", 1, "session"), True
        response = tool.execute(commands)
        try:
            return response, self.store.save(sid, version, tool.snapshot())
        except SessionTooLarge as e:
            response.stderr += f"bash: {e}; this call's changes were not kept\n"
            response.exit_code, response.error = 1, "limit:session_max_bytes"
            return response, True
        except (StoreError, OSError) as e:
            response.stderr += f"bash: the session store cannot be written: {e}; this call's changes were not kept\n"
            response.exit_code, response.error = 1, "store"
            return response, True


def kept_bytes(tool) -> int:
    """What a BashTool keeps: its files' bytes, its shell's state and its history."""
    return tool.kept_bytes()


def _log_calls_to_stderr():
    """One JSON line per call on stderr (stdout may be the stdio transport); the MCP package's
    per-request lines stay below WARNING."""
    if not _CALLS.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        _CALLS.addHandler(handler)
        _CALLS.setLevel(logging.INFO)
        _CALLS.propagate = False


def _result(name: str, started: float, response):
    """A response as MCP carries it (undecodable bytes become U+FFFD), logged as one line."""
    from mcp.types import CallToolResult, TextContent
    output: ScriptOutput = {"stdout": valid_unicode(response.stdout), "stderr": valid_unicode(response.stderr),
                            "exit_code": response.exit_code}
    _CALLS.info(json.dumps({"event": "call", "tool": name, "pid": os.getpid(),
                            "duration_ms": round((time.perf_counter() - started) * 1000, 1),
                            "exit_code": response.exit_code,
                            "bytes_out": len(output["stdout"]) + len(output["stderr"]),
                            "error": response.error}))
    # A failing script is an error result (isError: true), with stdout, stderr and the exit code
    # still in it: a client that only looks at isError knows the call failed, and a model that
    # reads the result sees why.
    return CallToolResult(content=[TextContent(type="text", text=json.dumps(output, indent=2))],
                          structuredContent=dict(output), isError=response.exit_code != 0)


# ---------------------------------------------------------------- approval over MCP

# The MCP request a script runs for, and the server's loop: the runner thread sees it (the
# run copies the caller's context), and the approval hook asks that request's client.
_REQUEST: contextvars.ContextVar = contextvars.ContextVar("scripted_mcp_request", default=None)
APPROVAL_SCHEMA = {"type": "object", "required": ["decision"], "properties": {
    "decision": {"type": "string", "title": "Decision", "enum": ["allow", "allow_all", "deny"],
                 "enumNames": ["Allow", "Allow all calls of this tool", "Deny"]}}}
_ALLOWED_ALL: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()    # MCP session -> tool names


def ask_client(call):
    """A before_tool hook that asks the MCP client's user about each call (an elicitation
    request). Clients without elicitation, a declined or cancelled request, and a call made
    outside an MCP request are denied: approval was asked for, so nothing runs unapproved."""
    from .hooks import Deny
    request = _REQUEST.get()
    if request is None:
        return Deny("approval required, and no MCP client to ask")
    context, loop = request
    session = context.session
    params = getattr(session, "client_params", None)
    capabilities = getattr(params, "capabilities", None)
    if capabilities is None or getattr(capabilities, "elicitation", None) is None:
        return Deny("approval required, and this MCP client cannot be asked (no elicitation support)")
    if call.name in _ALLOWED_ALL.get(session, ()):
        return None
    message = (f"The script wants to run `{' '.join(call.argv)}`"
               f" ({call.name} with {json.dumps(call.params, default=str)}). Allow it?")
    future = asyncio.run_coroutine_threadsafe(
        session.elicit_form(message, APPROVAL_SCHEMA, related_request_id=context.request_id), loop)
    from ..shell.limits import check_stop
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
    decision = (answer.content or {}).get("decision") if answer.action == "accept" else None
    if decision == "allow_all":
        _ALLOWED_ALL.setdefault(session, set()).add(call.name)
    if decision in ("allow", "allow_all"):
        return None
    return Deny("the user declined" if decision == "deny" or answer.action != "cancel" else "the user cancelled")


def _with_approval(factory):
    def make():
        made = factory()
        made.before_tool(ask_client)
        return made
    return make


def serve(tool: ScriptedTool, mode: DiscoveryMode = DiscoveryMode.ALL, approve: bool = False):
    """Serve over stdio until the client goes away (HTTP: mcp_service.create_app)."""
    build_server(tool, mode, approve=approve).run("stdio")


