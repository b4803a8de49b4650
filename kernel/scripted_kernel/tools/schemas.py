"""Python type hints as JSON Schema, and flag values back as the Python values the hints name.

`schema_for_type` covers what signatures of real service classes hold: the scalars, `Optional`
(null admitted), unions, `Literal` and `Enum` (choices), lists, tuples and sets, `dict[str, V]`
(values typed), `TypedDict`, dataclasses and pydantic models (objects with their fields), and
nesting of all of these. A hint it cannot express gives `{}` (any value), never a wrong schema.
`converter_for` turns what validation let through back into the hint's type where JSON has no
such type: an Enum member, a dataclass or pydantic model, a tuple or set.
"""
from __future__ import annotations

import dataclasses
import enum
import inspect
import types
import typing
from typing import Any, Callable, Optional

_SCALARS = {int: "integer", float: "number", bool: "boolean", str: "string", type(None): "null"}
_MAX_DEPTH = 32             # nesting of hints (a recursive TypedDict stops here as "any value")


def schema_for_type(annotation, _depth: int = 0) -> dict:
    if annotation is inspect.Parameter.empty or annotation is Any or _depth > _MAX_DEPTH:
        return {}
    if isinstance(annotation, str) or isinstance(annotation, typing.ForwardRef):
        return {}                               # an unresolved forward reference
    depth = _depth + 1
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        return schema_for_type(args[0], depth)
    if _is_union(origin):
        return _union(args, depth)
    if origin is typing.Literal:
        return _choices(list(args))
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return _choices([member.value for member in annotation])
    if annotation in _SCALARS:
        return {"type": _SCALARS[annotation]}
    if origin in (list, tuple, set, frozenset, typing.Sequence, typing.Iterable) or \
            annotation in (list, tuple, set, frozenset):
        return _array(annotation, origin, args, depth)
    if origin in (dict, typing.Mapping) or annotation is dict:
        schema: dict = {"type": "object"}
        if len(args) == 2 and args[1] is not Any:
            values = schema_for_type(args[1], depth)
            if values:
                schema["additionalProperties"] = values
        return schema
    if isinstance(annotation, type):
        return _class_schema(annotation, depth)
    return {}


def _is_union(origin) -> bool:
    return origin is typing.Union or origin is getattr(types, "UnionType", ())


def _union(args: tuple, depth: int) -> dict:
    """Optional[X] is X admitting null; a union of scalars is a type list; others anyOf."""
    branches = [schema_for_type(a, depth) for a in args]
    if any(b == {} for b in branches):
        return {}
    plain = [b for b in branches if set(b) == {"type"} and isinstance(b["type"], str)]
    if len(plain) == len(branches):
        kinds = list(dict.fromkeys(b["type"] for b in plain))
        return {"type": kinds[0] if len(kinds) == 1 else kinds}
    if {"type": "null"} in branches and len(branches) == 2:        # Optional[X]: X, or null
        other = next(b for b in branches if b != {"type": "null"})
        if isinstance(other.get("type"), str):
            nullable = {**other, "type": [other["type"], "null"]}
            if "enum" in other:
                nullable["enum"] = other["enum"] + [None]
            return nullable
    return {"anyOf": branches}


def _choices(values: list) -> dict:
    kinds = {_SCALARS.get(type(v)) for v in values}
    if len(kinds) == 1 and None not in kinds:
        return {"type": kinds.pop(), "enum": values}
    return {"enum": values}


def _array(annotation, origin, args: tuple, depth: int) -> dict:
    schema: dict = {"type": "array"}
    if origin is tuple and args and args[-1] is not Ellipsis:
        schema["prefixItems"] = [schema_for_type(a, depth) for a in args]
        schema["minItems"] = schema["maxItems"] = len(args)
        return schema
    if args:
        items = schema_for_type(args[0], depth)
        if items:
            schema["items"] = items
    if origin in (set, frozenset) or annotation in (set, frozenset):
        schema["uniqueItems"] = True
    return schema


def _class_schema(cls: type, depth: int) -> dict:
    """A TypedDict, a dataclass or a pydantic model as an object with its fields."""
    if _is_typeddict(cls):
        hints = _hints(cls)
        required = [n for n, h in hints.items() if _required_key(cls, n, h)]
        return _object({n: schema_for_type(_strip_required(h), depth) for n, h in hints.items()}, required)
    if dataclasses.is_dataclass(cls):
        hints = _hints(cls)
        fields = [f for f in dataclasses.fields(cls) if f.init]
        required = [f.name for f in fields if f.default is dataclasses.MISSING
                    and f.default_factory is dataclasses.MISSING]
        return _object({f.name: schema_for_type(hints.get(f.name, Any), depth) for f in fields}, required)
    schema_of = getattr(cls, "model_json_schema", None)       # pydantic v2
    if callable(schema_of):
        try:
            schema = schema_of()
        except Exception:           # a model pydantic cannot describe: no schema rather than a wrong one
            return {}
        return schema if isinstance(schema, dict) else {}
    return {}


def _object(properties: dict, required: list) -> dict:
    schema: dict = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


def _is_typeddict(cls) -> bool:
    return isinstance(cls, type) and issubclass(cls, dict) and hasattr(cls, "__total__")


def _required_key(cls, name: str, hint) -> bool:
    """Whether a TypedDict's key must be present: Required/NotRequired say so (the class's own
    __required_keys__ cannot see them under `from __future__ import annotations`), else the
    class's totality."""
    marker = getattr(typing.get_origin(hint), "_name", None)
    if marker in ("NotRequired", "Required"):
        return marker == "Required"
    return name in getattr(cls, "__required_keys__", (name,))


def _strip_required(hint):
    """NotRequired[X] / Required[X] as X."""
    origin = typing.get_origin(hint)
    if origin is not None and getattr(origin, "_name", None) in ("NotRequired", "Required"):
        return typing.get_args(hint)[0]
    return hint


def _hints(cls) -> dict:
    try:
        return typing.get_type_hints(cls, include_extras=True)
    except Exception:               # an unresolvable annotation: the raw ones, strings stay "any"
        return dict(getattr(cls, "__annotations__", {}))


def output_schema_for(annotation) -> Optional[dict]:
    """The result schema a return annotation gives, or None where it says nothing a model can
    use (no annotation, Any, None, str: text as it is, or a bare dict or list)."""
    if annotation in (inspect.Signature.empty, Any, None, type(None), str):
        return None
    schema = schema_for_type(annotation)
    if schema in ({}, {"type": "object"}, {"type": "array"}, {"type": "string"}, {"type": "null"}):
        return None
    return schema


# ---------------------------------------------------------------- values back to the hint's type

def converter_for(annotation, _depth: int = 0) -> Optional[Callable[[Any], Any]]:
    """A function turning a validated JSON value into what the hint names, where the two
    differ (an Enum member, a dataclass or pydantic model, a tuple, a set, and these inside
    lists, dicts and Optional); None where the JSON value is already right."""
    if _depth > _MAX_DEPTH or annotation is inspect.Parameter.empty or annotation is Any:
        return None
    depth = _depth + 1
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        return converter_for(args[0], depth)
    if _is_union(origin):
        return _union_converter(args, depth)
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return annotation
    if origin in (list, tuple, set, frozenset) or annotation in (tuple, set, frozenset):
        return _collection_converter(origin or annotation, args, depth)
    if origin in (dict, typing.Mapping) and len(args) == 2:
        inner = converter_for(args[1], depth)
        return None if inner is None else (lambda value: {k: inner(v) for k, v in value.items()})
    if isinstance(annotation, type) and not _is_typeddict(annotation):
        if dataclasses.is_dataclass(annotation):
            return _dataclass_converter(annotation, depth)
        validate = getattr(annotation, "model_validate", None)
        if callable(validate):
            return validate
    return None


def _collection_converter(kind, args: tuple, depth: int) -> Optional[Callable]:
    make = {tuple: tuple, set: set, frozenset: frozenset}.get(kind, list)
    if kind is tuple and args and args[-1] is not Ellipsis:        # a fixed tuple: a hint each
        inners = [converter_for(a, depth) for a in args]
        if not any(inners):
            return tuple
        return lambda value: tuple(f(v) if f else v for f, v in zip(inners, value))
    inner = converter_for(args[0], depth) if args else None
    if inner is None:
        return None if make is list else make
    return lambda value: make(inner(v) for v in value)


def _union_converter(args: tuple, depth: int) -> Optional[Callable]:
    """Optional[X]: X's converter past None; other unions are left as JSON gave them."""
    rest = [a for a in args if a is not type(None)]
    if len(rest) != 1:
        return None
    inner = converter_for(rest[0], depth)
    return None if inner is None else (lambda value: None if value is None else inner(value))


def _dataclass_converter(cls, depth: int) -> Callable:
    hints = _hints(cls)
    inner = {f.name: converter_for(hints.get(f.name, Any), depth) for f in dataclasses.fields(cls) if f.init}

    def convert(value):
        if not isinstance(value, dict):
            return value
        made = {}
        for key, item in value.items():
            convert_item = inner.get(key)
            made[key] = convert_item(item) if convert_item is not None else item
        return cls(**made)
    return convert
