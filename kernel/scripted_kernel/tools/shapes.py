"""What a tool returns, for the model and for the host: a result schema as one compact line, a
minimal instance of it (the answer of `TOOL --dry-run`), and a result checked against it.

The compact line is TypeScript-like, the notation models read best for JSON:
`{id: integer, name: string, tier: "gold"|"silver", tags?: [string]}` (`?` marks a key that
may be absent), cut at a character budget with `…` (`help TOOL` shows the whole schema).
"""
from __future__ import annotations

import json
from typing import Any, Optional

SHAPE_BUDGET = 240          # characters of a result's shape in the system prompt
_MAX_DEPTH = 12


def shape_text(schema: Optional[dict], budget: int = SHAPE_BUDGET) -> str:
    """`schema` as one compact line within `budget` characters."""
    if not schema:
        return "any"
    text = _shape(schema, schema, 0)
    return text if len(text) <= budget else text[:budget - 1].rstrip(", ") + "…"


def _shape(schema: Any, root: dict, depth: int) -> str:
    if not isinstance(schema, dict) or depth > _MAX_DEPTH:
        return "any"
    schema = _resolve(schema, root)
    if "const" in schema:
        return json.dumps(schema["const"])
    if isinstance(schema.get("enum"), list):
        return "|".join(json.dumps(v) for v in schema["enum"])
    branches = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(branches, list):
        return "|".join(_shape(b, root, depth + 1) for b in branches)
    kinds = schema.get("type")
    if isinstance(kinds, list):
        return "|".join("null" if k == "null" else _shape({**schema, "type": k}, root, depth + 1) for k in kinds)
    if kinds == "object" or "properties" in schema:
        return _object_shape(schema, root, depth)
    if kinds == "array":
        items = schema.get("items")
        return f"[{_shape(items, root, depth + 1) if items else 'any'}]"
    return kinds if isinstance(kinds, str) else "any"


def _object_shape(schema: dict, root: dict, depth: int) -> str:
    props = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    parts = [f"{name}{'' if name in required else '?'}: {_shape(sub, root, depth + 1)}"
             for name, sub in props.items()]
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):
        parts.append(f"[key: string]: {_shape(extra, root, depth + 1)}")
    if not parts:
        return "object"
    return "{" + ", ".join(parts) + "}"


def _resolve(schema: dict, root: dict) -> dict:
    """A local `$ref` (`#/$defs/Name`, as pydantic writes them) replaced by what it names."""
    for _ in range(_MAX_DEPTH):
        ref = schema.get("$ref")
        if not isinstance(ref, str) or not ref.startswith("#/"):
            return schema
        target: Any = root
        for part in ref[2:].split("/"):
            target = target.get(part) if isinstance(target, dict) else None
        if not isinstance(target, dict):
            return {}
        schema = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
    return schema


# ---------------------------------------------------------------- minimal instances

def minimal_instance(schema: Optional[dict], root: Optional[dict] = None, depth: int = 0):
    """A small value that validates against `schema`: its first example or its default where
    it gives one, else built from its type (every property of an object, so that a script's
    jq paths find a value of the right type)."""
    if not isinstance(schema, dict) or depth > _MAX_DEPTH:
        return None
    root = root if root is not None else schema
    schema = _resolve(schema, root)
    for key in ("const", "default"):
        if key in schema:
            return schema[key]
    examples = schema.get("examples")
    if isinstance(examples, list) and examples:
        return examples[0]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    branches = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(branches, list) and branches:
        return minimal_instance(branches[0], root, depth + 1)
    kinds = schema.get("type")
    kind = next((k for k in kinds if k != "null"), "null") if isinstance(kinds, list) else kinds
    if kind == "object" or (kind is None and "properties" in schema):
        return {name: minimal_instance(sub, root, depth + 1) for name, sub in (schema.get("properties") or {}).items()}
    if kind == "array":
        count = schema.get("minItems", 0) if isinstance(schema.get("minItems"), int) else 0
        return [minimal_instance(schema.get("items"), root, depth + 1) for _ in range(min(count, 16))]
    if kind in ("integer", "number"):
        low = schema.get("minimum", schema.get("exclusiveMinimum"))
        value = low if isinstance(low, (int, float)) and not isinstance(low, bool) else 0
        if "exclusiveMinimum" in schema and "minimum" not in schema:
            value += 1
        return int(value) if kind == "integer" else value
    if kind == "boolean":
        return False
    if kind == "string":
        length = schema.get("minLength", 1) if isinstance(schema.get("minLength"), int) else 1
        return "x" * max(1, min(length, 64))
    return None


# ---------------------------------------------------------------- checking a result

def result_mismatch(value, schema: dict) -> Optional[str]:
    """Where and how `value` differs from `schema` (`$.users[0].id: 'x' is not of type
    'integer'`), or None when it matches."""
    import jsonschema       # imported when a tool first checks a result
    cls = jsonschema.validators.validator_for(schema)
    error = jsonschema.exceptions.best_match(cls(schema).iter_errors(value))
    if error is None:
        return None
    return f"{json_path(error.absolute_path)}: {error.message}"


def json_path(path) -> str:
    text = "$"
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else f".{part}" if str(part).isidentifier() \
            else f"[{json.dumps(part)}]"
    return text
