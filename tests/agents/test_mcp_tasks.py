"""Long scripts as tasks (the tasks extension, SEP-2663) and streamed output as progress. A
2026-07-28 client that declares the extension gets a task when it asks for one, or when the
call outlives `task_after_seconds`; tasks/get shows the status and the output so far, then the
result; tasks/cancel stops the script through its cancel flag. Gates (events the test sets)
decide what runs when; no outcome waits on a clock."""
from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path

import pytest

pytest.importorskip("mcp.server.mcpserver")      # mcp 2.x
from mcp import Client, types  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402
from services import Service  # noqa: E402

from scripted_kernel import ExecutionLimits, ScriptedTool, tool  # noqa: E402
from scripted_kernel.tools.mcp_client import _models, cancel_task, get_task, tasks_extension, update_task  # noqa: E402
from scripted_kernel.tools.mcp_server import ServerOptions, build_server  # noqa: E402

GATE = threading.Event()
TICKS: list = []


@tool
def wait_gate() -> str:
    """Return once the test opens the gate."""
    return "opened\n" if GATE.wait(60) else "never opened\n"


@tool
def tick() -> str:
    """Count a call."""
    TICKS.append(1)
    return ""


# `while true; do tick; done` must end only when it is cancelled: under the default limits it
# ends by itself at max_tool_calls, in a second or two, and on a loaded machine that came first
ENDLESS = ExecutionLimits(max_commands=10**9, max_loop_iterations=10**9, max_tool_calls=10**9,
                          timeout_seconds=3600)


def server(**options):
    api = ScriptedTool.builder("api").function(wait_gate).function(tick).limits(ENDLESS).build()
    return build_server(api, options=ServerOptions(**options))


def run(coroutine):
    return asyncio.run(asyncio.wait_for(coroutine, 120))


async def ask_for_task(client, commands: str):
    """A tools/call asking for a task (`params.task`): the created task."""
    request = types.CallToolRequest(params=types.CallToolRequestParams(
        name="api", arguments={"commands": commands}, task=types.TaskMetadata()))
    return await client.session.send_request(request, _models()["CreatedTask"])


async def until(condition, session, task_id: str):
    """Poll tasks/get (as often as the event loop lets it: no sleeps decide anything) until
    `condition(state)`; the state."""
    while True:
        state = await get_task(session, task_id)
        if condition(state):
            return state
        await asyncio.sleep(0.005)


def test_a_call_past_task_after_becomes_a_task_polled_to_completion():
    GATE.clear()
    seen = []

    async def on_state(state):
        seen.append(state)
        if state.status == "working" and "before" in (state.status_message or ""):
            GATE.set()                     # the output so far was shown: let the script end

    async def scenario():
        async with Client(server(task_after_seconds=0.05), extensions=[tasks_extension(on_state)]) as client:
            return await client.call_tool("api", {"commands": "echo before; wait_gate; echo after"})
    result = run(scenario())
    assert result.structured_content["stdout"] == "before\nopened\nafter\n"
    working = next(s for s in seen if s.status == "working" and "before" in (s.status_message or ""))
    assert working.meta["scripted/output"] == {"stdout": "before\n", "stderr": ""}
    assert working.model_extra["ttlMs"] == 600_000
    assert seen[-1].status == "completed"


def test_a_client_asks_for_a_task_and_another_clients_get_is_refused():
    async def scenario():
        scripted = server()
        async with Client(scripted, extensions=[tasks_extension()]) as client:
            created = await ask_for_task(client, "echo asked")
            assert (created.result_type, created.status) == ("task", "working")
            done = await until(lambda s: s.status == "completed", client.session, created.task_id)
            tasks = scripted.scripts.tasks
            tasks.tasks[created.task_id].principal = "someone else"
            with pytest.raises(MCPError) as refused:
                await get_task(client.session, created.task_id)
            return done, refused.value.error.message
    done, refused = run(scenario())
    assert done.result["structuredContent"]["stdout"] == "asked\n" and done.result["isError"] is False
    assert refused.startswith("unknown task ")


def test_without_the_extension_a_call_is_never_a_task():
    GATE.set()

    async def scenario():
        async with Client(server(task_after_seconds=0.01)) as client:
            return await client.call_tool("api", {"commands": "wait_gate"})
    assert run(scenario()).structured_content["stdout"] == "opened\n"


def test_cancelling_a_task_stops_its_endless_script_and_frees_its_worker():
    TICKS.clear()

    async def scenario():
        scripted = server()
        async with Client(scripted, extensions=[tasks_extension()]) as client:
            created = await ask_for_task(client, "while true; do tick; done")
            while not TICKS:                       # it runs
                await asyncio.sleep(0.005)
            await cancel_task(client.session, created.task_id)
            ended = await until(lambda s: s.status != "working", client.session, created.task_id)
            ticks = len(TICKS)
            after = await client.call_tool("api", {"commands": "tick; echo free"})
            return ended.status, scripted.scripts.tasks, created.task_id, ticks, after
    status, tasks, task_id, ticks, after = run(scenario())
    assert status == "cancelled"                            # (nothing else ends its loop)
    assert tasks.tasks[task_id].stopped_after >= 0          # from tasks/cancel to the run's end
    assert after.structured_content["stdout"] == "free\n" and len(TICKS) == ticks + 1   # and nothing more ran


def test_finished_tasks_are_kept_within_their_bytes():
    async def scenario():
        scripted = server(task_max_bytes=6000)      # a result here takes some 2,600 bytes
        async with Client(scripted, extensions=[tasks_extension()]) as client:
            ids = []
            for n in range(3):
                created = await ask_for_task(client, f"printf '%1200s' {n}")
                await until(lambda s: s.status == "completed", client.session, created.task_id)
                ids.append(created.task_id)
            kept = []
            for task_id in ids:
                try:
                    await get_task(client.session, task_id)
                    kept.append(task_id)
                except MCPError:
                    pass
            return ids, kept, scripted.scripts.tasks.kept_bytes
    ids, kept, kept_bytes = run(scenario())
    assert kept == ids[1:] and kept_bytes <= 6000


def test_a_task_that_needs_approval_waits_for_tasks_update():
    """With --approve a task pauses before each tool call: tasks/get shows the question
    (input_required, inputRequests), tasks/update answers it, and the run goes on."""
    TICKS.clear()

    async def scenario():
        async with Client(server(approve=True), extensions=[tasks_extension()]) as client:
            created = await ask_for_task(client, "echo first; tick; echo second")
            asking = await until(lambda s: s.status == "input_required", client.session, created.task_id)
            assert TICKS == []                                  # nothing runs unapproved
            (key, question), = asking.input_requests.items()
            await update_task(client.session, created.task_id,
                              {key: {"action": "accept", "content": {"decision": "allow"}}})
            return question, await until(lambda s: s.status == "completed", client.session, created.task_id)
    question, done = run(scenario())
    assert question["method"] == "elicitation/create" and "`tick`" in question["params"]["message"]
    assert done.result["structuredContent"]["stdout"] == "first\nsecond\n" and TICKS == [1]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_progress_notifications_carry_the_output_as_it_is_written(mode):
    messages = []

    async def progress(done, total, message):
        messages.append((done, message))

    async def scenario():
        async with Client(server(), mode=mode) as client:
            return await client.call_tool("api", {"commands": "for i in 1 2 3; do echo line $i; tick; done"},
                                          progress_callback=progress)
    result = run(scenario())
    stdout = result.structured_content["stdout"]
    assert stdout == "line 1\nline 2\nline 3\n"
    assert "".join(m for _, m in messages) == stdout
    assert [d for d, _ in messages] == sorted(d for d, _ in messages) and messages[-1][0] == len(stdout)


GATED = '''
import os, time
from scripted_kernel import ExecutionLimits, ScriptedTool, tool

GATE = os.environ["SCRIPTED_TEST_GATE"]


@tool()
def wait_release() -> str:
    """Return once the test releases the call."""
    while not os.path.exists(os.path.join(GATE, "release")):
        time.sleep(0.02)
    return "released"


@tool()
def tick() -> str:
    """Count a call."""
    with open(os.path.join(GATE, "ticks"), "a") as f:
        f.write(".")
    return ""


# `while true; do tick; done` ends only when it is cancelled (under the default limits it ends
# by itself at max_tool_calls, and on a loaded machine that can come first)
ENDLESS = ExecutionLimits(max_commands=10**9, max_loop_iterations=10**9, max_tool_calls=10**9,
                          timeout_seconds=3600)
api = ScriptedTool.builder("gated").function(wait_release).function(tick).limits(ENDLESS).build()
'''


def test_tasks_over_http(tmp_path):
    """A real worker: a call past --task-after-seconds becomes a task, polled to its result;
    another is cancelled, and the worker's log says how soon its script stopped."""
    (tmp_path / "gated.py").write_text(GATED)
    s = Service("--tools", f"{tmp_path / 'gated.py'}:api", "--task-after-seconds", "0.1",
                env={"SCRIPTED_TEST_GATE": str(tmp_path)})
    release = tmp_path / "release"

    async def on_state(state):
        if state.status == "working" and "waiting" in (state.status_message or ""):
            release.touch()

    async def scenario():
        async with s.client(extensions=[tasks_extension(on_state)]) as client:
            polled = await client.call_tool("gated", {"commands": "echo waiting; wait_release; echo done"})
            created = await client.session.call_tool("gated", {"commands": "while true; do tick; done"},
                                                     allow_claimed=True)
            while not (tmp_path / "ticks").exists():
                await asyncio.sleep(0.005)
            await cancel_task(client.session, created.task_id)
            ended = await until(lambda st: st.status != "working", client.session, created.task_id)
            return polled, ended
    try:
        polled, ended = run(scenario())
    finally:
        lines = s.log_lines()
    assert polled.structured_content["stdout"] == "waiting\nreleaseddone\n"
    assert ended.status == "cancelled"
    cancelled = [line for line in lines if line.get("event") == "task" and line["status"] == "cancelled"]
    assert len(cancelled) == 1 and cancelled[0]["stopped_after_ms"] >= 0, cancelled
    assert json.loads(json.dumps(lines))                   # every log line is one JSON object
    assert Path(tmp_path / "ticks").read_text().count(".") > 0
