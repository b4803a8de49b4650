"""MCP servers' tools as script commands (PyPI `mcp` >= 2.3): one client per server lives on a
private event-loop thread; calls from scripts are forwarded to it, and a tool error becomes
status 1 with the server's message. The client speaks whatever revision the server does (the
2026-07-28 one when offered, else the 2025 handshake) and declares the tasks extension: a
server that answers a call with a task (`resultType: "task"`) is polled until it finishes
(TasksExtension, usable with any `mcp.Client`)."""
from __future__ import annotations

import asyncio
import json
import threading
from typing import Any, Literal, Optional

from pydantic import ConfigDict, Field

from .definitions import ToolArgs, ToolDef

TASKS = "io.modelcontextprotocol/tasks"


class McpError(Exception):
    pass


def _models():
    """The pydantic models of the tasks extension's wire (made on first use: they need mcp)."""
    global _MODELS
    if _MODELS is None:
        from mcp_types import Request, RequestParams, Result

        class CreatedTask(Result):
            model_config = ConfigDict(extra="allow", populate_by_name=True)
            result_type: Literal["task"] = Field(default="task", alias="resultType")
            task_id: str = Field(alias="taskId")
            status: str
            poll_interval_ms: Optional[int] = Field(default=None, alias="pollIntervalMs")

        class TaskState(Result):
            model_config = ConfigDict(extra="allow", populate_by_name=True)
            task_id: str = Field(alias="taskId")
            status: str
            status_message: Optional[str] = Field(default=None, alias="statusMessage")
            poll_interval_ms: Optional[int] = Field(default=None, alias="pollIntervalMs")
            result: Optional[dict] = None
            error: Optional[dict] = None
            input_requests: Optional[dict] = Field(default=None, alias="inputRequests")

        class TaskParams(RequestParams):
            task_id: str = Field(alias="taskId")

        class GetTask(Request[TaskParams, Literal["tasks/get"]]):
            method: Literal["tasks/get"] = "tasks/get"
            params: TaskParams
            name_param = "taskId"

        class CancelTask(Request[TaskParams, Literal["tasks/cancel"]]):
            method: Literal["tasks/cancel"] = "tasks/cancel"
            params: TaskParams
            name_param = "taskId"

        class UpdateParams(TaskParams):
            input_responses: dict = Field(alias="inputResponses")

        class UpdateTask(Request[UpdateParams, Literal["tasks/update"]]):
            method: Literal["tasks/update"] = "tasks/update"
            params: UpdateParams
            name_param = "taskId"

        _MODELS = {"CreatedTask": CreatedTask, "TaskState": TaskState, "TaskParams": TaskParams,
                   "GetTask": GetTask, "CancelTask": CancelTask, "UpdateParams": UpdateParams,
                   "UpdateTask": UpdateTask}
    return _MODELS


_MODELS: Optional[dict] = None


async def get_task(session, task_id: str):
    """tasks/get: the task's state (status, statusMessage, result once completed ...)."""
    m = _models()
    return await session.send_request(m["GetTask"](params=m["TaskParams"](task_id=task_id)), m["TaskState"])


async def cancel_task(session, task_id: str):
    """tasks/cancel: ask the server to stop the task."""
    from mcp_types import EmptyResult
    m = _models()
    return await session.send_request(m["CancelTask"](params=m["TaskParams"](task_id=task_id)), EmptyResult)


async def update_task(session, task_id: str, input_responses: dict):
    """tasks/update: answers to a task's inputRequests (a paused run's approval)."""
    from mcp_types import EmptyResult
    m = _models()
    return await session.send_request(m["UpdateTask"](params=m["UpdateParams"](
        task_id=task_id, input_responses=input_responses)), EmptyResult)


def tasks_extension(on_state=None):
    """A ClientExtension for `mcp.Client(extensions=[...])`: declares the tasks extension and,
    when a call is answered with a task, polls `tasks/get` at the server's interval until the
    task ends; `call_tool` then returns its result (a cancelled or failed task raises McpError).
    `on_state(state)` sees each poll's answer."""
    from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
    from mcp_types import CallToolResult
    m = _models()

    async def resolve(created, ctx: ClaimContext) -> CallToolResult:
        interval = (created.poll_interval_ms or 500) / 1000
        while True:
            state = await get_task(ctx.session, created.task_id)
            if on_state is not None:
                await on_state(state)
            if state.status == "completed":
                return CallToolResult.model_validate(state.result or {}, by_name=False)
            if state.status in ("failed", "cancelled"):
                message = (state.error or {}).get("message") or state.status_message or ""
                raise McpError(f"the task {state.status}" + (f": {message}" if message else ""))
            await asyncio.sleep((state.poll_interval_ms or interval * 1000) / 1000)

    class TasksExtension(ClientExtension):
        identifier = TASKS

        def claims(self):
            return [ResultClaim(result_type="task", model=m["CreatedTask"], resolve=resolve)]

    return TasksExtension()


class _LoopThread:
    """A private event loop on a daemon thread that keeps the clients of imported MCP servers
    open between calls."""
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
    """A client of one MCP server, kept open on the private loop thread."""

    def __init__(self, command: Optional[list] = None, url: Optional[str] = None,
                 env: Optional[dict] = None, timeout: float = 30.0):
        if (command is None) == (url is None):
            raise ValueError("give either a command (stdio) or a url (streamable HTTP)")
        self.command = command
        self.url = url
        self.env = env
        self.timeout = timeout
        self.loop = _LoopThread.loop()
        self.client: Any = None
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
        from mcp import Client
        self._stop = asyncio.Event()
        try:
            async with Client(self._target(), extensions=[tasks_extension()]) as client:
                self.tools = (await client.list_tools()).tools
                self.client = client
                self._ready.set()
                await self._stop.wait()
        except BaseException as e:        # reported to the constructor, never raised on the loop
            self._failure = e
            self._ready.set()

    def _target(self):
        if self.command is not None:
            from mcp import StdioServerParameters
            return StdioServerParameters(command=self.command[0], args=list(self.command[1:]), env=self.env)
        return self.url

    def call(self, name: str, arguments: dict) -> str:
        assert self.client is not None           # the constructor waited for it
        future = asyncio.run_coroutine_threadsafe(self.client.call_tool(name, arguments), self.loop)
        try:
            result = future.result(self.timeout)
        except McpError:
            raise
        except Exception as e:                    # a protocol error: the server's message
            raise McpError(str(e) or f"{name} failed") from None
        text = "".join(getattr(c, "text", "") for c in result.content)
        if result.is_error:
            raise McpError(text or f"{name} failed")
        if not text and result.structured_content is not None:
            return json.dumps(result.structured_content) + "\n"
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
        found.append((ToolDef(t.name, t.description or "", t.input_schema or {}), callback))
    return found
