"""The MCP server as an ASGI service that a process manager can run in many workers.

    uvicorn --factory scripted_kernel.tools.mcp:create_app --workers 4 --no-access-log
    gunicorn -k uvicorn.workers.UvicornWorker -w 4 'scripted_kernel.tools.mcp:create_app()'
    python -m scripted_kernel mcp --http --host 0.0.0.0 --port 8000 --workers 4 --token "$TOKEN"

Configuration comes from the environment (SCRIPTED_MCP_*, see ServiceConfig), because workers
are separate processes that import the factory themselves. A ScriptedTool is served in MCP's
stateless streamable-HTTP mode: every request is complete in itself and every call runs a
fresh interpreter, so any worker can answer any request. A BashTool keeps a shell and files
per MCP session, which live in one worker: run it in one worker or behind a load balancer that
pins a session (the `Mcp-Session-Id` header) to a worker. Each worker keeps at most
`max_sessions` sessions and `max_sessions_bytes` of their files and shell state, and drops a
session idle for `session_idle_seconds`; a session it cannot open is a tool error saying why.
With a session store (`session_store`: file:///path or redis://host:port/db, see
tools/session_store.py) the sessions live in the store instead: the service mints the
`Mcp-Session-Id` itself and every worker honours it, each call loads the session's snapshot,
runs and saves it back (compare and set), so any worker serves any session; `max_sessions`
then bounds the sessions the store keeps, and `max_sessions_bytes` the memory of the sessions
loaded by each worker's calls in flight (see mcp_server.StoredSessions).

A bearer token is required whenever the bind address is not loopback; bodies over
`max_request_bytes` are refused with 413; `/healthz` answers without a token; each tool call
logs one JSON line (logger `scripted_kernel.mcp`).
"""
from __future__ import annotations

import hmac
import ipaddress
import json
import os
import signal
import socket
import sys
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
    bash: bool = False               # a BashTool per MCP session instead of a ScriptedTool
    fs: str = "none"                 # none | scratch: files for ScriptedTool scripts
    token: str = ""                  # the bearer token clients must send
    host: str = "127.0.0.1"          # the bind address: a token is required beyond loopback
    max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES
    # --bash: sessions at once, their files and shell state in all, idle expiry (see SessionPool)
    max_sessions: int = 16
    max_sessions_bytes: int = 512 * 1024 * 1024
    session_idle_seconds: float = 900.0
    # --bash: where sessions live so that any worker serves them ("": in each worker's memory)
    session_store: str = ""
    session_key: str = ""            # signs the stored snapshots (HMAC): the store cannot forge one
    session_max_bytes: int = 0       # a session's snapshot past this is not kept (0: the limits')
    approve: bool = False            # ask the client's user before each tool call (elicitation)

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


def create_app(config: Optional[ServiceConfig] = None):
    """The ASGI application (an uvicorn/gunicorn factory): configured from the environment
    unless a ServiceConfig is given."""
    from starlette.requests import Request
    from starlette.responses import JSONResponse

    from .mcp_server import build_server
    from .toolset import DiscoveryMode

    config = config or ServiceConfig.from_env()
    config.check()
    mode = DiscoveryMode.WITH_DISCOVERY if config.discovery else DiscoveryMode.ALL
    if config.bash and config.session_store:
        server, stored = _stored_bash_server(config, mode)
    elif config.bash:
        from .bash_tool import BashTool
        from .mcp_server import SessionLimits
        limits = SessionLimits(config.max_sessions, config.max_sessions_bytes, config.session_idle_seconds)
        server = build_server(BashTool(), mode, stateless=False, session_tools=BashTool,
                              check_host=not config.token, session_limits=limits, approve=config.approve)
    else:
        # asking the client mid-call needs a session's stream: with --approve, not stateless
        server = build_server(scripted_tool(config), mode, stateless=not config.approve, check_host=not config.token,
                              approve=config.approve)

    @server.custom_route("/healthz", methods=["GET"])
    async def healthz(request: Request):
        return JSONResponse({"status": "ok", "pid": os.getpid()})

    app = server.streamable_http_app()
    if config.bash and config.session_store:
        app = _SessionIds(app, stored)
    return _Guard(app, config.token, config.max_request_bytes)


def _stored_bash_server(config: ServiceConfig, mode):
    """A stateless server whose BashTool sessions live in the configured store."""
    from .bash_tool import BashTool
    from .mcp_server import StoredSessions, build_server
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
    server = build_server(BashTool(), mode, stateless=True, check_host=not config.token,
                          stored_sessions=stored)
    _give_back_freed_sessions()
    return server, stored


def _give_back_freed_sessions():
    """Make the memory of the sessions loaded for calls go back to the system once freed, so
    that the process's size follows what max_sessions_bytes counts. glibc raises its mmap
    threshold each time a large block is freed, and then carves large blocks out of per-thread
    arenas that keep them once freed: six calls on 30 MB sessions left the server 159-254 MB
    larger for 63 MB of Python objects at their peak; with the threshold fixed (at its default,
    128 KiB) 64 MB. And what the server has made so far lives as long as it: frozen out of the
    cyclic collector's way, the collections that the memory bound starts take some 15 ms, not
    0.3 s through the 200,000 objects of the modules."""
    import ctypes
    import ctypes.util
    import gc
    M_MMAP_THRESHOLD = -3
    try:
        ctypes.CDLL(ctypes.util.find_library("c")).mallopt(M_MMAP_THRESHOLD, 128 * 1024)
    except (OSError, AttributeError, TypeError):
        pass                                     # not glibc: its own allocator's ways
    gc.collect()
    gc.freeze()


class _SessionIds:
    """ASGI middleware in front of the stateless MCP app when sessions live in a store: an
    `initialize` without a session gets a new id (minted here, recorded in the store, sent back
    in `Mcp-Session-Id`), or a JSON-RPC error saying why not (too many sessions, the store
    unavailable); any other request must carry an id the store knows (else 404, as MCP says
    for an expired session; when the store cannot tell, the request goes on, and a tool call
    says the store is unavailable); DELETE ends the session; GET (a server-to-client stream)
    is not offered (405)."""

    def __init__(self, app, stored):
        self.app = app
        self.stored = stored

    async def __call__(self, scope, receive, send):
        import asyncio
        from .mcp_server import log_store_error
        from .session_store import UNAVAILABLE, StoreError
        if scope["type"] != "http" or not scope["path"].rstrip("/").endswith("/mcp"):
            return await self.app(scope, receive, send)
        headers = dict(scope.get("headers") or ())
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
            await asyncio.to_thread(self.stored.create, sid)
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
    """The whole request body, and a receive() that gives it again to the app."""
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


class _Guard:
    """ASGI middleware: the bearer token, the body size limit, and no service on a non-loopback
    socket without a token (for servers started without the CLI's check)."""

    def __init__(self, app, token: str, max_request_bytes: int):
        self.app = app
        self.token = token.encode()
        self.max_request_bytes = max_request_bytes

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["path"] == "/healthz":
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
        await self.app(scope, self._limited(receive, send), send)

    def _limited(self, receive, send):
        """receive() that stops a body without a length once it passes the limit."""
        seen = 0
        limit = self.max_request_bytes

        async def limited_receive():
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    return {"type": "http.disconnect"}
            return message
        return limited_receive


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


def run_workers(host: str, port: int, workers: int, token_required: bool = False) -> int:
    """uvicorn in `workers` processes, each listening on its own SO_REUSEPORT socket, so that
    the kernel spreads connections evenly (uvicorn's own workers share one socket, and with
    keep-alive clients one worker can end up with most of the connections). SIGTERM/SIGINT
    stop them gracefully; a worker that dies ends the service, for its process manager to
    restart."""
    import multiprocessing
    from multiprocessing.connection import wait
    _listening_socket(host, port).close()          # the address is usable: fail here, not N times
    log_startup(host, port, workers, token_required)
    if workers <= 1:
        # uvicorn re-raises the signal that stopped it; after a graceful stop that is success.
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, lambda signum, frame: None)
        _worker(host, port)
        return 0
    spawn = multiprocessing.get_context("spawn")
    procs = [spawn.Process(target=_worker, args=(host, port), name=f"scripted-mcp-{i}") for i in range(workers)]
    for proc in procs:
        proc.start()
    stopping = []

    def stop(signum, frame):
        stopping.append(signum)
        for proc in procs:
            if proc.is_alive() and proc.pid is not None:
                os.kill(proc.pid, signal.SIGTERM)
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    wait([proc.sentinel for proc in procs])        # until one ends: stopped, or died
    if not stopping:
        print("scripted_kernel mcp: a worker died; stopping the others", file=sys.stderr)
        stop(signal.SIGTERM, None)
    for proc in procs:
        proc.join()
    return 0 if stopping else 1


def log_startup(host: str, port: int, workers: int, token_required: bool):
    """One line on stderr (logger scripted_kernel.mcp) as the service starts: where it listens,
    how many workers, and whether clients need the bearer token."""
    import json
    import logging
    from .mcp_server import _log_calls_to_stderr
    _log_calls_to_stderr()
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


def _worker(host: str, port: int):
    import uvicorn
    config = uvicorn.Config("scripted_kernel.tools.mcp:create_app", factory=True, access_log=False,
                            log_level="warning", timeout_graceful_shutdown=graceful_seconds())
    uvicorn.Server(config).run(sockets=[_listening_socket(host, port)])
