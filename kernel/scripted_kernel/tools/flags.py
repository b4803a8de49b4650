"""Command-line flags → tool parameters: coercion by JSON Schema type, then validation.

Flags as models write them:

- `--key value` and `--key=value`; a flag that takes a value takes the next word whatever it
  is, so `--message --help` sends the text "--help". Only in flag position are `--help` and
  `--dry-run` the tool's own; `--` ends the flags (nothing may follow it).
- booleans: a bare `--flag`, `--flag true|false|yes|no|on|off|1|0`, `--flag=false`, `--no-flag`.
- arrays: the flag repeated, or a JSON array; a string is never split on commas (`--tag 'a, b'`
  is one element), numbers and booleans may be listed as `1,2,3`.
- objects: JSON, `key=value` pairs, or one key at a time (`--updates.priority 3`, typed by the
  object's property or value schema).
- null: `--x null` for a parameter that admits null (`--x=` too, unless it also takes text).
- unions (`anyOf`, `oneOf`, type lists): each branch is tried, text last, so "7" is 7 for
  `int | str` and "ticket_001" is text.
- `--json '{...}'` gives everything at once, as JSON values.

Errors name the flag and the reason; the caller turns them into status 2.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any, Optional

_SIMPLE_KEYWORDS = {"type", "properties", "required", "description", "default", "items", "enum",
                    "additionalProperties", "title", "examples", "$schema"}

_INTEGER = re.compile(r"[+-]?[0-9]+")
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
BOOLEAN_WORDS = {"true": True, "1": True, "yes": True, "on": True,
                 "false": False, "0": False, "no": False, "off": False}
_LISTABLE = ("integer", "number", "boolean")     # item types a comma cannot be part of


class FlagError(Exception):
    pass


def _read_integer(value: str, flag: str) -> int:
    if not _INTEGER.fullmatch(value):       # decimal digits only: not 0x10, 1.0, 1e3 or 1_000
        raise FlagError(f"{flag}: expected integer, got {value!r}")
    return _integer(value, flag)


def _integer(digits: str, flag: str) -> int:
    try:
        return int(digits)
    except ValueError:          # past Python's limit on the digits of an integer read from text
        raise FlagError(f"{flag}: integer of {len(digits)} digits, too long") from None


def _read_number(value: str, flag: str):
    if _INTEGER.fullmatch(value):
        return _integer(value, flag)
    if not _DECIMAL.fullmatch(value):       # nor inf, nan or 1_0
        raise FlagError(f"{flag}: expected number, got {value!r}")
    number = float(value)
    if math.isinf(number):                  # 1e999: JSON has no infinity to pass on
        raise FlagError(f"{flag}: number out of range, got {value!r}")
    return number


def _json_value(text: str, what: str):
    """The JSON value of `text`; a FlagError that starts with `what` if it is none."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise FlagError(f"{what}: {e.msg}") from None
    except (ValueError, RecursionError):    # a number past Python's digit limit, nesting past its depth
        raise FlagError(f"{what}: a number too long or nesting too deep") from None


_SCALAR_READERS = {"string": None, "integer": _read_integer, "number": _read_number}
_NOT_SCALAR: Any = object()      # (a flag that is not a plain scalar's)


@dataclass(slots=True)
class Parsed:
    """One command line: the parameters, and the tool's own flags found in flag position."""
    params: dict = field(default_factory=dict)
    help: bool = False
    dry_run: bool = False
    from_json: bool = False     # values came from JSON (--json, or a hook): their types are checked


# ---------------------------------------------------------------- schema reading

def _types(schema: dict) -> list:
    """The JSON types a schema admits, in its order ([] when it does not say)."""
    t = schema.get("type")
    if isinstance(t, str):
        return [t]
    if isinstance(t, list):
        return [x for x in t if isinstance(x, str)]
    branches = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(branches, list):
        return list(dict.fromkeys(x for b in branches if isinstance(b, dict) for x in _types(b)))
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        return list(dict.fromkeys(_json_type(v) for v in enum))
    return []


def _json_type(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, dict) else "string"


def _type_of(schema: dict) -> Optional[str]:
    """The one type a flag of this schema is read as (the first that is not null)."""
    return next((t for t in _types(schema) if t != "null"), None)


def _is_switch(schema: dict) -> bool:
    """A flag that needs no value: its only non-null type is boolean."""
    return bool(schema) and {t for t in _types(schema) if t != "null"} == {"boolean"}


def type_label(schema: dict) -> str:
    kinds = [t for t in _types(schema) if t != "null"]
    if len(kinds) > 1:
        return "|".join(kinds)
    t = kinds[0] if kinds else None
    items = schema.get("items")
    if t == "array" and isinstance(items, dict) and _type_of(items):
        return f"array of {_type_of(items)}"
    return t or "string"


def admits_null(schema: dict) -> bool:
    return "null" in _types(schema)


def _branches(schema: dict) -> list:
    """The alternatives a value may be read as, in the order tried: null, then every type but
    text in the schema's order, text last."""
    listed = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(listed, list):
        outer = {k: v for k, v in schema.items() if k not in ("anyOf", "oneOf")}
        options = [{**outer, **b} for b in listed if isinstance(b, dict)]
    elif isinstance(schema.get("type"), list):
        options = [{**schema, "type": t} for t in schema["type"]]
    else:
        return [schema]
    return sorted(options, key=lambda b: {"null": 0, "string": 2}.get(_type_of(b) or "null", 1)
                  if _types(b) else 2)


def _object_schema(schema: Optional[dict]) -> Optional[dict]:
    """The object branch of a schema (itself, or the first object among its alternatives)."""
    if schema is None:
        return None
    if "object" in _types(schema) and not (schema.get("anyOf") or schema.get("oneOf")):
        return schema
    return next((b for b in _branches(schema) if _type_of(b) == "object"), None)


def _member_schema(schema: dict, key: str) -> Optional[dict]:
    """The schema of `key` inside an object schema: a property, else the value schema of a
    free-form object; None when the object takes no such key."""
    obj = _object_schema(schema)
    if obj is None:
        return None
    props = obj.get("properties") or {}
    if key in props:
        return props[key]
    extra = obj.get("additionalProperties", None if props else True)
    if isinstance(extra, dict):
        return extra
    return {} if extra is True else None


# ---------------------------------------------------------------- coercion

def coerce(value, schema: dict, flag: str):
    """A flag's text as the schema's type (a value that is not text is returned as it is)."""
    if not isinstance(value, str):
        return value
    branches = _branches(schema)
    if len(branches) == 1:
        return _coerce_one(value, branches[0], flag, admits_null(schema) and "string" not in _types(schema))
    text_allowed = "string" in _types(schema)
    for branch in branches:
        try:
            return _coerce_one(value, branch, flag, not text_allowed)
        except FlagError:
            continue
    raise FlagError(f"{flag}: expected {type_label(schema)}, got {value!r}")


def _coerce_one(value: str, schema: dict, flag: str, empty_is_null: bool = False):
    kinds = _types(schema)
    if "null" in kinds and (value == "null" or value == "" and empty_is_null):
        return None
    if kinds == ["null"]:
        raise FlagError(f"{flag}: expected null, got {value!r}")
    t = _type_of(schema)
    if t is None and isinstance(schema.get("enum"), list):
        return _enum_member(value, schema["enum"], flag)
    if t == "integer":
        return _read_integer(value, flag)
    if t == "number":
        return _read_number(value, flag)
    if t == "boolean":
        word = BOOLEAN_WORDS.get(value.lower())
        if word is None:
            raise FlagError(f"{flag}: expected boolean (true or false), got {value!r}")
        return word
    if t == "array":
        return _array(value, schema, flag)
    if t == "object":
        return _object(value, schema, flag)
    return value


def _enum_member(value: str, members: list, flag: str):
    """The member of a mixed-type enum that `value` writes (1 for "1", "a" for "a")."""
    for member in members:
        if (member if isinstance(member, str) else json.dumps(member)) == value:
            return member
    return value                # validation names the allowed values


def _array(value: str, schema: dict, flag: str) -> list:
    items: dict = schema["items"] if isinstance(schema.get("items"), dict) else {}
    text = value.strip()
    if text.startswith("["):
        parsed = _json_value(text, f"{flag}: invalid JSON array")
        if not isinstance(parsed, list):
            raise FlagError(f"{flag}: expected a JSON array")
        return [coerce(x, items, flag) for x in parsed]
    if _type_of(items) in _LISTABLE and "string" not in _types(items):
        return [coerce(x.strip(), items, flag) for x in value.split(",")] if text else []
    return [coerce(value, items, flag)]


def _object(value: str, schema: dict, flag: str) -> dict:
    text = value.strip()
    if text.startswith("{"):
        parsed = _json_value(text, f"{flag}: invalid JSON object")
        if not isinstance(parsed, dict):
            raise FlagError(f"{flag}: expected a JSON object")
        return parsed
    obj = {}
    for pair in value.split(","):
        if "=" not in pair:
            raise FlagError(f"{flag}: expected JSON, key=value pairs or --{flag[2:]}.KEY VALUE, got {value!r}")
        k, _, v = pair.partition("=")
        k = k.strip()
        obj[k] = coerce(v, _member_schema(schema, k) or {}, f"{flag}.{k}")
    return obj


# ---------------------------------------------------------------- the parser

class FlagParser:
    """Parses and validates the flags of one tool; built once at registration, shared by the
    threads that run the tool (it keeps no state of a call)."""

    def __init__(self, tool_name: str, schema: dict):
        self.tool = tool_name
        self.schema = schema or {}
        self.properties: dict = self.schema.get("properties", {}) or {}
        self.required: list = list(self.schema.get("required", []) or [])
        # a schema that lists its flags takes no others, unless it says so (additionalProperties)
        extra = self.schema.get("additionalProperties", False if self.properties else True)
        self.closed = extra is False
        self.aliases = {name.replace("_", "-"): name for name in self.properties}
        # per plain scalar flag, its reader (None for text), for the fast path of `--name value`
        self.scalars = {name: _SCALAR_READERS[t] for name, sub in self.properties.items()
                        if len(_branches(sub)) == 1 and (t := _type_of(sub)) in _SCALAR_READERS
                        and "null" not in _types(sub)}
        self.enums = {name: sub["enum"] for name, sub in self.properties.items() if "enum" in sub}
        # quick(): `--name` -> (name, reader) of each scalar flag whose value needs no other check
        self.plain_flags = {"--" + name: (name, reader) for name, reader in self.scalars.items()
                            if name not in self.enums}
        self.required_set = frozenset(self.required)
        self.validator = None
        if self._needs_jsonschema(self.schema):
            import jsonschema
            cls = jsonschema.validators.validator_for(self.schema)
            self.validator = cls(self.schema, format_checker=cls.FORMAT_CHECKER)

    @staticmethod
    def _needs_jsonschema(schema: dict) -> bool:
        """Coercion checks the flags' types, the required flags and enums; anything more needs
        jsonschema: a keyword beyond those, or values nested in an array or an object (JSON
        text may put any value there)."""
        if set(schema) - _SIMPLE_KEYWORDS:
            return True
        for sub in (schema.get("properties") or {}).values():
            if isinstance(sub, dict) and (set(sub) - _SIMPLE_KEYWORDS or
                                          any(k in sub for k in ("items", "properties", "additionalProperties"))):
                return True
        return False

    def takes_value(self, flag: str) -> bool:
        """Whether `--name` (without `=`) reads the next word as its value."""
        path = flag[2:].split(".")
        path[0] = self.prop_name(path[0])
        schema = self._schema_at(path)
        if schema is None:
            return False if self.closed or flag[2:].startswith("no-") else True
        return not _is_switch(schema)

    def prop_name(self, flag_name: str) -> str:
        if flag_name in self.properties:
            return flag_name
        return self.aliases.get(flag_name, flag_name)

    def quick(self, argv: list) -> Optional[dict]:
        """The parameters of the command line `argv` (argv[0] the tool's name) when it is the
        common one, nothing but `--name value` pairs of plain text and integer flags (as parse()
        reads them) with every required flag given, and nothing more to validate; else None,
        and parse() and validate() decide (and word any error). A tool call's fast path: the
        two calls and the Parsed object cost a tenth of a call of a small tool."""
        n = len(argv)
        if not n & 1 or self.validator is not None:
            return None
        params = {}
        plain = self.plain_flags
        for i in range(1, n, 2):
            known = plain.get(argv[i])
            if known is None:
                return None
            name, reader = known
            value = argv[i + 1]
            if reader is None:
                params[name] = value
            elif reader is _read_integer and value.isdigit() and value.isascii() and len(value) < 19:
                params[name] = int(value)
            else:
                return None
        return params if self.required_set <= params.keys() else None

    def parse(self, argv: list) -> Parsed:
        """The command line's parameters; FlagError for the first flag that is wrong, unless
        `--help` stands in flag position anywhere (then help is all that is asked)."""
        parsed = Parsed()
        params = parsed.params
        i, n = 0, len(argv)
        scalars = self.scalars
        error: Optional[FlagError] = None
        while i < n:
            arg = argv[i]
            i += 1
            reader: Any = scalars.get(arg[2:], _NOT_SCALAR) if arg[:2] == "--" else _NOT_SCALAR
            try:
                if reader is not _NOT_SCALAR and i < n:
                    value = argv[i]         # the common `--name value` of a scalar flag
                    i += 1
                    params[arg[2:]] = value if reader is None else reader(value, arg)
                elif arg == "--":
                    if i < n:
                        raise FlagError(f"unexpected argument {argv[i]!r} after --: arguments are passed "
                                        f"as --flag value")
                    break
                elif arg == "--help" or arg == "-h" and n == 1:
                    parsed.help = True
                elif arg == "--dry-run":
                    parsed.dry_run = True
                elif not arg.startswith("--"):
                    raise FlagError(f"expected --flag, got {arg!r}" +
                                    (" (arguments are passed as --flag value)" if not arg.startswith("-") else ""))
                else:
                    i = self._flag(parsed, arg, argv, i)
            except FlagError as e:
                error = error or e          # read on: a later --help still asks for help only
        if error is not None and not parsed.help:
            raise error
        return parsed

    def _flag(self, parsed: Parsed, arg: str, argv: list, i: int) -> int:
        """Read the flag `arg` (its value from argv[i] if it takes one); the next index."""
        name, eq, text = arg[2:].partition("=")
        value: "str | bool" = text
        if not name:
            raise FlagError(f"expected --flag, got {arg!r}")
        if name == "json":
            return self._json(parsed, eq, text, argv, i)
        path = name.split(".")
        path[0] = self.prop_name(path[0])
        schema = self._schema_at(path)
        if schema is None and not eq and len(path) == 1 and name.startswith("no-"):
            negated = self._schema_at([self.prop_name(name[3:])])
            if negated is not None and _is_switch(negated):      # --no-verbose
                parsed.params[self.prop_name(name[3:])] = False
                return i
        if schema is None and self.closed:
            raise FlagError(f"unknown flag {_as_typed('--' + name)}{self._suggestion(path[0])}")
        schema = schema or {}
        flag = "--" + ".".join(path)
        if not eq:
            if _is_switch(schema):      # a switch takes a value only if the next word is one
                word = argv[i].lower() if i < len(argv) else None
                if word in BOOLEAN_WORDS or word == "null" and admits_null(schema):
                    value, i = argv[i], i + 1
                else:
                    value = "true"
            elif schema:
                if i >= len(argv):
                    raise FlagError(f"--{name}: missing value ({type_label(schema)})")
                value, i = argv[i], i + 1
            elif i < len(argv) and not (argv[i].startswith("--") and len(argv[i]) > 2):
                value, i = argv[i], i + 1          # an unknown flag of an open schema
            else:
                value = True                       # an unknown bare flag: a switch
        self._store(parsed.params, path, value, schema, flag)
        return i

    def _json(self, parsed: Parsed, eq: str, value: str, argv: list, i: int) -> int:
        parsed.from_json = True
        if not eq:
            if i >= len(argv):
                raise FlagError("--json needs a JSON object")
            value, i = argv[i], i + 1
        obj = _json_value(value, "--json: invalid JSON")
        if not isinstance(obj, dict):
            raise FlagError("--json: expected a JSON object")
        parsed.params.update(obj)
        return i

    def _suggestion(self, name: str) -> str:
        known = list(self.properties)
        import difflib          # (here: a suggestion is for a mistake, most runs make none)
        hint = difflib.get_close_matches(name, known + list(self.aliases), n=1, cutoff=0.6)
        if hint:
            return f" (did you mean --{hint[0]}?)"
        return f" (known flags: {', '.join('--' + k for k in known)})" if known else " (this command takes no flags)"

    def _schema_at(self, path: list) -> Optional[dict]:
        schema = self.properties.get(path[0])
        for key in path[1:]:
            if schema is None:
                return None
            schema = _member_schema(schema, key)
        return schema

    def _store(self, params: dict, path: list, value, schema: dict, flag: str):
        target = params
        for key in path[:-1]:
            target = target.setdefault(key, {})
            if not isinstance(target, dict):
                raise FlagError(f"{flag}: cannot set a field of a non-object value")
        key = path[-1]
        coerced = coerce(value, schema, flag) if isinstance(value, str) else value
        existing = target.get(key)
        if isinstance(existing, list) and isinstance(coerced, list) and _type_of(schema) == "array" \
                and not value.strip().startswith("["):
            existing.extend(coerced)           # repeated flags accumulate
        else:
            target[key] = coerced

    def validate(self, params: dict, from_json: bool = False, partial: bool = False):
        """FlagError for the first thing wrong with `params`; `partial`: some flags may be
        missing (a static check sees only part of a command line)."""
        for name in self.required if not partial else ():
            if name not in params:
                label = type_label(self.properties.get(name, {}))
                raise FlagError(f"missing required flag --{name} ({label})")
        if self.validator is not None:
            errors = sorted((e for e in self.validator.iter_errors(params)
                             if not (partial and e.validator == "required")), key=lambda e: list(e.path))
            if errors:
                raise FlagError(_schema_error(errors[0]))
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


def _as_typed(word: str) -> str:
    """A word of the command line as an error names it: quoted when it holds a newline or
    another unprintable character, so the error stays one line."""
    return word if word.isprintable() else repr(word)


def _schema_error(error) -> str:
    """A jsonschema error in the words the coercion errors use (enums and types), else its own."""
    where = "--" + ".".join(str(p) for p in error.absolute_path) if error.absolute_path else None
    if error.validator == "enum" and isinstance(error.validator_value, list):
        allowed = ", ".join(json.dumps(v) for v in error.validator_value)
        message = f"{json.dumps(error.instance)} is not one of {allowed}"
    elif error.validator == "type":
        kinds = error.validator_value if isinstance(error.validator_value, list) else [error.validator_value]
        message = f"expected {'|'.join(map(str, kinds))}, got {json.dumps(error.instance)}"
    else:
        message = error.message
    return f"{where}: {message}" if where else message


_IS_TYPE = {"integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
            "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
            "boolean": lambda v: isinstance(v, bool), "string": lambda v: isinstance(v, str),
            "array": lambda v: isinstance(v, list), "object": lambda v: isinstance(v, dict),
            "null": lambda v: v is None}


def _check_type(value, schema: dict, flag: str):
    kinds = [t for t in _types(schema) if t in _IS_TYPE]
    if kinds and not any(_IS_TYPE[t](value) for t in kinds):
        raise FlagError(f"{flag}: expected {type_label(schema)}, got {json.dumps(value)}")


def usage_line(name: str, schema: dict) -> str:
    """`name --id <integer> [--verbose] [--status <open|done>]`: in schema order, optional
    flags in brackets, an enum as its values."""
    props = (schema or {}).get("properties", {}) or {}
    required = set((schema or {}).get("required", []) or [])
    parts = [name]
    for key, sub in props.items():
        label = type_label(sub)
        if isinstance(sub.get("enum"), list) and sub["enum"]:
            label = "|".join(v if isinstance(v, str) else json.dumps(v) for v in sub["enum"] if v is not None)
        text = f"--{key}" if _is_switch(sub) else f"--{key} <{label}>"
        parts.append(text if key in required else f"[{text}]")
    return " ".join(parts)
