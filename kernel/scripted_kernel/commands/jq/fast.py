"""A direct evaluator for the small jq programs most scripts send (paths, `.[]`, `select`,
`map`, comparisons, arithmetic, object and array construction, string interpolation and the
common builtins), run on the values Python's JSON parser already produced.

libjq parses its input at about 20 MB/s (its number literals go through decNumber); a 5 MB
tool result spent 230 ms there, plus a JSON round trip to hand it over. This evaluator works on
the parsed values instead. It follows jq's semantics for what it accepts: the order of outputs
of binary operators (right operand outer), `and`/`or` short-circuits, jq's ordering of values
of different types, `?`. Anything else is refused: `compile_program` returns None for syntax
it does not know, and evaluation raises `Unsupported` where jq would report an error or where
a number could lose digits. The caller then runs the same program through libjq, which gives
jq's own output and messages; jq programs have no side effects, so running again is safe.
"""
from __future__ import annotations

import functools
import math
import re
from typing import Any, Callable, Iterator, Optional

from .values import dump, special_number

Filter = Callable[[object], Iterator]


class Unsupported(Exception):
    """Outside what this evaluator models: run the program through libjq instead."""


class _JqError(Unsupported):
    """An error jq would raise: `?` stops quietly; anywhere else libjq reports it."""


_TOKEN = re.compile(r"""
    (?P<space>\s+|\#[^\n]*)
  | (?P<field>\.[A-Za-z_][A-Za-z0-9_]*)
  | (?P<number>(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?)
  | (?P<string>")
  | (?P<var>\$[A-Za-z_][A-Za-z0-9_]*)
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op>\?//|\.\.|//=|\|=|\+=|-=|\*=|/=|%=|==|!=|<=|>=|//|[.\[\]{}()|,:<>+\-*/%?=;@])
""", re.X)

# keywords of what this evaluator does not model (and, or and if ... end it does)
_REFUSED_NAMES = {"as", "def", "reduce", "foreach", "try", "catch", "label", "import", "include",
                  "__loc__"}
_STRING_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r",
                   "t": "\t"}
_MAX_DEPTH = 64
_EXACT = 2 ** 53          # beyond this, an integer may not survive as a double


def compile_program(text: str, named: dict) -> Optional[Filter]:
    """The program as a Python filter, or None if it uses what this evaluator does not model.
    `named`: the --arg/--argjson values, read as $name."""
    try:
        return _Parser(text, named).whole()
    except (Unsupported, RecursionError):
        return None


_EACH = [("op", "."), ("op", "["), ("op", "]")]
_OPENERS, _CLOSERS = {"[": "]", "(": ")", "{": "}"}, {"]", ")", "}"}


def compile_stream(text: str, named: dict):
    """For a program that only goes through the elements of its input, `.[] | F` or
    `[.[] | F] | length` (F may be absent): (F as a filter, whether only the number of F's
    outputs is wanted). A large array then need not be held as values: each element is
    parsed, run and dropped in turn. None for any other program."""
    try:
        tokens = _Parser(text, named).tokens
        count = False
        if (len(tokens) > 5 and tokens[0] == ("op", "[") and tokens[-3:] == [
                ("op", "]"), ("op", "|"), ("name", "length")] and _closing(tokens, 0) == len(tokens) - 3):
            tokens, count = tokens[1:-3], True
        if tokens[:3] != _EACH:
            return None
        rest = tokens[3:]
        if not rest:
            return _identity, count
        if rest[0] != ("op", "|") or len(rest) == 1:
            return None
        parser = _Parser("", named)
        parser.tokens = rest[1:]
        return parser.whole(), count
    except (Unsupported, RecursionError):
        return None


def _closing(tokens: list, start: int) -> int:
    """The index of the token closing the bracket at `start` (strings are single tokens)."""
    stack = []
    for k in range(start, len(tokens)):
        kind, value = tokens[k]
        if kind != "op":
            continue
        if value in _OPENERS:
            stack.append(_OPENERS[value])
        elif value in _CLOSERS:
            if not stack or stack.pop() != value:
                return -1
            if not stack:
                return k
    return -1


# ---------------------------------------------------------------- values

_RANK = {type(None): 0, bool: 1, int: 3, float: 3, str: 4, list: 5, dict: 6}


def _rank(v) -> int:
    if v is True:
        return 2
    return _RANK[type(v)]


def compare(a, b) -> int:
    """jq's total order: null < false < true < numbers < strings < arrays < objects."""
    ra, rb = _rank(a), _rank(b)
    if ra != rb:
        return -1 if ra < rb else 1
    if ra == 3:
        if (type(a) is int and abs(a) >= _EXACT) or (type(b) is int and abs(b) >= _EXACT):
            raise Unsupported("a number beyond a double's exact range")
        if a != a or b != b:
            raise Unsupported("jq orders NaN below every number")
        return (a > b) - (a < b)
    if ra == 4:
        return (a > b) - (a < b)
    if ra == 5:
        for x, y in zip(a, b):
            c = compare(x, y)
            if c:
                return c
        return (len(a) > len(b)) - (len(a) < len(b))
    if ra == 6:
        c = compare(sorted(a), sorted(b))
        if c:
            return c
        for k in sorted(a):
            c = compare(a[k], b[k])
            if c:
                return c
        return 0
    return 0


def _truthy(v) -> bool:
    return v is not None and v is not False


def _number(v) -> float:
    if type(v) is int:
        if abs(v) >= _EXACT:
            raise Unsupported("a number beyond a double's exact range")
        return float(v)
    return v


def _is_number(v) -> bool:
    return type(v) is int or type(v) is float


def _add(a, b):
    if a is None:
        return b
    if b is None:
        return a
    if _is_number(a) and _is_number(b):
        return _number(a) + _number(b)
    ta = type(a)
    if ta is type(b) and ta in (str, list):
        return a + b
    if ta is dict and type(b) is dict:
        return {**a, **b}
    raise _JqError("cannot be added")


def _subtract(a, b):
    if _is_number(a) and _is_number(b):
        return _number(a) - _number(b)
    if type(a) is list and type(b) is list:
        return [x for x in a if all(compare(x, y) for y in b)]
    raise _JqError("cannot be subtracted")


def _multiply(a, b):
    if _is_number(a) and _is_number(b):
        return _number(a) * _number(b)
    raise Unsupported("string repetition and object merging go through libjq")


def _divide(a, b):
    if _is_number(a) and _is_number(b):
        if b == 0:
            raise _JqError("division by zero")
        return _number(a) / _number(b)
    if type(a) is str and type(b) is str:
        return _split(a, b)
    raise _JqError("cannot be divided")


def _modulo(a, b):
    if type(a) is int and type(b) is int and 0 <= a < _EXACT and 0 < b < _EXACT:
        return a % b
    raise Unsupported("jq's modulo of negative or fractional numbers goes through libjq")


def _compare_op(test):
    return lambda a, b: test(compare(a, b))


_BINARY = {
    "+": _add, "-": _subtract, "*": _multiply, "/": _divide, "%": _modulo,
    "==": _compare_op(lambda c: c == 0), "!=": _compare_op(lambda c: c != 0),
    "<": _compare_op(lambda c: c < 0), "<=": _compare_op(lambda c: c <= 0),
    ">": _compare_op(lambda c: c > 0), ">=": _compare_op(lambda c: c >= 0),
}
_LEVELS = [("or",), ("and",), ("==", "!=", "<", "<=", ">", ">="), ("+", "-"), ("*", "/", "%")]


def _index(v, key):
    if v is None:
        return None
    if type(key) is str:
        if type(v) is dict:
            return v.get(key)
        raise _JqError("cannot index with a string")
    if _is_number(key) and type(v) is list:
        k = math.floor(key)
        if k < 0:
            k += len(v)
        return v[k] if 0 <= k < len(v) else None
    raise _JqError("cannot index")


def _iterate(v):
    if type(v) is list:
        return iter(v)
    if type(v) is dict:
        return iter(v.values())
    raise _JqError("cannot iterate")


def _dump(v) -> str:
    return dump(v, None, False, False)


def _tostring(v) -> str:
    return v if type(v) is str else _tojson(v)


def _tojson(v) -> str:
    if any(_is_number(x) and _literal_dependent(x) for x in _leaves(v)):
        # libjq 1.8 writes a number it was handed as text by that text ("100.0", "1E+300");
        # which text depends on where the number came from, so libjq decides
        raise Unsupported("text of this number")
    return _dump(v)


def _literal_dependent(v) -> bool:
    if type(v) is int:
        return abs(v) >= _EXACT
    return v.is_integer() or "e" in repr(v)


def _leaves(v):
    """The scalars in v (v itself when it is one)."""
    stack = [v]
    while stack:
        x = stack.pop()
        if type(x) is list:
            stack.extend(x)
        elif type(x) is dict:
            stack.extend(x.values())
        else:
            yield x


def _length(v):
    if v is None:
        return 0
    if type(v) in (str, list, dict):
        return len(v)
    if _is_number(v):
        return abs(_number(v))
    raise _JqError("has no length")


def _keys(v, sort=True):
    if type(v) is dict:
        return sorted(v) if sort else list(v)
    if type(v) is list:
        return list(range(len(v)))
    raise _JqError("has no keys")


def _sorted(v):
    if type(v) is not list:
        raise _JqError("cannot be sorted")
    return sorted(v, key=functools.cmp_to_key(compare))


def _join(v, sep):
    """jq 1.8's definition: elements as text (null as "", numbers and booleans as JSON,
    arrays and objects an error), the separator added with `+` between them, "" for none."""
    result = None
    for x in _iterate(v):
        result = "" if result is None else _add(result, sep)
        if type(x) in (list, dict):
            raise _JqError("cannot join arrays or objects")
        result = _add(result, "" if x is None else x if type(x) is str else _tojson(x))
    return "" if result is None else result


def _string_op(test):
    def run(v, arg):
        if type(v) is not str or type(arg) is not str:
            raise _JqError("needs strings")
        return test(v, arg)
    return run


def _ascii_case(convert):
    def run(v):
        if type(v) is not str:
            raise _JqError("needs a string")
        return "".join(convert(c) if c.isascii() else c for c in v)
    return run


def _to_entries(v):
    if type(v) is dict:
        return [{"key": k, "value": x} for k, x in v.items()]
    if type(v) is list:                    # jq defines it through keys_unsorted: indices
        return [{"key": k, "value": x} for k, x in enumerate(v)]
    raise _JqError("has no keys")


def _extreme(v, pick):
    if type(v) is not list:
        raise _JqError("cannot be compared")
    if not v:
        return None
    best = v[0]
    for x in v[1:]:
        if pick(compare(x, best)):
            best = x
    return best


def _reverse(v):
    if type(v) is list:
        return v[::-1]
    if v is None:
        return []
    raise Unsupported("reverse of a string or object goes through libjq")


def _tonumber(v):
    if _is_number(v):
        return v
    if (type(v) is str and re.fullmatch(r"-?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?", v)
            and not special_number(v)):
        return float(v)
    raise Unsupported("tonumber of this text goes through libjq")


def _unique(v):
    out: list = []
    for x in _sorted(v):
        if not out or compare(out[-1], x):
            out.append(x)
    return out


def _type(v) -> str:
    return ["null", "boolean", "boolean", "number", "string", "array", "object"][_rank(v)]


def _floor(v):
    if not _is_number(v):
        raise _JqError("number required")
    return float(math.floor(v))


def _has(v, key):
    if type(v) is dict and type(key) is str:
        return key in v
    if type(v) is list and _is_number(key):
        return 0 <= key < len(v)
    raise _JqError("cannot check whether it has a key")


def _add_all(v):
    items = list(_iterate(v))
    if not items:
        return None
    total = items[0]
    for x in items[1:]:
        total = _add(total, x)
    return total


def _trim(side):
    def run(v, affix):
        if type(v) is not str or type(affix) is not str:
            raise _JqError("needs strings")
        if affix and side == "l" and v.startswith(affix):
            return v[len(affix):]
        if affix and side == "r" and v.endswith(affix):
            return v[:-len(affix)]
        return v
    return run


def _split(v, sep):
    if type(v) is not str or type(sep) is not str:
        raise _JqError("split input and separator must be strings")
    if not sep:
        raise Unsupported("split on an empty string goes through libjq")
    return v.split(sep) if v else []


# builtins without arguments: name → function of the input
_PLAIN = {
    "length": _length, "keys": _keys, "keys_unsorted": lambda v: _keys(v, False),
    "not": lambda v: not _truthy(v), "type": _type, "tostring": _tostring, "tonumber": _tonumber,
    "sort": _sorted, "unique": _unique, "add": _add_all, "reverse": _reverse,
    "min": lambda v: _extreme(v, lambda c: c < 0), "max": lambda v: _extreme(v, lambda c: c >= 0),
    "to_entries": _to_entries, "ascii_downcase": _ascii_case(str.lower),
    "ascii_upcase": _ascii_case(str.upper), "floor": _floor,
    "first": lambda v: _index(v, 0), "last": lambda v: _index(v, -1),
    "any": lambda v: any(_truthy(x) for x in _iterate(v)),
    "all": lambda v: all(_truthy(x) for x in _iterate(v)),
    "tojson": _tojson,
    "null": lambda v: None, "true": lambda v: True, "false": lambda v: False,
}
# builtins of one argument evaluated as a value (each output of the argument, in turn)
_ONE_VALUE = {
    "has": _has, "join": _join, "startswith": _string_op(str.startswith),
    "endswith": _string_op(str.endswith), "split": _split,
    "ltrimstr": _trim("l"), "rtrimstr": _trim("r"),
}


# ---------------------------------------------------------------- parser → filters

class _Parser:
    def __init__(self, text: str, named: dict):
        self.text = text
        self.named = named
        self.depth = 0
        self.tokens: list[tuple[Optional[str], Any]] = []     # (kind, text or a string's pieces)
        self._tokenize()
        self.k = 0

    def _tokenize(self):
        text, pos = self.text, 0
        while pos < len(text):
            if text[pos] == '"':
                pieces, pos = self._string(pos + 1)
                self.tokens.append(("string", pieces))
                continue
            m = _TOKEN.match(text, pos)
            if m is None:
                raise Unsupported(text[pos])
            pos = m.end()
            kind = m.lastgroup
            if kind == "space":
                continue
            value = m.group()
            if kind == "name" and value in _REFUSED_NAMES:
                raise Unsupported(value)
            self.tokens.append((kind, value))

    def _string(self, pos: int):
        """A string literal's pieces: text, or ("interp", filter) for \\( ... )."""
        text = self.text
        pieces: list[str | tuple[str, Filter]] = []
        chars: list[str] = []
        while pos < len(text):
            c = text[pos]
            if c == '"':
                if chars or not pieces:
                    pieces.append("".join(chars))
                return pieces, pos + 1
            if c != "\\":
                chars.append(c)
                pos += 1
                continue
            nxt = text[pos + 1:pos + 2]
            if nxt in _STRING_ESCAPES:
                chars.append(_STRING_ESCAPES[nxt])
                pos += 2
            elif nxt == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", text[pos + 2:pos + 6]):
                code = int(text[pos + 2:pos + 6], 16)
                if 0xD800 <= code < 0xE000:
                    raise Unsupported("surrogate escapes go through libjq")
                chars.append(chr(code))
                pos += 6
            elif nxt == "(":
                end = self._interpolation_end(pos + 2)
                if chars:
                    pieces.append("".join(chars))
                    chars = []
                inner = _Parser(text[pos + 2:end], self.named)
                inner.depth = self.depth + 1
                if inner.depth > _MAX_DEPTH:
                    raise Unsupported("too deep")
                pieces.append(("interp", inner.whole()))
                pos = end + 1
            else:
                raise Unsupported("string escape")
        raise Unsupported("unterminated string")

    def _interpolation_end(self, pos: int) -> int:
        """The index of the `)` closing an interpolation that starts at pos."""
        depth, text = 1, self.text
        while pos < len(text):
            c = text[pos]
            if c == '"':
                _, pos = self._string(pos + 1)
                continue
            if c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
                if depth == 0:
                    return pos
            pos += 1
        raise Unsupported("unterminated interpolation")

    def whole(self) -> Filter:
        f = self.pipe()
        if self.peek() is not None:
            raise Unsupported("trailing text")
        return f

    # -- tokens
    def peek(self):
        return self.tokens[self.k] if self.k < len(self.tokens) else None

    def accept(self, value) -> bool:
        t = self.peek()
        if t is not None and t[1] == value and t[0] in ("op", "name"):
            self.k += 1
            return True
        return False

    def expect(self, value):
        if not self.accept(value):
            raise Unsupported(f"expected {value}")

    # -- grammar, loosest first
    def pipe(self) -> Filter:
        self.depth += 1
        if self.depth > _MAX_DEPTH:
            raise Unsupported("too deep")
        left = self.comma()
        if self.accept("|"):
            right = self.pipe()
            left = _pipe(left, right)
        self.depth -= 1
        return left

    def comma(self) -> Filter:
        left = self.alternative()
        while self.accept(","):
            left = _comma(left, self.alternative())
        return left

    def alternative(self) -> Filter:
        left = self.binary(0)
        if self.accept("//"):
            left = _alternative(left, self.alternative())
        return left

    def binary(self, level: int) -> Filter:
        if level == len(_LEVELS):
            return self.postfix()
        left = self.binary(level + 1)
        while True:
            t = self.peek()
            if t is None or t[1] not in _LEVELS[level] or t[0] not in ("op", "name"):
                return left
            self.k += 1
            right = self.binary(level + 1)
            if t[1] in ("and", "or"):
                left = _logic(t[1], left, right)
            else:
                left = _binary(_BINARY[t[1]], left, right)
                if level == 2 and self.peek() is not None and self.peek()[1] in _LEVELS[2]:
                    raise Unsupported("comparisons do not chain")

    def postfix(self) -> Filter:
        """A term and its suffixes. `?` covers the last suffix only (`.a[0]?` is
        `.a | try .[0]`), or the whole term when it has none, as in jq's grammar."""
        f = self.term()
        base: Optional[Filter] = None      # while a suffix is pending, f is base | last
        last: Optional[Filter] = None
        while True:
            t = self.peek()
            suffix = None
            if t is None:
                return f
            if t[0] == "field":
                self.k += 1
                suffix = _field(t[1][1:])
            elif t == ("op", ".") and self._next_is_string():
                self.k += 1
                suffix = self._quoted_field()
            elif t == ("op", "["):
                self.k += 1
                suffix = self.bracket_suffix()
            elif t == ("op", ".") and self._next_is("["):
                self.k += 2
                suffix = self.bracket_suffix()
            elif t == ("op", "?"):
                self.k += 1
                f = _pipe(base, _try(last)) if base is not None and last is not None else _try(f)
                base = last = None
                continue
            else:
                return f
            base, last = f, suffix
            f = _pipe(base, last)

    def _next_is(self, value) -> bool:
        t = self.tokens[self.k + 1] if self.k + 1 < len(self.tokens) else None
        return t is not None and t[1] == value

    def _next_is_string(self) -> bool:
        t = self.tokens[self.k + 1] if self.k + 1 < len(self.tokens) else None
        return t is not None and t[0] == "string"

    def _quoted_field(self) -> Filter:
        kind, pieces = self.tokens[self.k]
        self.k += 1
        if len(pieces) != 1 or not isinstance(pieces[0], str):
            raise Unsupported("interpolated field name")
        return _field(pieces[0])

    def bracket_suffix(self) -> Filter:
        """After `[`: `]` (iterate) or an index expression and `]` (slices go to libjq)."""
        if self.accept("]"):
            return _each
        key = self.pipe()
        if self.peek() is not None and self.peek()[1] == ":":
            raise Unsupported("slices go through libjq")
        self.expect("]")
        return _dynamic_index(key)

    def term(self) -> Filter:
        t = self.peek()
        if t is None:
            raise Unsupported("missing term")
        kind, value = t
        self.k += 1
        if kind == "field":
            return _field(value[1:])
        if kind == "number":
            if special_number(value):
                raise Unsupported("libjq keeps this number's text")
            number = float(value) if any(c in value for c in ".eE") else int(value)
            return _constant(number)
        if kind == "string":
            return _string_filter(value)
        if kind == "var":
            name = value[1:]
            if name not in self.named:
                raise Unsupported("variables other than --arg values go through libjq")
            return _constant(self.named[name])
        if value == ".":
            if self.peek() is not None and self.peek()[0] == "string":
                return self._quoted_field()
            if self.accept("["):
                return self.bracket_suffix()
            return _identity
        if value == "(":
            f = self.pipe()
            self.expect(")")
            return f
        if value == "[":
            if self.accept("]"):
                return _constant_fresh(list)
            f = self.pipe()
            self.expect("]")
            return _collect(f)
        if value == "{":
            return self.object()
        if value == "-":
            return _negate(self.postfix())
        if value == "if":
            return self.conditional()
        if kind == "name":
            return self.call(value)
        raise Unsupported(value)

    def conditional(self) -> Filter:
        cond = self.pipe()
        self.expect("then")
        then = self.pipe()
        if self.accept("elif"):
            otherwise = self.conditional()
            return _if(cond, then, otherwise)
        otherwise = self.pipe() if self.accept("else") else _identity
        self.expect("end")
        return _if(cond, then, otherwise)

    def object(self) -> Filter:
        entries = []
        if self.accept("}"):
            return _constant_fresh(dict)
        while True:
            t = self.peek()
            if t is None:
                raise Unsupported("unterminated object")
            self.k += 1
            kind, value = t
            if kind == "name":                   # {if: 1} is fine: keywords are keys too
                key = _constant(value)
                shorthand = _field(value)
            elif kind == "string":
                key = _string_filter(value)
                shorthand = _dynamic_index(key)
            elif kind == "var" and value[1:] in self.named:
                key, shorthand = _constant(value[1:]), _constant(self.named[value[1:]])
            elif value == "(":
                key = self.pipe()
                self.expect(")")
                shorthand = None
            else:
                raise Unsupported("object key")
            if self.accept(":"):
                entries.append((key, self.object_value()))
            elif shorthand is not None:
                entries.append((key, shorthand))
            else:
                raise Unsupported("object entry")
            if self.accept("}"):
                return _object(entries)
            self.expect(",")

    def object_value(self) -> Filter:
        """An object value: a pipe without `,` (which separates entries), as jq 1.8 reads it."""
        left = self.alternative()
        if self.accept("|"):
            left = _pipe(left, self.object_value())
        return left

    def call(self, name: str) -> Filter:
        if self.accept("("):
            arg = self.pipe()
            if self.accept(";"):
                raise Unsupported("builtins of several arguments go through libjq")
            self.expect(")")
            return self.call_with(name, arg)
        if name in _PLAIN:
            return _apply(_PLAIN[name])
        if name == "empty":
            return _empty
        raise Unsupported(name)

    def call_with(self, name: str, arg: Filter) -> Filter:
        if name == "select":
            return _select(arg)
        if name == "map":
            return _collect(_pipe(_each, arg))
        if name == "map_values":
            return _map_values(arg)
        if name in ("sort_by", "group_by", "unique_by", "min_by", "max_by"):
            return _by(name, arg)
        if name == "first":
            return _first(arg)
        if name in ("any", "all"):
            return _quantifier(name, arg)
        if name == "with_entries":
            raise Unsupported("with_entries goes through libjq")
        if name in _ONE_VALUE:
            return _apply_each(_ONE_VALUE[name], arg)
        raise Unsupported(name)


# ---------------------------------------------------------------- filters

def _identity(v):
    yield v


def _empty(v):
    return iter(())


def _each(v):
    return _iterate(v)


def _constant(value):
    def run(v):
        yield value
    return run


def _constant_fresh(make):
    def run(v):
        yield make()
    return run


def _field(name: str):
    def run(v):
        if type(v) is dict:
            yield v.get(name)
        elif v is None:
            yield None
        else:
            raise _JqError(f"cannot index with {name!r}")
    return run


def _dynamic_index(key: Filter):
    def run(v):
        for k in key(v):
            yield _index(v, k)
    return run


def _pipe(left: Filter, right: Filter):
    def run(v):
        for x in left(v):
            yield from right(x)
    return run


def _comma(left: Filter, right: Filter):
    def run(v):
        yield from left(v)
        yield from right(v)
    return run


def _alternative(left: Filter, right: Filter):
    def run(v):
        found = False
        for x in left(v):                  # libjq 1.8 lets an error here through
            if _truthy(x):
                found = True
                yield x
        if not found:
            yield from right(v)
    return run


def _binary(op, left: Filter, right: Filter):
    def run(v):
        for b in right(v):
            for a in left(v):
                yield op(a, b)
    return run


def _negate(operand: Filter):
    def run(v):
        for x in operand(v):
            if not _is_number(x):
                raise _JqError("cannot be negated")
            yield -_number(x)
    return run


def _logic(kind: str, left: Filter, right: Filter):
    def run(v):
        for a in left(v):
            if kind == "and" and not _truthy(a):
                yield False
            elif kind == "or" and _truthy(a):
                yield True
            else:
                for b in right(v):
                    yield _truthy(b)
    return run


def _try(body: Filter):
    def run(v):
        try:
            yield from body(v)
        except _JqError:
            return
    return run


def _collect(body: Filter):
    def run(v):
        yield list(body(v))
    return run


def _object(entries):
    def build(v, k, partial):
        if k == len(entries):
            yield dict(partial)
            return
        key_filter, value_filter = entries[k]
        for key in key_filter(v):
            if type(key) is not str:
                raise _JqError("object keys must be strings")
            for value in value_filter(v):
                partial.append((key, value))
                yield from build(v, k + 1, partial)
                partial.pop()

    def run(v):
        return build(v, 0, [])
    return run


def _string_filter(pieces):
    if all(isinstance(p, str) for p in pieces):
        return _constant("".join(pieces))
    filters = [_constant(p) if isinstance(p, str) else _interpolate(p[1]) for p in pieces]
    result = filters[0]
    for f in filters[1:]:
        result = _binary(lambda a, b: a + b, result, f)
    return result


def _interpolate(body: Filter):
    def run(v):
        for x in body(v):
            yield _tostring(x)
    return run


def _if(cond: Filter, then: Filter, otherwise: Filter):
    def run(v):
        for c in cond(v):
            yield from (then if _truthy(c) else otherwise)(v)
    return run


def _select(cond: Filter):
    def run(v):
        for c in cond(v):
            if _truthy(c):
                yield v
    return run


def _apply(fn):
    def run(v):
        yield fn(v)
    return run


def _apply_each(fn, arg: Filter):
    def run(v):
        for a in arg(v):
            yield fn(v, a)
    return run


def _map_values(body: Filter):
    def run(v):
        if type(v) is list:
            items = []
            for x in v:
                for y in body(x):
                    items.append(y)
                    break
            yield items
        elif type(v) is dict:
            fields = {}
            for k, x in v.items():
                for y in body(x):
                    fields[k] = y
                    break
            yield fields
        else:
            raise _JqError("cannot iterate")
    return run


def _first(body: Filter):
    def run(v):
        for x in body(v):
            yield x
            return
    return run


def _quantifier(kind: str, cond: Filter):
    """any(f) / all(f): whether some / every output of f over the elements is true."""
    test = any if kind == "any" else all

    def run(v):
        yield test(_truthy(c) for x in _iterate(v) for c in cond(x))
    return run


def _by(name: str, key: Filter):
    def run(v):
        if type(v) is not list:
            raise _JqError("cannot be sorted")
        keyed = [(list(key(x)), x) for x in v]
        cmp = functools.cmp_to_key(compare)
        keyed.sort(key=lambda pair: cmp(pair[0]))
        if name == "sort_by":
            yield [x for _, x in keyed]
            return
        if name in ("min_by", "max_by"):
            # sorted stably: min_by is the first of the smallest keys, max_by the last of the
            # largest, as jq picks them
            yield (keyed[0 if name == "min_by" else -1][1]) if keyed else None
            return
        groups: list[tuple[object, list]] = []
        for k, x in keyed:
            if groups and not compare(groups[-1][0], k):
                groups[-1][1].append(x)
            else:
                groups.append((k, [x]))
        yield [g for _, g in groups] if name == "group_by" else [g[0] for _, g in groups]
    return run
