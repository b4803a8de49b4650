"""OpenTelemetry spans for scripts, tool calls, jq and curl (the `otel` extra: opentelemetry-api).

Every span follows the OpenTelemetry GenAI semantic conventions where they apply: a script run
and each tool call it makes are `execute_tool {name}` spans with `gen_ai.operation.name` =
`execute_tool`, `gen_ai.tool.name` and `gen_ai.tool.type`; a curl request is an HTTP client span
(`http.request.method`, `server.address`, `url.full` ...); a jq program run in a worker process
is a `jq` span. The rest are `scripted.*` attributes. The tree:

    execute_tool api                 one per execute(): script size, exit code, limit hit, bytes out
      execute_tool get_user          one per tool call: flags (sanitised), exit code, duration, bytes
        (the callback's own spans)   context is carried onto runner threads and into async callbacks
      jq                             a jq program run by a worker process
      GET                            a curl request (injected credentials never appear)

Nothing is recorded, and nothing of OpenTelemetry imported, unless the host configured a tracer
provider (`opentelemetry.trace.set_tracer_provider`, or `.telemetry(tracer_provider=...)` on a
builder): `tracer_for` is a dictionary lookup when tracing is off. The script's text is
recorded only when the host opts in (`.telemetry(record_script=True)`), as
`gen_ai.tool.call.arguments`.
"""
from __future__ import annotations

import json
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Optional

from .containment import sanitize

INSTRUMENTATION = "scripted_kernel"
MAX_SCRIPT_TEXT = 16 * 1024           # characters of a script recorded (record_script=True)
MAX_FLAGS_TEXT = 2000                 # characters of a tool call's flags recorded


@dataclass
class TelemetryConfig:
    """A tool's tracing: `tracer_provider` None means the global one (tracing is on once the
    host sets one); `record_script` puts the script's text on the script's span."""
    tracer_provider: Any = None
    record_script: bool = False
    enabled: bool = True


_TRACERS: dict = {}                   # id(provider) -> (provider, tracer)


def tracer_for(config: Optional[TelemetryConfig]):
    """The tracer to record an execution with, or None when tracing is off: no provider
    configured (the default proxy or no-op one), or opentelemetry not even imported."""
    if config is not None and not config.enabled:
        return None
    provider = config.tracer_provider if config is not None else None
    if provider is None:
        trace = sys.modules.get("opentelemetry.trace")
        if trace is None:             # nobody imported OpenTelemetry: nobody configured it
            return None
        provider = trace.get_tracer_provider()
        if isinstance(provider, (trace.ProxyTracerProvider, trace.NoOpTracerProvider)):
            return None
    cached = _TRACERS.get(id(provider))
    if cached is not None and cached[0] is provider:
        return cached[1]
    from .. import __version__
    tracer = provider.get_tracer(INSTRUMENTATION, __version__)
    _TRACERS[id(provider)] = (provider, tracer)
    return tracer


def _status_error(span, error_type: str, description: str = ""):
    from opentelemetry.trace import Status, StatusCode
    span.set_attribute("error.type", error_type)
    span.set_status(Status(StatusCode.ERROR, description or error_type))


# ---------------------------------------------------------------- the script

@contextmanager
def script_span(tracer, tool, script: str, config: Optional[TelemetryConfig]):
    """The span of one execute(): current while the script runs (runner threads copy it)."""
    from opentelemetry.trace import SpanKind
    attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool.name,
                  "gen_ai.tool.type": "function", "scripted.script.bytes": len(script.encode("utf-8", "replace"))}
    if config is not None and config.record_script:
        attributes["gen_ai.tool.call.arguments"] = json.dumps({"commands": script[:MAX_SCRIPT_TEXT]})
    with tracer.start_as_current_span(f"execute_tool {tool.name}", kind=SpanKind.INTERNAL,
                                      attributes=attributes, record_exception=False,
                                      set_status_on_exception=True) as span:
        yield span


def end_script(span, response):
    span.set_attribute("scripted.exit_code", response.exit_code)
    span.set_attribute("scripted.stdout.bytes", len(response.stdout.encode("utf-8", "surrogateescape")))
    span.set_attribute("scripted.stderr.bytes", len(response.stderr.encode("utf-8", "surrogateescape")))
    span.set_attribute("scripted.tool_calls", len(response.trace))
    if response.stdout_truncated:
        span.set_attribute("scripted.stdout.truncated", True)
    if response.error:
        span.set_attribute("scripted.limit", response.error)     # limit:max_commands, timeout ...
    if response.exit_code:
        _status_error(span, response.error or "exit_status", f"exit status {response.exit_code}")


# ---------------------------------------------------------------- a tool call

@contextmanager
def tool_span(tracer, call):
    """The span of one tool call, current while its hooks and callback run."""
    from opentelemetry.trace import SpanKind
    attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": call.name,
                  "gen_ai.tool.type": "function", "scripted.tool.kind": call.kind,
                  "scripted.tool.flags": flags_text(call.params, call.argv),
                  "scripted.stdin.bytes": call.stdin_size}
    with tracer.start_as_current_span(f"execute_tool {call.name}", kind=SpanKind.INTERNAL,
                                      attributes=attributes, record_exception=False) as span:
        yield span


def flags_text(params, argv) -> str:
    """The call's flags as one sanitised line (secrets, hosts, paths redacted)."""
    try:
        text = json.dumps(params, sort_keys=True, default=str) if params is not None else json.dumps(argv[1:])
    except (TypeError, ValueError):
        text = repr(params)
    return sanitize(text[:MAX_FLAGS_TEXT * 2])[:MAX_FLAGS_TEXT]


def end_tool(span, result):
    span.set_attribute("scripted.exit_code", result.exit_code)
    span.set_attribute("scripted.duration_ms", round(result.duration_ms, 3))
    span.set_attribute("scripted.stdout.bytes", result.stdout_bytes)
    span.set_attribute("scripted.stderr.bytes", result.stderr_bytes)
    if result.denied is not None:
        span.set_attribute("scripted.denied", result.denied)
        _status_error(span, "denied", result.denied)
    elif result.exit_code:
        _status_error(span, "exit_status", f"exit status {result.exit_code}")


def carry_context(make_coroutine: Callable) -> Callable:
    """An async callback that runs in the current trace context, wherever its coroutine runs
    (the caller's loop under execute_async does not share the runner thread's context)."""
    from opentelemetry import context
    current = context.get_current()

    async def in_context():
        token = context.attach(current)
        try:
            return await make_coroutine()
        finally:
            context.detach(token)
    return in_context


# ---------------------------------------------------------------- commands (jq, curl)

class _Span:
    """What a command sees of its span: set(key, value) and fail(kind)."""
    __slots__ = ("span",)

    def __init__(self, span):
        self.span = span

    def set(self, key: str, value):
        self.span.set_attribute(key, value)

    def fail(self, error_type: str, description: str = ""):
        _status_error(self.span, error_type, description)


class Observer:
    """The hook commands are given through their context (`ctx.observer`, None when tracing
    is off): `with ctx.observer.span("jq", {...}) as span: ... span.set(k, v)`. Commands never
    import this module."""
    __slots__ = ("tracer",)

    def __init__(self, tracer):
        self.tracer = tracer

    @contextmanager
    def span(self, name: str, attributes: Optional[dict] = None, client: bool = False):
        from opentelemetry.trace import SpanKind
        kind = SpanKind.CLIENT if client else SpanKind.INTERNAL
        with self.tracer.start_as_current_span(name, kind=kind, attributes=attributes or {},
                                               record_exception=False) as span:
            yield _Span(span)
