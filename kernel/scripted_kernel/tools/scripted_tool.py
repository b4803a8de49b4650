"""ScriptedTool: a named, configured engine that runs one script per call in a fresh shell."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

from ..commands import COMMANDS
from ..shell.interpreter import execute as run_script
from ..shell.limits import CancelToken, ExecutionLimits


@dataclass(slots=True)
class ToolResponse:
    stdout: str
    stderr: str
    exit_code: int
    error: Optional[str] = None
    stdout_truncated: bool = False


class ScriptedTool:
    """Runs bash scripts in logic mode. Build one with `ScriptedTool.builder(name)`."""

    def __init__(self, name: str, short_description: str = "", env: Optional[dict] = None,
                 limits: Optional[ExecutionLimits] = None):
        self.name = name
        self.short_description = short_description
        self.env = dict(env or {})
        self.limits = limits or ExecutionLimits()
        self.commands: dict[str, Callable] = dict(COMMANDS)

    @staticmethod
    def builder(name: str) -> "ScriptedToolBuilder":
        return ScriptedToolBuilder(name)

    def execute(self, commands, stdin: str = "", cancel: Optional[CancelToken] = None,
                on_output: Optional[Callable] = None) -> ToolResponse:
        """Run a script (or `{"commands": script}`) in a fresh interpreter."""
        if isinstance(commands, dict):
            commands = commands.get("commands", "")
        result = run_script(commands, commands=self.commands, env=self.env, limits=self.limits,
                            stdin=stdin, cancel=cancel, on_output=on_output)
        return ToolResponse(result.stdout, result.stderr, result.exit_code, result.error,
                            result.stdout_truncated)


@dataclass
class ScriptedToolBuilder:
    name: str
    _short_description: str = ""
    _env: dict = field(default_factory=dict)
    _limits: Optional[ExecutionLimits] = None

    def short_description(self, text: str) -> "ScriptedToolBuilder":
        self._short_description = text
        return self

    def env(self, key: str, value: str) -> "ScriptedToolBuilder":
        self._env[key] = str(value)
        return self

    def limits(self, limits: ExecutionLimits) -> "ScriptedToolBuilder":
        self._limits = limits
        return self

    def build(self) -> ScriptedTool:
        return ScriptedTool(self.name, self._short_description, self._env, self._limits)
