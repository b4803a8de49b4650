"""bc's language read into trees: a lexer, and a recursive-descent parser that follows GNU bc's
grammar (bc.y) and its operator precedence, lowest first: `||`, `&&`, `!`, relations, assignment,
`+ -`, `* / %`, `^` (right), unary minus, `++ --`. Assignment binds tighter than the
relations (`x = 1 == 1` is `(x = 1) == 1`), and unary minus tighter than `^` (`-2^2` is 4).

A program is read one input item at a time (a line of statements, or a function definition)
so that the interpreter runs each item before the next is read, as bc does.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

KEYWORDS = {"if", "else", "while", "for", "break", "continue", "return", "define", "auto",
            "quit", "halt", "print", "length", "sqrt", "scale", "ibase", "obase", "last",
            "limits", "warranty", "read", "void"}
ASSIGN_OPS = {"=", "+=", "-=", "*=", "/=", "%=", "^="}
REL_OPS = {"==", "!=", "<", "<=", ">", ">="}
OPERATORS = sorted(ASSIGN_OPS | REL_OPS | {"&&", "||", "++", "--", "+", "-", "*", "/", "%",
                                           "^", "!", "(", ")", "[", "]", "{", "}", ",", ";"},
                   key=len, reverse=True)
NUMBER_CHARS = set("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ")


class BcSyntaxError(Exception):
    def __init__(self, message: str, line: int, located: bool = True):
        super().__init__(message)
        self.message = message
        self.line = line
        self.located = located          # printed after the source and line number


@dataclass(slots=True)
class Token:
    kind: str        # "num", "name", "str", "op", "kw", "nl", "eof", "bad"
    value: str
    line: int        # the line bc reports an error on (a newline token counts as the next)


def tokenize(text: str) -> list:
    tokens, i, line, n = [], 0, 1, len(text)
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            tokens.append(Token("nl", "\n", line))
            i += 1
        elif c in " \t\r\f\v":
            i += 1
        elif c == "\\" and text.startswith("\n", i + 1):
            line += 1
            i += 2
        elif c == "#":
            while i < n and text[i] != "\n":
                i += 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                tokens.append(Token("bad", "comment", line))
                break
            line += text.count("\n", i, end)
            i = end + 2
        elif c == '"':
            end = text.find('"', i + 1)
            if end < 0:
                tokens.append(Token("bad", "string", line))
                break
            tokens.append(Token("str", text[i + 1:end], line))
            line += text.count("\n", i, end)
            i = end + 1
        elif c in NUMBER_CHARS or (c == "." and i + 1 < n and text[i + 1] in NUMBER_CHARS):
            i = _number(text, i, tokens, line)
        elif c == ".":
            tokens.append(Token("kw", "last", line))
            i += 1
        elif c.islower():
            j = i
            while j < n and (text[j].islower() or text[j].isdigit() or text[j] == "_"):
                j += 1
            word = text[i:j]
            tokens.append(Token("kw" if word in KEYWORDS else "name", word, line))
            i = j
        else:
            for op in OPERATORS:
                if text.startswith(op, i):
                    tokens.append(Token("op", op, line))
                    i += len(op)
                    break
            else:
                tokens.append(Token("bad", c, line))
                i += 1
    tokens.append(Token("eof", "", line))
    return tokens


def _number(text: str, i: int, tokens: list, line: int) -> int:
    """A numeric literal; a backslash-newline inside one joins its digits."""
    digits, seen_point = [], False
    while i < len(text):
        c = text[i]
        if c in NUMBER_CHARS:
            digits.append(c)
        elif c == "." and not seen_point:
            seen_point = True
            digits.append(c)
        elif c == "\\" and text.startswith("\n", i + 1):
            i += 1
        else:
            break
        i += 1
    tokens.append(Token("num", "".join(digits), line))
    return i


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
    def __init__(self, tokens: list):
        self.tokens = tokens
        self.pos = 0
        self.saw_quit = False

    # -------------------------------------------------------------- token helpers
    @property
    def tok(self) -> Token:
        return self.tokens[self.pos]

    def at(self, kind: str, value: Optional[str] = None) -> bool:
        t = self.tok
        return t.kind == kind and (value is None or t.value == value)

    def at_op(self, value: str) -> bool:
        return self.at("op", value)

    def advance(self) -> Token:
        t = self.tokens[self.pos]
        if t.kind != "eof":
            self.pos += 1
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
        return self._or()

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
            return ("not", self._not())
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
            return ("bin", "^", base, self._power())
        return base

    def _unary(self):
        if self.at_op("!"):             # `1 + !0 * 4` is 1 + !(0 * 4): ! takes all that binds tighter
            self.advance()
            return ("not", self._not())
        if self.at_op("-"):
            self.advance()
            return ("neg", self._unary())
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
                t.kind == "kw" and t.value == "scale" and self.tokens[self.pos + 1].value == "("):
            return self._builtin_call()
        if t.kind == "name" and self.tokens[self.pos + 1].kind == "op" and self.tokens[self.pos + 1].value == "(":
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
            if self.at("name") and self.tokens[self.pos + 1].value == "[" and \
                    self.tokens[self.pos + 2].value == "]":
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
