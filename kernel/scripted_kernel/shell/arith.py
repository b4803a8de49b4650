"""Shell arithmetic: expression text → a closure computing a 64-bit signed integer.

Arithmetic text is only known after expansion (`$(( $a + 1 ))`), so expressions are parsed at
run time and cached by their text. The closures take the interpreter and read or assign
variables through `sh.arith_get(name, index)` / `sh.arith_set(name, index, value)`.
"""
from __future__ import annotations

import re
from typing import Callable

from ..base.errors import ArithError

MASK = (1 << 64) - 1
SIGN = 1 << 63


def wrap(v: int) -> int:
    """Wrap to a signed 64-bit integer, as bash's intmax_t arithmetic does."""
    if -SIGN <= v < SIGN:
        return v
    v &= MASK
    return v - (1 << 64) if v & SIGN else v


_TOKEN = re.compile(r"""
    \s*(?:
      (?P<num>[0-9][0-9A-Za-z_@#]*)
    | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
    | (?P<op>\*\*=|<<=|>>=|\+\+|--|\*\*|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%&^|]=|[-+*/%<>=!~&^|?:,()\[\]])
    )""", re.X)

BINARY_PREC = {
    ",": 1,
    "=": 2, "*=": 2, "/=": 2, "%=": 2, "+=": 2, "-=": 2, "<<=": 2, ">>=": 2, "&=": 2, "^=": 2,
    "|=": 2, "**=": 2,
    "?": 3, "||": 4, "&&": 5, "|": 6, "^": 7, "&": 8, "==": 9, "!=": 9,
    "<": 10, ">": 10, "<=": 10, ">=": 10, "<<": 11, ">>": 11, "+": 12, "-": 12,
    "*": 13, "/": 13, "%": 13, "**": 14,
}
ASSIGN_OPS = frozenset(("=", "*=", "/=", "%=", "+=", "-=", "<<=", ">>=", "&=", "^=", "|=", "**="))


def _div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return wrap(-q if (a < 0) != (b < 0) else q)


def _mod(a: int, b: int) -> int:
    return wrap(a - b * _div(a, b)) if not (a == -SIGN and b == -1) else 0


def _pow(a: int, b: int) -> int:
    if b < 0:
        raise ValueError("exponent less than 0")
    if a in (0, 1) or b < 64 or a == -1:
        return wrap(pow(a, b, 1 << 64)) if b >= 64 else wrap(a ** b)
    return wrap(pow(a, b, 1 << 64))


BINARY_FUNCS: dict[str, Callable[[int, int], int]] = {
    "+": lambda a, b: wrap(a + b), "-": lambda a, b: wrap(a - b), "*": lambda a, b: wrap(a * b),
    "/": _div, "%": _mod, "**": _pow,
    "<<": lambda a, b: wrap(a << (b & 63)), ">>": lambda a, b: a >> (b & 63),
    "<": lambda a, b: int(a < b), ">": lambda a, b: int(a > b), "<=": lambda a, b: int(a <= b),
    ">=": lambda a, b: int(a >= b), "==": lambda a, b: int(a == b), "!=": lambda a, b: int(a != b),
    "&": lambda a, b: a & b, "^": lambda a, b: a ^ b, "|": lambda a, b: a | b,
}

_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ@_"


def parse_number(text: str, expr: str) -> int:
    """An integer constant in bash's notations: 10, 0x1f, 017, base#digits."""
    try:
        if "#" in text:
            base_text, _, digits = text.partition("#")
            base = int(base_text)
            if not 2 <= base <= 64 or not digits:
                raise ArithError(expr, "invalid arithmetic base", text)
            value = 0
            for ch in digits:
                d = _DIGITS.find(ch) if base > 36 else _DIGITS.find(ch.lower())
                if d < 0 or d >= base:
                    raise ArithError(expr, "value too great for base", text)
                value = value * base + d
            return wrap(value)
        if "_" in text:               # Python's int() would read 1_000; a digit only past base 36
            raise ArithError(expr, "value too great for base", text)
        if text[:2] in ("0x", "0X"):
            return wrap(int(text[2:], 16))
        if len(text) > 1 and text[0] == "0":
            return wrap(int(text, 8))
        return wrap(int(text))
    except ValueError:
        if text[:1] == "0" and (text.isascii() and text.isdigit()):
            raise ArithError(expr, "value too great for base", text) from None
        raise ArithError(expr, "invalid number", text) from None


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.tokens: list[tuple[str, str, int]] = []       # (kind, value, offset)
        pos = 0
        n = len(text)
        while pos < n:
            if self.tokens and self.tokens[-1][0] == "name" and text.startswith("[", pos):
                close = _subscript_end(text, pos + 1)
                if close < 0:
                    raise ArithError(text, "syntax error: `]' expected", text[pos:])
                self.tokens.append(("subscript", text[pos + 1:close], pos))
                pos = close + 1
                continue
            m = _TOKEN.match(text, pos)
            if not m or m.end() == pos:
                if text[pos:].strip() == "":
                    break
                rest = text[pos:].lstrip()
                raise ArithError(text, "syntax error: invalid arithmetic operator", rest)
            kind = m.lastgroup
            assert kind is not None         # every alternative of _TOKEN is a named group
            value, start = m.group(kind), m.start(kind)
            if value in ("++", "--") and not self._is_increment(text, m.end()):
                # bash reads ++/-- as increment only after a variable or before a name;
                # elsewhere it is one sign, and the next character is read afresh (---x is
                # -(--x), --3 is -(-3))
                self.tokens.append(("op", value[0], start))
                pos = start + 1
                continue
            self.tokens.append((kind, value, start))
            pos = m.end()
        self.i = 0

    def _is_increment(self, text: str, after: int) -> bool:
        if self.tokens and self.tokens[-1][0] in ("name", "subscript"):
            return True
        rest = text[after:].lstrip()
        return bool(rest) and (rest[0].isalpha() or rest[0] == "_") and rest[0].isascii()

    def rest(self) -> str:
        if self.i >= len(self.tokens):
            return ""
        return self.text[self.tokens[self.i][2]:]

    def peek(self):
        return self.tokens[self.i] if self.i < len(self.tokens) else (None, None, len(self.text))

    def take(self):
        tok = self.peek()
        self.i += 1
        return tok

    def error(self, message: str):
        return ArithError(self.text, message, self.rest())

    def parse(self):
        if not self.tokens:
            return lambda sh: 0
        fn = self.expr(0)
        if self.i < len(self.tokens):
            raise self.error("syntax error in expression")
        return fn

    def expr(self, min_prec: int):
        left = self.unary()
        while True:
            kind, op, _ = self.peek()
            if kind != "op" or op not in BINARY_PREC:
                return left
            prec = BINARY_PREC[op]
            if prec < min_prec:
                return left
            self.i += 1
            if op in ASSIGN_OPS:
                left = self.assignment(left, op)
            elif op == "?":
                then = self.expr(1)
                k, colon, _ = self.peek()
                if colon != ":":
                    raise self.error("syntax error: `:' expected for conditional expression")
                self.i += 1
                other = self.expr(3)
                left = _ternary(left, then, other)
            elif op == "&&":
                left = _and(left, self.expr(prec + 1))
            elif op == "||":
                left = _or(left, self.expr(prec + 1))
            elif op == ",":
                left = _comma(left, self.expr(prec + 1))
            else:
                right = self.expr(prec if op == "**" else prec + 1)
                left = _binary(op, left, right, self.text)

    def assignment(self, target, op: str):
        ref = getattr(target, "lvalue", None)
        if ref is None:
            raise ArithError(self.text, "attempted assignment to non-variable", self.text)
        value = self.expr(2)
        name, index = ref
        if op == "=":
            def assign(sh):
                v = value(sh)
                sh.arith_set(name, index(sh) if index else None, v)
                return v
            return assign
        func = BINARY_FUNCS[op[:-1]]
        text = self.text

        def update(sh):
            idx = index(sh) if index else None
            current = sh.arith_get(name, idx)      # bash reads x in `x op= expr` first
            v = value(sh)
            try:
                result = func(current, v)
            except ZeroDivisionError:
                raise ArithError(text, "division by 0", str(v)) from None
            sh.arith_set(name, idx, result)
            return result
        return update

    def unary(self):
        kind, value, _ = self.peek()
        if kind == "op":
            if value in ("-", "+", "!", "~"):
                self.i += 1
                operand = self.unary()
                if value == "-":
                    return lambda sh: wrap(-operand(sh))
                if value == "+":
                    return operand
                if value == "!":
                    return lambda sh: int(not operand(sh))
                return lambda sh: ~operand(sh)
            if value in ("++", "--"):
                self.i += 1
                target = self.unary()
                ref = getattr(target, "lvalue", None)
                if ref is None:
                    raise self.error("syntax error: operand expected")
                return _incdec(ref, 1 if value == "++" else -1, prefix=True)
        return self.postfix()

    def postfix(self):
        operand = self.primary()
        kind, value, _ = self.peek()
        if kind == "op" and value in ("++", "--") and getattr(operand, "lvalue", None):
            self.i += 1
            return _incdec(operand.lvalue, 1 if value == "++" else -1, prefix=False)
        return operand

    def primary(self):
        kind, value, _ = self.peek()
        if kind is None:
            raise self.error("syntax error: operand expected")
        if kind == "num":
            self.i += 1
            n = parse_number(value, self.text)

            def constant(sh):
                return n
            constant.value = n  # type: ignore[attr-defined]  # mypy has no attributes on functions
            return constant
        if kind == "name":
            self.i += 1
            subscript = None
            k2, v2, _ = self.peek()
            if k2 == "subscript":
                self.i += 1
                subscript = v2
            return _variable(value, subscript)
        if value == "(":
            self.i += 1
            inner = self.expr(0)
            k2, v2, _ = self.peek()
            if v2 != ")":
                raise self.error("syntax error: `)' expected" if k2 else "missing `)'")
            self.i += 1
            return inner
        raise self.error("syntax error: operand expected")


def _subscript_end(text: str, pos: int) -> int:
    depth = 0
    while pos < len(text):
        c = text[pos]
        if c == "[":
            depth += 1
        elif c == "]":
            if depth == 0:
                return pos
            depth -= 1
        pos += 1
    return -1


def _variable(name: str, subscript):
    """A variable, or an array element: `subscript` is the raw text between the brackets,
    evaluated arithmetically for indexed arrays and taken as a string key for associative
    ones (as bash does), so the decision waits until the variable is known."""
    if subscript is None:
        def get(sh):
            return sh.arith_get(name, None)
        get.lvalue = (name, None)  # type: ignore[attr-defined]  # mypy has no attributes on functions
        return get

    def key(sh):
        return sh.arith_key(name, subscript)

    def get_element(sh):
        return sh.arith_get(name, key(sh))
    get_element.lvalue = (name, key)  # type: ignore[attr-defined]  # mypy has no attributes on functions
    return get_element


def _incdec(ref, delta: int, prefix: bool):
    name, index = ref
    if index is None:
        def plain(sh):          # (i++ of a loop: run() without its element's branches)
            old = sh.arith_get(name, None)
            new = old + delta
            if not -SIGN <= new < SIGN:
                new = wrap(new)
            sh.arith_set(name, None, new)
            return new if prefix else old
        return plain

    def run(sh):
        idx = index(sh) if index else None
        old = sh.arith_get(name, idx)
        new = wrap(old + delta)
        if idx is None:
            sh.set_var(name, str(new))
        else:
            sh.arith_set(name, idx, new)
        return new if prefix else old
    return run


def _binary(op: str, left, right, text: str):
    func = BINARY_FUNCS[op]
    if op in ("/", "%", "**"):
        def checked(sh):
            a = left(sh)
            b = right(sh)
            if b == 0 and op != "**":
                raise ArithError(text, "division by 0", str(b))
            try:
                return func(a, b)
            except ValueError as e:
                raise ArithError(text, str(e), str(b)) from None
        return checked
    if op == "+":
        return lambda sh: wrap(left(sh) + right(sh))
    compared = _variable_against_constant(op, left, right)
    if compared is not None:
        return compared
    if op == "<":
        return lambda sh: 1 if left(sh) < right(sh) else 0
    return lambda sh: func(left(sh), right(sh))


def _variable_against_constant(op: str, left, right):
    """`i < 10` (a variable compared with a constant, as a loop's condition is) in one step,
    without the calls that read each operand; None for any other comparison."""
    ref = getattr(left, "lvalue", None)
    if op not in _COMPARISONS or not hasattr(right, "value") or ref is None or ref[1] is not None:
        return None
    name, n, compare = ref[0], right.value, BINARY_FUNCS[op]
    if op == "<":
        return lambda sh: 1 if sh.arith_get(name, None) < n else 0
    return lambda sh: compare(sh.arith_get(name, None), n)


_COMPARISONS = frozenset(("<", ">", "<=", ">=", "==", "!="))


def _ternary(cond, then, other):
    return lambda sh: then(sh) if cond(sh) else other(sh)


def _and(left, right):
    return lambda sh: 1 if left(sh) and right(sh) else 0


def _or(left, right):
    return lambda sh: 1 if left(sh) or right(sh) else 0


def _comma(left, right):
    def run(sh):
        left(sh)
        return right(sh)
    return run


_cache: dict[str, Callable] = {}
_CACHE_MAX = 4096


def compile_arith(text: str) -> Callable:
    """The closure for an arithmetic expression, cached by its text. Raises ArithError."""
    fn = _cache.get(text)
    if fn is None:
        fn = _Parser(text).parse()
        if len(_cache) >= _CACHE_MAX:
            _cache.clear()
        _cache[text] = fn
    return fn
