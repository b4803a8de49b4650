"""Command-line flags → tool parameters: coercion by JSON Schema type, then validation.

`--key value`, `--key=value`, `--flag` (booleans), `--key.sub value` (nested objects),
repeated flags for arrays, JSON text for arrays and objects, `a,b,c` arrays, `k=v` objects,
`--json '{...}'` for everything at once, `--` to end flags. Errors name the tool, the flag
path and the reason; the caller turns them into status 2.
"""
from __future__ import annotations

import difflib
import json
import re
from typing import Optional

_SIMPLE_KEYWORDS = {"type", "properties", "required", "description", "default", "items", "enum",
                    "additionalProperties", "title", "examples", "$schema"}


_INTEGER = re.compile(r"[+-]?[0-9]+")
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_BOOLEAN_WORDS = {"true": True, "1": True, "yes": True, "on": True,
                  "false": False, "0": False, "no": False, "off": False}


class FlagError(Exception):
    pass


def _type_of(schema: dict) -> Optional[str]:
    t = schema.get("type")
    if isinstance(t, list):
        t = next((x for x in t if x != "null"), None)
    if t is None and "enum" in schema and schema["enum"]:
        v = schema["enum"][0]
        t = "boolean" if isinstance(v, bool) else "integer" if isinstance(v, int) else \
            "number" if isinstance(v, float) else "string" if isinstance(v, str) else None
    return t


def type_label(schema: dict) -> str:
    t = _type_of(schema)
    if t == "array" and isinstance(schema.get("items"), dict) and _type_of(schema["items"]):
        return f"array of {_type_of(schema['items'])}"
    return t or "string"


def coerce(value, schema: dict, flag: str):
    """A flag's text (or a value from JSON) as the schema's type."""
    t = _type_of(schema)
    if not isinstance(value, str):
        return value
    if t == "integer":          # decimal digits only: not 0x10, 1.0, 1e3 or 1_000
        if not _INTEGER.fullmatch(value):
            raise FlagError(f"{flag}: expected integer, got {value!r}")
        return int(value)
    if t == "number":
        if _INTEGER.fullmatch(value):
            return int(value)
        if not _DECIMAL.fullmatch(value):           # nor inf, nan or 1_0
            raise FlagError(f"{flag}: expected number, got {value!r}")
        return float(value)
    if t == "boolean":
        low = value.lower()
        if low in _BOOLEAN_WORDS:
            return _BOOLEAN_WORDS[low]
        raise FlagError(f"{flag}: expected boolean (true or false), got {value!r}")
    if t == "array":
        items = schema.get("items")
        if not isinstance(items, dict):
            items = {}
        text = value.strip()
        if text.startswith("["):
            try:
                parsed = json.loads(text)
            except json.JSONDecodeError as e:
                raise FlagError(f"{flag}: invalid JSON array: {e.msg}") from None
            return [coerce(x, items, flag) for x in parsed]
        return [coerce(x.strip(), items, flag) for x in value.split(",")] if value else []
    if t == "object":
        text = value.strip()
        if text.startswith("{"):
            try:
                parsed = json.loads(text)
            except json.JSONDecodeError as e:
                raise FlagError(f"{flag}: invalid JSON object: {e.msg}") from None
            if not isinstance(parsed, dict):
                raise FlagError(f"{flag}: expected a JSON object")
            return parsed
        props = schema.get("properties", {})
        obj = {}
        for pair in value.split(","):
            if "=" not in pair:
                raise FlagError(f"{flag}: expected JSON or key=value pairs, got {value!r}")
            k, _, v = pair.partition("=")
            k = k.strip()
            obj[k] = coerce(v, props.get(k, {}), f"{flag}.{k}")
        return obj
    return value


class FlagParser:
    """Parses and validates the flags of one tool; built once at registration."""

    def __init__(self, tool_name: str, schema: dict):
        self.tool = tool_name
        self.schema = schema or {}
        self.properties: dict = self.schema.get("properties", {}) or {}
        self.required: list = list(self.schema.get("required", []) or [])
        # a schema that lists its flags takes no others, unless it says so (additionalProperties)
        extra = self.schema.get("additionalProperties", False if self.properties else True)
        self.closed = extra is False
        self.aliases = {name.replace("_", "-"): name for name in self.properties}
        # per flag: its type, for the fast path of `--name value`
        self.types = {name: _type_of(sub) for name, sub in self.properties.items()}
        self.enums = {name: sub["enum"] for name, sub in self.properties.items() if "enum" in sub}
        self.validator = None
        self.from_json = False
        if self._needs_jsonschema(self.schema):
            import jsonschema
            cls = jsonschema.validators.validator_for(self.schema)
            self.validator = cls(self.schema, format_checker=cls.FORMAT_CHECKER)

    @staticmethod
    def _needs_jsonschema(schema) -> bool:
        """Types, required and enums are checked by coercion; anything more needs jsonschema."""
        if not isinstance(schema, dict):
            return False
        if set(schema) - _SIMPLE_KEYWORDS:
            return True
        for key in ("properties",):
            for sub in (schema.get(key) or {}).values():
                if FlagParser._needs_jsonschema(sub):
                    return True
        items = schema.get("items")
        if isinstance(items, dict) and FlagParser._needs_jsonschema(items):
            return True
        extra = schema.get("additionalProperties")
        return isinstance(extra, dict) and FlagParser._needs_jsonschema(extra)

    def prop_name(self, flag_name: str) -> str:
        if flag_name in self.properties:
            return flag_name
        return self.aliases.get(flag_name, flag_name)

    def parse(self, argv: list) -> dict:
        params: dict = {}
        i = 0
        n = len(argv)
        types = self.types
        while i < n:
            arg = argv[i]
            i += 1
            name = arg[2:]
            t = types.get(name) if arg[:2] == "--" else None
            if t is not None and t not in ("boolean", "array", "object") and i < n \
                    and not argv[i].startswith("--"):
                value = argv[i]         # the common `--name value` of a scalar flag
                i += 1
                params[name] = coerce(value, self.properties[name], arg) if t != "string" else value
                continue
            if arg == "--":
                if i < len(argv):
                    raise FlagError(f"unexpected argument {argv[i]!r}: arguments are passed as --flag value")
                break
            if not arg.startswith("--") or arg == "--":
                raise FlagError(f"expected --flag, got {arg!r}" +
                                (" (arguments are passed as --flag value)" if not arg.startswith("-") else ""))
            name, eq, value = arg[2:].partition("=")
            if not name:
                raise FlagError(f"expected --flag, got {arg!r}")
            if name == "json":
                self.from_json = True
                if not eq:
                    if i >= len(argv):
                        raise FlagError("--json needs a JSON object")
                    value = argv[i]
                    i += 1
                try:
                    obj = json.loads(value)
                except json.JSONDecodeError as e:
                    raise FlagError(f"--json: invalid JSON: {e.msg}") from None
                if not isinstance(obj, dict):
                    raise FlagError("--json: expected a JSON object")
                params.update(obj)
                continue
            path = name.split(".")
            top = self.prop_name(path[0])
            schema = self._schema_at([top] + path[1:])
            if schema is None and self.closed:
                known = list(self.properties)
                hint = difflib.get_close_matches(path[0], known + list(self.aliases), n=1, cutoff=0.6)
                suggestion = f" (did you mean --{hint[0]}?)" if hint else \
                    f" (known flags: {', '.join('--' + k for k in known)})" if known else \
                    " (this command takes no flags)"
                raise FlagError(f"unknown flag --{name}{suggestion}")
            schema = schema or {}
            if not eq:
                if _type_of(schema) == "boolean":      # a switch: the next word is never its value
                    if i < len(argv) and argv[i].lower() in _BOOLEAN_WORDS:
                        raise FlagError(f"--{name} is a switch and takes no value "
                                        f"(write --{name}={argv[i]})")
                    value = "true"
                elif i < len(argv) and not (argv[i].startswith("--") and len(argv[i]) > 2):
                    value = argv[i]
                    i += 1
                elif not schema:
                    value = True          # an unknown bare flag: a switch
                else:
                    raise FlagError(f"--{name}: missing value ({type_label(schema)})")
            flag = "--" + ".".join([top] + path[1:])
            self._store(params, [top] + path[1:], value, schema, flag)
        return params

    def _schema_at(self, path: list) -> Optional[dict]:
        schema = self.properties.get(path[0])
        for key in path[1:]:
            if schema is None:
                return None
            schema = (schema.get("properties") or {}).get(key)
        return schema

    def _store(self, params: dict, path: list, value, schema: dict, flag: str):
        target = params
        for key in path[:-1]:
            target = target.setdefault(key, {})
            if not isinstance(target, dict):
                raise FlagError(f"{flag}: cannot set a field of a non-object value")
        key = path[-1]
        if _type_of(schema) == "array":
            coerced = coerce(value, schema, flag)
            existing = target.get(key)
            if isinstance(existing, list) and isinstance(value, str) and not value.strip().startswith("["):
                existing.extend(coerced)           # repeated flags accumulate
            else:
                target[key] = coerced
            return
        target[key] = coerce(value, schema, flag) if isinstance(value, str) else value

    def validate(self, params: dict):
        for name in self.required:
            if name not in params:
                label = type_label(self.properties.get(name, {}))
                raise FlagError(f"missing required flag --{name} ({label})")
        from_json, self.from_json = self.from_json, False
        if self.validator is not None:
            errors = sorted(self.validator.iter_errors(params), key=lambda e: list(e.path))
            if errors:
                e = errors[0]
                where = "--" + ".".join(str(p) for p in e.absolute_path) if e.absolute_path else None
                raise FlagError(f"{where}: {e.message}" if where else e.message)
            return
        for name, allowed in self.enums.items():
            if name in params and params[name] not in allowed:
                listing = ", ".join(json.dumps(v) for v in allowed)
                raise FlagError(f"--{name}: {json.dumps(params[name])} is not one of {listing}")
        if from_json:          # flags were coerced to their types; JSON values were not
            for name, value in params.items():
                schema = self.properties.get(name)
                if schema is not None:
                    _check_type(value, schema, f"--{name}")


def _check_type(value, schema: dict, flag: str):
    t = _type_of(schema)
    if t is None:                   # no type to check against
        return
    ok = {"integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
          "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
          "boolean": lambda v: isinstance(v, bool), "string": lambda v: isinstance(v, str),
          "array": lambda v: isinstance(v, list), "object": lambda v: isinstance(v, dict)}.get(t)
    if ok is not None and not ok(value):
        raise FlagError(f"{flag}: expected {t}, got {json.dumps(value)}")


def usage_line(name: str, schema: dict) -> str:
    """`name --id <integer> [--verbose] [--status <open|done>]`: in schema order, optional
    flags in brackets, an enum as its values."""
    props = (schema or {}).get("properties", {}) or {}
    required = set((schema or {}).get("required", []) or [])
    parts = [name]
    for key, sub in props.items():
        label = type_label(sub)
        if isinstance(sub.get("enum"), list) and sub["enum"]:
            label = "|".join(v if isinstance(v, str) else json.dumps(v) for v in sub["enum"])
        text = f"--{key}" if label == "boolean" else f"--{key} <{label}>"
        parts.append(text if key in required else f"[{text}]")
    return " ".join(parts)
