"""MCP servers' tools as script commands (PyPI `mcp`, v1 API): one client session per server
lives on a private event-loop thread; calls from scripts are forwarded to it, and a tool error
becomes status 1 with the server's message."""
from __future__ import annotations

import asyncio
import json
import threading
from typing import TYPE_CHECKING, Optional

from .definitions import ToolArgs, ToolDef

if TYPE_CHECKING:
    from mcp import ClientSession


class McpError(Exception):
    pass


class _LoopThread:
    """A private event loop on a daemon thread that keeps the client sessions of imported
    MCP servers open between calls."""
    _lock = threading.Lock()
    _loop: Optional[asyncio.AbstractEventLoop] = None

    @classmethod
    def loop(cls) -> asyncio.AbstractEventLoop:
        with cls._lock:
            if cls._loop is None:
                loop = asyncio.new_event_loop()
                threading.Thread(target=loop.run_forever, name="scripted-mcp-loop", daemon=True).start()
                cls._loop = loop
            return cls._loop


class McpConnection:
    """A client session to one MCP server, kept open on the private loop thread."""

    def __init__(self, command: Optional[list] = None, url: Optional[str] = None,
                 env: Optional[dict] = None, timeout: float = 30.0):
        if (command is None) == (url is None):
            raise ValueError("give either a command (stdio) or a url (streamable HTTP)")
        self.command = command
        self.url = url
        self.env = env
        self.timeout = timeout
        self.loop = _LoopThread.loop()
        self.session: Optional["ClientSession"] = None
        self.tools: list = []
        self._ready = threading.Event()
        self._stop: Optional[asyncio.Event] = None
        self._failure: Optional[BaseException] = None
        self._task = asyncio.run_coroutine_threadsafe(self._run(), self.loop)
        if not self._ready.wait(timeout):
            raise McpError("the MCP server did not answer in time")
        if self._failure is not None:
            raise McpError(f"cannot connect to the MCP server: {self._failure}")

    async def _run(self):
        from mcp import ClientSession
        self._stop = asyncio.Event()
        try:
            async with self._transport() as streams:
                read, write = streams[0], streams[1]
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    self.tools = (await session.list_tools()).tools
                    self.session = session
                    self._ready.set()
                    await self._stop.wait()
        except BaseException as e:        # reported to the constructor, never raised on the loop
            self._failure = e
            self._ready.set()

    def _transport(self):
        if self.command is not None:
            from mcp import StdioServerParameters
            from mcp.client.stdio import stdio_client
            params = StdioServerParameters(command=self.command[0], args=list(self.command[1:]), env=self.env)
            return stdio_client(params)
        import mcp.client.streamable_http as transport
        # mcp before 1.24 had only the older spelling
        connect = getattr(transport, "streamable_http_client", None) or transport.streamablehttp_client
        assert self.url is not None
        return connect(self.url)

    def call(self, name: str, arguments: dict) -> str:
        assert self.session is not None           # the constructor waited for it
        future = asyncio.run_coroutine_threadsafe(self.session.call_tool(name, arguments), self.loop)
        result = future.result(self.timeout)
        text = "".join(getattr(c, "text", "") for c in result.content)
        if result.isError:
            raise McpError(text or f"{name} failed")
        if not text and getattr(result, "structuredContent", None) is not None:
            return json.dumps(result.structuredContent) + "\n"
        return text if text.endswith("\n") or not text else text + "\n"

    def close(self):
        if self._stop is not None:
            self.loop.call_soon_threadsafe(self._stop.set)
            try:
                self._task.result(5)
            except Exception:
                pass


def tools_from_mcp(command: Optional[list] = None, url: Optional[str] = None,
                   env: Optional[dict] = None) -> list:
    """(ToolDef, callback) for every tool of an MCP server."""
    connection = McpConnection(command, url, env)
    found = []
    for t in connection.tools:
        def callback(args: ToolArgs, _name=t.name):
            return connection.call(_name, args.params)
        found.append((ToolDef(t.name, t.description or "", t.inputSchema or {}), callback))
    return found
