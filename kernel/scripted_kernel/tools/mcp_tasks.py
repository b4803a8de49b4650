"""Long scripts as tasks: the MCP tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663).

A 2026-07-28 client that declares the extension in a request's capabilities may get a task
instead of the call's result: at once when it asks for one (`params.task`), or once the call
has run for `task_after_seconds` (the server decides). The answer is then `resultType: "task"`
with the task's id; the script goes on, no longer tied to the request (the client leaving
does not cancel it).

    tasks/get     status (working, input_required, completed, failed, cancelled), the
                  output so far (`statusMessage`: its last lines; `_meta`: all of it), and
                  once finished the call's result
    tasks/cancel  sets the run's cancel flag: the script stops at its next command, and its
                  worker is freed within the run's grace (GRACE, 0.25 s) even if a callback hangs
    tasks/update  answers a paused run's approval (inputResponses): it goes on

Tasks live in the memory of the process that runs them, bound to the principal that made them
(another client's `tasks/get` is told the task is unknown). A finished task is kept for
`task_ttl_seconds` and, with the other finished tasks, within `task_max_bytes`; the oldest go
first. With several workers behind one address, tasks/* must reach the worker that made the
task: route on the `Mcp-Name` header (the task id), or run one worker.
"""
from __future__ import annotations

import asyncio
import collections
import json
import logging
import os
import secrets
import time
from typing import Any, Optional

from pydantic import Field

TASKS = "io.modelcontextprotocol/tasks"
POLL_INTERVAL_MS = 500
STATUS_TAIL = 2000                 # characters of output in a working task's statusMessage
_LOG = logging.getLogger("scripted_kernel.mcp")


def _iso(when: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(when)) + f".{int(when % 1 * 1000):03d}Z"


class Output:
    """What a run has written so far (for tasks/get), and where its chunks go on (progress)."""

    def __init__(self, forward=None):
        self.forward = forward
        self.chunks: dict = {"stdout": [], "stderr": []}

    def write(self, stream: str, text: str):          # on the runner thread
        self.chunks[stream].append(text)
        if self.forward is not None:
            self.forward(stream, text)

    def text(self, stream: str) -> str:
        joined = "".join(self.chunks[stream])
        self.chunks[stream] = [joined]
        return joined


class Task:
    """One task: its run, its status, its result once finished."""

    def __init__(self, task_id: str, principal: str, call, output: Output):
        self.task_id = task_id
        self.principal = principal
        self.call = call
        self.output = output
        self.status = "working"
        self.created = self.updated = time.time()
        self.result: Optional[dict] = None
        self.error: Optional[dict] = None
        self.input_requests: Optional[dict] = None
        self.resume: Optional[Any] = None       # (job, continuation, key, allowed) of a paused run
        self.work: Optional[asyncio.Task] = None
        self.cancel_asked: Optional[float] = None
        self.stopped_after: Optional[float] = None    # seconds from tasks/cancel to the run's end
        self.size = 0

    @property
    def finished(self) -> bool:
        return self.status in ("completed", "failed", "cancelled")

    def wire(self, ttl_ms: int) -> dict:
        """The task as tasks/get answers (DetailedTask)."""
        task: dict = {"taskId": self.task_id, "status": self.status, "createdAt": _iso(self.created),
                      "lastUpdatedAt": _iso(self.updated), "ttlMs": ttl_ms, "pollIntervalMs": POLL_INTERVAL_MS}
        if self.status == "working":
            stdout = self.output.text("stdout")
            task["statusMessage"] = stdout[-STATUS_TAIL:] if stdout else "running"
            task["_meta"] = {"scripted/output": {"stdout": stdout, "stderr": self.output.text("stderr")}}
        elif self.status == "input_required":
            task["inputRequests"] = self.input_requests
        elif self.status == "completed":
            task["result"] = self.result
        elif self.status == "failed":
            task["error"] = self.error
        return task


class Tasks:
    """The tasks of one server process."""

    def __init__(self, options):
        self.options = options
        self.tasks: collections.OrderedDict = collections.OrderedDict()     # id -> Task, oldest first
        self.kept_bytes = 0
        self.background: set = set()

    def ttl_ms(self) -> int:
        return int(self.options.task_ttl_seconds * 1000)

    # -------------------------------------------------------- making one

    def may_defer(self, ctx, params) -> bool:
        """Whether this call may become a task: the client declared the extension on this
        request, and asked for a task or the server makes one after a while."""
        capabilities = ctx.session.client_capabilities
        extensions = getattr(capabilities, "extensions", None) or {}
        if TASKS not in extensions:
            return False
        return params.task is not None or self.options.task_after_seconds > 0

    async def run_or_defer(self, call, params, run, answer):
        """The call's result if it ends in time; else a task (`resultType: "task"`) whose run
        goes on. `run`: the run (a coroutine) writing to call.output; `answer(response)`: the
        result of a finished run."""
        work = asyncio.ensure_future(run)
        wait = 0.0 if params.task is not None else self.options.task_after_seconds
        try:
            if wait:
                await asyncio.wait({work}, timeout=wait)
        except asyncio.CancelledError:             # the client left before it had an answer
            call.cancel.cancel("cancelled")
            raise
        if work.done():
            return await answer(work.result())
        task = Task(secrets.token_urlsafe(24), call.principal, call, call.output)
        call.detach()
        self._keep(task)
        self._follow(task, work, answer)
        _LOG.info(json.dumps({"event": "task", "task": task.task_id, "status": "working", "pid": os.getpid()}))
        return {"resultType": "task", **{k: v for k, v in task.wire(self.ttl_ms()).items() if k != "_meta"}}

    def _follow(self, task: Task, work, answer):
        async def finish():
            try:
                response = await work
                if task.cancel_asked is not None:
                    task.stopped_after = time.monotonic() - task.cancel_asked
                result = await answer(response)
            except Exception as e:                # the server failed it: a JSON-RPC error
                _LOG.warning(json.dumps({"event": "task_error", "task": task.task_id,
                                         "error": f"{type(e).__name__}: {e}"}))
                self._end(task, "failed", error={"code": -32603, "message": "the task failed on the server"})
                return
            self._settle(task, result)
        follower = asyncio.ensure_future(finish())
        task.work = follower
        self.background.add(follower)
        follower.add_done_callback(self.background.discard)

    def _settle(self, task: Task, result):
        from mcp_types import InputRequiredResult
        if isinstance(result, InputRequiredResult):
            state = json.loads(result.request_state or "{}")
            task.input_requests = {k: v.model_dump(by_alias=True, mode="json", exclude_none=True)
                                   for k, v in (result.input_requests or {}).items()}
            task.resume = state
            task.status, task.updated = "input_required", time.time()
            return
        wire = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        cancelled = task.cancel_asked is not None and (wire.get("structuredContent") or {}).get("error") == "cancelled"
        if cancelled:
            self._end(task, "cancelled")
        else:
            self._end(task, "completed", result=wire)

    def _end(self, task: Task, status: str, result: Optional[dict] = None, error: Optional[dict] = None):
        task.status, task.result, task.error, task.updated = status, result, error, time.time()
        task.size = len(json.dumps(result)) if result is not None else 0
        self.kept_bytes += task.size
        line = {"event": "task", "task": task.task_id, "status": status, "pid": os.getpid()}
        if task.stopped_after is not None:
            line["stopped_after_ms"] = round(task.stopped_after * 1000, 1)
        _LOG.info(json.dumps(line))
        self._trim()

    def _keep(self, task: Task):
        self._trim()
        self.tasks[task.task_id] = task

    def _trim(self):
        """Drop finished tasks past their time, then the oldest finished ones past the bytes."""
        cutoff = time.time() - self.options.task_ttl_seconds
        for task in [t for t in self.tasks.values() if t.finished and t.updated < cutoff]:
            self._drop(task)
        for task in [t for t in self.tasks.values() if t.finished]:
            if self.kept_bytes <= self.options.task_max_bytes:
                break
            self._drop(task)

    def _drop(self, task: Task):
        del self.tasks[task.task_id]
        self.kept_bytes -= task.size

    # -------------------------------------------------------- tasks/*

    def install(self, server, scripts):
        """The extension's methods on the server, and its capability."""
        from mcp_types import RequestParams
        from pydantic import ConfigDict

        class TaskParams(RequestParams):
            model_config = ConfigDict(extra="allow", populate_by_name=True)
            task_id: str = Field(alias="taskId")

        class UpdateParams(TaskParams):
            input_responses: Optional[dict] = Field(default=None, alias="inputResponses")

        self.scripts = scripts
        server.add_request_handler("tasks/get", TaskParams, self.get)
        server.add_request_handler("tasks/cancel", TaskParams, self.cancel)
        server.add_request_handler("tasks/update", UpdateParams, self.update)
        server.extensions[TASKS] = {}

    def _task(self, ctx, params) -> Task:
        from mcp.shared.exceptions import MCPError
        from mcp_types import INVALID_PARAMS
        self._trim()
        task = self.tasks.get(params.task_id)
        request = ctx.request
        principal = request.scope.get("scripted.principal", "") if request is not None else ""
        if task is None or task.principal != principal:
            raise MCPError(code=INVALID_PARAMS, message=f"unknown task {params.task_id!r} (finished tasks are kept "
                                                        f"{self.options.task_ttl_seconds:g} s)")
        return task

    async def get(self, ctx, params):
        return self._task(ctx, params).wire(self.ttl_ms())

    async def cancel(self, ctx, params):
        task = self._task(ctx, params)
        if not task.finished and task.cancel_asked is None:
            task.cancel_asked = time.monotonic()
            task.call.cancel.cancel("cancelled")
            if task.status == "input_required":        # nothing runs: it ends now
                self._end(task, "cancelled")
        return {}

    async def update(self, ctx, params):
        """A paused run's answer: it goes on from its continuation."""
        task = self._task(ctx, params)
        state = task.resume
        if task.status != "input_required" or state is None:
            return {}
        answer = (params.input_responses or {}).get(state.get("ask"))
        if answer is None:
            return {}
        task.status, task.updated, task.input_requests, task.resume = "working", time.time(), None, None
        self._follow(task, self.scripts.resumed(task.call, state, answer),
                     self.scripts.answer_for(task.call, time.perf_counter()))
        return {}
