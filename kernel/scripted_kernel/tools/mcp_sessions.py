"""Where an MCP server's scripts run, and what they keep between calls.

    FreshRuns        a fresh interpreter per call (a ScriptedTool; nothing is kept)
    PooledSessions   BashTool sessions in this process's memory (SessionPool)
    StoredSessions   BashTool sessions in a session store (tools/session_store.py): any worker
                     process serves any session

Each offers `run(job)` and `resume(job, continuation, decision)` (a paused run goes on).
A session is named by a handle (SessionHandles: `<tool>_session_open` gives one, the script
tool's `session` argument names it, `<tool>_session_close` ends it), or, for a 2025-era client,
by its `Mcp-Session-Id`. A call may carry an idempotency key: a retry with the same key gets
the first call's outcome, not a second run (Outcomes; in a store, recorded with the session's
version by the same compare and set that saves the session).
"""
from __future__ import annotations

import asyncio
import base64
import collections
import contextvars
import hashlib
import hmac
import json
import threading
import time
import weakref
from dataclasses import dataclass, field
from typing import Callable, Optional

from ..base.limits import CancelToken
from .mcp_client import McpError
from .scripted_tool import ToolResponse


@dataclass
class Job:
    """One script to run, and for whom."""
    commands: str
    cancel: CancelToken = field(default_factory=CancelToken)
    on_output: Optional[Callable] = None
    principal: str = ""                   # the digest of the caller's bearer token ("" without one)
    idempotency: Optional[str] = None     # the caller's key: a retry gets the first outcome
    session: Optional[str] = None         # the session's id: from a handle, or the Mcp-Session-Id
    version: Optional[int] = None         # a stored session's version the (paused) run started from


def _refusal(message: str, error: str) -> ToolResponse:
    return ToolResponse("", f"bash: {message}\n", 1, error)


def _in_context(fn, *args):
    """fn(*args) on an executor thread, in the caller's context (the approval hook's call, the
    caller's trace span)."""
    return contextvars.copy_context().run(fn, *args)


class Outcomes:
    """The outcomes of the last calls that carried an idempotency key, in this process: a
    retry with the key gets the first call's outcome (and waits for it while it runs) rather
    than running again. At most `capacity` keys, each for `seconds`."""

    def __init__(self, capacity: int = 4096, seconds: float = 3600.0):
        self.capacity = capacity
        self.seconds = seconds
        self.entries: collections.OrderedDict = collections.OrderedDict()   # key -> (when, future)

    async def once(self, key: tuple, run):
        now = time.monotonic()
        held = self.entries.get(key)
        if held is not None and held[0] > now - self.seconds:
            return await asyncio.shield(held[1])
        future = asyncio.get_running_loop().create_future()
        self.entries[key] = (now, future)
        self.entries.move_to_end(key)
        while len(self.entries) > self.capacity:
            self.entries.popitem(last=False)
        try:
            response = await run()
        except BaseException as e:
            self.entries.pop(key, None)
            future.set_exception(e)
            future.exception()                 # retrieved: nobody else may be waiting
            raise
        if response.error in ("cancelled", "store", "conflict"):
            self.entries.pop(key, None)        # it did not run (or was not kept): a retry runs it
        future.set_result(response)
        return response


class FreshRuns:
    """A fresh interpreter per call (a ScriptedTool): nothing kept between calls."""

    keeps_sessions = False

    def __init__(self, tool):
        self.tool = tool
        self.outcomes = Outcomes()

    def add_hook(self, fn):
        self.tool.before_tool(fn)

    async def run(self, job: Job) -> ToolResponse:
        run = lambda: self.tool.execute_async(job.commands, cancel=job.cancel, on_output=job.on_output)  # noqa: E731
        if job.idempotency is None:
            return await run()
        return await self.outcomes.once((job.principal, job.idempotency), run)

    async def resume(self, job: Job, continuation: bytes, decision) -> ToolResponse:
        return await asyncio.to_thread(_in_context, _resume, self.tool, continuation, decision)


def _resume(tool, continuation: bytes, decision) -> ToolResponse:
    from .journal import ContinuationError
    try:
        return tool.resume(continuation, decision)
    except ContinuationError as e:
        return _refusal(f"the paused run cannot go on: {e}", "paused")


# ---------------------------------------------------------------- sessions in memory

@dataclass
class SessionLimits:
    """Bounds on the sessions kept in a process's memory (a BashTool's shell and files each)."""
    max_sessions: int = 16
    # the files and shell state of all the sessions together (what each keeps is measured
    # after each of its calls; a running call's reserve is all it may still grow by)
    max_bytes: int = 512 * 1024 * 1024
    idle_seconds: float = 900.0       # a session unused this long is dropped (0: never)


class SessionRefused(McpError):
    """No session can be served now: every session is running a call, or their memory budget
    is taken by running calls."""


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

    @property
    def idle(self) -> bool:
        return not self.busy and not self.lock.locked()


class SessionPool:
    """The tools of one process's sessions, each made on its session's first call (a session
    opened and never used costs nothing).

    At most `max_sessions` at once and `max_bytes` of files and shell state among them. A
    session that does not fit takes the place of the least recently used idle one (which is
    dropped: its next call starts a new shell over new files, with a note on stderr), so
    abandoned sessions never lock new clients out; only when every session is running a call
    is a new one refused. A call's files may grow only into what the others leave (its
    max_fs_bytes is set to that share before the call). Sessions idle for `idle_seconds` are
    dropped too. Calls run on the pool's own executor, one worker per session (a session's
    calls queue on its lock, not on a worker), so one session's slow call never delays
    another's."""

    MIN_FILES = 1 << 20               # a session needs room for a shell state and this much files
    REMEMBERED = 4096                 # dropped sessions remembered, to say why one starts afresh

    def __init__(self, factory, limits: SessionLimits):
        from concurrent.futures import ThreadPoolExecutor
        self.factory = factory
        self.limits = limits
        self.hooks: list = []
        self.sessions: collections.OrderedDict = collections.OrderedDict()    # id -> _Session, oldest use first
        self.dropped: collections.OrderedDict = collections.OrderedDict()     # id -> why
        self.closed: collections.OrderedDict = collections.OrderedDict()      # ids of sessions ended
        self.executor = ThreadPoolExecutor(max_workers=max(1, limits.max_sessions),
                                           thread_name_prefix="scripted-mcp-session")
        self._sweeper: Optional[asyncio.TimerHandle] = None

    def _make(self):
        tool = self.factory()
        for fn in self.hooks:
            tool.before_tool(fn)
        return tool

    async def execute(self, key, commands, cancel: Optional[CancelToken] = None, on_output=None) -> ToolResponse:
        session, note = self._session(key)
        async with session.lock:
            self._grant(session)
            try:
                response = await asyncio.get_running_loop().run_in_executor(
                    self.executor, _in_context, _execute, session.tool, commands, cancel, on_output)
            finally:
                self._release(key, session)
        if note:
            response.stderr = note + response.stderr
        return response

    async def resume(self, key, continuation: bytes, decision) -> ToolResponse:
        session, note = self._session(key)
        async with session.lock:
            self._grant(session)
            try:
                response = await asyncio.get_running_loop().run_in_executor(
                    self.executor, _in_context, _resume, session.tool, continuation, decision)
            finally:
                self._release(key, session)
        return response

    def close(self, key):
        """End a session: its tool is dropped, and a later call of it is refused."""
        self.sessions.pop(key, None)
        self.dropped.pop(key, None)
        self.closed[key] = True
        while len(self.closed) > self.REMEMBERED:
            self.closed.popitem(last=False)

    def _release(self, key, session: _Session):
        session.busy = False
        session.last_used = time.monotonic()
        session.kept = kept_bytes(session.tool)
        if key in self.sessions:
            self.sessions.move_to_end(key)

    def _session(self, key) -> tuple:
        """The session's tool (made now if new) and a note for its caller ("" or why it is new)."""
        session = self.sessions.get(key)
        if session is not None:
            self.sessions.move_to_end(key)
            return session, ""
        if key in self.closed:
            raise SessionRefused("this session was closed: open a new one")
        self.expire_idle()
        tool = self._make()
        kept = kept_bytes(tool)
        need = tool.limits.max_shell_state_bytes + self.MIN_FILES + kept
        while len(self.sessions) >= self.limits.max_sessions or self._free() < need:
            if not self._drop_least_recently_used():
                if len(self.sessions) >= self.limits.max_sessions:
                    raise SessionRefused(f"too many sessions: all {len(self.sessions)} are running a call "
                                         f"(max_sessions {self.limits.max_sessions}); try again when one ends")
                raise SessionRefused(f"the sessions' memory budget is taken by running calls "
                                     f"({self.limits.max_bytes} bytes of files and shell state in all, "
                                     "max_sessions_bytes); try again when one ends")
        session = _Session(tool)
        session.kept = kept
        self.sessions[key] = session
        self._arm_sweeper()
        why = self.dropped.pop(key, None)
        return session, (f"bash: note: {why}; this session's shell and files were reset\n" if why else "")

    def _drop_least_recently_used(self) -> bool:
        for key, session in self.sessions.items():
            if session.idle:
                self._forget(key, f"this session was dropped to make room for another (the least recently used "
                                  f"of {self.limits.max_sessions}, max_sessions)")
                return True
        return False

    def _forget(self, key, why: str):
        del self.sessions[key]
        self.dropped[key] = why
        while len(self.dropped) > self.REMEMBERED:
            self.dropped.popitem(last=False)

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
            if session.idle and session.last_used < cutoff:
                self._forget(key, f"this session was idle for more than {self.limits.idle_seconds:g} s")

    def _arm_sweeper(self):
        """Idle sessions go even when no call comes to notice them."""
        if self._sweeper is None and self.limits.idle_seconds:
            self._sweeper = asyncio.get_running_loop().call_later(self.limits.idle_seconds, self._sweep)

    def _sweep(self):
        self._sweeper = None
        self.expire_idle()
        if self.sessions:
            self._arm_sweeper()


def _execute(tool, commands: str, cancel, on_output) -> ToolResponse:
    return tool.execute(commands, cancel=cancel, on_output=on_output)


class PooledSessions:
    """BashTool sessions in this process's memory (a SessionPool). A call without a session
    (a 2026-07-28 client that opened none) runs in a fresh BashTool of its own."""

    keeps_sessions = True

    def __init__(self, factory, limits: SessionLimits):
        self.pool = SessionPool(factory, limits)
        self.outcomes = Outcomes()

    def add_hook(self, fn):
        self.pool.hooks.append(fn)

    def connection_session(self, call) -> Optional[str]:
        return _connection_session(call)

    async def open(self, sid: str, principal: str):
        """Nothing to do: the session's tool is made by its first call."""

    async def close(self, sid: str, principal: str):
        self.pool.close((principal, sid))

    async def run(self, job: Job) -> ToolResponse:
        if job.session is None:
            run = lambda: _fresh_run(self.pool, job)   # noqa: E731
        else:
            run = lambda: self._in_session(job)        # noqa: E731
        if job.idempotency is None:
            return await run()
        return await self.outcomes.once((job.principal, job.session, job.idempotency), run)

    async def _in_session(self, job: Job) -> ToolResponse:
        try:
            return await self.pool.execute((job.principal, job.session), job.commands, job.cancel, job.on_output)
        except SessionRefused as e:
            return _refusal(str(e), "session")

    async def resume(self, job: Job, continuation: bytes, decision) -> ToolResponse:
        if job.session is None:
            return await asyncio.to_thread(_in_context, _resume, self.pool._make(), continuation, decision)
        try:
            return await self.pool.resume((job.principal, job.session), continuation, decision)
        except SessionRefused as e:
            return _refusal(str(e), "session")


async def _fresh_run(pool: SessionPool, job: Job) -> ToolResponse:
    return await pool._make().execute_async(job.commands, cancel=job.cancel, on_output=job.on_output)


def _connection_session(call) -> Optional[str]:
    """The session a call without a handle runs in: a 2025-era connection's own (its
    Mcp-Session-Id over HTTP; stdio's one connection); none for a 2026-07-28 call."""
    if call.modern:
        return None
    request = call.ctx.request
    if request is None:
        return "stdio"
    return request.headers.get("mcp-session-id") or None


def kept_bytes(tool) -> int:
    """What a BashTool keeps: its files' bytes, its shell's state and its history."""
    return tool.kept_bytes()


# ---------------------------------------------------------------- handles

class HandleRefused(McpError):
    """A session handle that cannot be used: not one this service made, expired, or another
    client's."""


class SessionHandles:
    """Session handles: `skh1.<payload>.<mac>`, the payload (base64url JSON) holding the
    session's id (32 hex digits from `secrets`, unguessable), its expiry and a tag of the
    principal it was opened for (the HMAC of the caller's token digest), the mac an
    HMAC-SHA256 of it all under the service's key. A handle is checked on every use: its mac,
    its expiry, then its principal, each refusal one line saying which."""

    PREFIX = "skh1."

    def __init__(self, key: bytes, ttl_seconds: float):
        self.key = hmac.new(key, b"scripted-mcp/session-handle", hashlib.sha256).digest()
        self.ttl_seconds = ttl_seconds

    @staticmethod
    def open_name(tool: str) -> str:
        return f"{tool}_session_open"

    @staticmethod
    def close_name(tool: str) -> str:
        return f"{tool}_session_close"

    def tool_names(self, tool: str) -> tuple:
        return self.open_name(tool), self.close_name(tool)

    def tools(self, tool: str) -> list:
        from mcp_types import Tool
        handle = {"type": "string", "description": f"a handle from {self.open_name(tool)}"}
        opened = {"type": "object", "properties": {"session": handle, "expires_at": {"type": "string"}},
                  "required": ["session", "expires_at"]}
        closed = {"type": "object", "properties": {"closed": {"type": "boolean"}}, "required": ["closed"]}
        return [
            Tool(name=self.open_name(tool), input_schema={"type": "object", "properties": {}},
                 output_schema=opened,
                 description=(f"Open a session of `{tool}`: pass the handle it returns as `session` to `{tool}`, "
                              f"and each call runs in that session's shell and files (variables, functions, the "
                              f"working directory and files carry over). The handle is good for "
                              f"{self.ttl_seconds:g} s and only with your credentials; close it when done.")),
            Tool(name=self.close_name(tool), input_schema={"type": "object", "properties": {"session": handle},
                                                           "required": ["session"]},
                 output_schema=closed, description=f"End a session of `{tool}` and free what it keeps."),
        ]

    def _mac(self, payload: str) -> str:
        digest = hmac.new(self.key, (self.PREFIX + payload).encode("ascii"), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).decode("ascii").rstrip("=")

    def _principal_tag(self, principal: str) -> str:
        return hmac.new(self.key, b"principal:" + principal.encode(), hashlib.sha256).hexdigest()[:32]

    def mint(self, sid: str, principal: str) -> tuple:
        """(the handle, its expiry as a Unix time)."""
        expires = int(time.time() + self.ttl_seconds)
        payload = base64.urlsafe_b64encode(json.dumps(
            {"s": sid, "e": expires, "p": self._principal_tag(principal)}, separators=(",", ":")).encode()
        ).decode("ascii").rstrip("=")
        return f"{self.PREFIX}{payload}.{self._mac(payload)}", expires

    def verify(self, handle: str, principal: str) -> str:
        """The session id a handle names; HandleRefused saying why it cannot be used."""
        from .session_store import valid_id
        parts = handle.split(".") if isinstance(handle, str) and len(handle) < 512 else []
        if len(parts) != 3 or parts[0] + "." != self.PREFIX or not hmac.compare_digest(
                self._mac(parts[1]), parts[2]):
            raise HandleRefused("this session handle is not one this service issued (or it was altered): "
                                "open a session and use the handle it returns")
        data = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
        if data["e"] <= time.time():
            raise HandleRefused(f"this session handle expired at {_iso(data['e'])}: open a new session")
        if not hmac.compare_digest(data["p"], self._principal_tag(principal)):
            raise HandleRefused("this session handle belongs to another client (it was opened with other "
                                "credentials): open a session of your own")
        if not valid_id(data["s"]):
            raise HandleRefused("this session handle names no session")
        return data["s"]

    async def serve(self, name: str, tool: str, arguments: dict, call, runs):
        """A call of <tool>_session_open or <tool>_session_close."""
        from mcp_types import CallToolResult, TextContent

        from .session_store import StoreError, new_session_id
        try:
            if name == self.open_name(tool):
                sid = new_session_id()
                await runs.open(sid, call.principal)
                handle, expires = self.mint(sid, call.principal)
                result = {"session": handle, "expires_at": _iso(expires)}
            else:
                handle = arguments.get("session")
                if not isinstance(handle, str):
                    raise HandleRefused(f"`session` is a handle from {self.open_name(tool)}")
                await runs.close(self.verify(handle, call.principal), call.principal)
                result = {"closed": True}
        except (McpError, StoreError) as e:
            return CallToolResult(content=[TextContent(type="text", text=f"{name}: {e}")], is_error=True)
        return CallToolResult(content=[TextContent(type="text", text=json.dumps(result))],
                              structured_content=result)


def _iso(when: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(when))


# ---------------------------------------------------------------- sessions in a store

class StoredSessions:
    """BashTool sessions kept in a SessionStore (tools/session_store.py), so that any worker
    process serves any session: each call loads the session's latest snapshot, runs in a
    BashTool rebuilt from it, and saves the new snapshot only if no other call of the session
    saved one meanwhile (compare and set). A snapshot is stored as its manifest and its blobs
    (file contents by sha256): a save writes the manifest and only the blobs the previous
    version did not name, and hashes only the contents that changed (snapshot.Digests); the
    worker keeps the session it saved (_Reservations.held), so that the next call of it at that
    version, by the same principal, loads nothing: a call costs what it changed. On a conflict
    the call runs again on the newer state, up to `retries` times, then fails with a clear
    error; its changes are not kept.
    Calls of one session in one process take turns (a lock), so conflicts come only from
    other processes. A snapshot over the store's per-session limit is not kept: the call
    fails, saying so. A failing store is one line in the result, never its address or error.
    A run whose client went away (its cancel flag) or that paused is not saved.

    What is trusted in a record (SECURITY.md, "The session store's threat model"): with a
    `key`, each snapshot is signed with a key bound to its session's id, the principal it was
    opened for (the digest of that client's token), its version and the bytes its session
    holds once loaded (snapshot.bound_key), a new session's empty snapshot at version 0
    included, so a record moved to another session or client, paired with another version or
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
    keeps_sessions = True

    def __init__(self, store, key: Optional[bytes] = None, retries: int = 2, limits=None,
                 max_workers: int = 16, max_bytes: int = 512 * 1024 * 1024):
        from concurrent.futures import ThreadPoolExecutor

        from ..base.limits import ExecutionLimits
        self.store = store
        self.key = key or None
        self.retries = retries
        self.limits = limits
        self.hooks: list = []
        self.budget = _Reservations(max_bytes)
        self.highest = _HighestVersions(max(4096, 4 * store.max_sessions))
        self.locks: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
        self.executor = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="scripted-mcp-stored")
        self.outcomes = Outcomes()
        self._limits = limits or ExecutionLimits()

    def add_hook(self, fn):
        self.hooks.append(fn)

    def connection_session(self, call) -> Optional[str]:
        return _connection_session(call)

    def create(self, sid: str, principal: str = ""):
        """Record a new session: an empty session's snapshot, signed for it at version 0
        (TooManySessions, StoreError: the store's refusal)."""
        from .snapshot import Digests, encode_detached
        tool = self._tool()
        kept = tool.kept_bytes()
        manifest, blobs = tool.session_parts(Digests())
        self.store.create(sid, encode_detached(manifest, blobs, self._signing_key(sid, principal, 0, kept)), kept,
                          blobs)
        self.highest.note(sid, 0)

    async def open(self, sid: str, principal: str):
        await asyncio.get_running_loop().run_in_executor(self.executor, self.create, sid, principal)

    async def close(self, sid: str, principal: str):
        self.budget.forget(sid)
        await asyncio.get_running_loop().run_in_executor(self.executor, self.store.delete, sid)

    async def execute(self, sid: str, commands: str, principal: str = "") -> ToolResponse:
        """A call of session `sid`."""
        return await self.run(Job(commands, principal=principal, session=sid))

    async def run(self, job: Job) -> ToolResponse:
        if job.session is None:
            run = lambda: self._tool().execute_async(job.commands, cancel=job.cancel,  # noqa: E731
                                                     on_output=job.on_output)
        else:
            run = lambda: self._turn(job, lambda tool, version: _execute(tool, job.commands,  # noqa: E731
                                                                         job.cancel, job.on_output))
        if job.idempotency is None:
            return await run()
        return await self.outcomes.once((job.principal, job.session, job.idempotency), run)

    async def resume(self, job: Job, continuation: bytes, decision) -> ToolResponse:
        if job.session is None:
            return await asyncio.to_thread(_in_context, _resume, self._tool(), continuation, decision)

        def resumed(tool, version):
            if version != job.version:
                return _refusal("the session changed while the approval waited for its answer; the call did "
                                "not go on: run the script again", "conflict")
            return _resume(tool, continuation, decision)
        return await self._turn(job, resumed)

    async def _turn(self, job: Job, work) -> ToolResponse:
        sid = job.session
        lock = self.locks.get(sid)
        if lock is None:
            lock = self.locks[sid] = asyncio.Lock()
        async with lock:
            for _ in range(self.retries + 1):
                response = await self._attempt(job, work)
                if response is not None:
                    return response
        return _refusal("another request of this session changed it at the same time, "
                        f"{self.retries + 1} times; this call's changes were not kept: try again", "conflict")

    async def _attempt(self, job: Job, work):
        """The call's response, or None: another request saved the session meanwhile."""
        from .session_store import StoreError
        sid = job.session
        assert sid is not None                 # _turn runs only calls of a session
        loop = asyncio.get_running_loop()
        try:
            sizes = await loop.run_in_executor(self.executor, self.store.sizes, sid)
        except StoreError as e:
            return self._store_failure(e, "load")
        if sizes is None:
            self.budget.forget(sid)
            return _refusal("this session is unknown or expired: start a new one", "session")
        stored, kept, _ = sizes
        limit = self.store.max_bytes
        if limit and stored > limit:
            return _refusal(f"the stored session of {stored} bytes is over the store's per-session limit "
                            f"({limit}, session_max_bytes); the call did not run", "limit:session_max_bytes")
        held = self.budget.take(sid, sizes.version, job.principal)
        grant = None
        try:
            least, most = self._reservation(0 if held is not None else stored, kept)
            if least > self.budget.max_bytes:
                return _refusal(f"this session ({kept} bytes, {stored} stored) needs {least} bytes of memory to "
                                f"run, more than the sessions of all calls in flight may take "
                                f"({self.budget.max_bytes}, max_sessions_bytes); the call did not run",
                                "limit:max_sessions_bytes")
            wait = self._limits.timeout_seconds
            grant = await self.budget.reserve(least, most, wait)
            if grant is None:
                return _refusal(f"the memory for sessions of calls in flight ({self.budget.max_bytes} bytes, "
                                f"max_sessions_bytes) stayed taken for {wait:g} s; the call did not run: try again",
                                "limit:max_sessions_bytes")
        finally:
            if grant is None and held is not None:
                self.budget.keep(sid, held)        # the call did not run: the session is as held
        done = loop.run_in_executor(self.executor, _in_context, self._run, job, work, sizes, grant, held)

        def finish(finished):
            """The reservation ends with the work, even if this request is cancelled before;
            the session it leaves as stored is kept for the next call."""
            failed = finished.cancelled() or finished.exception() is not None
            _, left, kept = (None, grant, None) if failed else finished.result()
            self.budget.release(grant, left, sid, kept)
        done.add_done_callback(finish)
        return (await asyncio.shield(done))[0]

    def _reservation(self, stored: int, kept: int) -> tuple:
        """(least, most) bytes a call reserves for a session of `kept` bytes, `stored` in its
        snapshot (0: the session is held in memory already): loading, the snapshot and its
        blobs beside the session rebuilt; saving, the session grown and its new blobs."""
        state = self._limits.max_shell_state_bytes
        least_growth = state + self.MIN_FILES
        most_growth = max(least_growth, self._limits.max_fs_bytes + state - kept)
        loading = 2 * stored + kept
        return max(loading, 2 * (kept + least_growth)), max(loading, 2 * (kept + most_growth))

    def _signing_key(self, sid: str, principal: str, version: int, kept: int) -> Optional[bytes]:
        from .snapshot import bound_key
        return bound_key(self.key, "session", sid, principal, version, kept) if self.key else None

    def _new_limits(self):
        """The limits of a session's tool: its own copy (a call lowers its max_fs_bytes)."""
        from dataclasses import replace
        return replace(self._limits)

    def _tool(self, restored: Optional[tuple] = None, limits=None):
        """A new BashTool: empty, or holding `restored` (snapshot.rebuild's meta, and files and
        shell made under `limits`, which the tool takes)."""
        from .bash_tool import BashTool
        builder = BashTool.builder().limits(limits or self._new_limits())
        if restored is not None:
            builder = builder.username(restored[0]["username"]).hostname(restored[0]["hostname"])
        tool = builder.build()
        if restored is not None:
            tool.take_session(restored[1], restored[2])
        for fn in self.hooks:
            tool.before_tool(fn)
        return tool

    def _run(self, job: Job, work, sizes, grant: int, held: Optional["_Held"]) -> tuple:
        """(the call's response, or None: the session was saved meanwhile; the bytes of session
        the call leaves to the cyclic collector; the session as the store now holds it, for
        the next call, or None). `sizes`: the record's, as reserved for; `grant`: the bytes
        reserved; `held`: the session at that version, kept from this worker's last call."""
        sid = job.session
        assert sid is not None                 # _turn runs only calls of a session
        if held is None:
            loaded = self._load(sid, job.principal, sizes)
            if not isinstance(loaded, _Held):
                return loaded, 0, None
            held = loaded
        tool, version = held.tool, held.version
        if job.idempotency is not None:
            # asked after the load: an outcome saved before it is seen now, one saved after it
            # makes this call's save fail its compare and set, and its next attempt sees it
            recorded = self._recorded(sid, job.idempotency)
            if recorded is not None:
                return recorded, 0, held
        self._limit_growth(tool, grant // 2 - tool.kept_bytes(), self._limits.max_fs_bytes)
        response = work(tool, version)
        kept = tool.kept_bytes()
        if response.error == "paused":
            job.version = version              # the retry resumes from this version, or not at all
            return response, kept, None
        if job.cancel.cancelled or response.error == "conflict":
            return response, kept, None        # the client went away (or the session moved on): nothing kept
        from .snapshot import encode_detached
        manifest, blobs = tool.session_parts(held.digests)
        head = encode_detached(manifest, blobs, self._signing_key(sid, job.principal, version + 1, kept))
        names = {sha: len(content) for sha, content in blobs.items()}
        added = {sha: blobs[sha] for sha in names if sha not in held.names}
        dropped = [sha for sha in held.names if sha not in names]
        response, committed = self._save(sid, version, head, kept, response, job.idempotency, added, dropped,
                                         len(head) + sum(names.values()))
        if not committed:
            return response, kept, None
        return response, 0, _Held(version + 1, job.principal, tool, held.digests, names, kept)

    def _recorded(self, sid: str, key: str):
        """The outcome recorded for the call's idempotency key (a retry of a call that was
        saved), or a response saying the store cannot tell, or None: run it."""
        from .mcp_results import response_from_json
        from .session_store import StoreError
        try:
            recorded = self.store.outcome(sid, key)
        except StoreError as e:
            return self._store_failure(e, "load")
        return response_from_json(recorded) if recorded is not None else None

    def _load(self, sid: str, principal: str, sizes):
        """The session as stored (_Held); a response saying why not; or None: the session was
        saved meanwhile, larger than `sizes`."""
        from .session_store import SessionTooLarge, StoreError
        from .snapshot import Digests, SnapshotError, SnapshotLimits, decode, rebuild
        try:
            record = self.store.load(sid, max_bytes=sizes.stored)
        except SessionTooLarge:
            return None
        except StoreError as e:
            return self._store_failure(e, "load")
        if record is None:
            return _refusal("this session is unknown or expired: start a new one", "session")
        if record.kept > sizes.kept:
            return None
        seen = self.highest.get(sid)
        if record.version < seen:
            return _refusal(f"the stored session was refused: its version {record.version} is older than version "
                            f"{seen}, which this server has seen (a rollback); the call did not run", "session")

        def fetch(wanted: dict) -> dict:
            if len(record.data) + sum(wanted.values()) > sizes.stored:
                raise _SavedMeanwhile()        # larger than reserved for: a newer record
            return self.store.blobs(sid, wanted)
        try:
            limits = self._new_limits()
            loaded = decode(record.data, SnapshotLimits.of(limits),
                            self._signing_key(sid, principal, record.version, record.kept), fetch)
            restored = rebuild(loaded.manifest, loaded.blobs, limits)
            tool = self._tool(restored, limits)
        except _SavedMeanwhile:
            return None
        except StoreError as e:
            return self._store_failure(e, "load")
        except SnapshotError as e:
            return _refusal(f"the stored session was refused: {e}; the call did not run", "session")
        self.highest.note(sid, record.version)
        digests = Digests()
        digests.seed(restored[1], loaded.manifest, loaded.blobs)
        return _Held(record.version, principal, tool, digests, {sha: len(b) for sha, b in loaded.blobs.items()},
                     record.kept)

    def _save(self, sid: str, version: int, head: bytes, kept: int, response, idempotency, blobs: dict,
              dropped: list, stored: int):
        """(the call's response, True) once its manifest is saved as version+1 with its new
        `blobs` (and its outcome, for an idempotency key); (the response saying why not,
        False); or (None, False): another request saved first."""
        import secrets

        from .mcp_results import response_to_json
        from .session_store import SessionTooLarge, StoreError
        writer = secrets.token_hex(8)
        outcome = (idempotency, response_to_json(response, self.store.MAX_OUTCOME)) if idempotency else None
        try:
            saved = self.store.save(sid, version, head, kept, writer, outcome, blobs, dropped, stored)
        except SessionTooLarge as e:
            response.stderr += f"bash: {e}; this call's changes were not kept\n"
            response.exit_code, response.error = 1, "limit:session_max_bytes"
            return response, False
        except StoreError as e:
            saved = self._saved_despite(e, sid, version, writer)
            if saved is not True:
                failure = self._store_failure(e, "save", "did not save" if saved is False else
                                              UNKNOWN_IF_SAVED + (RETRY_WITH_KEY if idempotency else ""))
                response.stderr += failure.stderr
                response.exit_code, response.error = 1, failure.error
                return response, False
        if not saved:
            return None, False
        self.highest.note(sid, version + 1)
        return response, True

    def _saved_despite(self, e, sid: str, version: int, writer: str) -> Optional[bool]:
        """Whether a save whose store call failed took place: False when it certainly did not
        (nothing reached the store), else as the store says when asked again (True: this
        save's writer holds version+1), None when it cannot say."""
        from .session_store import StoreError
        if e.not_applied:
            return False
        try:
            return self.store.last_writer(sid) == (version + 1, writer)
        except StoreError:
            return None

    @staticmethod
    def _limit_growth(tool, growth: int, most: int):
        """The call's files may grow by `growth` less a whole shell state's budget (which its
        variables may still take), and to `most` bytes in all (as configured: a tool held from
        an earlier call had its own call's bound)."""
        room = max(0, growth - tool.limits.max_shell_state_bytes)
        tool.limits.max_fs_bytes = min(most, tool.filesystem.used_bytes + room)

    @staticmethod
    def _store_failure(e, operation: str, outcome: str = "did not run"):
        """The call's result when the store fails: one line saying what became of the call,
        without the store's address or error (those go to the server's log)."""
        from .session_store import UNAVAILABLE, MalformedRecord
        if isinstance(e, MalformedRecord):
            return _refusal(f"the stored session was refused: {e}; the call did not run", "session")
        log_store_error(e, operation)
        return _refusal(f"{UNAVAILABLE}; the call {outcome}", "store")


class _Held:
    """A session as the store holds it at `version`, in this worker's memory: the principal
    whose record it is, its tool, the digests of its file contents, and the blobs (sha256 ->
    size) its manifest names."""
    __slots__ = ("version", "principal", "tool", "digests", "names", "kept")

    def __init__(self, version: int, principal: str, tool, digests, names: dict, kept: int):
        self.version, self.principal, self.tool, self.digests = version, principal, tool, digests
        self.names, self.kept = names, kept


class _SavedMeanwhile(Exception):
    """The stored session grew past what its call reserved: another request saved it."""




UNKNOWN_IF_SAVED = "ran, and whether its changes were saved is unknown"
RETRY_WITH_KEY = ": call it again with the same idempotency_key, which runs it only if they were not"


def log_store_error(e: Exception, operation: str):
    """One line on the server's log for a failure of the session store, with its cause (which
    the client is not shown)."""
    import logging
    import os
    cause = e.__cause__ or e
    logging.getLogger("scripted_kernel.mcp").warning(json.dumps({
        "event": "store_error", "operation": operation, "pid": os.getpid(),
        "error": f"{type(cause).__name__}: {cause}"}))


class _Reservations:
    """Bytes reserved by the calls in flight, at most `max_bytes` in all: a call waits, first
    come first served, until the least it needs fits, and then takes as much of what is free
    as it may use. The session a finished call leaves stays counted until Python's cyclic
    collector has run (a BashTool's run and its files form a reference cycle, so they outlive
    the call until a full collection): the next call starts a collection, and waits for it,
    when that would give it the room it needs, or a MiB more of what it may use.

    The session a call leaves as the store holds it is kept too (`held`, by session id, the
    least recently used first), counted as reserved: the next call of that session at that
    version takes it rather than loading it (`take`); the least recently used go, to the
    collector, when a call could use their room. Used on the event loop's thread only."""

    WORTH_COLLECTING = 1 << 20

    def __init__(self, max_bytes: int):
        self.max_bytes = max_bytes
        self.reserved = 0                 # by the calls in flight, and the uncollected
        self.uncollected = 0              # of calls finished since the last collection
        self._waiting: collections.deque = collections.deque()     # (least, most, future)
        self._collection: Optional[asyncio.Task] = None
        self.held: collections.OrderedDict = collections.OrderedDict()   # session id -> _Held

    def take(self, sid: str, version: int, principal: str) -> Optional["_Held"]:
        """The session `sid` at `version` as a call of `principal` left it, for the next call
        of that principal, whose own reservation counts it from now; None when not held so
        (another principal's call loads the record, whose signature refuses it)."""
        held = self.held.get(sid)
        if held is None or held.principal != principal:
            return None
        del self.held[sid]
        if held.version == version:
            self.reserved -= held.kept
            return held
        self.uncollected += held.kept
        return None

    def keep(self, sid: str, held: "_Held"):
        """Hold `held` for session `sid` (its bytes counted as reserved), in place of any other."""
        self.forget(sid)
        self.reserved += held.kept
        self.held[sid] = held

    def forget(self, sid: str):
        """The session ended: what is held of it goes."""
        held = self.held.pop(sid, None)
        if held is not None:
            self.uncollected += held.kept

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

    def release(self, amount: int, left: int, sid: str = "", held: Optional["_Held"] = None):
        """The end of a reservation of `amount` bytes, of which `left` stay taken until the
        cyclic collector has run, and `held`'s stay taken while it is held for session `sid`."""
        self.reserved -= amount - left
        self.uncollected += left
        if held is not None:
            held.kept = min(held.kept, amount - left)
            self.keep(sid, held)
        self._wake()

    def _wake(self):
        """Grant the calls in line their turn, the first first, while they fit; start a
        collection when the first would gain by it."""
        while self._waiting:
            least, most, future = self._waiting[0]
            while self.held and self.max_bytes - self.reserved + self.uncollected < most:
                # a held session never takes room a call could use: the least recently used goes
                self.uncollected += self.held.popitem(last=False)[1].kept
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
