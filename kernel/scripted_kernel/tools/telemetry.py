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

Telemetry never changes a script's result. The tracer provider, its span processors and
exporters are the host's code and may raise (on_start, on_end, get_tracer, a span's
set_attribute): every call into OpenTelemetry here is contained, its failure dropped (logged
once, on the `scripted_kernel.telemetry` logger) and the script runs on without that span or
attribute. Only a KeyboardInterrupt goes through: that is the caller's user interrupting.
"""
from __future__ import annotations

import functools
import json
import sys
from dataclasses import dataclass
from typing import Any, Callable, Optional

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
    configured (the default proxy or no-op one), opentelemetry not even imported, or a provider
    that fails to give one."""
    if config is not None and not config.enabled:
        return None
    provider = config.tracer_provider if config is not None else None
    try:
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
    except BaseException as e:
        _dropped(e)
        return None
    _TRACERS[id(provider)] = (provider, tracer)
    return tracer


# ---------------------------------------------------------------- containment

_reported = False                     # a failure was logged: later ones are dropped silently


def _dropped(error: BaseException):
    """A call into OpenTelemetry failed: the first failure is logged, every one is dropped, but
    a KeyboardInterrupt (the caller's user interrupting) is raised again."""
    global _reported
    if isinstance(error, KeyboardInterrupt):
        raise error
    if not _reported:
        _reported = True
        import logging              # (only here: a process that traces nothing never imports it)
        logging.getLogger("scripted_kernel.telemetry").warning(
            "an OpenTelemetry call failed (%s: %s); the span or attribute is dropped, and so are later failures, "
            "unlogged", type(error).__name__, error, exc_info=error)


def _contained(fn: Callable) -> Callable:
    """fn, with any failure of the OpenTelemetry calls it makes dropped."""
    @functools.wraps(fn)
    def call(*args):
        try:
            return fn(*args)
        except BaseException as e:
            _dropped(e)
    return call


class _NoSpan:
    """Stands for a span that could not be started."""

    def set_attribute(self, key: str, value):
        pass

    def set_status(self, status, description=None):
        pass


class _CurrentSpan:
    """`with`: the span `start()` (a tracer's start_as_current_span) gives, current while the
    body runs; a _NoSpan if starting it fails, and a failure to end it dropped. The body's own
    exception goes through unchanged: telemetry never swallows or replaces one."""
    __slots__ = ("start", "manager")

    def __init__(self, start: Callable):
        self.start, self.manager = start, None

    def __enter__(self):
        try:
            manager = self.start()
            span = manager.__enter__()
        except BaseException as e:
            _dropped(e)
            return _NoSpan()
        self.manager = manager
        return span

    def __exit__(self, kind, error, traceback) -> None:
        if self.manager is not None:
            try:
                self.manager.__exit__(kind, error, traceback)
            except BaseException as e:
                if e is not error:        # the body's own is raised by the `with` itself
                    _dropped(e)


def _status_error(span, error_type: str, description: str = ""):
    from opentelemetry.trace import Status, StatusCode
    span.set_attribute("error.type", error_type)
    span.set_status(Status(StatusCode.ERROR, description or error_type))


# ---------------------------------------------------------------- the script

def script_span(tracer, tool, script: str, config: Optional[TelemetryConfig]) -> _CurrentSpan:
    """The span of one execute(): current while the script runs (runner threads copy it)."""
    def start():
        from opentelemetry.trace import SpanKind
        attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool.name,
                      "gen_ai.tool.type": "function",
                      "scripted.script.bytes": len(script.encode("utf-8", "replace"))}
        if config is not None and config.record_script:
            attributes["gen_ai.tool.call.arguments"] = json.dumps({"commands": script[:MAX_SCRIPT_TEXT]})
        return tracer.start_as_current_span(f"execute_tool {tool.name}", kind=SpanKind.INTERNAL,
                                            attributes=attributes, record_exception=False,
                                            set_status_on_exception=True)
    return _CurrentSpan(start)


@_contained
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

def tool_span(tracer, call) -> _CurrentSpan:
    """The span of one tool call, current while its hooks and callback run."""
    def start():
        from opentelemetry.trace import SpanKind
        attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": call.name,
                      "gen_ai.tool.type": "function", "scripted.tool.kind": call.kind,
                      "scripted.tool.flags": flags_text(call.params, call.argv),
                      "scripted.stdin.bytes": call.stdin_size}
        return tracer.start_as_current_span(f"execute_tool {call.name}", kind=SpanKind.INTERNAL,
                                            attributes=attributes, record_exception=False)
    return _CurrentSpan(start)


def flags_text(params, argv) -> str:
    """The call's flags as one sanitised line (secrets, hosts, paths redacted)."""
    try:
        text = json.dumps(params, sort_keys=True, default=str) if params is not None else json.dumps(argv[1:])
    except (TypeError, ValueError):
        text = repr(params)
    from .redaction import sanitize          # its patterns compile on first use, not at import
    return sanitize(text[:MAX_FLAGS_TEXT * 2])[:MAX_FLAGS_TEXT]


@_contained
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
    try:
        from opentelemetry import context
        current = context.get_current()
    except BaseException as e:
        _dropped(e)
        return make_coroutine

    async def in_context():
        token = _contained(context.attach)(current)
        try:
            return await make_coroutine()
        finally:
            if token is not None:
                _contained(context.detach)(token)
    return in_context


# ---------------------------------------------------------------- commands (jq, curl)

class _Span:
    """What a command sees of its span: set(key, value) and fail(kind)."""
    __slots__ = ("span",)

    def __init__(self, span):
        self.span = span

    @_contained
    def set(self, key: str, value):
        self.span.set_attribute(key, value)

    @_contained
    def fail(self, error_type: str, description: str = ""):
        _status_error(self.span, error_type, description)


class Observer:
    """The hook commands are given through their context (`ctx.observer`, None when tracing
    is off): `with ctx.observer.span("jq", {...}) as span: ... span.set(k, v)`. Commands never
    import this module."""
    __slots__ = ("tracer",)

    def __init__(self, tracer):
        self.tracer = tracer

    def span(self, name: str, attributes: Optional[dict] = None, client: bool = False) -> "_CommandSpan":
        def start():
            from opentelemetry.trace import SpanKind
            kind = SpanKind.CLIENT if client else SpanKind.INTERNAL
            return self.tracer.start_as_current_span(name, kind=kind, attributes=attributes or {},
                                                     record_exception=False)
        return _CommandSpan(start)


class _CommandSpan(_CurrentSpan):
    """A command's span, seen as a _Span."""
    __slots__ = ()

    def __enter__(self) -> _Span:
        return _Span(super().__enter__())
