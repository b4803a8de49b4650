"""bashkit's Python `ScriptedTool` (0.20.1), on scripted_kernel's engine.

    from scripted_kernel.compat.bashkit import ScriptedTool   # was: from bashkit import ScriptedTool

The same constructor (`name`, `short_description`, `max_commands`, `max_loop_iterations`,
`timeout_seconds`), `add_tool(name, description, callback, schema=None)` with
`callback(params, stdin)` (sync, `async def`, or an object with `async def __call__`),
`execute_sync`, `execute` (returns an awaitable task; needs a running loop), `env`,
`tool_count`, `description`, `help`, `system_prompt`, `input_schema` / `output_schema` (JSON
text), `name`, `short_description`, `version`, and results as `ExecResult`.

Where the native `scripted_kernel.ScriptedTool` deliberately differs, this module follows bashkit:
- Any tool name is accepted. A tool named like a builtin or command (`echo`, `jq`) replaces it
  for scripts; `help` and `discover` stay the builtins. A repeated name is counted and listed
  again, and the first registration answers. (Native: such names are refused, because a
  script's `echo` should mean bash's echo.)
- A callback that raises, or returns anything but a `str` (None, bytes, numbers, dicts), fails
  the command with `<tool>: callback failed` and status 1; the exception's text is not shown.
  (Native: None prints nothing, other values print as JSON, and the sanitized message of the
  exception is shown.)
- Running out of time or of a limit gives exit status 1, `error` and the last line of stderr
  `resource limit exceeded: ...` in bashkit's words. (Native: exit 124 on timeout, as GNU
  `timeout`; `error` is a short kind such as `timeout` or `limit:max_commands`.)
- `system_prompt()`, `description()` and `help()` use bashkit's layout.
- A schema must be a JSON object (a dict) at most 64 levels deep: anything else raises
  TypeError or ValueError at `add_tool` (bashkit accepts any JSON value and repeats it back).

Kept from the engine, because a program cannot sensibly depend on the opposite: output printed
before a limit or a timeout stays in `stdout` (bashkit discards it); a syntax error exits with
status 2, as bash; flags are parsed and checked by the engine's rules (positional arguments,
did-you-mean for unknown flags on closed schemas, range and pattern checks).
"""
from __future__ import annotations

import asyncio
import json
from typing import Any, Callable, Optional

from ..base.limits import ExecutionLimits
from ..tools import scripted_tool as native
from ..tools.definitions import is_async_callable

__all__ = ["BashError", "ExecResult", "ScriptedTool"]

MAX_SCHEMA_DEPTH = 64


class BashError(Exception):
    """bashkit's error for a failing command (its `Bash.execute_sync_or_throw`)."""

    def __init__(self, message: str = "", exit_code: int = 1, stdout: str = "", stderr: str = ""):
        super().__init__(message)
        self.exit_code, self.stdout, self.stderr = exit_code, stdout, stderr


class ExecResult:
    """The outcome of one script, with bashkit's fields."""

    __slots__ = ("stdout", "stderr", "exit_code", "error", "stdout_truncated", "stderr_truncated",
                 "final_env")

    def __init__(self, stdout: str, stderr: str, exit_code: int, error: Optional[str] = None,
                 stdout_truncated: bool = False, stderr_truncated: bool = False):
        self.stdout, self.stderr, self.exit_code, self.error = stdout, stderr, exit_code, error
        self.stdout_truncated, self.stderr_truncated = stdout_truncated, stderr_truncated
        self.final_env = None

    @property
    def success(self) -> bool:
        return self.exit_code == 0

    @property
    def stdout_bytes(self) -> bytes:
        return self.stdout.encode("utf-8", "surrogateescape")

    @property
    def stderr_bytes(self) -> bytes:
        return self.stderr.encode("utf-8", "surrogateescape")

    def to_dict(self) -> dict:
        return {"stdout": self.stdout, "stderr": self.stderr, "exit_code": self.exit_code,
                "error": self.error, "stdout_truncated": self.stdout_truncated,
                "stderr_truncated": self.stderr_truncated, "final_env": self.final_env}

    def __repr__(self) -> str:
        def text(value):
            return "None" if value is None else json.dumps(value, ensure_ascii=False)
        return (f"ExecResult(stdout={text(self.stdout)}, stderr={text(self.stderr)}, "
                f"exit_code={self.exit_code}, error={text(self.error)}, "
                f"stdout_truncated={str(self.stdout_truncated).lower()}, "
                f"stderr_truncated={str(self.stderr_truncated).lower()}, final_env=None)")

    def __str__(self) -> str:
        return self.stdout if self.success else f"Error ({self.exit_code}): {self.stderr}"


class _CallbackFailed(Exception):
    """A callback returned something other than text."""


class _Engine(native.ScriptedTool):
    """The native tool with bashkit's rulings on names and callback failures."""

    def _check_name(self, name: str, shadow: bool = False):
        pass                            # bashkit accepts every name (add_tool keeps the first)

    def _failure_text(self, error: BaseException) -> str:
        return "callback failed"


_LIMIT_WORDS = {
    "limit:max_commands": "maximum command count exceeded ({max_commands})",
    "limit:max_loop_iterations": "maximum loop iterations exceeded ({max_loop_iterations})",
    "timeout": "execution timeout ({timeout})",
}


class ScriptedTool:
    """Python callbacks as commands of a bash script; each execution is a fresh interpreter."""

    def __init__(self, name: str, short_description: Optional[str] = None,
                 max_commands: Optional[int] = None, max_loop_iterations: Optional[int] = None,
                 timeout_seconds: Optional[float] = None):
        limits = ExecutionLimits()
        for key, value in (("max_commands", max_commands), ("max_loop_iterations", max_loop_iterations),
                           ("timeout_seconds", timeout_seconds)):
            if value is not None:
                setattr(limits, key, value)
        self._engine = _Engine(name, short_description or f"ScriptedTool: {name}", limits=limits)
        self._entries: list[tuple[str, str, Any]] = []     # every add_tool, duplicates included

    # ------------------------------------------------------------ identity

    @property
    def name(self) -> str:
        return self._engine.name

    @property
    def short_description(self) -> str:
        return self._engine.short_description

    @property
    def version(self) -> str:
        return self._engine.version

    def __repr__(self) -> str:
        return f'ScriptedTool(name="{self.name}", tools={self.tool_count()})'

    # ------------------------------------------------------------ registration

    def add_tool(self, name: str, description: str, callback: Callable, schema: Optional[dict] = None) -> None:
        if not callable(callback):
            raise TypeError(f"tool '{name}' callback must be callable")
        schema = _checked_schema(name, {} if schema is None else schema)
        self._entries.append((name, description, schema))
        if name not in self._engine.tools:
            self._engine.register(native.ToolDef(name, description, schema), _adapter(callback),
                                  is_async_callable(callback))

    def env(self, key: str, value: str) -> None:
        self._engine.env[key] = value

    def tool_count(self) -> int:
        return len(self._entries)

    # ------------------------------------------------------------ execution

    def execute_sync(self, commands: str) -> ExecResult:
        return self._result(self._engine.execute(commands))

    def execute(self, commands: str) -> "asyncio.Task[ExecResult]":
        """Start the script now; await the returned task for its result. Async callbacks run on
        this (the caller's) loop; cancelling the task cancels them and stops the script."""
        loop = asyncio.get_running_loop()       # RuntimeError: no running event loop

        async def run() -> ExecResult:
            return self._result(await self._engine.execute_async(commands))
        return loop.create_task(run())

    def _result(self, response) -> ExecResult:
        stderr, error, status = response.stderr, None, response.exit_code
        words = _LIMIT_WORDS.get(response.error or "")
        if words is not None:
            limits = self._engine.limits
            error = "resource limit exceeded: " + words.format(
                max_commands=limits.max_commands, max_loop_iterations=limits.max_loop_iterations,
                timeout=f"{limits.timeout_seconds:g}s")
            stderr = _without_last_line(stderr) + error
            status = 1
        return ExecResult(response.stdout, stderr, status, error, response.stdout_truncated)

    # ------------------------------------------------------------ introspection

    def description(self) -> str:
        return "Compose tool callbacks through bash scripts: " + ", ".join(n for n, _, _ in self._entries)

    def system_prompt(self) -> str:
        commands = []
        for name, _, schema in self._entries:
            usage = _usage(schema)
            commands.append(f"{name} [{usage}]" if usage else name)
        return (f"{self.name}: run bash scripts that orchestrate registered tool commands. "
                f"Commands: {', '.join(commands)}. Pass args as --key value or --key=value. "
                "Shell logic and stdin pipelines are available; filesystem primitives are unavailable. "
                "Use help/discover builtins for runtime details.")

    def help(self) -> str:
        rows = [f"| `{name}` | {description} | `{(name + ' ' + _usage(schema)).strip()}` |"
                for name, description, schema in self._entries]
        first = self._entries[0] if self._entries else None
        example = (first[0] + " " + _usage(first[2])).strip() if first else "echo hello"
        return "\n".join([
            f"# {self.name}", "", self.description(), "",
            f"**Version:** {self.version}", f"**Name:** `{self.name}`", "**Locale:** `en-US`", "",
            "## Parameters", "",
            "| Name | Type | Required | Default | Description |",
            "|------|------|----------|---------|-------------|",
            "| `commands` | string | yes | — | Bash script that may call the registered tool commands |", "",
            "## Tool Commands", "",
            "| Name | Description | Usage |", "|------|-------------|-------|", *rows, "",
            "## Result", "",
            "| Field | Type | Description |", "|------|------|-------------|",
            "| `stdout` | string | Combined standard output |",
            "| `stderr` | string | Tool or bash errors |",
            "| `exit_code` | integer | Shell exit code |",
            "| `error` | string | Error category when execution fails |", "",
            "## Examples", "", "```json", json.dumps({"commands": example}), "```", "",
            "## Notes", "",
            "- Pass arguments as `--key value` or `--key=value`.",
            "- Shell logic, variables, loops, conditionals, pipes, heredocs, here-strings, and "
            "stdin-based transforms are available.",
            "- Filesystem primitives are unavailable: file commands, path script execution, file "
            "redirection, and process substitution are rejected.",
            "- Use `help <tool> --json` inside the tool for runtime schema inspection.", ""])

    def input_schema(self) -> str:
        return json.dumps({
            "type": "object", "required": ["commands"],
            "properties": {"commands": {"type": "string", "description": "Bash commands to execute"}},
        }, indent=2, sort_keys=True)

    def output_schema(self) -> str:
        def field(kind, description, **extra):
            return {"type": kind, "description": description, **extra}
        return json.dumps({
            "type": "object", "required": ["stdout", "stderr", "exit_code"],
            "properties": {
                "stdout": field("string", "Standard output from the script"),
                "stderr": field("string", "Standard error from the script"),
                "exit_code": field("integer", "Exit code; 0 means success", format="int32"),
                "error": field(["string", "null"], "Error message if execution failed before running"),
                "stdout_truncated": field("boolean", "Whether stdout was truncated due to output size limits",
                                          default=False),
                "stderr_truncated": field("boolean", "Whether stderr was truncated due to output size limits",
                                          default=False),
                "final_env": field(["object", "null"], "Final environment state when requested",
                                   additionalProperties={"type": "string"}),
            },
        }, indent=2, sort_keys=True)


# ---------------------------------------------------------------- helpers

def _adapter(callback: Callable) -> Callable:
    """The engine's callback(args) for bashkit's callback(params, stdin): text, or a failure."""
    def text(value):
        if not isinstance(value, str):
            raise _CallbackFailed(type(value).__name__)
        return value

    if is_async_callable(callback):
        async def call_async(args):
            return text(await callback(args.params, args.stdin))
        return call_async

    def call(args):
        return text(callback(args.params, args.stdin))
    return call


def _checked_schema(tool: str, schema) -> dict:
    value = _json_value(tool, schema, 0)        # the depth first, as bashkit
    if not isinstance(value, dict):
        raise TypeError(f"tool '{tool}' schema must be a dict (a JSON Schema object), "
                        f"not {type(schema).__name__}")
    return value


def _json_value(tool: str, value, depth: int):
    """A copy of `value` as plain JSON, refusing what JSON cannot hold or nests too deep."""
    if depth > MAX_SCHEMA_DEPTH:
        raise ValueError(f"Python object nesting depth exceeds maximum of {MAX_SCHEMA_DEPTH}")
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_json_value(tool, item, depth + 1) for item in value]
    if isinstance(value, dict):
        if not all(isinstance(key, str) for key in value):
            raise TypeError(f"tool '{tool}' schema has a key that is not a string")
        return {key: _json_value(tool, item, depth + 1) for key, item in value.items()}
    raise TypeError(f"tool '{tool}' schema holds a {type(value).__name__}, which is not JSON")


def _effective_type(prop) -> str:
    if not isinstance(prop, dict):
        return "value"
    kind = prop.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if kind is None:
        for key in ("oneOf", "anyOf", "allOf"):
            branches = prop.get(key)
            if isinstance(branches, list) and branches:
                return _effective_type(branches[0])
        if "properties" in prop:
            return "object"
        if "items" in prop:
            return "array"
    return kind if isinstance(kind, str) else "value"


def _usage(schema: dict) -> str:
    """bashkit's usage hint: every property, alphabetically, with its type."""
    props = schema.get("properties")
    if not isinstance(props, dict):
        return ""
    flags = []
    for key in sorted(props):
        kind = _effective_type(props[key])
        if kind == "object":
            hint = "json|key=value..."
        elif kind == "array":
            items = props[key].get("items") if isinstance(props[key], dict) else None
            hint = "json|key=value..." if _effective_type(items) == "object" else "json|a,b,c"
        else:
            hint = kind
        flags.append(f"--{key} <{hint}>")
    return " ".join(flags)


def _without_last_line(text: str) -> str:
    """`text` without its last line (the engine's own report of a limit)."""
    head, _, _ = text.rstrip("\n").rpartition("\n")
    return head + "\n" if head else ""
