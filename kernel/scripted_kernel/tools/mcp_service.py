"""The MCP server as an ASGI service that a process manager can run in many workers.

    uvicorn --factory scripted_kernel.tools.mcp:create_app --workers 4 --no-access-log
    gunicorn -k uvicorn.workers.UvicornWorker -w 4 'scripted_kernel.tools.mcp:create_app()'
    python -m scripted_kernel mcp --http --host 0.0.0.0 --port 8000 --workers 4 --token "$TOKEN"

Configuration comes from the environment (SCRIPTED_MCP_*, see ServiceConfig), because workers
are separate processes that import the factory themselves.

`/mcp` speaks MCP's streamable HTTP to both eras: a 2026-07-28 request (its
`MCP-Protocol-Version` header names that revision) is one self-contained POST, answered as JSON,
or as an event stream once it sends progress; a 2025-era client runs the `initialize`
handshake. A ScriptedTool runs a fresh interpreter per call, so any worker answers any request.
A BashTool (`bash`) keeps a shell and files per session: a session handle (the
`bash_session_open` tool) or, for a 2025-era client, the `Mcp-Session-Id` of its MCP session.
Sessions live in each worker's memory (at most `max_sessions`, `max_sessions_bytes` of files
and shell state; the least recently used idle one makes room for a new one), or, with a session
store (`session_store`: file:///path or redis://host:port/db, tools/session_store.py), in the
store, where every worker finds them.

In front of the MCP application (_Front): the bearer token (required whenever the bind address
is not loopback), the body's size (`max_request_bytes`, chunked bodies too: 413) and its read
time (`body_timeout_seconds`: 408), and the client's connection: when it goes away, the run it
was waiting for is cancelled through its cancel flag. `/healthz` answers without a token and
says whether the session store answers; `/readyz` fails (503) while it does not. Each tool
call logs one JSON line (logger `scripted_kernel.mcp`).
"""
from __future__ import annotations

import asyncio
import hashlib
import hmac
import ipaddress
import json
import os
import secrets
import signal
import socket
import sys
import time
from dataclasses import dataclass, fields
from typing import Optional

ENV_PREFIX = "SCRIPTED_MCP_"
DEFAULT_MAX_REQUEST_BYTES = 1 << 20


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@dataclass
class ServiceConfig:
    """What to serve and how; each field is the environment variable SCRIPTED_MCP_<FIELD>."""
    tools: str = ""                  # MODULE:OBJECT or path/to/file.py:OBJECT, a ScriptedTool
    tools_dir: str = ""              # a folder of self-describing executables
    discovery: bool = False          # compact prompt plus a <name>_discover tool
    bash: bool = False               # a BashTool per session instead of a ScriptedTool
    fs: str = "none"                 # none | scratch: files for ScriptedTool scripts
    token: str = ""                  # the bearer token clients must send
    host: str = "127.0.0.1"          # the bind address: a token is required beyond loopback
    max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES
    header_timeout_seconds: float = 10.0     # a request's head must arrive within this
    body_timeout_seconds: float = 30.0       # and its body within this
    # --bash: sessions at once, their files and shell state in all, idle expiry (see SessionPool)
    max_sessions: int = 16
    max_sessions_bytes: int = 512 * 1024 * 1024
    session_idle_seconds: float = 900.0
    session_ttl_seconds: float = 86400.0     # a session handle's lifetime
    # --bash: where sessions live so that any worker serves them ("": in each worker's memory)
    session_store: str = ""
    session_key: str = ""            # signs stored snapshots, session handles and approval state
    session_max_bytes: int = 0       # a session's snapshot past this is not kept (0: the limits')
    approve: bool = False            # ask the client's user before each tool call
    task_after_seconds: float = 0.0  # a call still running after this becomes a task (0: only when asked)
    task_ttl_seconds: float = 600.0  # a finished task's result is kept this long
    # the key the workers of one `--workers N` service share when no session_key is set (the
    # supervisor makes one per start): handles and approval state from one worker hold in all
    worker_key: str = ""

    @classmethod
    def from_env(cls, environ=None) -> "ServiceConfig":
        environ = os.environ if environ is None else environ
        values: dict[str, object] = {}
        for f in fields(cls):
            raw = environ.get(ENV_PREFIX + f.name.upper())
            if raw is None:
                continue
            if f.type == "bool":
                values[f.name] = raw.strip().lower() in ("1", "true", "yes", "on")
            elif f.type == "int":
                values[f.name] = int(raw)
            elif f.type == "float":
                values[f.name] = float(raw)
            else:
                values[f.name] = raw
        return cls(**values)  # type: ignore[arg-type]  # each value converted to its field's type above

    def to_env(self) -> dict:
        return {ENV_PREFIX + f.name.upper(): str(int(v) if isinstance(v, bool) else v)
                for f in fields(self) for v in [getattr(self, f.name)]}

    def check(self):
        """Refuse to serve beyond loopback without a token."""
        if not self.token and not is_loopback(self.host):
            raise ValueError(f"serving on {self.host} needs a bearer token (--token or "
                             f"{ENV_PREFIX}TOKEN); without one only a loopback address is allowed")

    def key(self) -> Optional[bytes]:
        """The key that signs handles and seals approval state: the session key, else the one
        the supervisor gave its workers; None: each process makes its own."""
        secret = self.session_key or self.worker_key
        return hashlib.sha256(secret.encode()).digest() if secret else None

    def server_options(self):
        from .mcp_server import ServerOptions
        return ServerOptions(approve=self.approve, key=self.key(), handle_ttl_seconds=self.session_ttl_seconds,
                             task_after_seconds=self.task_after_seconds, task_ttl_seconds=self.task_ttl_seconds)

    @property
    def stateful(self) -> bool:
        """Whether 2025-era clients need MCP sessions of the SDK's (a BashTool kept in memory;
        approval asked by elicitation, which needs the session's stream)."""
        return (self.bash and not self.session_store) or self.approve


def create_app(config: Optional[ServiceConfig] = None):
    """The ASGI application (an uvicorn/gunicorn factory): configured from the environment
    unless a ServiceConfig is given."""
    config = config or ServiceConfig.from_env()
    config.check()
    server, stored = _mcp_server(config)
    app = _mcp_routes(server, config, stored)
    if stored is not None:
        app = _SessionIds(app, stored)
    app = _Front(app, config.token, config.max_request_bytes, config.body_timeout_seconds)
    _freeze_what_lives_as_long_as_the_server()
    return app


def _mcp_server(config: ServiceConfig) -> tuple:
    """(the MCP server, its StoredSessions or None)."""
    from .mcp_server import build_server
    from .mcp_sessions import SessionLimits
    from .toolset import DiscoveryMode
    mode = DiscoveryMode.WITH_DISCOVERY if config.discovery else DiscoveryMode.ALL
    options = config.server_options()
    if config.bash and config.session_store:
        from .bash_tool import BashTool
        stored = _stored_sessions(config)
        return build_server(BashTool(), mode, stored_sessions=stored, options=options), stored
    if config.bash:
        from .bash_tool import BashTool
        limits = SessionLimits(config.max_sessions, config.max_sessions_bytes, config.session_idle_seconds)
        return build_server(BashTool(), mode, session_tools=BashTool, session_limits=limits, options=options), None
    return build_server(scripted_tool(config), mode, options=options), None


def _stored_sessions(config: ServiceConfig):
    """The sessions of the configured store."""
    from .mcp_sessions import StoredSessions
    from .session_store import StoreError, open_store
    from .snapshot import SnapshotLimits
    from ..base.limits import ExecutionLimits
    limit = config.session_max_bytes or SnapshotLimits.of(ExecutionLimits()).max_bytes
    try:
        store = open_store(config.session_store, config.session_idle_seconds, limit, config.max_sessions)
    except StoreError as e:
        raise SystemExit(f"scripted_kernel mcp: {e}") from None
    stored = StoredSessions(store, config.session_key.encode() or None, max_workers=max(1, config.max_sessions),
                            max_bytes=config.max_sessions_bytes)
    _give_back_freed_sessions()
    return stored


def _mcp_routes(server, config: ServiceConfig, stored):
    """The Starlette application: /mcp (2026-07-28 requests to a stateless manager that
    streams progress; 2025-era ones to a manager with MCP sessions when the service keeps
    them), /healthz and /readyz."""
    import contextlib

    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from mcp.server.transport_security import TransportSecuritySettings
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    if config.token:                   # a token guards it: no DNS rebinding to fear
        security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    else:
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=True, allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
            allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"])
    body_limit = max(1, config.max_request_bytes)
    stateful = config.stateful
    legacy = StreamableHTTPSessionManager(server, stateless=not stateful, json_response=not stateful,
                                          session_idle_timeout=config.session_idle_seconds or None,
                                          max_sessions=None, security_settings=security,
                                          max_request_body_size=body_limit)
    modern = StreamableHTTPSessionManager(server, stateless=True, json_response=False, security_settings=security,
                                          max_request_body_size=body_limit)
    runs = server.scripts.runs

    async def mcp(scope, receive, send):
        headers = dict(scope.get("headers") or ())
        version = headers.get(b"mcp-protocol-version", b"").decode("latin-1")
        if version and version not in HANDSHAKE_PROTOCOL_VERSIONS:
            return await modern.handle_request(scope, receive, send)
        await legacy.handle_request(scope, receive, send)
        sid = headers.get(b"mcp-session-id")
        if scope["method"] == "DELETE" and sid is not None and stored is None and runs.keeps_sessions:
            await runs.close(sid.decode("latin-1"), scope.get("scripted.principal", ""))

    async def healthz(request: Request):
        reachable = await _store_reachable(stored)
        body = {"status": "ok", "pid": os.getpid()}
        if reachable is not None:
            body["store"] = "ok" if reachable else "unavailable"
        return JSONResponse(body)

    async def readyz(request: Request):
        reachable = await _store_reachable(stored)
        if reachable is False:
            return JSONResponse({"ready": False, "reason": "the session store is unavailable"}, status_code=503)
        return JSONResponse({"ready": True})

    @contextlib.asynccontextmanager
    async def lifespan(app):
        async with legacy.run(), modern.run():
            yield

    class _Mcp:                        # a plain ASGI endpoint: Starlette passes scope, receive, send
        async def __call__(self, scope, receive, send):
            await mcp(scope, receive, send)

    return Starlette(routes=[Route("/mcp", endpoint=_Mcp()), Route("/healthz", healthz), Route("/readyz", readyz)],
                     lifespan=lifespan)


async def _store_reachable(stored) -> Optional[bool]:
    """Whether the session store answers (None: there is none)."""
    if stored is None:
        return None
    from .mcp_sessions import log_store_error
    from .session_store import StoreError
    try:
        await asyncio.to_thread(stored.store.ping)
        return True
    except StoreError as e:
        log_store_error(e, "ping")
        return False


def _give_back_freed_sessions():
    """Make the memory of the sessions loaded for calls go back to the system once freed, so
    that the process's size follows what max_sessions_bytes counts. glibc raises its mmap
    threshold each time a large block is freed, and then carves large blocks out of per-thread
    arenas that keep them once freed: six calls on 30 MB sessions left the server 159-254 MB
    larger for 63 MB of Python objects at their peak; with the threshold fixed (at its default,
    128 KiB) 64 MB."""
    import ctypes
    import ctypes.util
    M_MMAP_THRESHOLD = -3
    try:
        ctypes.CDLL(ctypes.util.find_library("c")).mallopt(M_MMAP_THRESHOLD, 128 * 1024)
    except (OSError, AttributeError, TypeError):
        pass                                     # not glibc: its own allocator's ways


def _freeze_what_lives_as_long_as_the_server():
    """Move what the server has made so far (the modules, the tool, the SDK's models, some
    150,000 objects) out of the cyclic collector's way: it lives as long as the server. Under
    load a call's objects outlive two young collections and reach the oldest generation, so a
    full collection runs about once a second, and each walked the whole heap with the GIL held,
    stalling every call in flight: at one worker and 50 clients, 90-150 ms each (mcp 2.x's
    larger heap; 70-100 ms on 1.x), which was the p95 and p99 of the calls; frozen, 30-40 ms.
    The memory bound's collections (mcp_sessions) take some 15 ms, not 0.3 s."""
    import gc
    gc.collect()
    gc.freeze()


class _SessionIds:
    """ASGI middleware in front of the stateless MCP app when sessions live in a store, for
    2025-era clients: an `initialize` without a session gets a new id (minted here, recorded in
    the store, sent back in `Mcp-Session-Id`), or a JSON-RPC error saying why not (too many
    sessions, the store unavailable); any other request must carry an id the store knows (else
    404, as MCP says for an expired session; when the store cannot tell, the request goes on,
    and a tool call says the store is unavailable); DELETE ends the session; GET (a
    server-to-client stream) is not offered (405). A 2026-07-28 request passes: its sessions
    are named by handles."""

    def __init__(self, app, stored):
        self.app = app
        self.stored = stored

    async def __call__(self, scope, receive, send):
        from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

        from .mcp_sessions import log_store_error
        from .session_store import UNAVAILABLE, StoreError
        if scope["type"] != "http" or not scope["path"].rstrip("/").endswith("/mcp"):
            return await self.app(scope, receive, send)
        headers = dict(scope.get("headers") or ())
        version = headers.get(b"mcp-protocol-version", b"").decode("latin-1")
        if version and version not in HANDSHAKE_PROTOCOL_VERSIONS:
            return await self.app(scope, receive, send)
        raw = headers.get(b"mcp-session-id")
        method = scope["method"]
        store = self.stored.store
        if raw is not None:
            sid = raw.decode("latin-1")
            try:
                known = await asyncio.to_thread(store.exists, sid)
            except StoreError as e:
                log_store_error(e, "exists")
                known = True
            if not known:
                return await _refuse(send, 404, "Session not found")
            if method == "DELETE":
                try:
                    await asyncio.to_thread(store.delete, sid)
                except StoreError as e:
                    log_store_error(e, "delete")
                    return await _refuse(send, 503, f"{UNAVAILABLE}; the session was not ended")
                await send({"type": "http.response.start", "status": 200,
                            "headers": [(b"content-length", b"0")]})
                return await send({"type": "http.response.body", "body": b""})
            if method != "POST":
                return await _refuse(send, 405, "Method Not Allowed")
            return await self.app(scope, receive, send)
        if method != "POST":
            return await _refuse(send, 405, "Method Not Allowed")
        body, receive = await _read_body(receive)
        try:
            message = json.loads(body)
        except ValueError:
            message = None
        if not (isinstance(message, dict) and message.get("method") == "initialize"):
            return await _refuse(send, 400, "Bad Request: Missing session ID")
        from .session_store import TooManySessions, new_session_id
        sid = new_session_id()
        try:
            await asyncio.to_thread(self.stored.create, sid, scope.get("scripted.principal", ""))
        except TooManySessions as e:
            return await _rpc_error(send, message.get("id"), str(e))
        except StoreError as e:
            log_store_error(e, "create")
            return await _rpc_error(send, message.get("id"), f"{UNAVAILABLE}; no session was opened")

        async def send_with_id(event):
            if event["type"] == "http.response.start":
                event = dict(event, headers=[*event.get("headers", []), (b"mcp-session-id", sid.encode())])
            await send(event)
        return await self.app(scope, receive, send_with_id)


async def _rpc_error(send, request_id, message: str):
    """A JSON-RPC error answering the request (status 200, so that an MCP client shows the
    message rather than an HTTP status)."""
    await _send_json(send, 200, {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32000, "message": message}})


async def _read_body(receive):
    """The whole request body (read by _Front already), and a receive() that gives it again."""
    chunks = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            break
    body = b"".join(chunks)
    replayed: list = []

    async def again():
        if not replayed:
            replayed.append(True)
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()
    return body, again


def scripted_tool(config: ServiceConfig):
    """The ScriptedTool a configuration names (an empty one without --tools)."""
    from .loading import ToolSpecError, add_executables, apply_filesystem, load_tools
    from .scripted_tool import ScriptedTool
    try:
        tool = load_tools(config.tools) if config.tools else ScriptedTool.builder("scripted").build()
    except ToolSpecError as e:
        raise SystemExit(str(e)) from None        # a service misconfigured: it does not start
    if config.tools_dir:
        add_executables(tool, config.tools_dir)
    return apply_filesystem(tool, config.fs)


# ---------------------------------------------------------------- the front door

class HttpExchange:
    """One HTTP request to /mcp, once its body is read: the runs waiting on it are cancelled
    (through their cancel flags) if the client goes away before the response is complete."""

    def __init__(self, receive):
        self._receive = receive
        self.gone = asyncio.Event()
        self.gone_at: Optional[float] = None      # when the client went away (time.monotonic)
        self.responded = False
        self.tokens: set = set()
        self._watch: Optional[asyncio.Task] = None

    def start(self):
        self._watch = asyncio.get_running_loop().create_task(self._watch_for_disconnect())

    async def _watch_for_disconnect(self):
        while True:
            message = await self._receive()
            if message["type"] == "http.disconnect":
                break
        if not self.responded:         # (the server also reports a finished response as one)
            self.gone_at = time.monotonic()
            self.gone.set()
            for token in list(self.tokens):
                token.cancel("cancelled")

    def on_disconnect(self, token):
        if self.gone.is_set():
            token.cancel("cancelled")
        else:
            self.tokens.add(token)

    def forget(self, token):
        self.tokens.discard(token)

    async def receive(self):
        """What the application receives after the body: the disconnect, when it comes."""
        await self.gone.wait()
        return {"type": "http.disconnect"}

    def finish(self):
        if self._watch is not None:
            self._watch.cancel()
            # the cancelled task keeps its CancelledError, whose traceback holds the watch's
            # frame and so this exchange: without letting go of the task, each request left a
            # cycle (the task, its error, three frames, this exchange) for the collector
            self._watch = None


class _Front:
    """ASGI middleware before /mcp: the bearer token (the caller's principal is the digest of
    the token it sent), the body (read whole, at most `max_request_bytes` however it is framed,
    within `body_timeout` seconds), no service on a non-loopback socket without a token (for
    servers started without the CLI's check), and the exchange that cancels a run when its
    client goes away."""

    def __init__(self, app, token: str, max_request_bytes: int, body_timeout: float):
        self.app = app
        self.token = token.encode()
        self.principal = hashlib.sha256(b"scripted-mcp-principal:" + self.token).hexdigest()[:32] if token else ""
        self.max_request_bytes = max_request_bytes
        self.body_timeout = body_timeout

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["path"] in ("/healthz", "/readyz"):
            return await self.app(scope, receive, send)
        headers = dict(scope.get("headers") or ())
        if not self.token:
            server = scope.get("server") or ("127.0.0.1", 0)
            if not is_loopback(str(server[0])):
                return await _refuse(send, 403, "a bearer token is required beyond loopback")
        elif not hmac.compare_digest(headers.get(b"authorization", b""), b"Bearer " + self.token):
            return await _refuse(send, 401, "missing or wrong bearer token",
                                 [(b"www-authenticate", b'Bearer realm="mcp"')])
        declared = headers.get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_request_bytes:
            return await _refuse(send, 413, f"request body over {self.max_request_bytes} bytes")
        import anyio
        # a cancel scope on this task, not asyncio.wait_for, which reads the body in a task of
        # its own: three more turns of the event loop per request, each waiting behind the
        # callbacks of every other call in flight
        with anyio.move_on_after(self.body_timeout) as reading:
            body = await self._body(receive)
        if reading.cancelled_caught:
            return await _refuse(send, 408, f"the request body did not arrive within {self.body_timeout:g} s",
                                 [(b"connection", b"close")])
        if body is None:
            return await _refuse(send, 413, f"request body over {self.max_request_bytes} bytes",
                                 [(b"connection", b"close")])
        if isinstance(body, dict):             # the client left while sending
            return
        scope = dict(scope, **{"scripted.principal": self.principal})
        exchange = HttpExchange(receive)
        scope["scripted.exchange"] = exchange
        delivered: list = []

        async def replay():
            if not delivered:
                delivered.append(True)
                return {"type": "http.request", "body": body, "more_body": False}
            return await exchange.receive()

        async def watched_send(event):
            if event["type"] == "http.response.body" and not event.get("more_body"):
                exchange.responded = True
            await send(event)
        exchange.start()
        try:
            await self.app(scope, replay, watched_send)
        finally:
            exchange.finish()

    async def _body(self, receive):
        """The body's bytes; None: over the limit; the disconnect message: the client left."""
        chunks, seen = [], 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return message
            chunk = message.get("body", b"")
            seen += len(chunk)
            if seen > self.max_request_bytes:
                return None
            chunks.append(chunk)
            if not message.get("more_body"):
                return b"".join(chunks)


async def _refuse(send, status: int, message: str, extra_headers=()):
    await _send_json(send, status, {"error": message}, extra_headers)


async def _send_json(send, status: int, payload: dict, extra_headers=()):
    body = json.dumps(payload).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode()), *extra_headers]})
    await send({"type": "http.response.body", "body": body})


# ---------------------------------------------------------------- workers

def graceful_seconds() -> int:
    """How long a stopping worker lets running calls go on: their timeout, and a little."""
    from ..base.limits import ExecutionLimits
    return int(ExecutionLimits().timeout_seconds) + 5


class Supervisor:
    """`--workers N`: uvicorn in N worker processes, each listening on its own SO_REUSEPORT
    socket, so that the kernel spreads connections evenly (uvicorn's own workers share one
    socket, and with keep-alive clients one worker can end up with most of the connections).
    A worker that dies is replaced (after a back-off that doubles while workers keep dying, from
    0.1 s to 5 s); when `max_deaths` die within `death_window` seconds the service stops and
    exits with status 1. SIGTERM/SIGINT stop the workers gracefully; the exit status is then 0."""

    def __init__(self, host: str, port: int, workers: int, max_deaths: int = 5, death_window: float = 60.0):
        import multiprocessing
        self.host, self.port, self.workers = host, port, workers
        self.max_deaths, self.death_window = max_deaths, death_window
        self.spawn = multiprocessing.get_context("spawn")
        self.procs: list = []
        self.deaths: list = []
        self.stopping: list = []

    def _start(self, index: int):
        proc = self.spawn.Process(target=_worker, args=(self.host, self.port), name=f"scripted-mcp-{index}")
        proc.start()
        return proc

    def stop(self, signum=None, frame=None):
        self.stopping.append(signum)
        for proc in self.procs:
            if proc.is_alive() and proc.pid is not None:
                os.kill(proc.pid, signal.SIGTERM)

    def run(self) -> int:
        from multiprocessing.connection import wait
        from .mcp_server import _CALLS
        signal.signal(signal.SIGTERM, self.stop)
        signal.signal(signal.SIGINT, self.stop)
        self.procs = [self._start(i) for i in range(self.workers)]
        backoff = 0.1
        while not self.stopping:
            wait([proc.sentinel for proc in self.procs])
            if self.stopping:
                break
            for index, proc in enumerate(self.procs):
                if proc.is_alive():
                    continue
                now = time.monotonic()
                self.deaths = [t for t in self.deaths if t > now - self.death_window] + [now]
                _CALLS.warning(json.dumps({"event": "worker_died", "pid": proc.pid, "exit_code": proc.exitcode,
                                           "deaths_in_window": len(self.deaths)}))
                if len(self.deaths) >= self.max_deaths:
                    print(f"scripted_kernel mcp: {len(self.deaths)} workers died within {self.death_window:g} s; "
                          "stopping", file=sys.stderr)
                    self.stop()
                    break
                time.sleep(backoff)            # a worker that dies at once must not spin the supervisor
                backoff = min(backoff * 2, 5.0)
                if self.stopping:
                    break
                self.procs[index] = self._start(index)
                _CALLS.info(json.dumps({"event": "worker_started", "pid": self.procs[index].pid}))
            else:
                backoff = max(0.1, backoff / 2)
        for proc in self.procs:
            proc.join()
        return 1 if len(self.deaths) >= self.max_deaths else 0


def run_workers(host: str, port: int, workers: int, token_required: bool = False) -> int:
    """The service on `host:port`: refused with one line when anyone serves that port already;
    one worker in this process, or a Supervisor of `workers` processes."""
    refuse_if_served(host, port)
    log_startup(host, port, workers, token_required)
    if workers <= 1:
        # uvicorn re-raises the signal that stopped it; after a graceful stop that is success.
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, lambda signum, frame: None)
        _worker(host, port)
        return 0
    os.environ.setdefault(ENV_PREFIX + "WORKER_KEY", secrets.token_hex(32))    # the workers share it
    return Supervisor(host, port, workers).run()


def refuse_if_served(host: str, port: int):
    """SystemExit with one line when a socket listens on the address already. The workers bind
    with SO_REUSEPORT, which would let a second service share the port silently; a probe
    without it (SO_REUSEADDR only, so that connections of a previous run in TIME_WAIT do not
    count) fails when anyone listens there."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    probe = socket.socket(family, socket.SOCK_STREAM)
    probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        probe.bind((host.strip("[]"), port))
    except OSError as e:
        raise SystemExit(f"scripted_kernel mcp: cannot listen on {host}:{port}: "
                         f"{'it is served already' if e.errno == 98 else e.strerror}") from None
    finally:
        probe.close()


def log_startup(host: str, port: int, workers: int, token_required: bool):
    """One line on stderr (logger scripted_kernel.mcp) as the service starts: where it listens,
    how many workers, and whether clients need the bearer token."""
    import logging
    from .mcp_server import log_to_stderr
    log_to_stderr()
    shown = f"[{host.strip('[]')}]" if ":" in host else host
    logging.getLogger("scripted_kernel.mcp").info(json.dumps({
        "event": "start", "url": f"http://{shown}:{port}/mcp", "host": host, "port": port,
        "workers": workers, "token_required": token_required, "pid": os.getpid()}))


def _listening_socket(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP named, not 0: asyncio sets TCP_NODELAY only on sockets whose proto says TCP,
    # and without it a keep-alive client waits for a delayed ACK (~40 ms) on every response
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as e:
        sock.close()
        raise SystemExit(f"scripted_kernel mcp: cannot listen on {host}:{port}: {e.strerror}") from None
    sock.listen(2048)
    return sock


def head_timeout_protocol(seconds: float):
    """uvicorn's HTTP protocol, closing a connection whose request head (request line and
    headers) has not all arrived `seconds` after the connection opened or after its previous
    response: uvicorn has no such bound, and a client trickling a byte now and then holds its
    connection (and uvicorn's keep-alive timer restarts on every byte)."""
    from uvicorn.protocols.http.auto import AutoHTTPProtocol

    class HeadTimeoutProtocol(AutoHTTPProtocol):          # type: ignore[misc,valid-type]
        _head_timer: Optional[asyncio.TimerHandle] = None

        def connection_made(self, transport):
            super().connection_made(transport)
            self._arm_head_timer()

        def on_response_complete(self):
            super().on_response_complete()
            self._arm_head_timer()

        def connection_lost(self, exc):
            if self._head_timer is not None:
                self._head_timer.cancel()
            super().connection_lost(exc)

        def _arm_head_timer(self):
            if self._head_timer is not None:
                self._head_timer.cancel()
            self._head_timer = self.loop.call_later(seconds, self._head_too_slow, self.cycle)

        def _head_too_slow(self, cycle_then):
            # a request whose head arrived since the timer was armed has a cycle of its own
            if self.cycle is cycle_then and not self.transport.is_closing():
                self.transport.close()

    return HeadTimeoutProtocol


def _worker(host: str, port: int):
    import uvicorn
    service = ServiceConfig.from_env()
    config = uvicorn.Config("scripted_kernel.tools.mcp:create_app", factory=True, access_log=False,
                            log_level="warning", timeout_graceful_shutdown=graceful_seconds(),
                            http=head_timeout_protocol(service.header_timeout_seconds))
    uvicorn.Server(config).run(sockets=[_listening_socket(host, port)])
