"""A callback's return value as the text a script reads: JSON the way a Python user expects it.

A str is printed as it is and bytes as the bytes they are; everything else is printed as one
JSON document and a newline: numbers that Python knows as numbers (Decimal, Fraction, NumPy
scalars, anything with `__index__` or `__float__`) as JSON numbers, sets and tuples as arrays,
Enum members as their values, dataclasses and pydantic models as objects, dates and times in
ISO 8601, UUIDs as strings. A value with no JSON form is refused with a message for the tool's
author, never printed as a repr that a model would misread.
"""
from __future__ import annotations

import dataclasses
import enum
import json
import math
import sys
from typing import Any

from ..shell.api import text_from_host

MAX_DEPTH = 500             # nesting of a result (deeper is refused: a cycle, or a bomb)


class NotJson(TypeError):
    """A return value with no JSON form; the message names what, and where inside the value."""

    def __init__(self, where: str, what: str):
        inside = f" (at {where})" if where != "result" else ""
        super().__init__(f"cannot print the result: {what}{inside}")


def result_text(value, none_text: str = "") -> str:
    """A callback's return value as command output (NotJson when it has none). `none_text`:
    what None prints (a function tool prints `null`; a raw callback's None prints nothing)."""
    if value is None:
        return none_text
    if isinstance(value, bytes):
        return value.decode("utf-8", "surrogateescape")
    if isinstance(value, str):
        return text_from_host(value)
    try:        # json's C encoder, handed each value it does not know to convert (the common case)
        text = json.dumps(value, ensure_ascii=False, allow_nan=False, default=_convert)
    except (TypeError, ValueError, RecursionError):
        # what is wrong, and where, told by walking the value (raises NotJson)
        text = json.dumps(json_value(value), ensure_ascii=False, allow_nan=False)
    return text_from_host(text + "\n")


def _convert(value):
    """json.dumps' `default`: a value it cannot write, as one it can (TypeError if none)."""
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (set, frozenset)):
        items = list(value)
        try:
            return sorted(items)
        except TypeError:
            return items
    converted = _other(value, 0, "result")
    if converted is value:
        raise TypeError("no JSON form")
    return converted


def json_value(value: Any, _depth: int = 0, _where: str = "result") -> Any:
    """`value` as plain JSON data (dict, list, str, int, float, bool, None)."""
    if _depth > MAX_DEPTH:
        raise NotJson("result", f"nested more than {MAX_DEPTH} levels deep (a cycle?)")
    if value is None or isinstance(value, (str, bool, int)) and not isinstance(value, enum.Enum):
        return value
    if isinstance(value, float):
        return _finite(value, _where)
    depth = _depth + 1
    if isinstance(value, enum.Enum):
        return json_value(value.value, depth, _where)
    if isinstance(value, dict):
        return {_key(k, _where): json_value(v, depth, f"{_where}[{k!r}]") for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_value(v, depth, f"{_where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, (set, frozenset)):
        items = [json_value(v, depth, f"{_where} item") for v in value]
        try:
            return sorted(items)            # one order for one set, run after run
        except TypeError:
            return items
    return _other(value, depth, _where)


def _other(value, depth: int, where: str):
    decimal = sys.modules.get("decimal")        # not imported: the value cannot be a Decimal
    if decimal is not None and isinstance(value, decimal.Decimal):
        if not value.is_finite():
            raise NotJson(where, f"{value} is not a JSON number")
        return int(value) if value == value.to_integral_value() else float(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: json_value(getattr(value, f.name), depth, f"{where}.{f.name}")
                for f in dataclasses.fields(value)}
    dump = getattr(value, "model_dump", None)               # pydantic v2
    if callable(dump) and not isinstance(value, type):
        return json_value(dump(mode="json"), depth, where)
    dt = sys.modules.get("datetime")            # (as Decimal)
    if dt is not None and isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat()
    uuid = sys.modules.get("uuid")              # not imported: the value cannot be a UUID
    if uuid is not None and isinstance(value, uuid.UUID):
        return str(value)
    tolist = getattr(value, "tolist", None)                 # NumPy arrays and scalars
    if callable(tolist) and not isinstance(value, type):
        return json_value(tolist(), depth, where)
    if hasattr(value, "__index__"):
        return value.__index__()
    if hasattr(value, "__float__"):                         # Fraction, mpmath, other numbers
        number = float(value)
        if hasattr(value, "__int__") and number.is_integer() and int(value) == value:
            return int(value)
        return _finite(number, where)
    if isinstance(value, (bytes, bytearray)):
        raise NotJson(where, "bytes inside a result have no JSON form (return them alone, or decode them)")
    raise NotJson(where, f"a value of type {type(value).__name__} has no JSON form; return a str, a number, "
                         f"a bool, None, a list, a dict, a dataclass or a pydantic model")


def _finite(number: float, where: str) -> float:
    if not math.isfinite(number):
        raise NotJson(where, f"{number} is not a JSON number")
    return number


def _key(key, where: str) -> str:
    """A dict key as JSON object keys are: text (numbers, booleans and None as json.dumps
    writes them)."""
    if isinstance(key, str):
        return key
    if isinstance(key, enum.Enum):
        key = key.value
    if key is None or isinstance(key, (bool, int, float)):
        return json.dumps(key)
    raise NotJson(where, f"a key of type {type(key).__name__} has no JSON form")
