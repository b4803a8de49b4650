"""One trace from the client through the script into each tool call: a `traceparent` in a
request's `_meta` (the client's own span, which the `mcp` 2.x client puts there) becomes the
parent of the script's `execute_tool` span, under which each tool call's span nests. Exported to
an in-memory exporter; the tool is given its tracer provider (no global one is set)."""
import asyncio

import pytest

pytest.importorskip("mcp.server.mcpserver")      # mcp 2.x
pytest.importorskip("opentelemetry.sdk")
from mcp import Client  # noqa: E402
from opentelemetry import trace  # noqa: E402
from opentelemetry.propagate import inject  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402

from scripted_kernel import ScriptedTool, tool  # noqa: E402
from scripted_kernel.tools.mcp_server import build_server  # noqa: E402


@tool
def get_user(id: int) -> dict:
    """Fetch a user."""
    return {"id": id, "name": f"user{id}"}


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_the_clients_traceparent_parents_the_script_and_its_tool_calls(mode):
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    api = ScriptedTool.builder("api").function(get_user).telemetry(tracer_provider=provider).build()

    async def scenario():
        async with Client(build_server(api), mode=mode) as client:
            with provider.get_tracer("client").start_as_current_span("agent turn") as turn:
                meta: dict = {}
                inject(meta)                       # the W3C traceparent of the client's span
                await client.call_tool("api", {"commands": "get_user --id 1; get_user --id 2"}, meta=meta)
            return turn.get_span_context()
    client_span = asyncio.run(asyncio.wait_for(scenario(), 60))
    spans = {s.name: s for s in exporter.get_finished_spans() if s.name != "agent turn"}
    script = spans["execute_tool api"]
    calls = [s for s in exporter.get_finished_spans() if s.name == "execute_tool get_user"]
    assert script.context.trace_id == client_span.trace_id
    assert script.parent.span_id == client_span.span_id      # the SDK's server span is not recorded here
    assert len(calls) == 2
    assert all(c.context.trace_id == client_span.trace_id and c.parent.span_id == script.context.span_id
               for c in calls)
    assert trace.get_current_span() is trace.INVALID_SPAN        # nothing left current
