"""bc's language read into trees: a lexer, and a recursive-descent parser that follows GNU bc's
grammar (bc.y) and its operator precedence, lowest first: `||`, `&&`, `!`, relations, assignment,
`+ -`, `* / %`, `^` (right), unary minus, `++ --`. Assignment binds tighter than the
relations (`x = 1 == 1` is `(x = 1) == 1`), and unary minus tighter than `^` (`-2^2` is 4).

A program is read one input item at a time (a line of statements, or a function definition)
so that the interpreter runs each item before the next is read, as bc does.
"""
from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field
from typing import Iterator, Optional

from ...base.limits import Budget

KEYWORDS = {"if", "else", "while", "for", "break", "continue", "return", "define", "auto",
            "quit", "halt", "print", "length", "sqrt", "scale", "ibase", "obase", "last",
            "limits", "warranty", "read", "void"}
ASSIGN_OPS = {"=", "+=", "-=", "*=", "/=", "%=", "^="}
REL_OPS = {"==", "!=", "<", "<=", ">", ">="}
# Nesting of expressions and statements: each level is some ten Python frames here (GNU bc's
# parser stack allows about 5,000 parentheses; past its limit it says "memory exhausted").
MAX_NESTING = 1000
_CLOCK_EVERY = 4096       # tokens between two looks at the clock


class BcSyntaxError(Exception):
    def __init__(self, message: str, line: int, located: bool = True, fatal: bool = False):
        super().__init__(message)
        self.message = message
        self.line = line
        self.located = located          # printed after the source and line number
        self.fatal = fatal              # bc reads no further (its parser gave up)


@dataclass(slots=True)
class Token:
    kind: str        # "num", "name", "str", "op", "kw", "nl", "eof", "bad"
    value: str
    line: int        # the line bc reports an error on (a newline token counts as the next)


# runs of digits, or a backslash-newline, which joins them (a repeat per digit would cost the
# regex engine a few hundred bytes of backtracking state per digit)
_DIGITS = r"(?:[0-9A-Z]+|\\\n)*"
_TOKEN = re.compile(rf"""
    (?P<nl>\n)
  | (?P<blank>[ \t\r\f\v]+ | \\\n)
  | (?P<comment>\#[^\n]*)
  | (?P<block>/\*.*?\*/) | (?P<open_block>/\*)
  | (?P<str>"[^"]*") | (?P<open_str>")
  | (?P<num>[0-9A-Z]{_DIGITS}(?:\.{_DIGITS})? | \.(?=[0-9A-Z]){_DIGITS})
  | (?P<last>\.)
  | (?P<word>[a-z][a-z0-9_]*)
  | (?P<op>\|\| | && | \+\+ | -- | [=!<>+\-*/%^]= | [-+*/%^!()\[\]{{}},;<>=])
  | (?P<bad>.)
""", re.S | re.X)


def tokenize(text: str, budget: Budget) -> Iterator[Token]:
    """The tokens of a program, made as the parser asks for them (a program may be a 16 MB file:
    a list of its tokens would take ten times that), the clock read every few thousand."""
    line = 1
    for count, m in enumerate(_TOKEN.finditer(text), 1):
        if not count % _CLOCK_EVERY:
            budget.check_stop()
        kind, value = m.lastgroup, m.group()
        if kind == "nl":
            line += 1
            yield Token("nl", "\n", line)
        elif kind == "blank":
            line += value == "\\\n"
        elif kind == "word":
            yield Token("kw" if value in KEYWORDS else "name", value, line)
        elif kind == "num":
            yield Token("num", value.replace("\\\n", ""), line)
        elif kind == "op":
            yield Token("op", value, line)
        elif kind == "str":
            yield Token("str", value[1:-1], line)
            line += value.count("\n")
        elif kind == "block":
            line += value.count("\n")
        elif kind == "last":
            yield Token("kw", "last", line)
        elif kind in ("open_block", "open_str"):
            yield Token("bad", "comment" if kind == "open_block" else "string", line)
            break
        elif kind == "bad":
            yield Token("bad", value, line)
    yield Token("eof", "", line)


# ------------------------------------------------------------------ trees

@dataclass
class Function:
    name: str
    params: list             # (name, is_array, by_reference)
    autos: list              # (name, is_array)
    body: list
    void: bool = False


@dataclass
class Item:
    """One input item: statements to run, a function to define, or the end (quit)."""
    statements: list = field(default_factory=list)
    function: Optional[Function] = None
    quit: bool = False


class Parser:
    def __init__(self, tokens: Iterator[Token]):
        self.source = tokens
        self.tok: Token = next(tokens)
        self.ahead: deque[Token] = deque()     # tokens read past the current one (peek)
        self.saw_quit = False
        self.depth = 0                          # nesting of expressions and statements

    # -------------------------------------------------------------- token helpers
    def peek(self, k: int) -> Token:
        """The token k places after the current one (the end repeats)."""
        while len(self.ahead) < k:
            last = self.ahead[-1] if self.ahead else self.tok
            self.ahead.append(last if last.kind == "eof" else next(self.source))
        return self.ahead[k - 1]

    def deeper(self, parse):
        """parse() one level of nesting deeper: past MAX_NESTING, what GNU bc does once its
        parser stack is full: its words, and no more input (the depth starts again at each item)."""
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise BcSyntaxError("memory exhausted", self.tok.line, fatal=True)
        node = parse()
        self.depth -= 1
        return node

    def at(self, kind: str, value: Optional[str] = None) -> bool:
        t = self.tok
        return t.kind == kind and (value is None or t.value == value)

    def at_op(self, value: str) -> bool:
        t = self.tok
        return t.value == value and t.kind == "op"

    def advance(self) -> Token:
        t = self.tok
        if t.kind != "eof":
            self.tok = self.ahead.popleft() if self.ahead else next(self.source)
        return t

    def expect_op(self, value: str):
        if not self.at_op(value):
            self.fail()
        self.advance()

    def fail(self):
        t = self.tok
        if t.kind == "bad" and t.value == "comment":
            raise BcSyntaxError("EOF encountered in a comment.", t.line, located=False)
        if t.kind == "bad" and t.value == "string":
            raise BcSyntaxError('illegal character: "', t.line)
        if t.kind == "bad":
            raise BcSyntaxError(f"illegal character: {t.value}", t.line)
        raise BcSyntaxError("syntax error", t.line)

    def skip_newlines(self):
        while self.at("nl"):
            self.advance()

    def recover(self):
        """After a syntax error: drop the rest of the line (and of any block opened on it)."""
        depth = 0
        while not self.at("eof"):
            t = self.advance()
            if t.kind == "op" and t.value == "{":
                depth += 1
            elif t.kind == "op" and t.value == "}":
                depth -= 1
            elif t.kind == "nl" and depth <= 0:
                return

    # -------------------------------------------------------------- items
    def item(self) -> Optional[Item]:
        """The next input item, or None at the end of the input."""
        self.depth = 0
        while self.at("nl") or self.at_op(";"):
            self.advance()
        if self.at("eof"):
            return None
        if self.at("kw", "define"):
            function = self.function()
            return Item(function=function, quit=self.saw_quit)
        statements = []
        while True:
            if not (self.at_op(";") or self.at("nl") or self.at("eof")):
                statements.append(self.statement())
            if self.at_op(";"):
                self.advance()
                continue
            if self.at("nl") or self.at("eof"):
                self.advance()
                return Item(statements, quit=self.saw_quit)
            self.fail()

    def function(self) -> Function:
        self.advance()
        void = False
        if self.at("kw", "void"):
            self.advance()
            void = True
        if not self.at("name") and not (self.at("kw") and self.tok.value in ("length", "sqrt")):
            self.fail()
        name = self.advance().value
        self.expect_op("(")
        params = []
        while not self.at_op(")"):
            by_reference = False
            if self.at_op("*"):
                self.advance()
                by_reference = True
            if not self.at("name"):
                self.fail()
            pname = self.advance().value
            is_array = self._brackets()
            if by_reference and not is_array:
                self.fail()
            params.append((pname, is_array, by_reference))
            if self.at_op(","):
                self.advance()
            elif not self.at_op(")"):
                self.fail()
        self.advance()
        self.skip_newlines()
        self.expect_op("{")
        self.skip_newlines()
        autos = []
        while self.at("kw", "auto"):
            self.advance()
            while True:
                if not self.at("name"):
                    self.fail()
                autos.append((self.advance().value, self._brackets()))
                if self.at_op(","):
                    self.advance()
                    continue
                break
            if self.at_op(";") or self.at("nl"):
                self.advance()
            self.skip_newlines()
        body = self.statement_list()
        self.expect_op("}")
        return Function(name, params, autos, body, void)

    def _brackets(self) -> bool:
        if self.at_op("["):
            self.advance()
            self.expect_op("]")
            return True
        return False

    def statement_list(self) -> list[tuple]:
        """Statements up to a closing brace, separated by newlines or semicolons."""
        found: list[tuple] = []
        while True:
            while self.at("nl") or self.at_op(";"):
                self.advance()
            if self.at_op("}") or self.at("eof"):
                return found
            found.append(self.statement())
            if not (self.at("nl") or self.at_op(";") or self.at_op("}")):
                self.fail()

    # -------------------------------------------------------------- statements
    def statement(self):
        return self.deeper(self._statement)

    def _statement(self):
        t = self.tok
        if t.kind == "str":
            self.advance()
            return ("str", t.value)
        if t.kind == "op" and t.value == "{":
            self.advance()
            body = self.statement_list()
            self.expect_op("}")
            return ("block", body)
        if t.kind == "kw":
            handler = _STATEMENTS.get(t.value)
            if handler is not None:
                return handler(self)
        expression = self.expression()
        return ("expr", expression, _printed(expression))

    def _if(self):
        self.advance()
        self.expect_op("(")
        condition = self.expression()
        self.expect_op(")")
        self.skip_newlines()
        then = self.statement()
        otherwise = None
        if self.at("kw", "else"):
            self.advance()
            self.skip_newlines()
            otherwise = self.statement()
        return ("if", condition, then, otherwise)

    def _while(self):
        self.advance()
        self.expect_op("(")
        condition = self.expression()
        self.expect_op(")")
        self.skip_newlines()
        return ("while", condition, self.statement())

    def _for(self):
        self.advance()
        self.expect_op("(")
        parts = []
        for end in (";", ";", ")"):
            parts.append(None if self.at_op(end) else self.expression())
            self.expect_op(end)
        self.skip_newlines()
        return ("for", parts[0], parts[1], parts[2], self.statement())

    def _simple(self):
        word = self.advance().value
        if word == "quit":
            self.saw_quit = True
        return (word,)

    def _return(self):
        self.advance()
        if self.at("nl") or self.at_op(";") or self.at_op("}") or self.at("eof"):
            return ("return", None)
        return ("return", self.expression())

    def _print(self):
        self.advance()
        items = []
        while True:
            if self.at("str"):
                items.append(("str", self.advance().value))
            else:
                items.append(("expr", self.expression()))
            if not self.at_op(","):
                return ("print", items)
            self.advance()

    # -------------------------------------------------------------- expressions
    def expression(self):
        return self.deeper(self._or)

    def _or(self):
        left = self._and()
        while self.at_op("||"):
            self.advance()
            left = ("or", left, self._and())
        return left

    def _and(self):
        left = self._not()
        while self.at_op("&&"):
            self.advance()
            left = ("and", left, self._not())
        return left

    def _not(self):
        if self.at_op("!"):
            self.advance()
            return ("not", self.deeper(self._not))
        return self._relation()

    def _relation(self):
        left = self._additive()
        while self.tok.kind == "op" and self.tok.value in REL_OPS:
            op = self.advance().value
            left = ("rel", op, left, self._additive())
        return left

    def _additive(self):
        left = self._multiplicative()
        while self.at_op("+") or self.at_op("-"):
            op = self.advance().value
            left = ("bin", op, left, self._multiplicative())
        return left

    def _multiplicative(self):
        left = self._power()
        while self.at_op("*") or self.at_op("/") or self.at_op("%"):
            op = self.advance().value
            left = ("bin", op, left, self._power())
        return left

    def _power(self):
        base = self._unary()
        if self.at_op("^"):
            self.advance()
            return ("bin", "^", base, self.deeper(self._power))
        return base

    def _unary(self):
        if self.at_op("!"):             # `1 + !0 * 4` is 1 + !(0 * 4): ! takes all that binds tighter
            self.advance()
            return ("not", self.deeper(self._not))
        if self.at_op("-"):
            self.advance()
            return ("neg", self.deeper(self._unary))
        if self.at_op("++") or self.at_op("--"):
            op = self.advance().value
            return ("pre", op, self._named())
        return self._postfix()

    def _postfix(self):
        t = self.tok
        if t.kind == "num":
            self.advance()
            return ("num", t.value)
        if t.kind == "op" and t.value == "(":
            self.advance()
            inner = self.expression()
            self.expect_op(")")
            return ("paren", inner)
        if t.kind == "kw" and t.value in ("length", "sqrt", "read") or (
                t.kind == "kw" and t.value == "scale" and self.peek(1).value == "("):
            return self._builtin_call()
        if t.kind == "name" and self.peek(1).kind == "op" and self.peek(1).value == "(":
            return self._call()
        target = self._named()
        if self.tok.kind == "op" and self.tok.value in ASSIGN_OPS:
            op = self.advance().value
            return ("assign", op, target, self._assigned_value())
        if self.at_op("++") or self.at_op("--"):
            return ("post", self.advance().value, target)
        return target

    def _assigned_value(self):
        """The right side of an assignment: everything that binds tighter than the relations."""
        return self._additive()

    def _named(self):
        t = self.tok
        if t.kind == "kw" and t.value in ("scale", "ibase", "obase", "last"):
            self.advance()
            return ("special", t.value)
        if t.kind != "name":
            self.fail()
        self.advance()
        if self.at_op("["):
            self.advance()
            index = self.expression()
            self.expect_op("]")
            return ("elem", t.value, index)
        return ("var", t.value)

    def _builtin_call(self):
        name = self.advance().value
        self.expect_op("(")
        if name == "read":
            self.expect_op(")")
            return ("read",)
        argument = self.expression()
        self.expect_op(")")
        return ("builtin", name, argument)

    def _call(self):
        name = self.advance().value
        self.expect_op("(")
        args = []
        while not self.at_op(")"):
            if self.at("name") and self.peek(1).value == "[" and self.peek(2).value == "]":
                args.append(("array", self.advance().value))
                self.advance()
                self.advance()
            else:
                args.append(self.expression())
            if self.at_op(","):
                self.advance()
            elif not self.at_op(")"):
                self.fail()
        self.advance()
        return ("call", name, args)


_STATEMENTS = {"if": Parser._if, "while": Parser._while, "for": Parser._for,
               "break": Parser._simple, "continue": Parser._simple, "quit": Parser._simple,
               "halt": Parser._simple, "limits": Parser._simple, "warranty": Parser._simple,
               "return": Parser._return, "print": Parser._print}


def _printed(expression) -> bool:
    """bc prints the value of an expression statement unless it is an assignment."""
    return expression[0] != "assign"
