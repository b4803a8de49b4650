"""A run's tool-call log as JSON data, bounded: what a host is handed beside a script's output
(the MCP result's structuredContent, the framework adapters' records, an idempotent call's
recorded outcome). A call's argv and params take at most MAX_LOGGED_CALL_CHARS characters of
JSON text: the log says which calls ran, it is not a second copy of the data the run handled
(a parameter may hold megabytes)."""
from __future__ import annotations

import json
import math

from .containment import valid_unicode

MAX_LOGGED_CALL_CHARS = 4096     # of one call's argv and params together in a run's record
_MAX_LOGGED_DEPTH = 32
_MAX_LOGGED_INT = 2 ** 63         # past it an integer is logged as text (str() refuses 4,300 digits)


def trace_entries(trace) -> list:
    """Each TraceEntry of a run's log as JSON data (see TRACE_ENTRY_SCHEMA in mcp_results.py)."""
    return [{"name": e.name, "kind": e.kind, **logged_call(e.argv, e.params), "exit_code": e.exit_code,
             "duration_ms": round(e.duration_ms, 3), "status": e.status} for e in trace]


def logged_call(argv, params) -> dict:
    """A call's argv and params, half of MAX_LOGGED_CALL_CHARS each (params repeat argv)."""
    share = MAX_LOGGED_CALL_CHARS // 2
    return {"argv": _Clipped(share).value([str(word) for word in argv]),
            "params": _Clipped(share).value(params) if isinstance(params, dict) else None}


class _Clipped:
    """Values as JSON data within a budget of characters of JSON text: past it, text keeps its
    start with its length noted, a list or an object its first items with how many more;
    deeper than _MAX_LOGGED_DEPTH, "...". Markup stays text (a host escapes it where it shows
    it); odd values (bytes, objects) are logged as their repr, as text."""

    def __init__(self, chars: int):
        self.left = chars

    def value(self, value, depth: int = 0):
        if value is None or isinstance(value, bool) or \
                isinstance(value, int) and abs(value) < _MAX_LOGGED_INT or \
                isinstance(value, float) and math.isfinite(value):
            self.left -= len(json.dumps(value))
            return value
        if depth >= _MAX_LOGGED_DEPTH:
            return "..."
        if isinstance(value, dict):
            return self._items(value, depth)
        if isinstance(value, (list, tuple)):
            return self._list(value, depth)
        if isinstance(value, int):
            return self.text(f"(an integer of {value.bit_length()} bits)")
        return self.text(value if isinstance(value, str) else repr(value))

    def text(self, text: str) -> str:
        kept = valid_unicode(text[:max(self.left, 0)])
        cost = len(json.dumps(kept))
        while kept and cost > self.left:           # escapes: a character may take up to 6 or 12
            kept = kept[:len(kept) * self.left // cost]
            cost = len(json.dumps(kept))
        self.left -= cost
        if len(kept) == len(text):
            return kept
        self.left = 0
        return f"{kept}... ({len(text)} characters)"

    def _list(self, items, depth: int) -> list:
        kept: list = []
        for item in items:
            if self.left <= 0:
                kept.append(f"... ({len(items) - len(kept)} more items)")
                break
            self.left -= 2
            kept.append(self.value(item, depth + 1))
        return kept

    def _items(self, items: dict, depth: int) -> dict:
        kept: dict = {}
        for key, item in items.items():
            if self.left <= 0:
                kept["..."] = f"{len(items) - len(kept)} more keys"
                break
            self.left -= 4
            logged_key = self.text(str(key))            # before its value: the key's share comes first
            kept[logged_key] = self.value(item, depth + 1)
        return kept
