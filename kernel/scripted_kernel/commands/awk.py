"""awk: the POSIX awk language (plus gensub, length(array), IGNORECASE-free) on standard input.

Program text → tokens → syntax tree (tuples) → a tree-walking evaluator. Values follow POSIX:
numbers (float), strings (str) and strnums (input-derived strings that look numeric, compared
as numbers). Files, commands and the host environment are out of reach: `getline < file`,
`cmd | getline`, `print > file` and `system()` are refused; ENVIRON holds the script's
exported variables.
"""
from __future__ import annotations

import math
import random
import re
from typing import Optional

import regex

from ._options import UsageError, run_guarded
from ..shell.regexes import DEFAULT_TIMEOUT, RegexError, risky, translate

NAMES = ("awk", "gawk", "mawk", "nawk")

KEYWORDS = {"BEGIN", "END", "function", "func", "if", "else", "while", "for", "do", "break",
            "continue", "next", "nextfile", "exit", "return", "delete", "in", "getline", "print",
            "printf"}
BUILTINS = {"length", "substr", "index", "split", "sub", "gsub", "match", "sprintf", "sin", "cos",
            "atan2", "exp", "log", "sqrt", "int", "rand", "srand", "tolower", "toupper", "system",
            "close", "fflush", "gensub"}
_NUMBER_RE = re.compile(r"\s*[-+]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|0[xX][0-9a-fA-F]+|inf(?:inity)?|nan)\s*\Z", re.I)
_LEADING_NUMBER = re.compile(r"\s*[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


class AwkError(Exception):
    def __init__(self, message: str, status: int = 2):
        super().__init__(message)
        self.message = message
        self.status = status


class StrNum(str):
    """A string from input that looks like a number: compares numerically."""
    __slots__ = ("num",)


def strnum(text: str):
    if _NUMBER_RE.match(text) and not re.match(r"\s*[-+]?(inf|nan|0x)", text, re.I):
        s = StrNum(text)
        s.num = float(text)
        return s
    return text


_INF_NAN = re.compile(r"\s*([-+]?)(inf|infinity|nan)\s*\Z", re.I)


def to_num(v) -> float:
    t = type(v)
    if t is float:
        return v
    if t is StrNum:
        return v.num
    if t is int:
        return float(v)
    m = _LEADING_NUMBER.match(v)
    if m:
        return float(m.group())
    m = _INF_NAN.match(v)          # only the whole word: "inform" is 0
    if m:
        value = float(m.group(2)[:3])
        return -value if m.group(1) == "-" else value
    return 0.0


def num_to_str(n: float, fmt: str = "%.6g") -> str:
    if n == int(n) and abs(n) < 2 ** 63:
        return str(int(n))
    if n != n:
        return "nan" if math.copysign(1, n) > 0 else "-nan"
    if n in (math.inf, -math.inf):
        return "inf" if n > 0 else "-inf"
    return fmt % n


# ---------------------------------------------------------------- lexer

class Tok:
    __slots__ = ("kind", "value", "line")

    def __init__(self, kind, value, line):
        self.kind, self.value, self.line = kind, value, line

    def __repr__(self):
        return f"{self.kind}:{self.value!r}"


_OPERATORS = ["+=", "-=", "*=", "/=", "%=", "^=", "**=", "||", "&&", "==", "<=", ">=", "!=", "++", "--",
              ">>", "!~", "**", "+", "-", "*", "/", "%", "^", "!", ">", "<", "|", "?", ":", "~", "$",
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
            out = []
            while j < n and src[j] != '"':
                if src[j] == "\\" and j + 1 < n:
                    e = src[j + 1]
                    if e in _ESCAPES:
                        out.append(_ESCAPES[e])
                        j += 2
                    elif e in "01234567":
                        m = re.match(r"[0-7]{1,3}", src[j + 1:])
                        out.append(_Byte(int(m.group(), 8)))
                        j += 1 + m.end()
                    elif e == "x" and re.match(r"[0-9A-Fa-f]", src[j + 2:j + 3]):
                        m = re.match(r"[0-9A-Fa-f]{1,2}", src[j + 2:])
                        out.append(_Byte(int(m.group(), 16)))
                        j += 2 + m.end()
                    elif e == "\n":
                        j += 2
                    else:
                        out.append("\\" + e)
                        j += 2
                    continue
                if src[j] == "\n":
                    raise AwkError(f"awk: line {line}: runaway string constant \"{''.join(out)[:10]} ...")
                out.append(src[j])
                j += 1
            if j >= n:
                raise AwkError(f"awk: line {line}: runaway string constant \"{''.join(out)[:10]} ...")
            toks.append(Tok("STRING", _join_bytes(out), line))
            i = j + 1
            continue
        if c == "/" and regex_allowed():
            j = i + 1
            out = []
            in_bracket = False
            while j < n and (src[j] != "/" or in_bracket):
                if src[j] == "\n":
                    raise AwkError(f"awk: line {line}: runaway regular expression /{''.join(out)[:10]} ...")
                if src[j] == "\\" and j + 1 < n:
                    out.append(src[j:j + 2] if src[j + 1] != "/" else "/")
                    j += 2
                    continue
                if src[j] == "[" and not in_bracket:
                    in_bracket = True
                    out.append("[")
                    j += 1
                    if j < n and src[j] == "^":
                        out.append("^")
                        j += 1
                    if j < n and src[j] == "]":
                        out.append("]")
                        j += 1
                    continue
                if src[j] == "]" and in_bracket:
                    in_bracket = False
                out.append(src[j])
                j += 1
            if j >= n:
                raise AwkError(f"awk: line {line}: runaway regular expression /{''.join(out)[:10]} ...")
            toks.append(Tok("ERE", "".join(out), line))
            i = j + 1
            continue
        if (c.isascii() and c.isdigit()) or (c == "." and i + 1 < n and src[i + 1] in "0123456789"):
            m = re.compile(r"0[xX][0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?").match(src, i)
            text = m.group()
            toks.append(Tok("NUMBER", float(int(text, 16)) if text[:2] in ("0x", "0X") else float(text), line))
            i = m.end()
            continue
        if c.isalpha() or c == "_":
            m = re.compile(r"[A-Za-z_][A-Za-z0-9_]*").match(src, i)
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
                toks.append(Tok("OP", "^" if op == "**" else ("^=" if op == "**=" else op), line))
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
        if t.kind == "OP" and t.value in ("$", "!", "(", "-", "+", "++", "--"):
            return t.value not in ("-", "+") or True
        return t.kind == "KW" and t.value == "getline" and False

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
            if self.is_kw("getline") and False:
                pass
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
                raise AwkError("awk: getline < file: file access is disabled in logic mode")
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


# ---------------------------------------------------------------- runtime

class _Next(Exception):
    pass


class _Exit(Exception):
    def __init__(self, status):
        self.status = status


class _Return(Exception):
    def __init__(self, value):
        self.value = value


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


class Interpreter:
    def __init__(self, program: Parser, sh, assigns: list, field_sep: Optional[str]):
        self.p = program
        self.sh = sh
        self.globals: dict = {
            "FS": " ", "OFS": " ", "ORS": "\n", "RS": "\n", "NR": 0.0, "NF": 0.0, "FNR": 0.0,
            "SUBSEP": "\x1c", "RSTART": 0.0, "RLENGTH": -1.0, "CONVFMT": "%.6g", "OFMT": "%.6g",
            "FILENAME": "",
        }
        env = {k: strnum(v) for k, v in sh.exported_env().items()}
        self.arrays: dict = {"ENVIRON": env, "ARGV": {"0": "awk"}}
        self.globals["ARGC"] = 1.0
        if field_sep is not None:
            self.globals["FS"] = field_sep
        for name, value in assigns:
            self.globals[name] = strnum(value)
        self.operand_assigns: list = []      # `var=value` operands: done when input is first read
        self.fields: list = [""]
        self.record_fs = " "
        self.nf = 0
        self.record_split = True
        self.frames: list = []
        self.out: list = []
        self.out_size = 0
        self.range_active: dict = {}
        self.random = random.Random(0)
        self.seed = 0.0
        self.records = None
        self.steps = 0
        # node kind → bound evaluator, looked up once instead of per evaluation
        self.handlers = {name[2:]: getattr(self, name) for name in dir(self) if name.startswith("e_")}

    # -- output
    def write(self, text: str, stream: str = "stdout"):
        if stream == "stderr":
            self.flush()
            self.sh.err(text)
            return
        self.out.append(text)
        self.out_size += len(text)
        if self.out_size > 65536:
            self.flush()

    def flush(self):
        if self.out:
            self.sh.out("".join(self.out))
            self.out = []
            self.out_size = 0

    def tick(self):
        self.steps += 1
        if not self.steps & 1023:
            self.sh.budget.check_clock()

    # -- variables
    def get_var(self, name):
        if self.frames:
            frame = self.frames[-1]
            if name in frame:
                v = frame[name]
                return "" if v is None else v
        if name == "NF":
            self.split_record()
            return float(self.nf)
        v = self.globals.get(name)
        if v is None:
            if name in self.arrays:
                raise AwkError(f"awk: can't use array {name} in scalar context")
            return StrNumEmpty
        return v

    def set_var(self, name, value):
        if self.frames and name in self.frames[-1]:
            self.frames[-1][name] = value
            return value
        if name == "NF":
            self.split_record()
            self.set_nf(int(to_num(value)))
            return value
        self.globals[name] = value
        return value

    def array(self, name) -> dict:
        if self.frames:
            frame = self.frames[-1]
            if name in frame:
                v = frame[name]
                if v is None or v == "" and not isinstance(v, dict):
                    v = {}
                    frame[name] = v
                if not isinstance(v, dict):
                    raise AwkError(f"awk: can't use scalar {name} as array")
                return v
        arr = self.arrays.get(name)
        if arr is None:
            if name in self.globals:
                raise AwkError(f"awk: can't use scalar {name} as array")
            arr = {}
            self.arrays[name] = arr
        return arr

    def subscript(self, subs) -> str:
        if len(subs) == 1:
            return self.to_str(self.eval(subs[0]))
        return self.to_str(self.get_var("SUBSEP")).join(self.to_str(self.eval(s)) for s in subs)

    # -- records and fields
    def set_record(self, text: str):
        """A new $0, split (lazily) with the FS in force now, as POSIX requires."""
        self.fields = [text]
        self.record_split = False
        self.record_fs = self.globals["FS"]

    def split_record(self):
        if self.record_split:
            return
        self.record_split = True
        rec = self.fields[0]
        parts = self.split(rec, self.record_fs)
        self.fields = [self.fields[0]] + [strnum(p) for p in parts]
        self.nf = len(parts)

    def split(self, text: str, fs) -> list:
        fs = self.to_str(fs)
        if fs == " ":
            return text.split()
        if text == "":
            return []
        if fs == "":
            return list(text)
        if len(fs) == 1 and fs != "\\":
            return text.split(fs) if fs != "\t" or True else text.split("\t")
        rx = self.regex(fs)
        return _timed(rx.split, text)

    def get_field(self, i: int):
        if i < 0:
            raise AwkError(f"awk: trying to access out of range field {i}")
        if i == 0:
            return strnum(self.fields[0]) if not isinstance(self.fields[0], StrNum) else self.fields[0]
        self.split_record()
        return self.fields[i] if i <= self.nf else ""

    def set_field(self, i: int, value):
        if i == 0:
            self.set_record(self.to_str(value))
            return
        self.split_record()
        while self.nf < i:
            self.fields.append("")
            self.nf += 1
        self.fields[i] = value
        self.rebuild()

    def set_nf(self, n: int):
        self.split_record()
        if n < self.nf:
            self.fields = self.fields[:n + 1]
        else:
            self.fields.extend([""] * (n - self.nf))
        self.nf = n
        self.rebuild()

    def rebuild(self):
        ofs = self.to_str(self.globals["OFS"])
        self.fields[0] = ofs.join(self.to_str(f) for f in self.fields[1:self.nf + 1])

    # -- conversions
    def to_str(self, v, output: bool = False) -> str:
        if type(v) is float:
            return num_to_str(v, self.to_str(self.globals["OFMT" if output else "CONVFMT"]))
        return v

    def regex(self, pattern: str):
        try:
            return _compile_ere(pattern)
        except (RegexError, regex.error) as e:
            raise AwkError(f"awk: regular expression compile failed ({e})\n{pattern}") from None

    def match_rx(self, node):
        if node[0] == "regex":
            return self.regex(node[1])
        return self.regex(self.to_str(self.eval(node)))

    def truth(self, v) -> bool:
        t = type(v)
        if t is float:
            return v != 0
        if t is StrNum:
            return v.num != 0
        return v != ""

    def compare(self, op, a, b) -> bool:
        if _is_num(a) and _is_num(b):
            x, y = to_num(a), to_num(b)
        else:
            x, y = self.to_str(a), self.to_str(b)
        if op == "<":
            return x < y
        if op == "<=":
            return x <= y
        if op == "==":
            return x == y
        if op == "!=":
            return x != y
        if op == ">":
            return x > y
        return x >= y

    # -- evaluation
    def eval(self, node):
        return self.handlers[node[0]](node)

    def e_num(self, n):
        return n[1]

    def e_str(self, n):
        return n[1]

    def e_regex(self, n):
        return 1.0 if _timed(self.regex(n[1]).search, self.to_str(self.get_field(0))) else 0.0

    def e_paren(self, n):
        return self.eval(n[1])

    def e_group(self, n):
        raise AwkError("awk: syntax error: (a, b) outside of `in`")

    def e_var(self, n):
        return self.get_var(n[1])

    def e_index(self, n):
        arr = self.array(n[1])
        key = self.subscript(n[2])
        v = arr.get(key)
        if v is None:
            arr[key] = v = StrNumEmpty
        return v

    def e_field(self, n):
        return self.get_field(int(to_num(self.eval(n[1]))))

    def e_concat(self, n):
        return self.to_str(self.eval(n[1])) + self.to_str(self.eval(n[2]))

    def e_arith(self, n):
        op = n[1]
        a = to_num(self.eval(n[2]))
        b = to_num(self.eval(n[3]))
        return _arith(op, a, b)

    def e_neg(self, n):
        return -to_num(self.eval(n[1]))

    def e_plus(self, n):
        return to_num(self.eval(n[1]))

    def e_not(self, n):
        return 0.0 if self.truth(self.eval(n[1])) else 1.0

    def e_and(self, n):
        return 1.0 if self.truth(self.eval(n[1])) and self.truth(self.eval(n[2])) else 0.0

    def e_or(self, n):
        return 1.0 if self.truth(self.eval(n[1])) or self.truth(self.eval(n[2])) else 0.0

    def e_cond(self, n):
        return self.eval(n[2]) if self.truth(self.eval(n[1])) else self.eval(n[3])

    def e_cmp(self, n):
        return 1.0 if self.compare(n[1], self.eval(n[2]), self.eval(n[3])) else 0.0

    def e_match(self, n):
        found = _timed(self.match_rx(n[3]).search, self.to_str(self.eval(n[2]))) is not None
        return 1.0 if found != n[1] else 0.0

    def e_in(self, n):
        arr = self.array(n[2])
        return 1.0 if self.subscript(n[1]) in arr else 0.0

    def assign_to(self, target, value):
        kind = target[0]
        if kind == "var":
            return self.set_var(target[1], value)
        if kind == "index":
            self.array(target[1])[self.subscript(target[2])] = value
            return value
        self.set_field(int(to_num(self.eval(target[1]))), value)
        return value

    def e_assign(self, n):
        op, target, expr = n[1], n[2], n[3]
        value = self.eval(expr)
        if op == "=":
            if type(value) is StrNum or value is StrNumEmpty:
                value = value
            return self.assign_to(target, value)
        current = to_num(self.eval(target))
        return self.assign_to(target, _arith(op[0], current, to_num(value)))

    def e_preinc(self, n):
        return self.assign_to(n[2], to_num(self.eval(n[2])) + n[1])

    def e_postinc(self, n):
        old = to_num(self.eval(n[2]))
        self.assign_to(n[2], old + n[1])
        return old

    def e_getline(self, n):
        rec = self.next_record()
        if rec is None:
            return 0.0
        self.globals["NR"] = self.globals["NR"] + 1
        if n[1] is None:
            self.set_record(rec)
            self.globals["FNR"] = self.globals["FNR"] + 1
        else:
            self.assign_to(n[1], strnum(rec))
        return 1.0

    def e_call(self, n):
        name, args = n[1], n[2]
        fn = self.p.functions.get(name)
        if fn is None:
            raise AwkError(f"awk: calling undefined function {name}")
        params, body = fn
        if len(args) > len(params):
            raise AwkError(f"awk: function {name} called with {len(args)} args, accepts only {len(params)}")
        frame = {}
        for k, param in enumerate(params):
            if k < len(args):
                a = args[k]
                if a[0] == "var" and (a[1] in self.arrays or (self.frames and isinstance(self.frames[-1].get(a[1]), dict))):
                    frame[param] = self.array(a[1])
                elif a[0] == "var" and a[1] not in self.globals and not (self.frames and a[1] in self.frames[-1]):
                    # an untyped variable: becomes an array if the function uses it as one
                    arr = {}
                    frame[param] = _Lazy(self, a[1], arr)
                else:
                    frame[param] = self.eval(a)
            else:
                frame[param] = None
        if len(self.frames) > 1000:
            raise AwkError("awk: function call nesting too deep")
        self.frames.append(frame)
        try:
            self.exec(body)
            result = StrNumEmpty
        except _Return as r:
            result = r.value
        finally:
            self.frames.pop()
        return result

    def e_builtin(self, n):
        name, args = n[1], n[2]
        if name == "length":
            if not args:
                return float(len(self.to_str(self.get_field(0))))
            a = args[0]
            if a[0] == "var" and (a[1] in self.arrays or (self.frames and isinstance(self.frames[-1].get(a[1]), dict))):
                return float(len(self.array(a[1])))
            return float(len(self.to_str(self.eval(a))))
        ev = [self.eval(a) for a in args] if name not in ("split", "sub", "gsub", "match") else None
        if name == "substr":
            s = self.to_str(ev[0])
            start = _round(to_num(ev[1]))
            if len(ev) > 2:
                length = to_num(ev[2])
                if length != length:
                    return ""
                end = start + _round(length)
            else:
                end = len(s) + 1
            start = max(start, 1)
            end = min(end, len(s) + 1)
            return s[start - 1:end - 1] if end > start else ""
        if name == "index":
            return float(self.to_str(ev[0]).find(self.to_str(ev[1])) + 1)
        if name == "split":
            s = self.to_str(self.eval(args[0]))
            arr_node = args[1]
            arr = self.array(arr_node[1])
            arr.clear()
            if len(args) > 2:
                sep = args[2]
                if sep[0] == "regex":
                    parts = self.regex(sep[1]).split(s) if s else []
                else:
                    parts = self.split(s, self.eval(sep))
            else:
                parts = self.split(s, self.globals["FS"])
            for k, part in enumerate(parts, 1):
                arr[str(k)] = strnum(part)
            return float(len(parts))
        if name in ("sub", "gsub"):
            return self.substitute(args, name == "gsub")
        if name == "match":
            s = self.to_str(self.eval(args[0]))
            m = _timed(self.match_rx(args[1]).search, s)
            if len(args) > 2:
                arr = self.array(args[2][1])
                arr.clear()
                if m:
                    for k in range(0, (m.re.groups or 0) + 1):
                        if m.group(k) is not None:
                            arr[str(k)] = m.group(k)
            if m:
                self.globals["RSTART"] = float(m.start() + 1)
                self.globals["RLENGTH"] = float(m.end() - m.start())
                return float(m.start() + 1)
            self.globals["RSTART"] = 0.0
            self.globals["RLENGTH"] = -1.0
            return 0.0
        if name == "sprintf":
            if not ev:
                raise AwkError("awk: sprintf: no format")
            return self.sprintf(self.to_str(ev[0]), ev[1:])
        if name in ("sin", "cos", "exp", "log", "sqrt", "int"):
            x = to_num(ev[0]) if ev else to_num(self.get_field(0))
            if name == "int":
                return float(math.trunc(x)) if math.isfinite(x) else x
            try:
                return float(getattr(math, name)(x))
            except (ValueError, OverflowError):
                return math.nan if name != "exp" else math.inf
        if name == "atan2":
            return math.atan2(to_num(ev[0]), to_num(ev[1]))
        if name == "rand":
            return self.random.random()
        if name == "srand":
            old = self.seed
            self.seed = to_num(ev[0]) if ev else 0.0
            self.random.seed(self.seed)
            return old
        if name == "tolower":
            return self.to_str(ev[0]).lower()
        if name == "toupper":
            return self.to_str(ev[0]).upper()
        if name == "system":
            raise AwkError("awk: system(): running commands is disabled in logic mode")
        if name in ("close", "fflush"):
            return 0.0
        if name == "gensub":
            return self.gensub(args)
        raise AwkError(f"awk: unknown function {name}")

    def substitute(self, args, global_: bool) -> float:
        rx = self.match_rx(args[0])
        repl = self.to_str(self.eval(args[1]))
        target = args[2] if len(args) > 2 else ("field", ("num", 0.0))
        text = self.to_str(self.eval(target))
        count = 0
        out = []
        pos = 0
        n = len(text)
        last_end = -1
        while pos <= n:
            m = _timed(rx.search, text, pos)
            if m is None:
                break
            if m.start() == m.end() == last_end:
                if pos < n:
                    out.append(text[pos])
                pos += 1
                continue
            out.append(text[pos:m.start()])
            out.append(_awk_replacement(repl, m.group()))
            count += 1
            last_end = m.end()
            if m.end() == m.start():
                if m.start() < n:
                    out.append(text[m.start()])
                pos = m.start() + 1
            else:
                pos = m.end()
            if not global_:
                break
        if count:
            out.append(text[pos:])
            self.assign_to(target, "".join(out))
        return float(count)

    def gensub(self, args) -> str:
        rx = self.match_rx(args[0])
        repl = self.to_str(self.eval(args[1]))
        how = self.to_str(self.eval(args[2]))
        text = self.to_str(self.eval(args[3])) if len(args) > 3 else self.to_str(self.get_field(0))
        which = 0 if how[:1] in ("g", "G") else max(1, int(to_num(how) or 1))
        count = 0

        def replace(m):
            nonlocal count
            count += 1
            if which and count != which:
                return m.group()
            out, i = [], 0
            while i < len(repl):
                c = repl[i]
                if c == "\\" and i + 1 < len(repl):
                    d = repl[i + 1]
                    if (d.isascii() and d.isdigit()):
                        out.append(m.group(int(d)) or "")
                    else:
                        out.append(d)
                    i += 2
                    continue
                out.append(m.group() if c == "&" else c)
                i += 1
            return "".join(out)
        return _timed(rx.sub, replace, text)

    def sprintf(self, fmt: str, args: list) -> str:
        out = []
        i, n, k = 0, len(fmt), 0
        while i < n:
            c = fmt[i]
            if c != "%":
                j = fmt.find("%", i)
                j = n if j < 0 else j
                out.append(fmt[i:j])
                i = j
                continue
            m = re.compile(r"%([-+ #0]*)(\*|\d+)?(?:\.(\*|\d*))?(?:hh|h|ll|l|L|q|j|z|t)?"
                           r"([cdiouxXeEfFgGaAs%])").match(fmt, i)
            if not m:
                out.append(fmt[i:])
                break
            i = m.end()
            flags, width, prec, conv = m.groups()
            if conv == "%":
                out.append("%")
                continue
            if width == "*":
                width = str(int(to_num(args[k]))) if k < len(args) else "0"
                k += 1
            if prec == "*":
                prec = str(int(to_num(args[k]))) if k < len(args) else "0"
                k += 1
            arg = args[k] if k < len(args) else StrNumEmpty
            k += 1
            spec = "%" + flags + (width or "") + ("." + prec if prec is not None else "")
            if conv == "c":
                ch = chr(int(to_num(arg))) if _is_num(arg) and type(arg) is not str else self.to_str(arg)[:1]
                out.append((spec.split(".")[0] + "s") % ch)
            elif conv == "s":
                out.append((spec + "s") % self.to_str(arg))
            elif conv in "di":
                v = to_num(arg)
                out.append((spec + "d") % (int(v) if math.isfinite(v) else 0))
            elif conv in "ouxX":
                v = int(to_num(arg))
                if v < 0:
                    v += 1 << 64
                out.append((spec + ("d" if conv == "u" else conv)) % v)
            elif conv in "aA":
                out.append(_hex_float(to_num(arg), conv == "A"))
            else:
                out.append((spec + conv) % to_num(arg))
        return "".join(out)

    # -- statements
    def exec(self, node):
        kind = node[0]
        if kind == "block":
            for stmt in node[1]:
                self.exec(stmt)
        elif kind == "expr":
            self.eval(node[1])
        elif kind == "print":
            self.do_print(node)
        elif kind == "printf":
            self.do_printf(node)
        elif kind == "if":
            if self.truth(self.eval(node[1])):
                self.exec(node[2])
            elif node[3] is not None:
                self.exec(node[3])
        elif kind == "while":
            while self.truth(self.eval(node[1])):
                self.tick()
                try:
                    self.exec(node[2])
                except _Break:
                    break
                except _Continue:
                    continue
        elif kind == "do":
            while True:
                self.tick()
                try:
                    self.exec(node[1])
                except _Break:
                    break
                except _Continue:
                    pass
                if not self.truth(self.eval(node[2])):
                    break
        elif kind == "for":
            if node[1] is not None:
                self.exec(node[1])
            while node[2] is None or self.truth(self.eval(node[2])):
                self.tick()
                try:
                    self.exec(node[4])
                except _Break:
                    break
                except _Continue:
                    pass
                if node[3] is not None:
                    self.exec(node[3])
        elif kind == "forin":
            arr = self.array(node[2])
            for key in list(arr):
                if key not in arr:
                    continue
                self.tick()
                self.assign_to(("var", node[1]), strnum(key))
                try:
                    self.exec(node[3])
                except _Break:
                    break
                except _Continue:
                    continue
        elif kind == "delete":
            arr = self.array(node[1])
            if node[2] is None:
                arr.clear()
            else:
                arr.pop(self.subscript(node[2]), None)
        elif kind == "next":
            raise _Next()
        elif kind == "nextfile":
            raise _Next()
        elif kind == "exit":
            raise _Exit(int(to_num(self.eval(node[1]))) if node[1] is not None else None)
        elif kind == "return":
            raise _Return(self.eval(node[1]) if node[1] is not None else StrNumEmpty)
        elif kind == "break":
            raise _Break()
        elif kind == "continue":
            raise _Continue()
        else:
            raise AwkError(f"awk: unknown statement {kind}")

    def _stream(self, redirect) -> str:
        if redirect is None:
            return "stdout"
        op, target = redirect
        dest = self.to_str(self.eval(target))
        if op in (">", ">>") and dest in ("/dev/stdout", "-"):
            return "stdout"
        if op in (">", ">>") and dest == "/dev/stderr":
            return "stderr"
        if op == "|":
            raise AwkError(f"awk: print | \"{dest}\": running commands is disabled in logic mode")
        raise AwkError(f"awk: print > \"{dest}\": file access is disabled in logic mode")

    def do_print(self, node):
        stream = self._stream(node[2])
        if not node[1]:
            text = self.to_str(self.get_field(0))
        else:
            ofs = self.to_str(self.globals["OFS"])
            text = ofs.join([self.to_str(self.eval(a), output=True) for a in node[1]])
        self.write(text + self.to_str(self.globals["ORS"]), stream)

    def do_printf(self, node):
        stream = self._stream(node[2])
        if not node[1]:
            raise AwkError("awk: printf: no format")
        values = [self.eval(a) for a in node[1]]
        self.write(self.sprintf(self.to_str(values[0]), values[1:]), stream)

    # -- the main loop
    def next_record(self) -> Optional[str]:
        if self.operand_assigns:
            for name, value in self.operand_assigns:
                self.globals[name] = strnum(value)
            self.operand_assigns = []
        if self.records is None:
            return None
        return next(self.records, None)

    def run(self, text: str) -> int:
        self.records = _records(text, self)
        status = 0
        try:
            try:
                for block in self.p.begin:
                    self.exec(block)
                if self.p.rules or self.p.end:
                    while True:
                        rec = self.next_record()
                        if rec is None:
                            break
                        self.globals["NR"] = self.globals["NR"] + 1
                        self.globals["FNR"] = self.globals["FNR"] + 1
                        self.set_record(rec)
                        try:
                            self.run_rules()
                        except _Next:
                            pass
            except _Exit as e:
                if e.status is not None:
                    status = e.status
            try:
                for block in self.p.end:
                    self.exec(block)
            except _Exit as e:
                if e.status is not None:
                    status = e.status
        except (_Return, _Break, _Continue, _Next):
            pass
        self.flush()
        return status & 0xFF

    def run_rules(self):
        for k, (pattern, pattern2, body) in enumerate(self.p.rules):
            if pattern2 is not None:
                if not self.range_active.get(k):
                    if not self.truth(self.eval(pattern)):
                        continue
                    self.range_active[k] = True
                if self.truth(self.eval(pattern2)):
                    self.range_active[k] = False
            elif pattern is not None and not self.truth(self.eval(pattern)):
                continue
            if body is None:
                self.write(self.to_str(self.get_field(0)) + self.to_str(self.globals["ORS"]))
            else:
                self.exec(body)


class _Lazy(dict):
    """An untyped argument: if the function uses it as an array, it becomes the caller's."""

    def __init__(self, interp, name, arr):
        super().__init__()
        self.interp = interp
        self.name = name

    def __setitem__(self, key, value):
        arr = self.interp.array(self.name)
        arr[key] = value
        super().__setitem__(key, value)


StrNumEmpty = StrNum("")
StrNumEmpty.num = 0.0


_RISKY: dict = {}


def _timed(method, *args):
    """A regex operation; patterns that can backtrack exponentially run under the per-call
    budget and fail cleanly (the timeout costs ~10x a plain match, so only those pay it)."""
    rx = method.__self__
    risky_rx = _RISKY.get(rx.pattern)
    if risky_rx is None:
        risky_rx = _RISKY[rx.pattern] = risky(rx)
    if not risky_rx:
        return method(*args)
    try:
        return method(*args, timeout=DEFAULT_TIMEOUT)
    except TimeoutError:
        raise AwkError("awk: regular expression too complex") from None


def _hex_float(x: float, upper: bool) -> str:
    """C's %a: 42 -> 0x1.5p+5."""
    text = x.hex()
    mantissa, _, exp = text.partition("p")
    if "." in mantissa:
        mantissa = mantissa.rstrip("0").rstrip(".")
    text = f"{mantissa}p{exp if exp.startswith('-') else '+' + exp.lstrip('+')}"
    return text.upper().replace("0X", "0X") if upper else text


def _is_num(v) -> bool:
    t = type(v)
    return t is float or t is StrNum or t is int


def _round(x: float) -> int:
    if x != x:
        return 0
    if x in (math.inf, -math.inf):
        return 1 << 62 if x > 0 else -(1 << 62)
    return int(math.floor(x + 0.5)) if x >= 0 else -int(math.floor(-x + 0.5))


def _arith(op: str, a: float, b: float) -> float:
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op == "/":
        if b == 0:
            raise AwkError("awk: division by zero")
        return a / b
    if op == "%":
        if b == 0:
            raise AwkError("awk: division by zero in %")
        return math.fmod(a, b)
    try:
        return math.pow(a, b)
    except (OverflowError, ValueError):
        return math.inf if a > 0 else math.nan


def _awk_replacement(repl: str, matched: str) -> str:
    out, i = [], 0
    while i < len(repl):
        c = repl[i]
        if c == "\\" and i + 1 < len(repl) and repl[i + 1] in "&\\":
            out.append(repl[i + 1])
            i += 2
            continue
        out.append(matched if c == "&" else c)
        i += 1
    return "".join(out)


_ere_cache: dict = {}


def _compile_ere(pattern: str):
    rx = _ere_cache.get(pattern)
    if rx is None:
        # awk strings and regex literals share escapes such as \/ and \"
        rx = regex.compile(translate(pattern, extended=True, awk=True), regex.V0 | regex.DOTALL)
        if len(_ere_cache) > 512:
            _ere_cache.clear()
        _ere_cache[pattern] = rx
    return rx


def _records(text: str, interp: Interpreter):
    """Records of the input by RS, read lazily so that RS may change in BEGIN."""
    pos = 0
    n = len(text)
    while pos < n:
        rs = interp.to_str(interp.globals["RS"])
        if rs == "\n":
            end = text.find("\n", pos)
            if end < 0:
                yield text[pos:]
                return
            yield text[pos:end]
            pos = end + 1
        elif rs == "":
            while pos < n and text[pos] == "\n":
                pos += 1
            if pos >= n:
                return
            m = re.compile(r"\n\n+").search(text, pos)
            if m is None:
                yield text[pos:].rstrip("\n")
                return
            yield text[pos:m.start()]
            pos = m.end()
        elif len(rs) == 1:
            end = text.find(rs, pos)
            if end < 0:
                rec = text[pos:]
                yield rec[:-1] if rec.endswith("\n") and rs != "\n" and False else rec
                return
            yield text[pos:end]
            pos = end + 1
        else:
            m = _timed(interp.regex(rs).search, text, pos)
            if m is None or m.end() == m.start():
                yield text[pos:]
                return
            yield text[pos:m.start()]
            pos = m.end()


def _program_and_args(argv):
    """(program, -F value, -v assignments, operand assignments)."""
    field_sep = None
    assigns = []
    operand_assigns = []
    i = 1
    while i < len(argv):
        a = argv[i]
        if a == "--":
            i += 1
            break
        if a.startswith("-F"):
            value = a[2:] if len(a) > 2 else (argv[i + 1] if i + 1 < len(argv) else None)
            if value is None:
                raise UsageError("awk: option requires an argument -- F", 2)
            i += 1 if len(a) > 2 else 2
            field_sep = "\t" if value == "t" else _unescape(value)
            continue
        if a.startswith("-v"):
            value = a[2:] if len(a) > 2 else (argv[i + 1] if i + 1 < len(argv) else None)
            if value is None or "=" not in value:
                raise UsageError(f"awk: improper assignment: -v {value or ''}", 2)
            i += 1 if len(a) > 2 else 2
            name, _, val = value.partition("=")
            assigns.append((name, _unescape(val)))
            continue
        if a.startswith("-f") or a == "--file":
            raise UsageError("awk: -f progfile: file access is disabled in logic mode", 2)
        if a in ("--posix", "--traditional", "-W") or a.startswith("--"):
            i += 1
            continue
        if a.startswith("-") and len(a) > 1:
            raise UsageError(f"awk: not an option: {a}", 2)
        break
    if i >= len(argv):
        raise UsageError("usage: awk [-F value] [-v var=value] [--] 'program text' [file ...]", 2)
    program = argv[i]
    operands = argv[i + 1:]
    for op in operands:
        if re.match(r"[A-Za-z_][A-Za-z0-9_]*=", op):
            name, _, val = op.partition("=")
            operand_assigns.append((name, _unescape(val)))
        elif op != "-":
            raise UsageError(f"awk: {op}: file access is disabled in logic mode", 2)
    return program, field_sep, assigns, operand_assigns


def _unescape(value: str) -> str:
    """-v and operand values get the escapes of string literals."""
    return tokenize('"' + value.replace('"', '\\"') + '"')[0].value if "\\" in value else value


def run(sh, argv):
    def body():
        program, field_sep, assigns, operand_assigns = _program_and_args(argv)
        try:
            parsed = Parser(program).parse()
            interp = Interpreter(parsed, sh, assigns, field_sep)
            interp.operand_assigns = operand_assigns
            text = sh.stdin.read_all() if (parsed.rules or parsed.end or "getline" in program) else ""
            return interp.run(text)
        except AwkError as e:
            if "interp" in locals():
                interp.flush()
            raise UsageError(e.message, e.status) from None
        except RecursionError:
            raise UsageError("awk: expression or function nesting too deep", 2) from None
    return run_guarded(argv[0], sh, body)
