"""Tool definitions: ToolDef, ToolArgs, and the @tool decorator that derives a ToolDef from a
Python function's signature, type hints and docstring."""
from __future__ import annotations

import inspect
import typing
from dataclasses import dataclass, field
from typing import Callable, Optional

from .docstrings import DocInfo, choices_in, parse_docstring
from .results import NotJson, json_value, result_text
from .schemas import converter_for, output_schema_for, schema_for_type


@dataclass
class ToolDef:
    """A tool: its command name, description, JSON Schema of its flags, tags and category.
    `output_schema`: the JSON Schema of what it prints, where known (None: not known).
    `shadow`: the tool may take the name of a shell builtin or command (see ScriptedTool)."""
    name: str
    description: str = ""
    input_schema: dict = field(default_factory=dict)
    tags: list = field(default_factory=list)
    category: Optional[str] = None
    shadow: bool = False
    output_schema: Optional[dict] = None

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

def tool_def_from_function(fn: Callable, name: Optional[str] = None, description: Optional[str] = None,
                           tags=(), category: Optional[str] = None, shadow: bool = False) -> ToolDef:
    """The ToolDef a function's signature, type hints and docstring give: a flag per
    parameter (`self`, `*args`, `**kwargs` and `stdin` aside), typed by its hint, required
    unless it has a default, described and given choices by its docstring."""
    doc = parse_docstring(inspect.getdoc(fn))
    properties, required = {}, []
    for param, hint in _flag_parameters(fn):
        schema = dict(schema_for_type(hint))
        text = doc.params.get(param.name)
        if text:
            schema["description"] = text
            if "enum" not in schema and schema.get("type", "string") == "string":
                choices = choices_in(text)
                if choices is not None and all(isinstance(c, str) for c in choices):
                    schema.update(type="string", enum=choices)
        if param.default is inspect.Parameter.empty:
            required.append(param.name)
        else:
            default = _json_default(param.default)
            if default is not None:
                schema["default"] = default
        properties[param.name] = schema
    input_schema: dict = {"type": "object", "properties": properties}
    if required:
        input_schema["required"] = required
    return ToolDef(name or fn.__name__, description if description is not None else doc.description,
                   input_schema, list(tags), category, shadow=shadow, output_schema=_result_schema(fn, doc))


def _result_schema(fn: Callable, doc: DocInfo) -> Optional[dict]:
    """The output schema the return annotation gives, described by the docstring's Returns."""
    try:
        hint = typing.get_type_hints(fn, include_extras=True).get("return", inspect.Signature.empty)
    except Exception:
        hint = inspect.Signature.empty
    schema = output_schema_for(hint)
    if schema is not None and doc.returns and "description" not in schema:
        schema = {**schema, "description": doc.returns}
    return schema


def _flag_parameters(fn: Callable) -> list:
    """(parameter, type hint) for each parameter that is a flag."""
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception:           # an annotation naming what cannot be imported: the raw ones
        hints = {}
    return [(p, hints.get(p.name, p.annotation)) for p in inspect.signature(fn).parameters.values()
            if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and p.name != "stdin"]


def _json_default(value):
    """A parameter's default as the schema shows it; None when it has no JSON form."""
    try:
        return json_value(value)
    except NotJson:
        return None


def callback_from_function(fn: Callable, tool_def: ToolDef, print_none: bool = True) -> Callable:
    """Adapt `def f(a: int, b: str = "x")` (sync or async) to `(ToolArgs) -> text`: each flag
    turned back into its hint's type (an Enum member, a model, a tuple), a parameter named
    `stdin` given the pipeline input, the result printed as results.result_text prints it
    (None as `null`, or nothing when print_none is False)."""
    params = [p for p, _ in _flag_parameters(fn)]
    converters = {p.name: c for p, hint in _flag_parameters(fn) if (c := converter_for(hint)) is not None}
    wants_stdin = "stdin" in inspect.signature(fn).parameters
    none_text = "null\n" if print_none else ""

    def kwargs_of(args: ToolArgs) -> dict:
        kw = {}
        for p in params:
            if p.name in args.params:
                value = args.params[p.name]
                convert = converters.get(p.name)
                kw[p.name] = convert(value) if convert is not None and value is not None else value
        if wants_stdin:
            kw["stdin"] = args.stdin
        return kw

    if is_async_callable(fn):
        async def async_adapter(args: ToolArgs):
            return result_text(await fn(**kwargs_of(args)), none_text)
        return async_adapter

    def adapter(args: ToolArgs):
        return result_text(fn(**kwargs_of(args)), none_text)
    return adapter


def is_async_callable(fn) -> bool:
    """An `async def` function, a partial of one, or an object whose `__call__` is one."""
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(getattr(fn, "__call__", None))  # noqa: B004 (its own __call__, not callable())


class DecoratedTool:
    """What @tool returns: still callable as the original function, carrying its ToolDef."""

    def __init__(self, fn: Callable, tool_def: ToolDef, print_none: bool = True, revert: Optional[Callable] = None):
        self.fn = fn
        self.tool_def = tool_def
        self.print_none = print_none
        self.revert = revert
        self.callback = callback_from_function(fn, tool_def, print_none)
        self.__wrapped__ = fn
        self.__doc__ = fn.__doc__
        self.__name__ = getattr(fn, "__name__", tool_def.name)
        self.is_async = is_async_callable(fn)

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)

    def __repr__(self):
        return f"<tool {self.tool_def.name}: {self.tool_def.description}>"


REGISTRY: list = []     # every @tool-decorated function, for front-ends that collect them


def tool(fn: Optional[Callable] = None, *, name: Optional[str] = None,
         description: Optional[str] = None, tags=(), category: Optional[str] = None,
         register: bool = True, shadow: bool = False, print_none: bool = True, revert: Optional[Callable] = None):
    """Decorator: derive a tool from a function (or a bound method). `@tool` or
    `@tool(name=..., tags=[...])`. `shadow=True` lets the tool take the name of a shell
    builtin or command (a call of that name then calls the tool; `command NAME` and `builtin
    NAME` still reach the shell's own). `print_none=False`: a None result prints nothing
    (by default it prints `null`, as JSON). `revert(call, output)` undoes one of its calls
    (ScriptedTool.rollback)."""
    def wrap(f):
        tool_def = tool_def_from_function(f, name, description, tags, category, shadow)
        decorated = DecoratedTool(f, tool_def, print_none, revert)
        if register:
            REGISTRY[:] = [t for t in REGISTRY if t.tool_def.name != decorated.tool_def.name]
            REGISTRY.append(decorated)
        return decorated
    return wrap(fn) if fn is not None else wrap
