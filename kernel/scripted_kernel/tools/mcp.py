"""Model Context Protocol, both ways (PyPI `mcp`, v1 API).

Serve: a ScriptedTool becomes one MCP tool (`commands` in; stdout, stderr, exit_code out)
whose description is the system prompt; with DiscoveryMode.WITH_DISCOVERY also `<name>_discover`.

Import: every tool of an MCP server (a stdio command or a streamable-HTTP URL) becomes a
script command. One client session per server lives on a private event-loop thread; calls
from scripts are forwarded to it, and a tool error becomes status 1 with the server's message.
"""
from __future__ import annotations

import asyncio
import threading
from typing import Optional, TypedDict

from .definitions import ToolArgs, ToolDef
from .containment import valid_unicode
from .scripted_tool import ScriptedTool
from .toolset import DiscoveryMode, ScriptingToolSet


class McpError(Exception):
    pass


class ScriptOutput(TypedDict):
    """The structured result of one script run."""
    stdout: str
    stderr: str
    exit_code: int


# ---------------------------------------------------------------- serve

def build_server(tool: ScriptedTool, mode: DiscoveryMode = DiscoveryMode.ALL, host: str = "127.0.0.1",
                 port: int = 8000):
    from mcp.server.fastmcp import FastMCP
    offered = ScriptingToolSet(tool, mode).tools()
    tool = offered[0]
    server = FastMCP(tool.name, instructions=tool.short_description or None, host=host, port=port)

    async def run_script(commands: str) -> ScriptOutput:
        # each request runs on a runner thread of its own: a hung tool never blocks the others
        response = await tool.execute_async(commands)
        return _output(response)

    server.add_tool(run_script, name=tool.name, description=tool.system_prompt(), structured_output=True)
    if len(offered) > 1:
        discover = offered[1]

        async def lookup(commands: str) -> ScriptOutput:
            response = await asyncio.to_thread(discover.execute, {"commands": commands})
            return _output(response)
        server.add_tool(lookup, name=discover.name, description=discover.description(), structured_output=True)
    return server


def _output(response) -> ScriptOutput:
    """A response as JSON can carry it: undecodable bytes become U+FFFD."""
    return {"stdout": valid_unicode(response.stdout), "stderr": valid_unicode(response.stderr),
            "exit_code": response.exit_code}


def serve(tool: ScriptedTool, mode: DiscoveryMode = DiscoveryMode.ALL, http: bool = False,
          host: str = "127.0.0.1", port: int = 8000):
    """Run until the client goes away: stdio by default, streamable HTTP on 127.0.0.1 if asked."""
    server = build_server(tool, mode, host, port)
    server.run("streamable-http" if http else "stdio")


# ---------------------------------------------------------------- import

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
        self.session = None
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
        from mcp.client.streamable_http import streamablehttp_client
        return streamablehttp_client(self.url)

    def call(self, name: str, arguments: dict) -> str:
        future = asyncio.run_coroutine_threadsafe(self.session.call_tool(name, arguments), self.loop)
        result = future.result(self.timeout)
        text = "".join(getattr(c, "text", "") for c in result.content)
        if result.isError:
            raise McpError(text or f"{name} failed")
        if not text and getattr(result, "structuredContent", None) is not None:
            import json
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
