"""A ScriptedTool served over MCP (PyPI `mcp`, v1 API): one MCP tool (`commands` in; stdout,
stderr, exit_code out) whose description is the system prompt, with `<name>_discover` in
DiscoveryMode.WITH_DISCOVERY; BashTool sessions kept per MCP session within limits."""
from __future__ import annotations

import asyncio
import collections
import contextvars
import json
import logging
import os
import sys
import threading
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
    fails, saying so. A failing store is one line in the result, never its address or error.

    What is trusted in a record (SECURITY.md, "The session store's threat model"): with a
    `key`, each snapshot is signed with a key bound to its session's id, its version and the
    bytes its session holds once loaded (snapshot.bound_key), a new session's empty snapshot at
    version 0 included, so a record moved to another session, paired with another version or
    size, or not signed with the key is refused; and a version lower than the highest this
    process has seen of the session is refused as a rollback.

    Memory: the calls in flight together reserve at most `max_bytes`, each before it loads
    anything, from what the record says (checked against the signature before anything is
    rebuilt): the more of what its loading takes (the snapshot read, the blobs decoded from
    it, the session rebuilt) and of what its saving takes (the session, grown, and its new
    snapshot, at most as large). What it may grow by is at least a shell state's budget and
    MIN_FILES, at most what its limits allow, as much as is free; its files may grow only by
    that. A call that does not fit waits its turn, at most its timeout_seconds, then fails."""

    MIN_FILES = 1 << 20               # a call's files may always grow by this much

    def __init__(self, store, key: Optional[bytes] = None, retries: int = 2, limits=None,
                 max_workers: int = 16, max_bytes: int = 512 * 1024 * 1024):
        from concurrent.futures import ThreadPoolExecutor
        from ..base.limits import ExecutionLimits
        self.store = store
        self.key = key or None
        self.retries = retries
        self.limits = limits
        self.budget = _Reservations(max_bytes)
        self.highest = _HighestVersions(max(4096, 4 * store.max_sessions))
        self.locks: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
        self.executor = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="scripted-mcp-stored")
        self._limits = limits or ExecutionLimits()

    def create(self, sid: str):
        """Record a new session: an empty session's snapshot, signed for it at version 0
        (TooManySessions, StoreError: the store's refusal)."""
        tool = self._tool()
        kept = tool.kept_bytes()
        self.store.create(sid, tool.snapshot(key=self._signing_key(sid, 0, kept)), kept)
        self.highest.note(sid, 0)

    async def execute(self, sid: str, commands: str):
        lock = self.locks.get(sid)
        if lock is None:
            lock = self.locks[sid] = asyncio.Lock()
        async with lock:
            for _ in range(self.retries + 1):
                response = await self._attempt(sid, commands)
                if response is not None:
                    return response
        return _refusal("another request of this session changed it at the same time, "
                        f"{self.retries + 1} times; this call's changes were not kept: try again", "conflict")

    async def _attempt(self, sid: str, commands: str):
        """The call's response, or None: another request saved the session meanwhile."""
        from .session_store import StoreError
        loop = asyncio.get_running_loop()
        try:
            sizes = await loop.run_in_executor(self.executor, self.store.sizes, sid)
        except StoreError as e:
            return self._store_failure(e, "load")
        if sizes is None:
            return _refusal("this session is unknown or expired: start a new one", "session")
        stored, kept = sizes
        limit = self.store.max_bytes
        if limit and stored > limit:
            return _refusal(f"the stored session of {stored} bytes is over the store's per-session limit "
                            f"({limit}, session_max_bytes); the call did not run", "limit:session_max_bytes")
        least, most = self._reservation(stored, kept)
        if least > self.budget.max_bytes:
            return _refusal(f"this session ({kept} bytes, {stored} stored) needs {least} bytes of memory to run, "
                            f"more than the sessions of all calls in flight may take ({self.budget.max_bytes}, "
                            "max_sessions_bytes); the call did not run", "limit:max_sessions_bytes")
        wait = self._limits.timeout_seconds
        grant = await self.budget.reserve(least, most, wait)
        if grant is None:
            return _refusal(f"the memory for sessions of calls in flight ({self.budget.max_bytes} bytes, "
                            f"max_sessions_bytes) stayed taken for {wait:g} s; the call did not run: try again",
                            "limit:max_sessions_bytes")
        work = loop.run_in_executor(self.executor, contextvars.copy_context().run,
                                    self._run, sid, commands, sizes, grant)
        # the reservation ends with the work, even if this request is cancelled before
        work.add_done_callback(lambda done: self.budget.release(
            grant, grant if done.cancelled() or done.exception() else done.result()[1]))
        response, _ = await asyncio.shield(work)
        return response

    def _reservation(self, stored: int, kept: int) -> tuple:
        """(least, most) bytes a call reserves for a session of `kept` bytes, `stored` in its
        snapshot: loading, the snapshot and its blobs beside the session rebuilt; saving, the
        session grown and its new snapshot."""
        state = self._limits.max_shell_state_bytes
        least_growth = state + self.MIN_FILES
        most_growth = max(least_growth, self._limits.max_fs_bytes + state - kept)
        loading = 2 * stored + kept
        return max(loading, 2 * (kept + least_growth)), max(loading, 2 * (kept + most_growth))

    def _signing_key(self, sid: str, version: int, kept: int) -> Optional[bytes]:
        from .snapshot import bound_key
        return bound_key(self.key, "session", sid, version, kept) if self.key else None

    def _tool(self, data: Optional[bytes] = None, key: Optional[bytes] = None):
        from .bash_tool import BashTool
        builder = BashTool.builder()
        if self.limits is not None:
            from dataclasses import replace
            builder = builder.limits(replace(self.limits))
        if data is not None:
            builder = builder.from_snapshot(data, key)
        return builder.build()

    def _run(self, sid: str, commands: str, sizes: tuple, grant: int) -> tuple:
        """(the call's response, or None: the session was saved meanwhile; the bytes of session
        the call leaves to the cyclic collector). `sizes`: the record's (stored, kept) bytes,
        as reserved for; `grant`: the bytes reserved."""
        loaded = self._load(sid, sizes)
        if not isinstance(loaded, tuple):
            return loaded, 0
        version, tool = loaded
        self._limit_growth(tool, grant // 2 - tool.kept_bytes())
        response = tool.execute(commands)
        kept = tool.kept_bytes()
        snapshot = tool.snapshot(key=self._signing_key(sid, version + 1, kept))
        return self._save(sid, version, snapshot, kept, response), kept

    def _load(self, sid: str, sizes: tuple):
        """(version, the session's BashTool); a response saying why not; or None: the session
        was saved meanwhile, larger than `sizes` (stored, kept bytes)."""
        from .session_store import SessionTooLarge, StoreError
        from .snapshot import SnapshotError
        try:
            record = self.store.load(sid, max_bytes=sizes[0])
        except SessionTooLarge:
            return None
        except StoreError as e:
            return self._store_failure(e, "load")
        if record is None:
            return _refusal("this session is unknown or expired: start a new one", "session")
        if record.kept > sizes[1]:
            return None
        seen = self.highest.get(sid)
        if record.version < seen:
            return _refusal(f"the stored session was refused: its version {record.version} is older than version "
                            f"{seen}, which this server has seen (a rollback); the call did not run", "session")
        try:
            tool = self._tool(record.data, self._signing_key(sid, record.version, record.kept))
        except SnapshotError as e:
            return _refusal(f"the stored session was refused: {e}; the call did not run", "session")
        self.highest.note(sid, record.version)
        return record.version, tool

    def _save(self, sid: str, version: int, snapshot: bytes, kept: int, response):
        """The call's response once its snapshot is saved as version+1 (or why not), or None:
        another request saved first."""
        from .session_store import SessionTooLarge, StoreError
        try:
            saved = self.store.save(sid, version, snapshot, kept)
        except SessionTooLarge as e:
            response.stderr += f"bash: {e}; this call's changes were not kept\n"
            response.exit_code, response.error = 1, "limit:session_max_bytes"
            return response
        except StoreError as e:
            failure = self._store_failure(e, "save")
            response.stderr += failure.stderr
            response.exit_code, response.error = 1, failure.error
            return response
        if not saved:
            return None
        self.highest.note(sid, version + 1)
        return response

    @staticmethod
    def _limit_growth(tool, growth: int):
        """The call's files may grow by `growth` less a whole shell state's budget (which its
        variables may still take)."""
        room = max(0, growth - tool.limits.max_shell_state_bytes)
        tool.limits.max_fs_bytes = min(tool.limits.max_fs_bytes, tool.filesystem.used_bytes + room)

    @staticmethod
    def _store_failure(e, operation: str):
        """The call's result when the store fails: one line, without the store's address or
        error (those go to the server's log)."""
        from .session_store import UNAVAILABLE, MalformedRecord
        if isinstance(e, MalformedRecord):
            return _refusal(f"the stored session was refused: {e}; the call did not run", "session")
        log_store_error(e, operation)
        done = "did not save" if operation == "save" else "did not run"
        return _refusal(f"{UNAVAILABLE}; the call {done}", "store")


def log_store_error(e: Exception, operation: str):
    """One line on the server's log for a failure of the session store, with its cause (which
    the client is not shown)."""
    cause = e.__cause__ or e
    _CALLS.warning(json.dumps({"event": "store_error", "operation": operation, "pid": os.getpid(),
                               "error": f"{type(cause).__name__}: {cause}"}))


def _refusal(message: str, error: str):
    from .scripted_tool import ToolResponse
    return ToolResponse("", f"bash: {message}\n", 1, error)


class _Reservations:
    """Bytes reserved by the calls in flight, at most `max_bytes` in all: a call waits, first
    come first served, until the least it needs fits, and then takes as much of what is free
    as it may use. The session a finished call leaves stays counted until Python's cyclic
    collector has run (a BashTool's run and its files form a reference cycle, so they outlive
    the call until a full collection): the next call starts a collection, and waits for it,
    when that would give it the room it needs, or a MiB more of what it may use.
    Used on the event loop's thread only."""

    WORTH_COLLECTING = 1 << 20

    def __init__(self, max_bytes: int):
        self.max_bytes = max_bytes
        self.reserved = 0                 # by the calls in flight, and the uncollected
        self.uncollected = 0              # of calls finished since the last collection
        self._waiting: collections.deque = collections.deque()     # (least, most, future)
        self._collection: Optional[asyncio.Task] = None

    async def reserve(self, least: int, most: int, timeout: float) -> Optional[int]:
        """The bytes granted, or None: the least did not fit within `timeout` seconds."""
        entry = (least, most, asyncio.get_running_loop().create_future())
        self._waiting.append(entry)
        future = entry[2]
        granted = False
        try:
            self._wake()
            if not future.done():
                await asyncio.wait({future}, timeout=timeout)
            granted = future.done()
            return future.result() if granted else None
        finally:
            if not granted:
                if future.done():                 # granted just as the wait was cancelled
                    self.release(future.result(), 0)
                else:
                    self._waiting.remove(entry)
                    future.cancel()
                    self._wake()                  # the next in line may fit now

    def release(self, amount: int, left: int):
        """The end of a reservation of `amount` bytes, of which `left` stay taken until the
        cyclic collector has run."""
        self.reserved -= amount - left
        self.uncollected += left
        self._wake()

    def _wake(self):
        """Grant the calls in line their turn, the first first, while they fit; start a
        collection when the first would gain by it."""
        while self._waiting:
            least, most, future = self._waiting[0]
            free = self.max_bytes - self.reserved
            gain = min(most, free + self.uncollected) - min(most, free)
            if free >= least and gain < self.WORTH_COLLECTING:
                self._waiting.popleft()
                amount = min(most, free)
                self.reserved += amount
                future.set_result(amount)
                continue
            if self._collection is None and free + self.uncollected >= least and gain:
                self._collection = asyncio.get_running_loop().create_task(self._collect())
            return

    async def _collect(self):
        import gc
        freed = self.uncollected
        try:
            await asyncio.to_thread(gc.collect)
        finally:
            self.uncollected -= freed
            self.reserved -= freed
            self._collection = None
        self._wake()


class _HighestVersions:
    """The highest version this process has seen of each of the last `capacity` sessions it
    served (a record older than it is a rollback)."""

    def __init__(self, capacity: int):
        self.capacity = capacity
        self._seen: collections.OrderedDict = collections.OrderedDict()
        self._lock = threading.Lock()

    def get(self, sid: str) -> int:
        with self._lock:
            return self._seen.get(sid, -1)

    def note(self, sid: str, version: int):
        with self._lock:
            self._seen[sid] = max(version, self._seen.get(sid, -1))
            self._seen.move_to_end(sid)
            while len(self._seen) > self.capacity:
                self._seen.popitem(last=False)


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


