"""Tool definitions: ToolDef, ToolArgs, and the @tool decorator that derives a ToolDef from a
Python function's signature, type hints and docstring."""
from __future__ import annotations

import inspect
import re
import typing
from dataclasses import dataclass, field
from typing import Any, Callable, Optional


@dataclass
class ToolDef:
    """A tool: its command name, description, JSON Schema of its flags, tags and category."""
    name: str
    description: str = ""
    input_schema: dict = field(default_factory=dict)
    tags: list = field(default_factory=list)
    category: Optional[str] = None

    @classmethod
    def new(cls, name: str, description: str = "") -> "ToolDef":
        """The seed's constructor, for chaining: ToolDef.new("get_user", "...").with_schema({...})."""
        return cls(name, description)

    def with_schema(self, schema: dict) -> "ToolDef":
        self.input_schema = schema
        return self

    def with_tags(self, tags) -> "ToolDef":
        self.tags = list(tags)
        return self

    def with_category(self, category: str) -> "ToolDef":
        self.category = category
        return self

    @staticmethod
    def from_executable(path: str, stub: bool = False) -> "ToolDef":
        """Ask a self-describing executable (`path --describe`) for its definition."""
        from .executables import describe
        return describe(path, stub)


class ToolArgs:
    """What a callback receives: the parsed flags and the pipeline input (None when nothing
    was piped in). Standard input is read when the callback first looks at `stdin`, as a
    program reads it: a tool that ignores it leaves it to the next command (in
    `... | while read x; do tool; done`, the loop keeps its lines)."""
    __slots__ = ("params", "_stdin", "_source")

    def __init__(self, params: dict, stdin: Optional[str] = None, source: Optional[Callable] = None):
        self.params = params
        self._stdin = stdin
        self._source = source

    @property
    def stdin(self) -> Optional[str]:
        if self._source is not None:
            text = self._source()
            self._stdin = text if text else None
            self._source = None
        return self._stdin

    def param_str(self, name: str) -> Optional[str]:
        v = self.params.get(name)
        return None if v is None else (v if isinstance(v, str) else str(v))

    def param_int(self, name: str) -> Optional[int]:
        v = self.params.get(name)
        if isinstance(v, bool) or v is None:
            return None
        if isinstance(v, int):
            return v
        if isinstance(v, float) and v.is_integer():
            return int(v)
        try:
            return int(str(v))
        except ValueError:
            return None

    def param_float(self, name: str) -> Optional[float]:
        v = self.params.get(name)
        if isinstance(v, bool) or v is None:
            return None
        try:
            return float(v)
        except (TypeError, ValueError):
            return None

    param_i64 = param_int            # the seed's names
    param_f64 = param_float

    def param_bool(self, name: str) -> Optional[bool]:
        v = self.params.get(name)
        if isinstance(v, bool):
            return v
        if isinstance(v, str) and v.lower() in ("true", "false"):
            return v.lower() == "true"
        return None

    def __repr__(self):
        return f"ToolArgs(params={self.params!r}, stdin={self.stdin!r})"


# ---------------------------------------------------------------- @tool

_TYPES = {int: "integer", float: "number", bool: "boolean", str: "string", dict: "object",
          list: "array"}


def schema_for_type(annotation) -> dict:
    """JSON Schema for a type hint: int float bool str, Optional[...], Literal[...] → enum,
    list[...] → array of items, dict → object."""
    if annotation is inspect.Parameter.empty or annotation is Any:
        return {}
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Union or (origin is not None and str(origin) == "<class 'types.UnionType'>"):
        rest = [a for a in args if a is not type(None)]
        return schema_for_type(rest[0]) if len(rest) == 1 else {"anyOf": [schema_for_type(a) for a in rest]}
    if origin is typing.Literal:
        values = list(args)
        schema: dict[str, Any] = {"enum": values}
        kinds = {_TYPES.get(type(v)) for v in values}
        if len(kinds) == 1 and None not in kinds:
            schema = {"type": kinds.pop(), "enum": values}
        return schema
    if origin in (list, typing.List, tuple, set):
        array: dict[str, Any] = {"type": "array"}
        if args:
            array["items"] = schema_for_type(args[0])
        return array
    if origin in (dict, typing.Dict):
        return {"type": "object"}
    if annotation in _TYPES:
        return {"type": _TYPES[annotation]}
    return {}


def parse_docstring(doc: str) -> tuple[str, dict]:
    """(summary, {param: description}) from Google-, NumPy- or Sphinx-style docstrings."""
    if not doc:
        return "", {}
    doc = inspect.cleandoc(doc)
    paragraphs = doc.split("\n\n")
    summary = " ".join(paragraphs[0].split())
    params: dict = {}
    for m in re.finditer(r"^\s*:param\s+(?:\w+\s+)?(\w+):\s*(.+)$", doc, re.M):
        params[m.group(1)] = m.group(2).strip()
    section = re.search(r"^(Args|Arguments|Parameters|Params):?\s*\n(?:-+\n)?(.*?)(?:\n\s*\n(?=\S)|\Z)", doc,
                        re.M | re.S)
    if section:
        current = None
        for line in section.group(2).splitlines():
            row = re.match(r"\s*(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$", line)
            if row and (not line.startswith("        ") or current is None):
                current = row.group(1)
                params[current] = row.group(2).strip()
            elif current and line.strip():
                params[current] = (params[current] + " " + line.strip()).strip()
    if summary.startswith(("Args", "Parameters", ":param")):
        summary = ""
    return summary, params


def tool_def_from_function(fn: Callable, name: Optional[str] = None, description: Optional[str] = None,
                           tags=(), category: Optional[str] = None) -> ToolDef:
    sig = inspect.signature(fn)
    try:
        hints = typing.get_type_hints(fn)
    except Exception:
        hints = {}
    summary, param_docs = parse_docstring(fn.__doc__ or "")
    properties, required = {}, []
    for pname, param in sig.parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        schema = dict(schema_for_type(hints.get(pname, param.annotation)))
        if pname in param_docs:
            schema["description"] = param_docs[pname]
        if param.default is inspect.Parameter.empty:
            required.append(pname)
        elif param.default is not None:
            schema["default"] = param.default
        properties[pname] = schema
    input_schema = {"type": "object", "properties": properties}
    if required:
        input_schema["required"] = required
    return ToolDef(name or fn.__name__.replace("_", "_"), description or summary, input_schema,
                   list(tags), category)


def callback_from_function(fn: Callable, tool_def: ToolDef) -> Callable:
    """Adapt `def f(a: int, b: str = "x")` (sync or async) to `(ToolArgs) -> result`. A
    parameter named `stdin` receives the pipeline input."""
    params = [p for p in inspect.signature(fn).parameters.values()
              if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    wants_stdin = any(p.name == "stdin" for p in params)
    names = [p.name for p in params if p.name != "stdin"]

    def kwargs_of(args: ToolArgs) -> dict:
        kw = {n: args.params[n] for n in names if n in args.params}
        if wants_stdin:
            kw["stdin"] = args.stdin
        return kw

    if is_async_callable(fn):
        async def async_adapter(args: ToolArgs):
            return await fn(**kwargs_of(args))
        return async_adapter

    def adapter(args: ToolArgs):
        return fn(**kwargs_of(args))
    return adapter


def is_async_callable(fn) -> bool:
    """An `async def` function, a partial of one, or an object whose `__call__` is one."""
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(getattr(fn, "__call__", None))  # noqa: B004 (its own __call__, not callable())


class DecoratedTool:
    """What @tool returns: still callable as the original function, carrying its ToolDef."""

    def __init__(self, fn: Callable, tool_def: ToolDef):
        self.fn = fn
        self.tool_def = tool_def
        self.callback = callback_from_function(fn, tool_def)
        self.__wrapped__ = fn
        self.__doc__ = fn.__doc__
        self.__name__ = fn.__name__
        self.is_async = is_async_callable(fn)

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)

    def __repr__(self):
        return f"<tool {self.tool_def.name}: {self.tool_def.description}>"


REGISTRY: list = []     # every @tool-decorated function, for front-ends that collect them


def tool(fn: Optional[Callable] = None, *, name: Optional[str] = None,
         description: Optional[str] = None, tags=(), category: Optional[str] = None,
         register: bool = True):
    """Decorator: derive a tool from a function. `@tool` or `@tool(name=..., tags=[...])`."""
    def wrap(f):
        decorated = DecoratedTool(f, tool_def_from_function(f, name, description, tags, category))
        if register:
            REGISTRY[:] = [t for t in REGISTRY if t.tool_def.name != decorated.tool_def.name]
            REGISTRY.append(decorated)
        return decorated
    return wrap(fn) if fn is not None else wrap
