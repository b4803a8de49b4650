"""OpenTelemetry: one span per execute(), a child per tool call, jq worker call and curl request,
exported to an in-memory exporter; context reaches callbacks on runner threads and async ones."""
import asyncio
import contextlib
import http.server
import json
import logging
import threading

import pytest

pytest.importorskip("opentelemetry.sdk")
from opentelemetry import trace                                                    # noqa: E402
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider                  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter       # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter   # noqa: E402
from opentelemetry.trace import StatusCode                                         # noqa: E402

from scripted_kernel import BashTool, ExecutionLimits, ScriptedTool, tool          # noqa: E402
from scripted_kernel.tools import telemetry                                        # noqa: E402

SECRET = "Bearer sk-live-TRACE-MUST-NOT-SHOW-81b2c3"


_HOST: list = []      # the provider the callbacks' own spans go to (a host's would be the global one)


@pytest.fixture
def exported():
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    _HOST[:] = [provider]
    return provider, exporter


def host_tracer():
    return _HOST[0].get_tracer("host")


def tree(exporter) -> list:
    """(depth, name) in start order, each span under its parent."""
    spans = sorted(exporter.get_finished_spans(), key=lambda s: s.start_time)
    by_id = {s.context.span_id: s for s in spans}

    def depth(s):
        d = 0
        while s.parent is not None and s.parent.span_id in by_id:
            s, d = by_id[s.parent.span_id], d + 1
        return d
    return [(depth(s), s.name) for s in spans]


def by_name(exporter, name):
    return [s for s in exporter.get_finished_spans() if s.name == name]


@tool
def get_user(id: int, token: str = "") -> dict:
    """Fetch a user."""
    with host_tracer().start_as_current_span("host.lookup"):
        return {"id": id, "name": f"user{id}", "tags": ["a", "b"]}


@tool
async def slow_user(id: int) -> dict:
    """Fetch a user, asynchronously."""
    await asyncio.sleep(0)
    with host_tracer().start_as_current_span("host.async_lookup"):
        return {"id": id}


def test_the_span_tree_of_a_script(exported):
    provider, exporter = exported
    api = (ScriptedTool.builder("api").function(get_user).function(slow_user)
           .telemetry(provider).build())        # the global provider stays unset: the tool has its own
    text = ("get_user --id 1 --token ghp_abcdefghijklmnopqrstuvwxyz0123 | jq -c 'to_entries | length'; "
            "slow_user --id 2 >/dev/null")
    r = api.execute(text)
    assert r.stdout == "3\n", r.stderr
    assert tree(exporter) == [(0, "execute_tool api"), (1, "execute_tool get_user"), (2, "host.lookup"),
                              (1, "jq"), (1, "execute_tool slow_user"), (2, "host.async_lookup")]
    script = by_name(exporter, "execute_tool api")[0]
    assert dict(script.attributes) == {
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "api", "gen_ai.tool.type": "function",
        "scripted.script.bytes": len(text),
        "scripted.exit_code": 0, "scripted.stdout.bytes": 2, "scripted.stderr.bytes": 0, "scripted.tool_calls": 2}
    call = by_name(exporter, "execute_tool get_user")[0]
    assert call.attributes["gen_ai.operation.name"] == "execute_tool"
    assert call.attributes["gen_ai.tool.name"] == "get_user"
    assert call.attributes["scripted.exit_code"] == 0 and call.attributes["scripted.stdout.bytes"] > 0
    assert call.attributes["scripted.tool.flags"] == '{"id": 1, "token": "<redacted>"}'    # sanitised
    assert call.attributes["scripted.duration_ms"] >= 0
    jq = by_name(exporter, "jq")[0]
    assert jq.attributes["scripted.jq.program.bytes"] == len("to_entries | length")
    assert jq.attributes["scripted.exit_code"] == 0


def test_context_reaches_async_callbacks_under_execute_async(exported):
    provider, exporter = exported
    api = ScriptedTool.builder("api").function(slow_user).function(get_user).telemetry(provider).build()

    async def main():
        with trace.get_tracer("host", tracer_provider=provider).start_as_current_span("agent.step"):
            return await api.execute_async("slow_user --id 1; get_user --id 2")
    assert asyncio.run(main()).exit_code == 0
    assert tree(exporter) == [(0, "agent.step"), (1, "execute_tool api"), (2, "execute_tool slow_user"),
                              (3, "host.async_lookup"), (2, "execute_tool get_user"), (3, "host.lookup")]


def test_failures_denials_limits_and_the_script_text(exported):
    provider, exporter = exported
    from scripted_kernel import Deny
    api = (ScriptedTool.builder("api").function(get_user).telemetry(provider, record_script=True)
           .before_tool(lambda c: Deny("not today") if c.params["id"] == 2 else None)
           .limits(ExecutionLimits(max_commands=50)).build())
    r = api.execute("get_user --id 2; get_user --id x; while :; do :; done")
    assert r.error == "limit:max_commands"
    script = by_name(exporter, "execute_tool api")[0]
    assert script.status.status_code == StatusCode.ERROR
    assert script.attributes["scripted.limit"] == "limit:max_commands"
    assert script.attributes["error.type"] == "limit:max_commands"
    assert json.loads(script.attributes["gen_ai.tool.call.arguments"])["commands"].startswith("get_user --id 2")
    denied = by_name(exporter, "execute_tool get_user")
    assert len(denied) == 1                    # a call refused by its flags never became a call
    assert denied[0].attributes["scripted.denied"] == "not today"
    assert denied[0].attributes["scripted.exit_code"] == 126
    assert denied[0].attributes["error.type"] == "denied"


def test_bash_tool_builtins_and_curl_requests(exported):
    provider, exporter = exported

    class Handler(http.server.BaseHTTPRequestHandler):
        got = []

        def log_message(self, *args):
            pass

        def do_GET(self):
            Handler.got.append(self.headers.get("Authorization"))
            body = json.dumps({"path": self.path}).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    origin = f"http://127.0.0.1:{httpd.server_address[1]}"
    try:
        bash = (BashTool.builder().builtin("greet", lambda args, stdin: f"hi {args[0]}\n")
                .network(allow=[origin + "/"], credentials={origin: {"Authorization": SECRET}})
                .telemetry(provider, record_script=True).build())
        r = bash.execute(f"greet ann; curl -s -v {origin}/v1/items | jq -r .path")
    finally:
        httpd.shutdown()
    assert r.stdout == "hi ann\n/v1/items\n" and Handler.got == [SECRET]
    assert [name for _, name in tree(exporter)] == ["execute_tool bash", "execute_tool greet", "GET"]
    get = by_name(exporter, "GET")[0]
    assert get.kind == trace.SpanKind.CLIENT
    assert get.attributes["http.request.method"] == "GET"
    assert get.attributes["url.full"] == f"{origin}/v1/items"
    assert get.attributes["http.response.status_code"] == 200
    assert get.attributes["server.port"] == httpd.server_address[1]
    greet = by_name(exporter, "execute_tool greet")[0]
    assert greet.attributes["scripted.tool.kind"] == "builtin"
    everything = json.dumps([{**dict(s.attributes), "name": s.name} for s in exporter.get_finished_spans()])
    assert "TRACE-MUST-NOT-SHOW" not in everything
    assert "TRACE-MUST-NOT-SHOW" not in r.stdout + r.stderr


def test_nothing_is_recorded_without_a_provider(exported):
    _, exporter = exported
    assert trace.get_tracer_provider().__class__.__name__ in ("ProxyTracerProvider", "NoOpTracerProvider")
    assert telemetry.tracer_for(None) is None
    api = ScriptedTool.builder("api").function(get_user).build()
    assert api.execute("get_user --id 1 | jq -r .name").stdout == "user1\n"
    off = ScriptedTool.builder("api").function(get_user).telemetry(exported[0], enabled=False).build()
    off.execute("get_user --id 1")
    assert tree(exporter) == [(0, "host.lookup"), (0, "host.lookup")]      # the callbacks' own only


# ---------------------------------------------------------------- the host's telemetry failing

class RaisingProcessor(SpanProcessor):
    """A span processor that raises in `where` (on_start or on_end)."""

    def __init__(self, where: str):
        self.where = where

    def on_start(self, span, parent_context=None):
        if self.where == "on_start":
            raise RuntimeError("processor on_start failed")

    def on_end(self, span):
        if self.where == "on_end":
            raise RuntimeError("processor on_end failed")


class RaisingExporter(SpanExporter):
    def export(self, spans):
        raise RuntimeError("exporter failed")


class NoTracerProvider(TracerProvider):
    def get_tracer(self, *args, **kwargs):
        raise RuntimeError("get_tracer failed")


class FailingSpan:
    """A span (of a tracer provider of the host's own) whose every method raises."""

    def __getattr__(self, name):
        def fail(*args, **kwargs):
            raise RuntimeError(f"span.{name} failed")
        return fail


class FailingSpansProvider:
    """A tracer provider, not the SDK's, whose spans start and end but fail at everything else."""

    def get_tracer(self, *args, **kwargs):
        return self

    @contextlib.contextmanager
    def start_as_current_span(self, name, **kwargs):
        yield FailingSpan()


def failing_provider(kind: str):
    if kind == "get_tracer":
        return NoTracerProvider()
    if kind == "span methods":
        return FailingSpansProvider()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(RaisingExporter()) if kind == "exporter"
                                else RaisingProcessor(kind))
    return provider


FAILING = ["on_start", "on_end", "exporter", "get_tracer", "span methods"]
# a tool span, an async callback's carried context, two jq worker spans (ctx.observer), a failure
TRACED_SCRIPT = ("get_user --id 1 | jq -c 'to_entries | length'; slow_user --id 2 | jq -r '.id + 1'; "
                 "get_user --id x")


def outcome(response) -> tuple:
    return response.stdout, response.stderr, response.exit_code, response.error


def untraced_outcome() -> tuple:
    api = ScriptedTool.builder("api").function(get_user).function(slow_user).build()
    return outcome(api.execute(TRACED_SCRIPT))


@pytest.fixture
def telemetry_log(monkeypatch, caplog):
    monkeypatch.setattr(telemetry, "_reported", False, raising=False)
    caplog.set_level(logging.WARNING, logger="scripted_kernel.telemetry")
    return caplog


@pytest.mark.parametrize("kind", FAILING)
def test_failing_telemetry_leaves_execute_as_it_was(kind, exported, telemetry_log):
    expected = untraced_outcome()
    assert expected[0] == "3\n3\n" and expected[2] == 2
    api = (ScriptedTool.builder("api").function(get_user).function(slow_user)
           .telemetry(failing_provider(kind), record_script=True).build())
    assert outcome(api.execute(TRACED_SCRIPT)) == expected
    assert outcome(api.execute(TRACED_SCRIPT)) == expected
    assert not trace.get_current_span().get_span_context().is_valid       # no span left current
    if kind != "exporter":             # the SDK logs its exporter's failure itself
        (record,) = telemetry_log.records                 # once, however many calls failed
        assert "OpenTelemetry" in record.getMessage()


@pytest.mark.parametrize("kind", FAILING)
def test_failing_telemetry_leaves_execute_async_as_it_was(kind, exported, telemetry_log):
    expected = untraced_outcome()
    api = (ScriptedTool.builder("api").function(get_user).function(slow_user)
           .telemetry(failing_provider(kind)).build())
    assert outcome(asyncio.run(api.execute_async(TRACED_SCRIPT))) == expected


def test_a_failing_global_provider_leaves_a_bash_tool_as_it_was(telemetry_log, monkeypatch):
    monkeypatch.setattr(trace, "get_tracer_provider", lambda: failing_provider("on_end"))
    bash = BashTool()
    response = bash.execute("echo '[1, 2]' | jq -c 'map(. + 1)'")
    assert outcome(response) == ("[2,3]\n", "", 0, None)


def test_a_failing_span_lets_the_bodys_own_exception_through(telemetry_log):
    """Telemetry never swallows nor replaces what the code inside a span raises; only the
    caller's KeyboardInterrupt gets out of telemetry itself."""
    tracer = failing_provider("on_end").get_tracer("t")
    with pytest.raises(ValueError, match="the body's own"):
        with telemetry.Observer(tracer).span("jq") as span:
            span.set("scripted.exit_code", 0)
            raise ValueError("the body's own")

    class Interrupting(SpanProcessor):
        def on_start(self, span, parent_context=None):
            raise KeyboardInterrupt
    interrupting = TracerProvider()
    interrupting.add_span_processor(Interrupting())
    with pytest.raises(KeyboardInterrupt):
        with telemetry.Observer(interrupting.get_tracer("t")).span("jq"):
            pass
