"""Approval and policy before a tool runs: `before_tool` / `after_tool` hooks and plans.

A hook sees every tool call at dispatch time, after the script's words were expanded and the
flags parsed and validated: the real call, whatever led to it (`eval`, a variable holding the
name, a function, `xargs`, a pipeline stage, `timeout N tool`). So the hook, not the script
text, is the place to guarantee what a script may do.

    before_tool(call: ToolCall) -> None | Deny | dict     (sync or async)
    after_tool(call: ToolCall, result: ToolCallResult) -> None

None allows the call, `Deny("reason")` refuses it (the command fails with status 126 and
`TOOL: denied: reason` on stderr; nothing is called), a dict replaces the call's parameters
(validated again against the tool's schema). A before_tool hook that raises denies the call
(fail closed). Hooks are host code: they run where the tool's callback would (a runner thread,
or the caller's loop for async hooks under `execute_async`), within the execution's deadline.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

DENIED = 126                # bash's "found but not executable": the command was refused


@dataclass(frozen=True, slots=True)
class Deny:
    """What a before_tool hook returns to refuse a call."""
    reason: str = "refused by policy"


@dataclass(frozen=True, slots=True)
class Pause:
    """What a before_tool hook returns to stop the run before this call, for a person to
    decide later: the run ends paused, with a continuation that `tool.resume()` picks up
    (tools/journal.py)."""
    reason: str = "waiting for approval"


@dataclass(slots=True)
class ToolCall:
    """One call of a tool as dispatched: `name`, `params` as parsed and validated (for a
    BashTool builtin, `{"args": [...]}`), `argv` as expanded, and `stdin_size`: the bytes of
    standard input waiting for the tool (it may or may not read them)."""
    name: str
    params: Optional[dict]
    argv: list
    stdin_size: int = 0
    kind: str = "tool"           # tool, builtin (a BashTool's custom command), or network (a plan's curl)


@dataclass(slots=True)
class ToolCallResult:
    """What after_tool sees: the command's exit status and output sizes."""
    exit_code: int
    stdout_bytes: int = 0
    stderr_bytes: int = 0
    duration_ms: float = 0.0
    denied: Optional[str] = None     # the reason, when a before_tool hook refused the call


@dataclass
class Hooks:
    """The hooks of one tool, in the order they were added."""
    before: list = field(default_factory=list)      # (fn, is_async)
    after: list = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.before or self.after)

    def copy(self) -> "Hooks":
        return Hooks(list(self.before), list(self.after))


def pending_stdin(stdin) -> int:
    """The size of what an InputStream still holds, without reading it (a tool that ignores
    its input leaves it to the next command)."""
    data, pos = getattr(stdin, "data", ""), getattr(stdin, "pos", 0)
    size = len(data) - pos
    if size and size <= 65536 and not data.isascii():
        return len(data[pos:].encode("utf-8", "surrogateescape"))
    return max(size, 0)


def decide(value, call: ToolCall, revalidate: Callable) -> "tuple[Optional[str], ToolCall]":
    """A before_tool hook's answer: (the reason for refusing, or None; the call to make)."""
    if value is None:
        return None, call
    if isinstance(value, Deny):
        return value.reason or "refused by policy", call
    if isinstance(value, dict):
        params = revalidate(value)
        return None, ToolCall(call.name, params, call.argv, call.stdin_size, call.kind)
    return f"before_tool returned {type(value).__name__}, not None, Deny, Pause or a dict", call


@dataclass(slots=True)
class Unmade:
    """A call a plan could not make: where, what, and why (its flags were not valid)."""
    line: int
    name: str
    argv: list
    reason: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.name}: {self.reason}"


class Plan(list):
    """What ScriptedTool.plan() found, in order: the ToolCalls the script makes when every tool
    answers as its dry run does (curl's requests among them, kind "network"); `unmade`: the
    calls it could not make and why; `files`: for a BashTool, the paths the script would
    create, change or remove."""

    def __init__(self, calls=()):
        super().__init__(calls)
        self.unmade: list[Unmade] = []
        self.files: list[str] = []
