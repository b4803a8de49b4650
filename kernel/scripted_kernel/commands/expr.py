"""expr: evaluate an expression given as arguments (GNU coreutils)."""
from __future__ import annotations

import re
from typing import Any

from ..base.regexes import RegexError, compile_posix
from .registry import Usage, command

_INT = re.compile(r"-?\d+\Z")


class ExprError(Exception):
    def __init__(self, message: str, status: int = 2):
        super().__init__(message)
        self.message = message
        self.status = status


class _Parser:
    def __init__(self, args):
        self.args = args
        self.i = 0

    def peek(self):
        return self.args[self.i] if self.i < len(self.args) else None

    def take(self):
        self.i += 1
        return self.args[self.i - 1]

    def parse(self):
        if not self.args:
            raise ExprError("expr: missing operand\nTry 'expr --help' for more information.")
        value = self.or_()
        if self.i < len(self.args):
            raise ExprError(f"expr: syntax error: unexpected argument '{self.args[self.i]}'")
        return value

    def or_(self):
        left = self.and_()
        while self.peek() == "|":
            self.take()
            right = self.and_()
            left = left if _truthy(left) else (right if _truthy(right) else 0)
        return left

    def and_(self):
        left = self.compare()
        while self.peek() == "&":
            self.take()
            right = self.compare()
            left = left if _truthy(left) and _truthy(right) else 0
        return left

    def compare(self):
        left = self.additive()
        while self.peek() in ("<", "<=", "=", "==", "!=", ">=", ">"):
            op = self.take()
            right = self.additive()
            a: Any                  # two integers, or else two strings
            b: Any
            if _is_int(left) and _is_int(right):
                a, b = int(left), int(right)
            else:
                a, b = str(left), str(right)
            left = int({"<": a < b, "<=": a <= b, "=": a == b, "==": a == b, "!=": a != b,
                        ">=": a >= b, ">": a > b}[op])
        return left

    def additive(self):
        left = self.multiplicative()
        while self.peek() in ("+", "-"):
            op = self.take()
            right = self.multiplicative()
            a, b = _int(left), _int(right)
            left = a + b if op == "+" else a - b
        return left

    def multiplicative(self):
        left = self.match()
        while self.peek() in ("*", "/", "%"):
            op = self.take()
            right = self.match()
            a, b = _int(left), _int(right)
            if op != "*" and b == 0:
                raise ExprError("expr: division by zero")
            if op == "*":
                left = a * b
            else:
                q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
                left = q if op == "/" else a - b * q
        return left

    def match(self):
        left = self.primary()
        while self.peek() == ":":
            self.take()
            left = _regex_match(str(left), str(self.primary()))
        return left

    def primary(self):
        tok = self.peek()
        if tok is None:
            raise ExprError("expr: syntax error: missing argument after '" + self.args[-1] + "'")
        if tok == "(":
            self.take()
            value = self.or_()
            if self.peek() != ")":
                raise ExprError("expr: syntax error: expecting ')' after '" + str(self.args[self.i - 1]) + "'")
            self.take()
            return value
        if tok in ("match", "substr", "index", "length"):
            self.take()
            if tok == "length":
                return len(str(self.primary()))
            if tok == "match":
                s = str(self.primary())
                return _regex_match(s, str(self.primary()))
            if tok == "index":
                s, chars = str(self.primary()), str(self.primary())
                return next((k + 1 for k, c in enumerate(s) if c in chars), 0)
            s, pos, length = str(self.primary()), _int(self.primary()), _int(self.primary())
            if pos < 1 or length < 1:
                return ""
            return s[pos - 1:pos - 1 + length]
        if tok == "+":
            self.take()
            return self.take() if self.i < len(self.args) else ""
        self.take()
        return tok


def _is_int(v) -> bool:
    return isinstance(v, int) or bool(_INT.match(str(v)))


def _int(v) -> int:
    if not _is_int(v):
        raise ExprError("expr: non-integer argument")
    return int(v)


def _truthy(v) -> bool:
    return not (v == "" or (_is_int(v) and int(v) == 0))


def _regex_match(s: str, pattern: str):
    try:
        rx = compile_posix(pattern, extended=False, longest=True, dotall=True)
    except RegexError as e:
        raise ExprError(f"expr: {e}") from None
    m = rx.match(s)
    if rx.groups:
        return m.group(1) if m and m.group(1) is not None else ""
    return m.end() if m else 0


USAGE = Usage("EXPRESSION", "Print the value of EXPRESSION to standard output.", (
    "ARG1 | ARG2, ARG1 & ARG2, comparisons < <= = != >= >, arithmetic + - * / %,",
    "STRING : REGEXP, match STRING REGEXP, substr STRING POS LENGTH, index, length"))


@command("expr", usage=USAGE)
def run(ctx, argv):
    args = argv[1:]
    if args and args[0] == "--":
        args = args[1:]
    try:
        value = _Parser(args).parse()
    except ExprError as e:
        ctx.err(e.message + "\n")
        return e.status
    ctx.out(f"{value}\n")
    return 0 if _truthy(value) else 1
