"""The typed syntax tree produced by the parser.

Every node carries `pos`, the offset of its first character in the source the parser read;
`Source.line_col(pos)` turns it into a line and column for messages and `$LINENO`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Union


# ---------------------------------------------------------------- words

@dataclass(slots=True)
class Lit:
    """Unquoted literal text (after backslash-escapes are resolved, `escaped` keeps them)."""
    pos: int
    text: str
    escaped: bool = False   # the text came from a backslash escape: literal in patterns too


@dataclass(slots=True)
class SingleQuoted:
    """'...' or $'...' (already decoded): quoted literal text."""
    pos: int
    text: str


@dataclass(slots=True)
class DoubleQuoted:
    pos: int
    parts: list


TRANSFORMS = "QEPAKaUuLk"          # the letters of ${x@L}


@dataclass(slots=True)
class ParamExp:
    """$name, ${name}, ${name[index]} and every ${...} operator form.

    op is one of: None, ':-' '-' ':=' '=' ':?' '?' ':+' '+', '#' '##' '%' '%%',
    '/' '//' '/#' '/%', '^' '^^' ',' ',,', ':' (slice), '@' (transform, arg = the letter; for
    letters bash does not know, arg2 = the whole ${...} text, named by the error).
    """
    pos: int
    name: str
    index: Optional[Word] = None
    length: bool = False          # ${#x}
    indirect: bool = False        # ${!x}
    prefix_list: str = ""         # ${!prefix*} / ${!prefix@}: '*' or '@'
    op: Optional[str] = None
    arg: Optional[Word] = None
    arg2: Optional[Word] = None   # slice length / replacement text
    braced: bool = True


@dataclass(slots=True)
class CommandSub:
    pos: int
    body: Node
    backtick: bool = False


@dataclass(slots=True)
class ProcessSub:
    """<(...) or >(...): parsed so that it can be refused with a clear message."""
    pos: int
    body: Node
    direction: str


@dataclass(slots=True)
class ArithSub:
    pos: int
    expr: Word


@dataclass(slots=True)
class Tilde:
    pos: int
    user: str


WordPart = Union[Lit, SingleQuoted, DoubleQuoted, ParamExp, CommandSub, ProcessSub, ArithSub, Tilde]


@dataclass(slots=True)
class Word:
    pos: int
    parts: list

    def literal(self) -> Optional[str]:
        """The text of a word made of unquoted literals only (reserved words, names), else None."""
        if len(self.parts) == 1 and type(self.parts[0]) is Lit and not self.parts[0].escaped:
            return self.parts[0].text
        text = []
        for p in self.parts:
            if type(p) is not Lit or p.escaped:
                return None
            text.append(p.text)
        return "".join(text)


# ---------------------------------------------------------------- commands

@dataclass(slots=True)
class ArrayElem:
    pos: int
    key: Optional[Word]
    value: Word
    append: bool = False   # [k]+=v


@dataclass(slots=True)
class Assign:
    pos: int
    name: str
    index: Optional[Word]
    append: bool
    value: Optional[Word]
    array: Optional[list] = None   # list[ArrayElem] for name=( ... )


@dataclass(slots=True)
class HereDoc:
    pos: int
    delimiter: str
    quoted: bool
    strip_tabs: bool
    body: Optional[Word] = None    # filled in when the body lines are read


@dataclass(slots=True)
class Redirect:
    pos: int
    fd: Optional[int]
    op: str                        # < > >> >| <> <& >& &> &>> << <<- <<<
    target: Union[Word, HereDoc]


@dataclass(slots=True)
class SimpleCommand:
    pos: int
    assigns: list
    words: list
    redirects: list
    end: int = 0            # where its text ends ($BASH_COMMAND)


@dataclass(slots=True)
class Pipeline:
    pos: int
    commands: list
    negate: bool = False
    timed: bool = False
    stderr_too: list = field(default_factory=list)   # per '|' : True for '|&'


@dataclass(slots=True)
class AndOr:
    pos: int
    first: Node
    rest: list            # [(op '&&'|'||', Node)]


@dataclass(slots=True)
class CommandList:
    pos: int
    items: list


@dataclass(slots=True)
class BraceGroup:
    pos: int
    body: Node
    redirects: list = field(default_factory=list)


@dataclass(slots=True)
class Subshell:
    pos: int
    body: Node
    redirects: list = field(default_factory=list)


@dataclass(slots=True)
class If:
    pos: int
    clauses: list         # [(cond, body)]
    else_body: Optional[Node]
    redirects: list = field(default_factory=list)


@dataclass(slots=True)
class While:
    pos: int
    cond: Node
    body: Node
    until: bool = False
    redirects: list = field(default_factory=list)


@dataclass(slots=True)
class For:
    pos: int
    var: str
    words: Optional[list]   # None: "$@"
    body: Node
    redirects: list = field(default_factory=list)
    select: bool = False    # `select var in words`: a menu read from standard input


@dataclass(slots=True)
class ArithFor:
    pos: int
    init: Optional[Word]
    cond: Optional[Word]
    step: Optional[Word]
    body: Node
    redirects: list = field(default_factory=list)


@dataclass(slots=True)
class CaseItem:
    pos: int
    patterns: list
    body: Optional[Node]
    terminator: str        # ';;' ';&' ';;&'


@dataclass(slots=True)
class Case:
    pos: int
    word: Word
    items: list
    redirects: list = field(default_factory=list)


@dataclass(slots=True)
class ArithCommand:
    pos: int
    expr: Word
    redirects: list = field(default_factory=list)


@dataclass(slots=True)
class CondUnary:
    pos: int
    op: str
    operand: Word


@dataclass(slots=True)
class CondBinary:
    pos: int
    op: str
    left: Word
    right: Word


@dataclass(slots=True)
class CondWord:
    pos: int
    word: Word


@dataclass(slots=True)
class CondNot:
    pos: int
    operand: object


@dataclass(slots=True)
class CondAndOr:
    pos: int
    op: str
    left: object
    right: object


@dataclass(slots=True)
class CondCommand:
    pos: int
    expr: object
    redirects: list = field(default_factory=list)


@dataclass(slots=True)
class Background:
    """`cmd &`: a background job (shell/jobs.py); `end` is where the `&` is."""
    pos: int
    body: Node
    end: int = 0


@dataclass(slots=True)
class FunctionDef:
    pos: int
    name: str
    body: Node
    redirects: list = field(default_factory=list)
    valid_name: bool = True    # bash parses `$x-y() { ...; }` and refuses the name when it runs


Node = Union[SimpleCommand, Pipeline, AndOr, CommandList, BraceGroup, Subshell, If, While, For,
             ArithFor, Case, ArithCommand, CondCommand, FunctionDef]

COMPOUND_NODES = (BraceGroup, Subshell, If, While, For, ArithFor, Case, ArithCommand, CondCommand)
