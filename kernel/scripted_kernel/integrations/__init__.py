"""Adapters for agent frameworks: a ScriptedTool, a BashTool or a ScriptingToolSet offered as
a framework's tool, and the framework's tools registered as commands of a ScriptedTool.

    scripted_kernel.integrations.langchain      pip install 'scripted-kernel[langchain]'
    scripted_kernel.integrations.pydantic_ai    pip install 'scripted-kernel[pydantic-ai]'
    scripted_kernel.integrations.openai_agents  pip install 'scripted-kernel[openai-agents]'

Importing this package imports no framework; each adapter module imports its own, and says
which extra to install when it is missing.

What the model gets back from a call is the same text in every adapter (`text_for_model`):
stdout, then `[stderr]` and the stderr text when there is any, then `[exit code N]` when the
script failed; `(no output)` when there is nothing at all. A failed script (a non-zero exit
code) is also reported through the framework's error channel where it has one that keeps the
agent running: LangChain's ToolMessage with status "error", PydanticAI's failed tool return
(`ToolFailed`, which uses no retry); the OpenAI Agents SDK has none, so the text alone says it.
"""
from __future__ import annotations

import asyncio
import importlib
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Optional

from ..tools.containment import valid_unicode
from ..tools.scripted_tool import ScriptedTool, ToolResponse
from ..tools.toolset import DiscoverTool, ScriptingToolSet


def require(module: str, extra: str, framework: str):
    """Import a framework's module, or say which extra installs it."""
    try:
        importlib.import_module(module)
    except ModuleNotFoundError as e:
        raise ImportError(f"{framework} is not installed: pip install 'scripted-kernel[{extra}]'") from e


def text_for_model(response: ToolResponse) -> str:
    """What the model reads: stdout, stderr when there is any, the exit code when it is not 0."""
    text = response.stdout
    if response.stderr:
        text = _end_line(text) + "[stderr]\n" + response.stderr
    if response.exit_code:
        text = _end_line(text) + f"[exit code {response.exit_code}]"
    return valid_unicode(text) if text else "(no output)"


def _end_line(text: str) -> str:
    return text + "\n" if text and not text.endswith("\n") else text


def plain_value(value):
    """A framework tool's return value as a command prints it: text as it is, anything else
    (dicts, lists, pydantic models, dataclasses) as JSON data."""
    if value is None or isinstance(value, (str, bytes)):
        return value
    from pydantic_core import to_jsonable_python     # every adapted framework brings pydantic
    return to_jsonable_python(value, fallback=str)


@contextmanager
def one_line_validation_errors():
    """A pydantic ValidationError raised inside becomes a command's one-line error (a
    ValueError naming the flags) rather than pydantic's report of several lines."""
    from pydantic import ValidationError     # every adapted framework brings pydantic
    try:
        yield
    except ValidationError as e:
        raise ValueError("; ".join(_validation_problem(item) for item in e.errors())) from None


def _validation_problem(item: dict) -> str:
    where = ".".join(str(part) for part in item["loc"])
    return f"--{where}: {item['msg']}" if where else item["msg"]


def inline_refs(schema: dict) -> dict:
    """A JSON Schema with its local references (`#/$defs/...`) written out in place, since
    the flag parser reads a property's type where it stands. A recursive reference stays a
    reference (the root's `$defs` are kept for it)."""
    def walk(node, expanding: frozenset):
        if isinstance(node, list):
            return [walk(item, expanding) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        target = _pointer(schema, ref) if isinstance(ref, str) and ref not in expanding else None
        if isinstance(target, dict):
            rest = {key: value for key, value in node.items() if key != "$ref"}
            return walk({**target, **rest}, expanding | {ref})
        return {key: walk(value, expanding) for key, value in node.items()}
    body = {key: value for key, value in schema.items() if key not in ("$defs", "definitions")}
    return {**walk(body, frozenset()), **{key: schema[key] for key in ("$defs", "definitions") if key in schema}}


def _pointer(document: dict, ref: str):
    """What a local JSON pointer (`#/a/b`) names in `document`, or None."""
    if not ref.startswith("#/"):
        return None
    node = document
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


@dataclass(frozen=True)
class ScriptEntry:
    """One tool as a framework offers it: its name, description, input schema and the object
    that runs the scripts (a ScriptedTool, or a toolset's discover tool)."""
    name: str
    description: str
    input_schema: dict
    runner: object

    def run(self, args: dict) -> ToolResponse:
        script = _script_of(args)
        return self.runner.execute(script) if script is not None else self._refusal()

    async def run_async(self, args: dict) -> ToolResponse:
        script = _script_of(args)
        if script is None:
            return self._refusal()
        if isinstance(self.runner, DiscoverTool):          # quick, and synchronous only
            return await asyncio.to_thread(self.runner.execute, script)
        return await self.runner.execute_async(script)

    def _refusal(self) -> ToolResponse:
        return ToolResponse("", f'{self.name}: arguments must be {{"commands": "<bash script>"}}\n', 2)


def _script_of(args) -> Optional[str]:
    """The script the model sent; None when it sent something else (not every framework
    validates the arguments against the schema)."""
    script = args.get("commands") if isinstance(args, dict) else None
    return script if isinstance(script, str) else None


def script_entries(tool) -> list[ScriptEntry]:
    """The tools a ScriptedTool (or BashTool) or a ScriptingToolSet offers: one, or with
    DiscoveryMode.WITH_DISCOVERY two (the script tool and its `<name>_discover`)."""
    if isinstance(tool, ScriptingToolSet):
        scripted, *companions = tool.tools()
        return [ScriptEntry(scripted.name, tool.system_prompt(), scripted.input_schema(), scripted)] + \
            [ScriptEntry(c.name, c.description(), c.input_schema(), c) for c in companions]
    if isinstance(tool, ScriptedTool):
        return [ScriptEntry(tool.name, tool.system_prompt(), tool.input_schema(), tool)]
    raise TypeError(f"expected a ScriptedTool, BashTool or ScriptingToolSet, not {type(tool).__name__}")


def script_entry(tool, plural: str) -> ScriptEntry:
    """The one tool `tool` offers; a toolset with discovery offers two, which `plural` gives."""
    entries = script_entries(tool)
    if len(entries) > 1:
        raise ValueError(f"this toolset offers {len(entries)} tools ({', '.join(e.name for e in entries)}): "
                         f"use {plural}(...)")
    return entries[0]
