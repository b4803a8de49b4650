"""ScriptingToolSet: how a ScriptedTool is offered to a model.

DiscoveryMode.ALL puts every tool's usage in the script tool's prompt; WITH_DISCOVERY keeps
that prompt compact (names and one-liners) and adds a companion `<name>_discover` tool that
can only run `help` and `discover`, so a model looks flags up when it needs them.
"""
from __future__ import annotations

import copy
import enum
import re
import threading
from dataclasses import dataclass

from .scripted_tool import ScriptedTool, ScriptedToolBuilder, ToolResponse


class DiscoveryMode(enum.Enum):
    ALL = "all"
    WITH_DISCOVERY = "with_discovery"


# what a help/discover command line may not hold: it is one command, never a script
_CONTROL = re.compile(r"[\n\r;&|`<>()]|\$\(")


class DiscoverTool:
    """A tool of its own (name, description, help, prompt, schemas, execute) whose scripts may
    only be one `help ...` or `discover ...` command against a ScriptedTool's registry."""

    def __init__(self, scripted: ScriptedTool):
        self.scripted = scripted
        self.name = f"{scripted.name}_discover"
        self.short_description = f"Look up the tool commands of {scripted.name}"
        self.version = scripted.version

    def description(self) -> str:
        return (f"Look up the tools of `{self.scripted.name}`: `help --list`, `help TOOL`, "
                f"`help TOOL --json`, `discover --search TEXT`, `--category NAME`, `--tag TAG`.")

    def help(self) -> str:
        return (f"# {self.name}\n\n{self.description()}\n\n"
                f'Input: {{"commands": "help TOOL"}} (one help or discover command)\n'
                "Output: {stdout, stderr, exit_code}\n")

    def system_prompt(self) -> str:
        return self.help()

    def input_schema(self) -> dict:
        return {"type": "object", "properties": {"commands": {
            "type": "string", "description": "one help or discover command line"}}, "required": ["commands"]}

    def output_schema(self) -> dict:
        return self.scripted.output_schema()

    def execute(self, args) -> ToolResponse:
        import shlex
        command = args.get("commands", "") if isinstance(args, dict) else str(args)
        if _CONTROL.search(command):
            return ToolResponse("", f"{self.name}: a single help or discover command only "
                                    f"(no pipes, lists, substitutions or redirections)\n", 2)
        try:
            words = shlex.split(command)
        except ValueError as e:
            return ToolResponse("", f"{self.name}: {e}\n", 2)
        if not words or words[0] not in ("help", "discover"):
            return ToolResponse("", f"{self.name}: only `help` and `discover` commands are allowed\n", 2)
        return self.scripted.execute(" ".join(shlex.quote(w) for w in words))


class ScriptingToolSet:
    """The tools a model gets for one ScriptedTool. The ScriptedTool handed in is never changed:
    discovery mode offers a compact copy of it."""

    def __init__(self, scripted: ScriptedTool, mode: DiscoveryMode = DiscoveryMode.ALL):
        self.mode = mode
        if mode is DiscoveryMode.WITH_DISCOVERY and not scripted.compact:
            scripted = copy.copy(scripted)
            scripted.compact = True
            scripted._last = threading.local()
        self.scripted = scripted

    @staticmethod
    def builder(name: str) -> "ScriptingToolSetBuilder":
        return ScriptingToolSetBuilder(name)

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


@dataclass
class ScriptingToolSetBuilder(ScriptedToolBuilder):
    """ScriptedTool's builder, plus `with_discovery()`; `build()` gives a ScriptingToolSet."""
    _mode: DiscoveryMode = DiscoveryMode.ALL

    def with_discovery(self) -> "ScriptingToolSetBuilder":
        self._mode = DiscoveryMode.WITH_DISCOVERY
        return self

    # A ScriptingToolSet wraps the ScriptedTool it builds instead of being one
    def build(self) -> ScriptingToolSet:  # type: ignore[override]
        return ScriptingToolSet(super().build(), self._mode)
