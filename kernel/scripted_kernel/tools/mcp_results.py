"""What a script's run looks like over MCP: the script tool's output schema, and a run's
response as JSON values (its structuredContent; an idempotent call's recorded outcome)."""
from __future__ import annotations

import json

from . import call_log
from .scripted_tool import ToolResponse

TRACE_ENTRY_SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "kind": {"type": "string", "description": "tool, builtin, help or discover"},
        "argv": {"type": "array", "items": {"type": "string"}},
        "params": {"type": ["object", "null"]},
        "exit_code": {"type": "integer"},
        "duration_ms": {"type": "number"},
        "status": {"type": "string", "description": "done, failed, denied, not started or left running"},
    },
    "required": ["name", "kind", "argv", "params", "exit_code", "duration_ms", "status"],
}
OUTPUT_SCHEMA = {
    "type": "object",
    "properties": {
        "stdout": {"type": "string"},
        "stderr": {"type": "string"},
        "exit_code": {"type": "integer"},
        "error": {"type": ["string", "null"],
                  "description": "what stopped the script (timeout, cancelled, limit:NAME, session, store, "
                                 "paused, ...); null when it ran to its end"},
        "trace": {"type": "array", "items": TRACE_ENTRY_SCHEMA, "description": "the script's tool calls, in order"},
    },
    "required": ["stdout", "stderr", "exit_code", "error", "trace"],
}


def trace_entries(response: ToolResponse) -> list:
    """The run's tool-call log as JSON values, each call's argv and params bounded."""
    return call_log.trace_entries(response.trace)


def response_to_json(response: ToolResponse, max_bytes: int = 0) -> str:
    """A response as JSON text (a recorded outcome); within `max_bytes` (0: any), the start of
    its streams and of its tool-call log kept, with a note saying so."""
    record: dict = {"stdout": response.stdout, "stderr": response.stderr, "exit_code": response.exit_code,
                    "error": response.error, "trace": trace_entries(response)}
    text = json.dumps(record)             # ASCII: its length is its size
    trace, keep = record["trace"], max_bytes // 4
    while max_bytes and len(text) > max_bytes:
        record.update(stdout=response.stdout[:keep], trace=trace[:keep // 4096],
                      stderr=response.stderr[:keep] + "bash: note: the recorded outcome keeps the start of each "
                                                      "stream\n")
        text = json.dumps(record)
        if not keep:
            break                 # (only a bound below an empty record's size ends here)
        keep //= 2                # escapes may make the text many times the characters kept
    return text


def response_from_json(text) -> ToolResponse:
    from .scripted_tool import TraceEntry
    data = json.loads(text)
    trace = [TraceEntry(e["name"], e["kind"], e["argv"], e["params"], e["exit_code"], e["duration_ms"],
                        status=e["status"]) for e in data.get("trace", ())]
    return ToolResponse(data["stdout"], data["stderr"], data["exit_code"], data.get("error"), trace=trace)
