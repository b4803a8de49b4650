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

The arguments come from a model, so they may be anything: JSON text too large or nested too
deep for Python's parser (which recurses), a list or a number instead of an object, a
`commands` that is not a string, other keys holding huge values. Each adapter reduces them to
the one argument a script tool reads before the framework or this package handles them
further (`script_arguments`), and JSON text is read with bounds on its size and nesting
(`json_arguments`); whatever is not a script is answered as a failed call with a one-line
reason, never an exception.

What the host gets beside the text is the run's record (`run_record`): its status ("completed",
or "paused" when a before_tool hook returned Pause), exit code, error kind and tool-call log
(`trace`: each call's name, argv, params, exit code, duration and status: done, failed, denied,
not started, left running), on success and on failure; for a paused run also the pending call
and the continuation. LangChain keeps it as the ToolMessage's artifact, PydanticAI as the tool
return's metadata (and a pause becomes a deferred call), the OpenAI Agents SDK hands the
ToolResponse to an `on_response` callback. `resume` continues a paused run from its record.
"""
from __future__ import annotations

import asyncio
import base64
import binascii
import importlib
import json
import re
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Union

from ..tools.call_log import logged_call, trace_entries
from ..tools.containment import valid_unicode
from ..tools.journal import ContinuationError
from ..tools.scripted_tool import ScriptedTool, ToolResponse
from ..tools.toolset import DiscoverTool, ScriptingToolSet

if TYPE_CHECKING:
    from pydantic_core import ErrorDetails     # (pydantic comes with each adapter's framework)


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


def run_record(response: ToolResponse) -> dict:
    """What a host gets beside the model's text, as JSON data: status ("completed" or "paused"),
    exit_code, error (what stopped the script, None when it ran to its end) and the tool-call
    log (`trace`); for a paused run also the `pending` call and the `continuation` (base64
    text of ToolResponse.continuation, which `resume` takes). A call's argv and params take at
    most MAX_LOGGED_CALL_CHARS characters (tools/call_log.py)."""
    record = {"status": response.status, "exit_code": response.exit_code, "error": response.error,
              "trace": trace_entries(response.trace)}
    if response.pending is not None and response.continuation is not None:
        pending = response.pending
        record["pending"] = {"name": pending.name, "kind": pending.kind, **logged_call(pending.argv, pending.params)}
        record["continuation"] = base64.b64encode(response.continuation).decode("ascii")
    return record


def resume(tool, record, decision="allow", key=None) -> ToolResponse:
    """Continue the paused run a record (`run_record`) describes, in the ScriptedTool (BashTool,
    ScriptingToolSet) `tool` offers: see ScriptEntry.resume."""
    return script_entries(tool)[0].resume(record, decision, key)


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


def _validation_problem(item: ErrorDetails) -> str:
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


MAX_ARGUMENTS_DEPTH = 32       # nesting of JSON arguments read: {"commands": "..."} has 1
# a JSON string (closed or not: the scan never backtracks) or a bracket
_STRING_OR_BRACKET = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?|[\[\]{}]', re.DOTALL)


class BadArguments(ValueError):
    """JSON arguments too large or nested too deep to read; the message says which."""


def json_arguments(text: str, max_chars: int):
    """The value of JSON arguments, None if `text` is not JSON. Read with bounds: at most
    `max_chars` characters, and MAX_ARGUMENTS_DEPTH levels of nesting, counted by a linear
    scan before json.loads (which recurses, and raised RecursionError on 200,000 levels)."""
    if len(text) > max_chars:
        raise BadArguments(f"arguments too large: more than {max_chars} characters")
    depth = 0
    for token in _STRING_OR_BRACKET.finditer(text):
        opening = text[token.start()]
        if opening in "[{":
            depth += 1
            if depth > MAX_ARGUMENTS_DEPTH:
                raise BadArguments(f"arguments nested too deeply: more than {MAX_ARGUMENTS_DEPTH} levels")
        elif opening in "]}":
            depth -= 1
    try:
        return json.loads(text)
    except ValueError:
        return None


def script_arguments(args) -> dict:
    """`args` reduced to the one argument a script tool reads: {"commands": script}, or {} when
    they hold no script (which the tool answers with its usage line). Nothing else a model
    sent (other keys, deep or huge values, a list, a number) goes further."""
    script = args.get("commands") if isinstance(args, dict) else None
    return {"commands": script} if isinstance(script, str) else {}


@dataclass(frozen=True)
class ScriptEntry:
    """One tool as a framework offers it: its name, description, input schema and the object
    that runs the scripts (a ScriptedTool, or a toolset's discover tool)."""
    name: str
    description: str
    input_schema: dict
    runner: Union[ScriptedTool, DiscoverTool]

    def run(self, args) -> ToolResponse:
        """The response to a call with `args`: the arguments, or their JSON text."""
        script = self._script(args)
        return self.runner.execute(script) if isinstance(script, str) else script

    async def run_async(self, args) -> ToolResponse:
        script = self._script(args)
        if not isinstance(script, str):
            return script
        if isinstance(self.runner, DiscoverTool):          # quick, and synchronous only
            return await asyncio.to_thread(self.runner.execute, script)
        return await self.runner.execute_async(script)

    def resume(self, record, decision="allow", key=None) -> ToolResponse:
        """Continue the paused run a record (`run_record`) describes: the paused call allowed
        (`"allow"`), refused (`Deny(reason)`) or made with new parameters (a dict), as
        `ScriptedTool.resume`. A record without a continuation, or with one that is damaged,
        forged or another tool's, is answered as a failed run (status 2, one line saying why),
        nothing run."""
        continuation = record.get("continuation") if isinstance(record, dict) else None
        try:
            if not isinstance(continuation, str):
                raise ContinuationError("not a paused run's record (no continuation)")
            return self.scripted().resume(base64.b64decode(continuation, validate=True), decision, key)
        except binascii.Error:
            return self.refusal("cannot resume: the continuation is not base64 text")
        except ContinuationError as e:
            return self.refusal(f"cannot resume: {e}")

    def scripted(self) -> ScriptedTool:
        """The ScriptedTool that runs the scripts (a discover tool's too)."""
        return self.runner.scripted if isinstance(self.runner, DiscoverTool) else self.runner

    def _script(self, args) -> Union[str, ToolResponse]:
        """The script the model sent, or the refusal that answers anything else (not every
        framework validates the arguments against the schema)."""
        if isinstance(args, str):
            try:
                args = json_arguments(args, self.max_arguments_chars())
            except BadArguments as e:
                return self.refusal(str(e))
        script = script_arguments(args).get("commands")
        if script is None:
            return self.refusal('arguments must be {"commands": "<bash script>"}')
        return script

    def max_arguments_chars(self) -> int:
        """The most characters JSON arguments may take: a script at max_script_bytes with every
        byte escaped (\\u00XX), and a kilobyte more."""
        return 6 * self.scripted().limits.max_script_bytes + 1024

    def refusal(self, problem: str) -> ToolResponse:
        return ToolResponse("", f"{self.name}: {problem}\n", 2)


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
