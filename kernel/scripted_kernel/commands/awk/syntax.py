"""awk program text → tokens → syntax tree (nested tuples whose first item names the node)."""
from __future__ import annotations

import re
from typing import Optional

from .values import AwkError

KEYWORDS = {"BEGIN", "END", "function", "func", "if", "else", "while", "for", "do", "break",
            "continue", "next", "nextfile", "exit", "return", "delete", "in", "getline", "print",
            "printf"}
BUILTINS = {"length", "substr", "index", "split", "sub", "gsub", "match", "sprintf", "sin", "cos",
            "atan2", "exp", "log", "sqrt", "int", "rand", "srand", "tolower", "toupper", "system",
            "close", "fflush", "gensub"}


class Tok:
    __slots__ = ("kind", "value", "line")

    def __init__(self, kind, value, line):
        self.kind, self.value, self.line = kind, value, line

    def __repr__(self):
        return f"{self.kind}:{self.value!r}"


_OPERATORS = ["+=", "-=", "*=", "/=", "%=", "^=", "||", "&&", "==", "<=", ">=", "!=", "++", "--",
              ">>", "!~", "+", "-", "*", "/", "%", "^", "!", ">", "<", "|", "?", ":", "~", "$",
              "=", "(", ")", "[", "]", "{", "}", ";", ",", "\n"]
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "/": "/", "a": "\a", "b": "\b",
            "f": "\f", "v": "\v"}


class _Byte(int):
    """A byte from an escape (\\342 or \\xE2): consecutive ones form UTF-8 characters."""


def _join_bytes(pieces: list) -> str:
    out, pending = [], bytearray()
    for p in pieces:
        if isinstance(p, _Byte):
            pending.append(p & 0xFF)
            continue
        if pending:
            out.append(pending.decode("utf-8", "surrogateescape"))
            pending = bytearray()
        out.append(p)
    if pending:
        out.append(pending.decode("utf-8", "surrogateescape"))
    return "".join(out)


def tokenize(src: str) -> list[Tok]:
    toks: list[Tok] = []
    i, n, line = 0, len(src), 1

    def regex_allowed() -> bool:
        if not toks:
            return True
        last = toks[-1]
        return not (last.kind in ("NUMBER", "STRING", "ERE", "NAME", "FUNC_NAME", "BUILTIN")
                    or last.value in (")", "]", "$", "++", "--") and last.kind == "OP")

    while i < n:
        c = src[i]
        if c in " \t\r":
            i += 1
            continue
        if c == "\\" and src.startswith("\n", i + 1):
            i += 2
            line += 1
            continue
        if c == "#":
            while i < n and src[i] != "\n":
                i += 1
            continue
        if c == "\n":
            toks.append(Tok("OP", "\n", line))
            line += 1
            i += 1
            continue
        if c == '"':
            j = i + 1
            out: list[str | _Byte] = []
            while j < n and src[j] != '"':
                if src[j] == "\\" and j + 1 < n:
                    e = src[j + 1]
                    if e in _ESCAPES:
                        out.append(_ESCAPES[e])
                        j += 2
                    elif e in "01234567":
                        m = re.match(r"[0-7]{1,3}", src[j + 1:])
                        assert m is not None        # e is an octal digit
                        out.append(_Byte(int(m.group(), 8)))
                        j += 1 + m.end()
                    elif e == "x" and re.match(r"[0-9A-Fa-f]", src[j + 2:j + 3]):
                        m = re.match(r"[0-9A-Fa-f]{1,2}", src[j + 2:])
                        assert m is not None        # a hex digit follows the x
                        out.append(_Byte(int(m.group(), 16)))
                        j += 2 + m.end()
                    elif e == "\n":
                        j += 2
                    else:
                        out.append("\\" + e)
                        j += 2
                    continue
                if src[j] == "\n":
                    raise AwkError(f"awk: line {line}: runaway string constant \"{src[i + 1:j][:10]} ...")
                out.append(src[j])
                j += 1
            if j >= n:          # the message quotes the source text, escapes as written (as mawk)
                raise AwkError(f"awk: line {line}: runaway string constant \"{src[i + 1:j][:10]} ...")
            toks.append(Tok("STRING", _join_bytes(out), line))
            i = j + 1
            continue
        if c == "/" and regex_allowed():
            j = i + 1
            pattern: list[str] = []
            in_bracket = False
            while j < n and (src[j] != "/" or in_bracket):
                if src[j] == "\n":
                    raise AwkError(f"awk: line {line}: runaway regular expression /{''.join(pattern)[:10]} ...")
                if src[j] == "\\" and j + 1 < n:
                    pattern.append(src[j:j + 2] if src[j + 1] != "/" else "/")
                    j += 2
                    continue
                if src[j] == "[" and not in_bracket:
                    in_bracket = True
                    pattern.append("[")
                    j += 1
                    if j < n and src[j] == "^":
                        pattern.append("^")
                        j += 1
                    if j < n and src[j] == "]":
                        pattern.append("]")
                        j += 1
                    continue
                if src[j] == "]" and in_bracket:
                    in_bracket = False
                pattern.append(src[j])
                j += 1
            if j >= n:
                raise AwkError(f"awk: line {line}: runaway regular expression /{''.join(pattern)[:10]} ...")
            toks.append(Tok("ERE", "".join(pattern), line))
            i = j + 1
            continue
        if (c.isascii() and c.isdigit()) or (c == "." and i + 1 < n and src[i + 1] in "0123456789"):
            m = re.compile(r"0[xX][0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?").match(src, i)
            assert m is not None                    # c starts a number
            text = m.group()
            toks.append(Tok("NUMBER", float(int(text, 16)) if text[:2] in ("0x", "0X") else float(text), line))
            i = m.end()
            continue
        if (c.isascii() and c.isalpha()) or c == "_":
            m = re.compile(r"[A-Za-z_][A-Za-z0-9_]*").match(src, i)
            assert m is not None                    # c starts a name
            word = m.group()
            i = m.end()
            if word in KEYWORDS:
                toks.append(Tok("KW", "function" if word == "func" else word, line))
            elif word in BUILTINS:
                toks.append(Tok("BUILTIN", word, line))
            elif i < n and src[i] == "(":
                toks.append(Tok("FUNC_NAME", word, line))
            else:
                toks.append(Tok("NAME", word, line))
            continue
        for op in _OPERATORS:
            if src.startswith(op, i):
                toks.append(Tok("OP", op, line))
                i += len(op)
                break
        else:
            raise AwkError(f"awk: line {line}: syntax error at or near {c}")
    toks.append(Tok("EOF", None, line))
    return toks


# ---------------------------------------------------------------- parser

class Parser:
    def __init__(self, src: str):
        self.toks = tokenize(src)
        self.i = 0
        self.functions: dict = {}
        self.begin: list = []
        self.end: list = []
        self.rules: list = []           # (pattern, pattern2 or None, body or None)
        self.in_print = 0               # inside print/printf args: '>' is a redirection
        self.no_in = 0                  # inside for(...) init: 'in' is not an operator

    @property
    def tok(self) -> Tok:
        return self.toks[self.i]

    def error(self, tok: Optional[Tok] = None) -> AwkError:
        tok = tok or self.tok
        near = "end of file" if tok.kind == "EOF" else ("end of line" if tok.value == "\n" else str(tok.value))
        return AwkError(f"awk: line {tok.line}: syntax error at or near {near}")

    def is_op(self, *values) -> bool:
        t = self.tok
        return t.kind == "OP" and t.value in values

    def is_kw(self, value) -> bool:
        t = self.tok
        return t.kind == "KW" and t.value == value

    def take(self) -> Tok:
        t = self.toks[self.i]
        self.i += 1
        return t

    def expect(self, value):
        if not (self.tok.kind in ("OP", "KW") and self.tok.value == value):
            raise self.error()
        return self.take()

    def newlines(self):
        while self.is_op("\n"):
            self.i += 1

    def terminators(self):
        while self.is_op("\n", ";"):
            self.i += 1

    def parse(self):
        self.terminators()
        while self.tok.kind != "EOF":
            self.item()
            self.terminators()
        return self

    def item(self):
        if self.is_kw("BEGIN"):
            self.take()
            self.newlines()
            self.begin.append(self.block())
        elif self.is_kw("END"):
            self.take()
            self.newlines()
            self.end.append(self.block())
        elif self.is_kw("function"):
            self.take()
            t = self.take()
            if t.kind not in ("NAME", "FUNC_NAME"):
                raise self.error(t)
            self.expect("(")
            params = []
            while not self.is_op(")"):
                p = self.take()
                if p.kind != "NAME":
                    raise self.error(p)
                params.append(p.value)
                if self.is_op(","):
                    self.take()
                    self.newlines()
            self.take()
            self.newlines()
            self.functions[t.value] = (params, self.block())
        else:
            pattern = pattern2 = None
            if not self.is_op("{"):
                pattern = self.expr()
                if self.is_op(","):
                    self.take()
                    self.newlines()
                    pattern2 = self.expr()
            body = self.block() if self.is_op("{") else None
            self.rules.append((pattern, pattern2, body))

    def block(self):
        self.expect("{")
        stmts = []
        self.terminators()
        while not self.is_op("}"):
            if self.tok.kind == "EOF":
                raise self.error()
            stmts.append(self.statement())
            self.terminators()
        self.take()
        return ("block", stmts)

    def simple_end(self):
        if self.is_op(";", "\n"):
            self.take()
        elif not self.is_op("}") and self.tok.kind != "EOF":
            raise self.error()

    def statement(self):
        t = self.tok
        if t.kind == "OP" and t.value == "{":
            return self.block()
        if t.kind == "OP" and t.value == ";":
            self.take()
            return ("block", [])
        if t.kind == "KW":
            k = t.value
            if k == "if":
                self.take()
                self.expect("(")
                cond = self.expr()
                self.expect(")")
                self.newlines()
                then = self.statement()
                save = self.i
                self.terminators()
                if self.is_kw("else"):
                    self.take()
                    self.newlines()
                    return ("if", cond, then, self.statement())
                self.i = save
                return ("if", cond, then, None)
            if k == "while":
                self.take()
                self.expect("(")
                cond = self.expr()
                self.expect(")")
                if self.is_op(";"):
                    self.take()
                    return ("while", cond, ("block", []))
                self.newlines()
                return ("while", cond, self.statement())
            if k == "do":
                self.take()
                self.newlines()
                body = self.statement()
                self.terminators()
                if not self.is_kw("while"):
                    raise self.error()
                self.take()
                self.expect("(")
                cond = self.expr()
                self.expect(")")
                self.simple_end()
                return ("do", body, cond)
            if k == "for":
                self.take()
                self.expect("(")
                if self.tok.kind == "NAME" and self.toks[self.i + 1].kind == "KW" and \
                        self.toks[self.i + 1].value == "in" and self.toks[self.i + 3].value == ")":
                    var = self.take().value
                    self.take()
                    arr = self.take()
                    if arr.kind != "NAME":
                        raise self.error(arr)
                    self.expect(")")
                    self.newlines()
                    return ("forin", var, arr.value, self.statement())
                init = None if self.is_op(";") else self.simple_statement()
                self.expect(";")
                self.newlines()
                cond = None if self.is_op(";") else self.expr()
                self.expect(";")
                self.newlines()
                step = None if self.is_op(")") else self.simple_statement()
                self.expect(")")
                if self.is_op(";"):
                    self.take()
                    return ("for", init, cond, step, ("block", []))
                self.newlines()
                return ("for", init, cond, step, self.statement())
            if k in ("break", "continue", "next", "nextfile"):
                self.take()
                self.simple_end()
                return (k,)
            if k in ("exit", "return"):
                self.take()
                value = None if self.is_op(";", "\n", "}") or self.tok.kind == "EOF" else self.expr()
                self.simple_end()
                return (k, value)
        node = self.simple_statement()
        self.simple_end()
        return node

    def simple_statement(self):
        t = self.tok
        if t.kind == "KW" and t.value in ("print", "printf"):
            self.take()
            self.in_print += 1
            args = []
            if self.is_op("(") and self._parenthesized_list_is_whole():
                self.take()
                saved, self.in_print = self.in_print, 0     # inside the parentheses > compares
                args = self.expr_list(")")
                self.in_print = saved
                self.take()
            elif not (self.is_op(";", "\n", "}", ">", ">>", "|") or self.tok.kind == "EOF"):
                args = self.expr_list(None)
            self.in_print -= 1
            redirect = None
            if self.is_op(">", ">>", "|"):
                op = self.take().value
                redirect = (op, self.concat_expr())
            return (t.value, args, redirect)
        if t.kind == "KW" and t.value == "delete":
            self.take()
            name = self.take()
            if name.kind != "NAME":
                raise self.error(name)
            if self.is_op("["):
                self.take()
                subs = self.expr_list("]")
                self.take()
                return ("delete", name.value, subs)
            return ("delete", name.value, None)
        return ("expr", self.expr())

    def _parenthesized_list_is_whole(self) -> bool:
        """print (a, b) > "x": the parentheses hold the whole argument list."""
        depth = 0
        j = self.i
        while j < len(self.toks):
            t = self.toks[j]
            if t.kind == "OP" and t.value in "([":
                depth += 1
            elif t.kind == "OP" and t.value in ")]":
                depth -= 1
                if depth == 0:
                    nxt = self.toks[j + 1]
                    return nxt.kind == "EOF" or (nxt.kind == "OP" and nxt.value in (";", "\n", "}", ">", ">>", "|"))
            elif t.kind == "EOF":
                return False
            j += 1
        return False

    def expr_list(self, closer):
        items = [self.expr()]
        while self.is_op(","):
            self.take()
            self.newlines()
            items.append(self.expr())
        if closer and not self.is_op(closer):
            raise self.error()
        return items

    # expressions, lowest precedence first
    def expr(self):
        return self.ternary()

    def ternary(self):
        cond = self.or_expr()
        if self.is_op("?"):
            self.take()
            self.newlines()
            a = self.ternary()
            self.newlines()
            self.expect(":")
            self.newlines()
            b = self.ternary()
            return ("cond", cond, a, b)
        if self.is_op("=", "+=", "-=", "*=", "/=", "%=", "^=") and cond[0] in ("var", "index", "field"):
            op = self.take().value
            self.newlines()
            return ("assign", op, cond, self.ternary())
        return cond

    def or_expr(self):
        left = self.and_expr()
        while self.is_op("||"):
            self.take()
            self.newlines()
            left = ("or", left, self.and_expr())
        return left

    def and_expr(self):
        left = self.in_expr()
        while self.is_op("&&"):
            self.take()
            self.newlines()
            left = ("and", left, self.in_expr())
        return left

    def in_expr(self):
        left = self.match_expr()
        while self.is_kw("in") and not self.no_in:
            self.take()
            arr = self.take()
            if arr.kind != "NAME":
                raise self.error(arr)
            left = ("in", [left] if left[0] != "group" else left[1], arr.value)
        return left

    def match_expr(self):
        left = self.rel_expr()
        while self.is_op("~", "!~"):
            op = self.take().value
            left = ("match", op == "!~", left, self.rel_expr())
        return left

    def rel_expr(self):
        left = self.concat_expr()
        if self.is_op("<", "<=", "!=", "==", ">=") or (self.is_op(">") and not self.in_print):
            op = self.take().value
            left = ("cmp", op, left, self.concat_expr())
        return left

    def concat_expr(self):
        left = self.additive()
        while self._starts_operand():
            left = ("concat", left, self.additive())
        return left

    def _starts_operand(self) -> bool:
        t = self.tok
        if t.kind in ("NUMBER", "STRING", "ERE", "NAME", "FUNC_NAME", "BUILTIN"):
            return True
        return t.kind == "OP" and t.value in ("$", "!", "(", "-", "+", "++", "--")

    def additive(self):
        left = self.multiplicative()
        while self.is_op("+", "-"):
            op = self.take().value
            left = ("arith", op, left, self.multiplicative())
        return left

    def multiplicative(self):
        left = self.unary()
        while self.is_op("*", "/", "%"):
            op = self.take().value
            left = ("arith", op, left, self.unary())
        return left

    def unary(self):
        if self.is_op("!"):
            self.take()
            return ("not", self.unary())
        if self.is_op("-"):
            self.take()
            return ("neg", self.unary())
        if self.is_op("+"):
            self.take()
            return ("plus", self.unary())
        return self.power()

    def power(self):
        base = self.postfix()
        if self.is_op("^"):
            self.take()
            return ("arith", "^", base, self.unary_power())
        return base

    def unary_power(self):
        if self.is_op("-"):
            self.take()
            return ("neg", self.unary_power())
        if self.is_op("+"):
            self.take()
            return ("plus", self.unary_power())
        if self.is_op("!"):
            self.take()
            return ("not", self.unary_power())
        return self.power()

    def postfix(self):
        if self.is_op("++", "--"):
            op = self.take().value
            target = self.postfix()
            if target[0] not in ("var", "index", "field"):
                raise self.error()
            return ("preinc", 1 if op == "++" else -1, target)
        node = self.primary()
        if node[0] in ("var", "index", "field") and self.is_op("++", "--"):
            op = self.take().value
            return ("postinc", 1 if op == "++" else -1, node)
        return node

    def primary(self):
        t = self.take()
        k = t.kind
        if k == "NUMBER":
            return ("num", t.value)
        if k == "STRING":
            return ("str", t.value)
        if k == "ERE":
            return ("regex", t.value)
        if k == "OP" and t.value == "$":
            return ("field", self.postfix_for_field())
        if k == "OP" and t.value == "(":
            saved_print, self.in_print = self.in_print, 0
            first = self.expr()
            if self.is_op(","):
                items = [first]
                while self.is_op(","):
                    self.take()
                    self.newlines()
                    items.append(self.expr())
                self.expect(")")
                self.in_print = saved_print
                if not self.is_kw("in"):
                    raise self.error()
                return ("group", items)
            self.expect(")")
            self.in_print = saved_print
            return ("paren", first)
        if k == "NAME":
            if self.is_op("["):
                self.take()
                subs = self.expr_list("]")
                self.take()
                return ("index", t.value, subs)
            return ("var", t.value)
        if k == "FUNC_NAME":
            self.expect("(")
            args = [] if self.is_op(")") else self.expr_list(")")
            self.expect(")")
            return ("call", t.value, args)
        if k == "BUILTIN":
            if self.is_op("("):
                self.take()
                args = [] if self.is_op(")") else self.expr_list(")")
                self.expect(")")
                if (t.value == "match" and len(args) > 2) or (t.value == "split" and len(args) > 3):
                    # gawk's match(s, r, arr) and split(s, a, r, seps): mawk's grammar has no
                    # room for the extra argument
                    raise AwkError(f"awk: line {t.line}: syntax error at or near ,")
                if t.value in ("sub", "gsub") and len(args) > 2 and args[2][0] not in ("var", "index", "field"):
                    raise AwkError(f"awk: line {t.line}: {t.value}: the target must be a variable, "
                                   f"array element or field")
            else:
                args = None if t.value == "length" else []
                if t.value != "length":
                    raise self.error()
            return ("builtin", t.value, args)
        if k == "KW" and t.value == "getline":
            target = None
            if self.tok.kind == "NAME" or self.is_op("$"):
                target = self.postfix() if not self.is_op("$") else self.primary()
            if self.is_op("<"):
                self.take()
                return ("getline", target, self.primary())
            return ("getline", target)
        if k == "OP" and t.value in ("-", "+", "!"):
            operand = self.unary()
            return {"-": ("neg", operand), "+": ("plus", operand), "!": ("not", operand)}[t.value]
        raise self.error(t)

    def postfix_for_field(self):
        """The operand of $: `$i++` increments the field $i, while `$a[i]++` is `$(a[i]++)`
        (the One True AWK's grammar)."""
        if self.is_op("-"):
            self.take()
            return ("neg", self.postfix_for_field())
        if self.tok.kind == "NAME" and not (self.toks[self.i + 1].kind == "OP" and self.toks[self.i + 1].value == "["):
            return self.primary()
        return self.postfix()


