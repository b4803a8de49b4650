"""Runs that stop for a person and resume anywhere, by deterministic replay.

A run whose tool has a before_tool hook keeps a journal: every tool call (and curl request)
with what it printed and its status, the seed of its `$RANDOM` generator, the wall clock it
started at and, for a BashTool, its session as it was when the call began. When a hook returns
`Pause(reason)` the run stops before that call (nothing after it runs) and the journal becomes
a continuation: bytes, versioned, bounded and validated on load, signed when the host gives a
key.

`tool.resume(continuation, decision)` runs the script again from the start, in this process or
another, hours later: the session is put back as it was, `$RANDOM` and the clock replay what
the first run saw, and each earlier call is answered from the journal without calling its
callback or its hooks. The first call that differs from the journal ends the resume (`divergence
at call N: expected ..., got ...`); the paused call gets the decision (allow, deny, or new
parameters) without asking the hooks again, and every call after it is a new call, with its
hooks, which may pause again. A callback therefore runs only for a call a hook (or, for the
paused call, the decision) allowed, and at most once.
"""
from __future__ import annotations

import base64
import json
import os
from dataclasses import dataclass, field
from typing import Callable, Optional, Union

from ..base.errors import Cancelled
from .hooks import DENIED, Deny, ToolCall

FORMAT = "scripted-continuation"
VERSION = 1
MAGIC = b"SKCONT1\n"
_SIGNATURE_BYTES = 32


class ContinuationError(ValueError):
    """A continuation that cannot be resumed: damaged, forged, foreign or too large."""


@dataclass
class Entry:
    """One call as the run saw it: what it printed and its status."""
    name: str
    kind: str
    params: Optional[dict]
    stdout: str
    stderr: str
    status: int

    def text(self) -> str:
        return _call_text(self.name, self.params)


def _call_text(name: str, params) -> str:
    if isinstance(params, dict) and set(params) == {"args"} and isinstance(params["args"], list):
        return " ".join([name, *map(str, params["args"])])
    return f"{name} {json.dumps(params, sort_keys=True, separators=(',', ':'))}" if params else name


Decision = Union[str, Deny, dict]


@dataclass
class Journal:
    """The calls of one run: replayed ones first (a resumed run), then new ones, recorded."""
    # 63 random bits, as secrets.randbits(63) (which would import hmac and OpenSSL's hashes)
    seed: int = field(default_factory=lambda: int.from_bytes(os.urandom(8), "big") >> 1)
    clock: float = 0.0                      # the wall clock the first run started at
    replay: list = field(default_factory=list)
    pending: Optional[Entry] = None         # the call the run paused before (a resumed run)
    decision: Decision = "allow"
    session: Optional[bytes] = None         # a BashTool's session as the first run began it
    budget: int = 16 * 1024 * 1024          # bytes of recorded output a continuation may hold
    entries: list = field(default_factory=list)
    recorded: int = 0
    paused: Optional[tuple] = None          # (ToolCall, reason) once a hook paused the run
    diverged: Optional[str] = None
    on_replayed: Optional[Callable] = None  # called once the replay has passed the paused call

    @property
    def replaying(self) -> bool:
        """Whether the next call is answered from the journal (a call made before the pause)."""
        return len(self.entries) < len(self.replay)

    def perform(self, out: Callable, err: Callable, call: ToolCall, live: Callable[[Callable, Callable], int],
                decided: Callable[[ToolCall, Decision, Callable, Callable], int]) -> int:
        """Run one call: from the journal while replaying, with the decision for the paused
        call, else `live(out, err)` (hooks and callback), recorded."""
        index = len(self.entries)
        if self.replaying:
            entry = self.replay[index]
            self._expect(index, entry, call)
            out(entry.stdout)
            err(entry.stderr)
            self.entries.append(entry)
            return entry.status
        if self.pending is not None:
            self._expect(index, self.pending, call)
            self.pending, decision = None, self.decision
            if self.on_replayed is not None:
                self.on_replayed()
            return self._recorded(call, out, err, lambda o, e: decided(call, decision, o, e))
        return self._recorded(call, out, err, live)

    def _expect(self, index: int, entry: Entry, call: ToolCall):
        if (entry.name, entry.params) != (call.name, call.params):
            self.diverged = (f"divergence at call {index + 1}: expected {entry.text()}, got "
                             f"{_call_text(call.name, call.params)}")
            raise Cancelled(self.diverged, 1)

    def _recorded(self, call: ToolCall, out: Callable, err: Callable, run: Callable) -> int:
        stdout: list = []
        stderr: list = []

        def to_out(text: str):
            stdout.append(text)
            out(text)

        def to_err(text: str):
            stderr.append(text)
            err(text)
        status = run(to_out, to_err)
        entry = Entry(call.name, call.kind, call.params, "".join(stdout), "".join(stderr), status)
        self.recorded += len(entry.stdout) + len(entry.stderr)
        self.entries.append(entry)
        return status

    def can_pause(self) -> Optional[str]:
        """Why the run cannot become a continuation now, or None."""
        if self.recorded > self.budget:
            return (f"the calls so far printed {self.recorded} bytes, more than a continuation keeps "
                    f"({self.budget}, max_output_bytes)")
        return None


def decision_status(call: ToolCall, decision: Decision, err: Callable, invoke: Callable[[ToolCall], int],
                    revalidate: Callable[[dict], dict]) -> int:
    """The paused call under the person's decision: allowed, denied (126), or run with
    replacement parameters (checked against the tool's schema)."""
    if isinstance(decision, Deny):
        err(f"{call.name}: denied: {decision.reason}\n")
        return DENIED
    if isinstance(decision, dict):
        call = ToolCall(call.name, revalidate(dict(decision)), call.argv, call.stdin_size, call.kind)
    elif decision != "allow":
        raise ValueError(f"a decision is 'allow', Deny(reason) or a dict of parameters, not {decision!r}")
    return invoke(call)


# ---------------------------------------------------------------- the continuation's bytes

def encode(tool_name: str, script: str, stdin: str, journal: Journal, pending: ToolCall, reason: str,
           key: Optional[bytes]) -> bytes:
    body = {"format": FORMAT, "version": VERSION, "tool": tool_name, "script": script, "stdin": stdin,
            "seed": journal.seed, "clock": journal.clock, "reason": reason,
            "calls": [[e.name, e.kind, e.params, e.stdout, e.stderr, e.status] for e in journal.entries],
            "pending": [pending.name, pending.kind, pending.params, list(pending.argv)],
            "session": base64.b64encode(journal.session).decode("ascii") if journal.session is not None else None}
    data = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass")
    signature = _signature(key, data) if key else bytes(_SIGNATURE_BYTES)
    return MAGIC + signature + data


def _signature(key: bytes, data: bytes) -> bytes:
    # (hmac and hashlib imported at the first signature, not with the package: loading
    # OpenSSL's hashes is a tenth of its import, and most processes never sign a run)
    import hashlib
    import hmac
    return hmac.new(key, data, hashlib.sha256).digest()


def _signature_matches(key: bytes, data: bytes, signature: bytes) -> bool:
    import hmac
    return hmac.compare_digest(_signature(key, data), signature)


@dataclass
class Loaded:
    script: str
    stdin: str
    journal: Journal
    pending: ToolCall
    reason: str


def decode(data: bytes, tool_name: str, key: Optional[bytes], max_bytes: int, max_script_bytes: int) -> Loaded:
    """A continuation checked before anything of it is used: its size, header, signature
    (with a key, an unsigned or otherwise signed one is refused), format, the tool it belongs
    to, and every field's type and size."""
    if not isinstance(data, (bytes, bytearray)) or len(data) < len(MAGIC) + _SIGNATURE_BYTES:
        raise ContinuationError("not a continuation (too short)")
    if len(data) > max_bytes:
        raise ContinuationError(f"continuation of {len(data)} bytes, more than this tool accepts ({max_bytes})")
    if bytes(data[:len(MAGIC)]) != MAGIC:
        raise ContinuationError("not a continuation (no SKCONT1 header)")
    signature = bytes(data[len(MAGIC):len(MAGIC) + _SIGNATURE_BYTES])
    payload = bytes(data[len(MAGIC) + _SIGNATURE_BYTES:])
    if key and not _signature_matches(key, payload, signature):
        raise ContinuationError("continuation signature does not match: tampered with, not signed, or signed "
                                "with another key")
    try:
        body = json.loads(payload.decode("utf-8", "surrogatepass"))
    except (ValueError, RecursionError):
        raise ContinuationError("continuation is damaged (its body is not JSON)") from None
    if not isinstance(body, dict) or body.get("format") != FORMAT:
        raise ContinuationError("not a continuation (wrong format)")
    if body.get("version") != VERSION:
        raise ContinuationError(f"continuation format version {body.get('version')!r}: this library reads {VERSION}")
    if body.get("tool") != tool_name:
        raise ContinuationError(f"continuation of tool {body.get('tool')!r}, not of {tool_name!r}")
    script = _text(body.get("script"), "script", max_script_bytes)
    stdin = _text(body.get("stdin"), "stdin", max_bytes)
    seed, clock = body.get("seed"), body.get("clock")
    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 1 << 63:
        raise ContinuationError("continuation field seed: not a 63-bit number")
    if not isinstance(clock, (int, float)) or isinstance(clock, bool) or not 0 <= clock < 1e11:
        raise ContinuationError("continuation field clock: not a time")
    calls = body.get("calls")
    if not isinstance(calls, list):
        raise ContinuationError("continuation field calls: not a list")
    replay = [_entry(c, i) for i, c in enumerate(calls)]
    pending = body.get("pending")
    if not (isinstance(pending, list) and len(pending) == 4 and isinstance(pending[0], str)
            and isinstance(pending[1], str) and (pending[2] is None or isinstance(pending[2], dict))
            and isinstance(pending[3], list) and all(isinstance(a, str) for a in pending[3])):
        raise ContinuationError("continuation field pending: not a call")
    session = body.get("session")
    if session is not None:
        if not isinstance(session, str):
            raise ContinuationError("continuation field session: not base64 text")
        try:
            session = base64.b64decode(session, validate=True)
        except ValueError:
            raise ContinuationError("continuation field session: not base64 text") from None
    journal = Journal(seed=seed, clock=float(clock), replay=replay, session=session)
    journal.pending = Entry(pending[0], pending[1], pending[2], "", "", 0)
    return Loaded(script, stdin, journal, ToolCall(pending[0], pending[2], pending[3], 0, pending[1]),
                  _text(body.get("reason", ""), "reason", 64 * 1024))


def _text(value, what: str, most: int) -> str:
    if not isinstance(value, str):
        raise ContinuationError(f"continuation field {what}: not text")
    if len(value) > most:
        raise ContinuationError(f"continuation field {what}: more than {most} characters")
    return value


def _entry(item, index: int) -> Entry:
    if not (isinstance(item, list) and len(item) == 6 and isinstance(item[0], str) and isinstance(item[1], str)
            and (item[2] is None or isinstance(item[2], dict)) and isinstance(item[3], str)
            and isinstance(item[4], str) and isinstance(item[5], int) and not isinstance(item[5], bool)
            and 0 <= item[5] <= 255):
        raise ContinuationError(f"continuation call {index + 1}: not a recorded call")
    return Entry(*item)
