"""The typed syntax tree produced by the parser.

Every node carries `pos`, the offset of its first character in the source the parser read;
`Source.line_col(pos)` turns it into a line and column for messages and `$LINENO`.
"""
from __future__ import annotations

from typing import Any, ClassVar, Optional, Union


class NodeBase:
    """Field-wise equality and a dataclass-like repr, from each class's FIELDS. (Plain classes
    rather than dataclasses: compiled by mypyc, a dataclass's __init__ stays interpreted, and
    constructing nodes is much of parsing.)"""
    FIELDS: ClassVar[tuple] = ()
    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and all(getattr(self, f) == getattr(other, f) for f in self.FIELDS)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{f}={getattr(self, f)!r}' for f in self.FIELDS)})"


# ---------------------------------------------------------------- words

class Lit(NodeBase):
    """Unquoted literal text (after backslash-escapes are resolved, `escaped` keeps them)."""
    FIELDS = ("pos", "text", "escaped")
    __slots__ = FIELDS

    def __init__(self, pos: int, text: str, escaped: bool = False):
        self.pos = pos
        self.text = text
        self.escaped = escaped  # the text came from a backslash escape: literal in patterns too


class SingleQuoted(NodeBase):
    """'...' or $'...' (already decoded): quoted literal text."""
    FIELDS = ("pos", "text")
    __slots__ = FIELDS

    def __init__(self, pos: int, text: str):
        self.pos = pos
        self.text = text


class DoubleQuoted(NodeBase):
    FIELDS = ("pos", "parts")
    __slots__ = FIELDS

    def __init__(self, pos: int, parts: list):
        self.pos = pos
        self.parts = parts


TRANSFORMS = "QEPAKaUuLk"         # the letters of ${x@L}


class ParamExp(NodeBase):
    """$name, ${name}, ${name[index]} and every ${...} operator form.

    op is one of: None, ':-' '-' ':=' '=' ':?' '?' ':+' '+', '#' '##' '%' '%%',
    '/' '//' '/#' '/%', '^' '^^' ',' ',,', ':' (slice), '@' (transform, arg = the letter; for
    letters bash does not know, arg2 = the whole ${...} text, named by the error).
    """
    FIELDS = ("pos", "name", "index", "length", "indirect", "prefix_list", "op", "arg", "arg2", "braced")
    __slots__ = FIELDS

    def __init__(self, pos: int, name: str, index: Optional[Word] = None, length: bool = False,
                 indirect: bool = False, prefix_list: str = "", op: Optional[str] = None,
                 arg: Optional[Word] = None, arg2: Optional[Word] = None, braced: bool = True):
        self.pos = pos
        self.name = name
        self.index = index
        self.length = length  # ${#x}
        self.indirect = indirect  # ${!x}
        self.prefix_list = prefix_list  # ${!prefix*} / ${!prefix@}: '*' or '@'
        self.op = op
        self.arg = arg
        self.arg2 = arg2  # slice length / replacement text
        self.braced = braced


class CommandSub(NodeBase):
    FIELDS = ("pos", "body", "backtick")
    __slots__ = FIELDS

    def __init__(self, pos: int, body: Node, backtick: bool = False):
        self.pos = pos
        self.body = body
        self.backtick = backtick


class ProcessSub(NodeBase):
    """<(...) or >(...): parsed so that it can be refused with a clear message."""
    FIELDS = ("pos", "body", "direction")
    __slots__ = FIELDS

    def __init__(self, pos: int, body: Node, direction: str):
        self.pos = pos
        self.body = body
        self.direction = direction


class ArithSub(NodeBase):
    FIELDS = ("pos", "expr")
    __slots__ = FIELDS

    def __init__(self, pos: int, expr: Word):
        self.pos = pos
        self.expr = expr


class Tilde(NodeBase):
    FIELDS = ("pos", "user")
    __slots__ = FIELDS

    def __init__(self, pos: int, user: str):
        self.pos = pos
        self.user = user


WordPart = Union[Lit, SingleQuoted, DoubleQuoted, ParamExp, CommandSub, ProcessSub, ArithSub, Tilde]


class Word(NodeBase):
    """A word: its parts, or for a word of plain literal text (most words: `echo`, `none`,
    `1`), that text, its one Lit made only when `parts` is asked for. A script's tree keeps
    every word of the functions it defines, most never run: two objects fewer each."""
    FIELDS = ("pos", "parts")
    __slots__ = ("pos", "_parts", "text")

    def __init__(self, pos: int, parts: Optional[list], text: Optional[str] = None):
        self.pos = pos
        self._parts = parts
        self.text = text  # set (and parts None) for a word that is this unquoted text only

    @property
    def parts(self) -> list:
        parts = self._parts
        if parts is None:
            parts = self._parts = [Lit(self.pos, self.text or "")]
        return parts

    def literal(self) -> Optional[str]:
        """The text of a word made of unquoted literals only (reserved words, names), else None."""
        if self.text is not None:
            return self.text
        if len(self.parts) == 1 and type(self.parts[0]) is Lit and not self.parts[0].escaped:
            return self.parts[0].text
        text = []
        for p in self.parts:
            if type(p) is not Lit or p.escaped:
                return None
            text.append(p.text)
        return "".join(text)


# ---------------------------------------------------------------- commands

class ArrayElem(NodeBase):
    FIELDS = ("pos", "key", "value", "append")
    __slots__ = FIELDS

    def __init__(self, pos: int, key: Optional[Word], value: Word, append: bool = False):
        self.pos = pos
        self.key = key
        self.value = value
        self.append = append  # [k]+=v


class Assign(NodeBase):
    FIELDS = ("pos", "name", "index", "append", "value", "array")
    __slots__ = FIELDS

    def __init__(self, pos: int, name: str, index: Optional[Word], append: bool, value: Optional[Word],
                 array: Optional[list] = None):
        self.pos = pos
        self.name = name
        self.index = index
        self.append = append
        self.value = value
        self.array = array  # list[ArrayElem] for name=( ... )


class HereDoc(NodeBase):
    FIELDS = ("pos", "delimiter", "quoted", "strip_tabs", "body")
    __slots__ = FIELDS

    def __init__(self, pos: int, delimiter: str, quoted: bool, strip_tabs: bool, body: Optional[Word] = None):
        self.pos = pos
        self.delimiter = delimiter
        self.quoted = quoted
        self.strip_tabs = strip_tabs
        self.body = body  # filled in when the body lines are read


class Redirect(NodeBase):
    FIELDS = ("pos", "fd", "op", "target")
    __slots__ = FIELDS

    def __init__(self, pos: int, fd: Union[int, str, None], op: str, target: Union[Word, HereDoc]):
        self.pos = pos
        self.fd = fd  # a descriptor, or the variable of `{name}>file`
        self.op = op  # < > >> >| <> <& >& &> &>> << <<- <<<
        self.target = target


class SimpleCommand(NodeBase):
    FIELDS = ("pos", "assigns", "words", "redirects", "end")
    __slots__ = FIELDS

    def __init__(self, pos: int, assigns: tuple[Assign, ...], words: tuple, redirects: tuple[Redirect, ...],
                 end: int = 0):
        self.pos = pos
        self.assigns = assigns
        self.words = words  # Words, and Assigns among a declaration's arguments (`local x=1`)
        self.redirects = redirects
        self.end = end  # where its text ends ($BASH_COMMAND)


class Pipeline(NodeBase):
    FIELDS = ("pos", "commands", "negate", "timed", "stderr_too")
    __slots__ = FIELDS

    def __init__(self, pos: int, commands: list, negate: bool = False, timed: bool = False,
                 stderr_too: Optional[list] = None):
        self.pos = pos
        self.commands = commands
        self.negate = negate
        self.timed = timed
        self.stderr_too: list = stderr_too if stderr_too is not None else []  # per '|' : True for '|&'


class AndOr(NodeBase):
    FIELDS = ("pos", "first", "rest")
    __slots__ = FIELDS

    def __init__(self, pos: int, first: Node, rest: list):
        self.pos = pos
        self.first = first
        self.rest = rest  # [(op '&&'|'||', Node)]


class CommandList(NodeBase):
    FIELDS = ("pos", "items")
    __slots__ = FIELDS

    def __init__(self, pos: int, items: list):
        self.pos = pos
        self.items = items


class BraceGroup(NodeBase):
    FIELDS = ("pos", "body", "redirects")
    __slots__ = FIELDS

    def __init__(self, pos: int, body: Node, redirects: tuple[Redirect, ...] = ()):
        self.pos = pos
        self.body = body
        self.redirects = redirects


class Subshell(NodeBase):
    FIELDS = ("pos", "body", "redirects")
    __slots__ = FIELDS

    def __init__(self, pos: int, body: Node, redirects: tuple[Redirect, ...] = ()):
        self.pos = pos
        self.body = body
        self.redirects = redirects


class If(NodeBase):
    FIELDS = ("pos", "clauses", "else_body", "redirects")
    __slots__ = FIELDS

    def __init__(self, pos: int, clauses: list, else_body: Optional[Node], redirects: tuple[Redirect, ...] = ()):
        self.pos = pos
        self.clauses = clauses  # [(cond, body)]
        self.else_body = else_body
        self.redirects = redirects


class While(NodeBase):
    FIELDS = ("pos", "cond", "body", "until", "redirects")
    __slots__ = FIELDS

    def __init__(self, pos: int, cond: Node, body: Node, until: bool = False,
                 redirects: tuple[Redirect, ...] = ()):
        self.pos = pos
        self.cond = cond
        self.body = body
        self.until = until
        self.redirects = redirects


class For(NodeBase):
    FIELDS = ("pos", "var", "words", "body", "redirects", "select")
    __slots__ = FIELDS

    def __init__(self, pos: int, var: str, words: Optional[tuple[Word, ...]], body: Node,
                 redirects: tuple[Redirect, ...] = (), select: bool = False):
        self.pos = pos
        self.var = var
        self.words = words  # None: "$@"
        self.body = body
        self.redirects = redirects
        self.select = select  # `select var in words`: a menu read from standard input


class ArithFor(NodeBase):
    FIELDS = ("pos", "init", "cond", "step", "body", "redirects")
    __slots__ = FIELDS

    def __init__(self, pos: int, init: Optional[Word], cond: Optional[Word], step: Optional[Word], body: Node,
                 redirects: tuple[Redirect, ...] = ()):
        self.pos = pos
        self.init = init
        self.cond = cond
        self.step = step
        self.body = body
        self.redirects = redirects


class CaseItem(NodeBase):
    FIELDS = ("pos", "patterns", "body", "terminator")
    __slots__ = FIELDS

    def __init__(self, pos: int, patterns: list[Word], body: Optional[Node], terminator: str):
        self.pos = pos
        self.patterns = patterns
        self.body = body
        self.terminator = terminator  # ';;' ';&' ';;&'


class Case(NodeBase):
    FIELDS = ("pos", "word", "items", "redirects")
    __slots__ = FIELDS

    def __init__(self, pos: int, word: Word, items: list[CaseItem], redirects: tuple[Redirect, ...] = ()):
        self.pos = pos
        self.word = word
        self.items = items
        self.redirects = redirects


class ArithCommand(NodeBase):
    FIELDS = ("pos", "expr", "redirects")
    __slots__ = FIELDS

    def __init__(self, pos: int, expr: Word, redirects: tuple[Redirect, ...] = ()):
        self.pos = pos
        self.expr = expr
        self.redirects = redirects


class CondUnary(NodeBase):
    FIELDS = ("pos", "op", "operand")
    __slots__ = FIELDS

    def __init__(self, pos: int, op: str, operand: Word):
        self.pos = pos
        self.op = op
        self.operand = operand


class CondBinary(NodeBase):
    FIELDS = ("pos", "op", "left", "right")
    __slots__ = FIELDS

    def __init__(self, pos: int, op: str, left: Word, right: Word):
        self.pos = pos
        self.op = op
        self.left = left
        self.right = right


class CondWord(NodeBase):
    FIELDS = ("pos", "word")
    __slots__ = FIELDS

    def __init__(self, pos: int, word: Word):
        self.pos = pos
        self.word = word


class CondNot(NodeBase):
    FIELDS = ("pos", "operand")
    __slots__ = FIELDS

    def __init__(self, pos: int, operand: Any):
        self.pos = pos
        self.operand = operand


class CondAndOr(NodeBase):
    FIELDS = ("pos", "op", "left", "right")
    __slots__ = FIELDS

    def __init__(self, pos: int, op: str, left: Any, right: Any):
        self.pos = pos
        self.op = op
        self.left = left
        self.right = right


class CondCommand(NodeBase):
    FIELDS = ("pos", "expr", "redirects")
    __slots__ = FIELDS

    def __init__(self, pos: int, expr: Any, redirects: tuple[Redirect, ...] = ()):
        self.pos = pos
        self.expr = expr
        self.redirects = redirects


class Background(NodeBase):
    """`cmd &`: a background job (shell/jobs.py); `end` is where the `&` is."""
    FIELDS = ("pos", "body", "end")
    __slots__ = FIELDS

    def __init__(self, pos: int, body: Node, end: int = 0):
        self.pos = pos
        self.body = body
        self.end = end


class FunctionDef(NodeBase):
    FIELDS = ("pos", "name", "body", "redirects", "valid_name")
    __slots__ = FIELDS

    def __init__(self, pos: int, name: str, body: Node, redirects: tuple[Redirect, ...] = (),
                 valid_name: bool = True):
        self.pos = pos
        self.name = name
        self.body = body
        self.redirects = redirects
        self.valid_name = valid_name  # bash parses `$x-y() { ...; }` and refuses the name when it runs


Node = Union[SimpleCommand, Pipeline, AndOr, CommandList, BraceGroup, Subshell, If, While, For,
             ArithFor, Case, ArithCommand, CondCommand, FunctionDef, Background]


COMPOUND_NODES = (BraceGroup, Subshell, If, While, For, ArithFor, Case, ArithCommand, CondCommand)
