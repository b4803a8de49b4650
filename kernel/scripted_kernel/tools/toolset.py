"""ScriptingToolSet: how a ScriptedTool is offered to a model.

DiscoveryMode.ALL puts every tool's schema in the script tool's prompt; WITH_DISCOVERY keeps
that prompt compact (names and one-liners) and adds a companion `<name>_discover` tool that
can only run `help` and `discover`, so a model looks schemas up when it needs them.
"""
from __future__ import annotations

import enum
import shlex

from .scripted_tool import ScriptedTool, ToolResponse


class DiscoveryMode(enum.Enum):
    ALL = "all"
    WITH_DISCOVERY = "with_discovery"


class DiscoverTool:
    """Runs only `help ...` and `discover ...` against a ScriptedTool's registry."""

    def __init__(self, scripted: ScriptedTool):
        self.scripted = scripted
        self.name = f"{scripted.name}_discover"

    def description(self) -> str:
        return (f"Look up the tools of `{self.scripted.name}`: `help --list`, `help TOOL`, "
                f"`help TOOL --json`, `discover --search TEXT`, `--category NAME`, `--tag TAG`.")

    def input_schema(self) -> dict:
        return {"type": "object", "properties": {"command": {
            "type": "string", "description": "a help or discover command line"}}, "required": ["command"]}

    def execute(self, args) -> ToolResponse:
        command = args.get("command", "") if isinstance(args, dict) else str(args)
        try:
            words = shlex.split(command)
        except ValueError as e:
            return ToolResponse("", f"{self.name}: {e}\n", 2)
        if not words or words[0] not in ("help", "discover"):
            return ToolResponse("", f"{self.name}: only `help` and `discover` commands are allowed\n", 2)
        return self.scripted.execute(" ".join(shlex.quote(w) for w in words))


class ScriptingToolSet:
    def __init__(self, scripted: ScriptedTool, mode: DiscoveryMode = DiscoveryMode.ALL):
        self.scripted = scripted
        self.mode = mode
        if mode is DiscoveryMode.WITH_DISCOVERY:
            scripted.compact = True

    def tools(self) -> list:
        if self.mode is DiscoveryMode.WITH_DISCOVERY:
            return [self.scripted, DiscoverTool(self.scripted)]
        return [self.scripted]

    def system_prompt(self) -> str:
        prompt = self.scripted.system_prompt()
        if self.mode is DiscoveryMode.WITH_DISCOVERY:
            prompt += (f"\nUse `{self.scripted.name}_discover` (help / discover) to read a tool's flags "
                       f"before you call it.\n")
        return prompt
