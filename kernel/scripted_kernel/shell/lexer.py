"""Source text → tokens, and the parts of each word.

Bash's lexing depends on where the parser is (command position, `[[ ]]`, a `${...}` argument,
a here-document), so the parser asks for tokens in a mode and the lexer scans words into typed
parts (literals, quotes, expansions). Command substitutions are parsed by a nested parser on
the same source, which is how bash itself finds where `$(...)` ends.
"""
from __future__ import annotations

import functools
import re
from typing import Callable, Final, Optional

from .nodes import (TRANSFORMS, ArithSub, Assign, ArrayElem, CommandSub, DoubleQuoted, HereDoc, Lit,
                    ParamExp, ProcessSub, SingleQuoted, Tilde, Word)
from ..base.errors import ShellSyntaxError
from ..base.limits import check_stop
from .escapes import decode as decode_escapes
from ..base.patterns import group_end

# (Final: compiled, the modules keep these in C variables rather than look them up by name)
OPERATORS: Final = (";;&", ";;", ";&", "&&", "||", "|&", "&>>", "&>", ">>", ">|", ">&", "<<<",
                    "<<-", "<<", "<&", "<>", "<", ">", "|", "&", ";", "(", ")")
# longest first, as listed
_OPERATOR: Final = re.compile("|".join(re.escape(op) for op in OPERATORS))
REDIRECT_OPS: Final = frozenset(("<", ">", ">>", ">|", "<>", "<&", ">&", "&>", "&>>", "<<", "<<-",
                                 "<<<"))
META: Final = frozenset(" \t\n;&|<>()")
EXTGLOB_PREFIX: Final = frozenset("?*+@!")

# Runs of characters with no special meaning, per context.
_PLAIN_NORMAL: Final = re.compile(r"[^ \t\n;&|<>()\\'\"$`?*+@!]+")
_PLAIN_DQ: Final = re.compile(r"[^\\\"$`]+")
_PLAIN_HEREDOC: Final = re.compile(r"[^\\$`]+")
_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# What may follow a whole word: a metacharacter or the end (not the `<(` or `>(` of a process
# substitution, which joins the word).
_WORD_END: Final = r"(?=[ \t\n;&|()]|[<>](?!\()|\Z)"
# A word of literal characters only, ended by a metacharacter. Braces, brackets and wildcards
# stay literal text here (brace expansion and globbing look at the text when the word is
# expanded); ?*+@! only where no `(` follows, which would make an extglob group. One character
# class, so that the regex engine takes the run in one loop (an alternation per character cost
# three times as much on a long word).
_LITERALS: Final = r"([A-Za-z0-9_./,:=%^{}\[\]?*+@!-]+)"
_NO_EXTGLOB: Final = r"(?<![?*+@!](?=\())"
_PLAIN_WORD: Final = re.compile(_LITERALS + _NO_EXTGLOB + _WORD_END)
_AT_WORD_END: Final = re.compile(_WORD_END)
# Whole words of one `$name`, one single-quoted string, or one double-quoted string of literal
# text and simple parameters (no escape, backtick, ${ }, $( ) or $'...')
_BARE_PARAM: Final = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)" + _WORD_END)
# The most common tokens, taken in one match after any spaces (an indented line's first token
# too; a tab, a comment or a continuation is left to the general path): a word of literal
# characters ended by a blank, newline, `;&|()` or the end (group 1; before `<` or `>` it may be
# a descriptor number, left to the general path), a newline (2), an operator (3; not the `<(` or
# `>(` of a process substitution), a word that is one `$name` (4: the name).
_COMMON_TOKEN: Final = re.compile(r" *(?:" + _LITERALS + _NO_EXTGLOB + r"(?=[ \t\n;&|()]|\Z)"
                                  r"|(\n)|(?![<>]\()(" + _OPERATOR.pattern + r")|"
                                  + _BARE_PARAM.pattern + ")")
# The compiled build finds those tokens with _common_token instead: SRE allocates (and frees)
# a backtracking stack for every match, which cost more than the rest of the match; compiled,
# a loop over the characters costs less. The pure build keeps the one match, cheaper there
# than the tests it would take in Python; tests/engine/test_lexer_words.py compares the two.
# Both read the same classes of characters (_CHAR_CLASSES below is made from _LITERALS and META).
# the operators by the code of their first character (all ASCII), longest first as OPERATORS
# lists them; an empty tuple for a character no operator starts with (an index, not a dict
# lookup: this is read at most tokens)
_OPERATORS_BY_CODE: Final[tuple[tuple[str, ...], ...]] = tuple(
    tuple(op for op in OPERATORS if ord(op[0]) == cp) for cp in range(128))
_SINGLE_QUOTED: Final = re.compile(r"'([^']*)'" + _WORD_END)
_SIMPLE_DQ: Final = re.compile(r'"[^"\\$`]*(?:\$(?:[A-Za-z_][A-Za-z0-9_]*|[0-9?#@*$!-])[^"\\$`]*)*"'
                               + _WORD_END)
# `$((expr))` whose expression holds no quote, expansion, escape or parenthesis: the
# expression is its literal text (the general path finds the closing `))` one character at a time)
_SIMPLE_ARITH: Final = re.compile(r"\$\(\(([^()$`'\"\\]*)\)\)")
_SIMPLE_ARITH_WORD: Final = re.compile(_SIMPLE_ARITH.pattern + _WORD_END)
_DQ_PIECE: Final = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*|[0-9?#@*$!-])|[^$]+")
_ASSIGN_HEAD: Final = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(\[|\+?=)")
_DIGITS: Final = re.compile(r"[0-9]+")
# How deep commands, `$( )` and word parts (`${x:-${y}}`) may nest, all counted together: a
# bound on the recursion of the parser and the word scanner (compiled, they have no other)
# Lexer modes, named as Oils names its lexer modes. The parser asks for a token in one of two:
ARGUMENT: Final = 0        # a word anywhere: NAME=value is a plain word
COMMAND_START: Final = 1   # where a simple command may start: NAME=value is an assignment
# Token kinds (numbers: compiled, comparing two is one machine instruction, where comparing
# two names is a call)
WORD: Final = 1            # a word (its literal text in value, or None)
ASSIGN: Final = 2          # `name=value`, `name[k]+=value`... in command position
OP: Final = 3              # an operator (its text in value)
NEWLINE: Final = 4
IONUMBER: Final = 5        # the descriptor before a redirection: `2>`, `{fd}>` (its text in value)
EOF: Final = 6
TOKEN_KINDS: Final = {WORD: "WORD", ASSIGN: "ASSIGN", OP: "OP", NEWLINE: "NEWLINE", IONUMBER: "IONUMBER",
                      EOF: "EOF"}
# scan_parts scans the parts of a word in one of two:
PLAIN_WORD: Final = 0      # a word of the command line, ended by a metacharacter
FREE_TEXT: Final = 3       # up to a limit or a stop character, blanks literal (${x:-...}, patterns)

DEFAULT_MAX_DEPTH: Final = 100
# The deepest any max_depth allows. The parser and the word scanner recurse on the C stack
# (compiled, about 2 KB a level; pure, a C call at each `$( )`), and a thread's stack may be no
# more than 1 MB: 1,000 levels overflowed one, compiled and pure.
MAX_DEPTH_CAP: Final = 200
SPECIAL_PARAMS: Final = frozenset("@*#?-$!0123456789")
_BLANK_START: Final = frozenset(" \t\\#")           # what skip_blanks may skip
# a first character that may not start a word
_TOKEN_SPECIAL: Final = frozenset("\n;&|<>(){0123456789")

def decode_ansi_c(text: str) -> str:
    return decode_escapes(text, "ansi_c")


_TILDE_PREFIX: Final = re.compile(r"~([A-Za-z0-9_.+-]*)")
_NAMED_FD: Final = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}(?=[<>])")
_ASSIGN_LIKE: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")


def _tilde_cut(text: str, assignment: bool, assign_like: bool) -> int:
    """Where in a run of plain word text a tilde prefix may start (after `:` in an assignment's
    value, after the first `=` or a `:` in an assignment-like argument), or -1."""
    if not (assignment or assign_like) or "~" not in text:
        return -1
    for k in range(1, len(text)):
        if text[k] == "~" and (text[k - 1] == ":" or (assign_like and text[k - 1] == "=" and
                                                       "=" not in text[:k - 1])):
            return k
    return -1


class Source:
    """The script text, and where its lines start, for positions in messages and `$LINENO`."""
    __slots__ = ("text", "_line_starts", "_counted", "base_line", "steps")

    def __init__(self, text: str, base_line: int = 0):
        self.text = text
        self.base_line = base_line
        self.steps = 0                  # units of parsing work done (see step)
        # (a position, how many lines start at or before it): the furthest position asked for.
        # Parsing and compiling ask in the order of the text, and count only the newlines
        # since; the index of line starts is made for a position before it (a function body
        # compiled when first called). One field, so that threads sharing a compiled script
        # always read a position with its own count.
        self._counted: tuple[int, int] = (0, 1)
        self._line_starts: Optional[list[int]] = None

    def line_of(self, pos: int) -> int:
        return self._lines_through(pos) + self.base_line

    def line_col(self, pos: int) -> tuple[int, int]:
        return self._lines_through(pos) + self.base_line, pos - self._line_start(pos) + 1

    def _line_start(self, pos: int) -> int:
        return self.text.rfind("\n", 0, pos) + 1

    def _lines_through(self, pos: int) -> int:
        """How many lines start at or before `pos`."""
        at, lines = self._counted
        if pos >= at:
            lines += self.text.count("\n", at, pos)
            self._counted = (pos, lines)
            return lines
        starts = self._line_starts
        if starts is None:
            starts = self._line_starts = _line_starts(self.text)
        # bisect_right, written out: compiled, the search is native, and the library call
        # cost more than the search
        lo, hi = 0, len(starts)
        while lo < hi:
            mid = (lo + hi) // 2
            if pos < starts[mid]:
                hi = mid
            else:
                lo = mid + 1
        return lo

    def line_text(self, pos: int) -> str:
        start = self._line_start(pos)
        end = self.text.find("\n", start)
        return self.text[start:end if end >= 0 else len(self.text)]

    def step(self) -> None:
        """One more unit of parsing work (a command, a nesting, a stretch of look-ahead); every
        64th looks at the clock of the script being run, if any. Parsing is under the script's
        deadline: some texts cost far more to parse than their size suggests (each `$((` of
        `x[$((x[$((...` looks ahead to the end of the script for its `))`)."""
        self.steps += 1
        if not self.steps & 63:
            check_stop()


def _line_starts(text: str) -> list[int]:
    """Where each line of text starts. (Compiled, each find is a native memchr and no line is
    copied: three times faster than summing the lengths of text.split("\\n"), which the pure
    build runs at about the same speed as this.)"""
    starts = [0]
    pos = text.find("\n")
    while pos >= 0:
        pos += 1
        starts.append(pos)
        pos = text.find("\n", pos)
    return starts


def _ends_in_escape(line: str) -> bool:
    """Whether the line ends in an odd run of backslashes, escaping the newline after it."""
    return (len(line) - len(line.rstrip("\\"))) % 2 == 1


def _strip_leading_tabs(text: str, continuations: bool) -> str:
    """<<- bodies: leading tabs go from each line, but not from a line that continues the one
    before it (which ended in a backslash, in an unquoted body)."""
    out: list = []
    continued = False
    for line in text.splitlines(keepends=True):
        out.append(line if continued else line.lstrip("\t"))
        continued = continuations and line.endswith("\n") and _ends_in_escape(line[:-1])
    return "".join(out)


def char_at(text: str, pos: int) -> str:
    """The character at pos (≥ 0), or "" past the end: a slice costs three times as much."""
    try:
        return text[pos]
    except IndexError:
        return ""


def _flush(parts: list, lit: list, start: int):
    """The literal text gathered so far in a word becomes one part."""
    if lit:
        parts.append(Lit(start, "".join(lit)))
        lit.clear()


def _literal_arith(pos: int, expression: str) -> ArithSub:
    """`$((expression))` at pos, its expression literal text: as sub_word would scan it."""
    return ArithSub(pos, Word(pos + 3, [Lit(pos + 3, expression)] if expression else []))


class _BadSubstitution(Exception):
    def __init__(self, node, end: int):
        self.node = node
        self.end = end


_new: Final = object.__new__
# Compiled by mypyc (shell/native.py), Token is a native class: object.__new__ refuses it, and
# its constructor is as cheap as setting its fields.
COMPILED: Final = not __file__.endswith(".py")


# The compiled scans read characters as code points: compiled, `ord(src[pos])` and
# `src[pos] == "x"` are integer reads, where `src[pos]` alone makes a string object and a test of
# membership hashes it. Each ASCII character's classes are bits in one table.
_IS_LITERAL: Final = 1          # a character of _LITERALS
_IS_NAME_START: Final = 2       # [A-Za-z_]
_IS_NAME: Final = 4             # [A-Za-z0-9_]
_IS_WORD_END: Final = 8         # a metacharacter that ends a word wherever it stands (not < or >)
_IS_EXTGLOB_PREFIX: Final = 16  # ?*+@!, which a `(` after makes an extglob group
_IS_BLANK_START: Final = 32     # what skip_blanks may skip: a blank, `\` (of `\<newline>`), `#`
_IS_PLAIN_NORMAL: Final = 64    # a character of _PLAIN_NORMAL (ASCII; every other character is one)
# literal in text scanned as FREE_TEXT whatever the stops and flags: none of the characters that
# end it (the `stops` of scan_parts' callers) or that quote, escape or expand
_IS_FREE_PLAIN: Final = 128
_NOT_FREE_PLAIN: Final = frozenset("()|?*+@! \t\n&;<>/}:\\'\"$`~")


# The operators of ${name OP ...}, by their first character, each group in the order they are
# tried (the longer first)
_PARAM_OPERATORS: Final = {":": (":-", ":=", ":?", ":+", ":"), "-": ("-",), "=": ("=",), "?": ("?",),
                           "+": ("+",), "#": ("##", "#"), "%": ("%%", "%"), "/": ("//", "/#", "/%", "/"),
                           "^": ("^^", "^"), ",": (",,", ","), "~": ("~~", "~"), "@": ("@",)}


def _char_classes(c: str) -> int:
    bits = _IS_LITERAL if re.fullmatch(_LITERALS, c) else 0
    if c.isascii() and (c.isalpha() or c == "_"):
        bits |= _IS_NAME_START | _IS_NAME
    if c.isascii() and c.isdigit():
        bits |= _IS_NAME
    if c in META and c not in "<>":
        bits |= _IS_WORD_END
    if c in EXTGLOB_PREFIX:
        bits |= _IS_EXTGLOB_PREFIX
    if c in _BLANK_START:
        bits |= _IS_BLANK_START
    if _PLAIN_NORMAL.fullmatch(c):
        bits |= _IS_PLAIN_NORMAL
    if c not in _NOT_FREE_PLAIN:
        bits |= _IS_FREE_PLAIN
    return bits


_CHAR_CLASSES: Final = bytes(_char_classes(chr(cp)) for cp in range(128))


def _classes_at(src: str, pos: int) -> int:
    """The class bits of the character at pos (0 ≤ pos): none past the end or beyond ASCII."""
    if pos < len(src):
        cp = ord(src[pos])
        if cp < 128:
            return _CHAR_CLASSES[cp]
    return 0


def _common_token(src: str, pos: int) -> tuple[int, str, int]:
    """What _COMMON_TOKEN matches at pos: (its group, the group's text, where it ends), or
    (0, "", pos) where it does not match."""
    n = len(src)
    while pos < n and ord(src[pos]) == 32:  # spaces
        pos += 1
    if pos >= n:
        return 0, "", pos
    cp = ord(src[pos])
    if cp == 10:                            # \n
        return 2, "\n", pos + 1
    if _classes_at(src, pos) & _IS_LITERAL:
        end = _literal_run_end(src, pos + 1)
        if end >= n or (_classes_at(src, end) & _IS_WORD_END
                        and not (src[end] == "(" and _classes_at(src, end - 1) & _IS_EXTGLOB_PREFIX)):
            return 1, src[pos:end], end
        return 0, "", pos
    if cp == 36:                            # $
        end = _name_end(src, pos + 1)
        if end > 0 and _at_word_end(src, end):
            return 4, src[pos + 1:end], end
        return 0, "", pos
    candidates = _OPERATORS_BY_CODE[cp] if cp < 128 else ()
    if candidates:
        if (cp == 60 or cp == 62) and pos + 1 < n and src[pos + 1] == "(":     # <( >(
            return 0, "", pos
        for op in candidates:             # (compiled, str.startswith is a generic method call)
            k = len(op)
            if k == 1 or (pos + 1 < n and ord(src[pos + 1]) == ord(op[1])
                          and (k == 2 or (pos + 2 < n and ord(src[pos + 2]) == ord(op[2])))):
                return 3, op, pos + k
    return 0, "", pos


def _parameter_end(src: str, pos: int) -> int:
    """Where the name of a `$name` (or the character of a `$1`, `$?` ...) that starts at pos
    ends, or -1 when none starts there."""
    c = char_at(src, pos)
    if c != "" and c in "0123456789?#@*$!-":
        return pos + 1
    return _name_end(src, pos)


def _name_end(src: str, pos: int) -> int:
    """Where the name (_NAME) that starts at pos ends, or -1 when none starts there."""
    if not _classes_at(src, pos) & _IS_NAME_START:
        return -1
    return _run_end(src, pos + 1, _IS_NAME)


def _literal_run_end(src: str, pos: int) -> int:
    """Where the run of literal characters (_LITERALS) that starts at pos ends (pos: none)."""
    return _run_end(src, pos, _IS_LITERAL)


def _run_end(src: str, pos: int, classes: int, beyond_ascii: bool = False) -> int:
    """Where the run of characters of one of `classes` that starts at pos ends (pos: none);
    `beyond_ascii`: every character past ASCII belongs to the run too. (_classes_at written
    out: compiled, a call and a length per character cost more than the test.)"""
    n = len(src)
    while pos < n:
        cp = ord(src[pos])
        if cp >= 128:
            if not beyond_ascii:
                break
        elif not _CHAR_CLASSES[cp] & classes:
            break
        pos += 1
    return pos


def _plain_normal_end(src: str, pos: int) -> int:
    """Where the run of _PLAIN_NORMAL's characters that starts at pos ends (pos: none):
    compiled, by hand; else by the pattern."""
    if COMPILED:
        return _plain_normal_end_by_hand(src, pos)
    m = _PLAIN_NORMAL.match(src, pos)
    return pos if m is None else m.end()


def _plain_normal_end_by_hand(src: str, pos: int) -> int:
    return _run_end(src, pos, _IS_PLAIN_NORMAL, beyond_ascii=True)


def _plain_word_end(src: str, pos: int) -> int:
    """Where the word of literal characters only (_PLAIN_WORD) that starts at pos ends, or -1
    when none does: compiled, by hand (see _common_token), else by the pattern."""
    if COMPILED:
        return _plain_word_end_by_hand(src, pos)
    m = _PLAIN_WORD.match(src, pos)
    return -1 if m is None else m.end(1)


def _plain_word_end_by_hand(src: str, pos: int) -> int:
    end = _literal_run_end(src, pos)
    if end == pos or (end < len(src) and src[end] == "(" and _classes_at(src, end - 1) & _IS_EXTGLOB_PREFIX):
        return -1
    return end if _at_word_end(src, end) else -1


def _assignment_head(src: str, pos: int) -> Optional[tuple[str, str, int]]:
    """What _ASSIGN_HEAD matches at pos, by hand (native code makes the test in a fraction of
    the match's time): (the name, `[`, `=` or `+=`, where that ends), or None."""
    end = _name_end(src, pos)
    if end < 0 or end >= len(src):
        return None
    if src[end] == "=":
        op = "="
    elif src[end] == "[":
        op = "["
    elif src[end] == "+" and end + 1 < len(src) and src[end + 1] == "=":
        op = "+="
    else:
        return None
    return src[pos:end], op, end + len(op)


def _at_word_end(src: str, pos: int) -> bool:
    """Whether a word may end at pos (_WORD_END): at a metacharacter, or the end."""
    n = len(src)
    if pos >= n or _classes_at(src, pos) & _IS_WORD_END:
        return True
    return (src[pos] == "<" or src[pos] == ">") and not (pos + 1 < n and src[pos + 1] == "(")


class Token:
    __slots__ = ("kind", "value", "pos", "end", "word", "assign", "mode")

    def __init__(self, kind: int, value: Optional[str], pos: int, end: int, word=None, assign=None,
                 mode: int = ARGUMENT):
        self.kind = kind      # WORD, ASSIGN, OP, NEWLINE, IONUMBER, EOF
        self.value = value    # operator text, literal text of a word (or None), descriptor text
        self.pos = pos
        self.end = end
        self.word = word
        self.assign = assign
        self.mode = mode

    def __repr__(self):
        return f"Token({TOKEN_KINDS[self.kind]}, {self.value!r}, {self.pos})"

    def as_word(self) -> Word:
        """The word of a WORD token. A word of literal text only is scanned without one and
        gets it here, when the parser keeps the word: most keywords (`then`, `fi`, `esac`)
        are never kept, and cost no Word."""
        word = self.word
        if word is None:
            word = self.word = Word(self.pos, None, self.value or "")
        return word


class SubParsers:
    """The parser's entry points for code inside words, given to the lexer so that it never
    imports the parser: `nested(source, max_depth, depth, pos, closer) -> (node, end)` parses
    a `$( )` body in place, `backtick(text, base_line, depth, max_depth) -> node` the text of
    a backquoted command."""
    __slots__ = ("nested", "backtick")

    def __init__(self, nested: Callable, backtick: Callable):
        self.nested = nested
        self.backtick = backtick


class Lexer:
    def __init__(self, source: Source, parse_nested: Callable[[int, int, str], tuple],
                 depth: int = 0, max_depth: int = DEFAULT_MAX_DEPTH,
                 parsers: Optional[SubParsers] = None):
        self.source = source
        self.src = source.text
        self.pos = 0
        self.parse_nested = parse_nested   # (depth, pos, closer) -> (node, end_pos): a $( ) body
        self.parsers = parsers
        self.pending_heredocs: list[HereDoc] = []
        self.heredoc_at_eof = False     # a here-document ran to the end without its delimiter
        self.peeked: Optional[Token] = None
        # a token the parser is done with (recycle): the next common token is made in it
        self.spare: Optional[Token] = None
        self.depth = depth              # the nesting of commands and word parts, here and around
        self.max_depth = min(max_depth, MAX_DEPTH_CAP)
        self.assignment_depth = 0       # > 0 while an assignment's value is scanned

    # ------------------------------------------------------------ errors

    def error(self, message: str, pos: Optional[int] = None, eof: bool = False) -> ShellSyntaxError:
        pos = self.pos if pos is None else pos
        pos = min(pos, len(self.src))
        line, col = self.source.line_col(pos)
        return ShellSyntaxError(message, line, col, self.source.line_text(pos), eof=eof)

    def nest(self, pos: int) -> None:
        """One level deeper (the caller takes it back off `depth`), refused past the limit."""
        self.depth += 1
        if self.depth > self.max_depth:
            raise self.error("nesting too deep: the parser's depth limit was reached", pos)
        self.source.step()

    def unexpected_eof(self, what: str) -> ShellSyntaxError:
        return self.error(f"unexpected EOF while looking for matching `{what}'", len(self.src), eof=True)

    # ------------------------------------------------------------ tokens

    def peek(self, mode: int = ARGUMENT) -> Token:
        """The next token, scanned once. Mode 1: a command-prefix position, where `name=value`
        is an assignment. The most common tokens are scanned here, in one match (a function
        call less per token)."""
        tok = self.peeked
        if tok is not None:
            if tok.mode == mode or tok.kind not in (WORD, ASSIGN):
                return tok
            # a word is the same word in either mode unless it could be an assignment
            if tok.kind == WORD and (mode == ARGUMENT or not _ASSIGN_HEAD.match(self.src, tok.pos)):
                return tok
            self.pos = tok.pos
        src = self.src
        if COMPILED:
            kind, text, end = _common_token(src, self.pos)
        else:
            m = _COMMON_TOKEN.match(src, self.pos)
            # (each group ends where the match ends; m.span() and slices of src cost more)
            kind = 0 if m is None else m.lastindex or 0
            text, end = (m[kind], m.end()) if m is not None else ("", 0)
        if not kind:
            tok = self._scan_other_token(mode)
        else:
            start = end - len(text)
            if kind == 1 and mode == COMMAND_START and ("=" in text or "[" in text):
                # perhaps an assignment; if not, the literal word (`[[`)
                tok = self._literal_assignment(text, start, end) if "=" in text else None
                if tok is None:
                    self.pos = start
                    tok = self._scan_assignment_or_none()
                if tok is not None:
                    self.peeked = tok
                    return tok
            # most tokens and literal words are made here: set in place, they cost half what
            # calls to their classes' __init__ do (the word-scanning tests compare them with
            # words built the ordinary way); a literal word's Word is made if the parser keeps
            # it (Token.as_word), which keywords never are
            if kind == 1:
                self.pos = end
                name, value, word = WORD, text, None
            elif kind == 4:
                self.pos = end
                start -= 1
                name, value, word = WORD, None, Word(start, [ParamExp(start, text, braced=False)])
            else:
                self.pos = start
                name, value, word = (NEWLINE if kind == 2 else OP), text, None
            spare = self.spare
            if spare is None and COMPILED:
                tok = Token(name, value, start, end, word, None, mode)
            else:
                if spare is None:
                    tok = _new(Token)
                else:
                    self.spare = None
                    tok = spare
                tok.kind, tok.value, tok.word, tok.pos, tok.end, tok.assign, tok.mode = \
                    name, value, word, start, end, None, mode
        self.peeked = tok
        return tok

    def recycle(self, tok: Token) -> None:
        """The parser is done with `tok`, which it has advanced past and which nothing holds
        (it keeps the token's word or assignment, never the token): the next common token is
        made in it instead of a new object. Tokens are most of what parsing allocates and
        frees; the parser recycles those it consumes where no caller can see them (words,
        separators and reserved words; tests/engine/test_native.py checks that recycling
        never changes a parse)."""
        self.spare = tok

    def advance(self) -> Token:
        tok = self.peeked if self.peeked is not None else self.peek()
        self.peeked = None
        self.pos = tok.end
        if tok.kind == NEWLINE and self.pending_heredocs:
            self.read_heredoc_bodies()
        return tok

    def skip_blanks(self) -> None:
        src, n = self.src, len(self.src)
        pos = self.pos
        while pos < n:
            cp = ord(src[pos])              # (compiled: no one-character string made)
            if cp == 32 or cp == 9:         # a blank
                pos += 1
            elif cp == 92 and src.startswith("\\\n", pos):
                pos += 2
            elif cp == 35:                  # `#`
                end = src.find("\n", pos)
                pos = n if end < 0 else end
            else:
                break
        self.pos = pos

    def _scan_other_token(self, mode: int) -> Token:
        src, pos = self.src, self.pos
        if _classes_at(src, pos) & _IS_BLANK_START:
            if ord(src[pos]) == 32 and not _classes_at(src, pos + 1) & _IS_BLANK_START:
                pos = self.pos = pos + 1        # one blank: most tokens
            else:
                self.skip_blanks()
                pos = self.pos
        c = char_at(src, pos)
        if not c:
            if self.pending_heredocs:
                self.read_heredoc_bodies()
            return Token(EOF, None, pos, pos)
        if c in _TOKEN_SPECIAL:
            if c == "\n":
                return Token(NEWLINE, "\n", pos, pos + 1)
            if c in "<>" and src.startswith("(", pos + 1):
                return self._scan_word(mode)   # process substitution: a word part
            if c in ";&|<>()":
                m = _OPERATOR.match(src, pos)
                assert m is not None        # each of these characters is an operator
                op = m.group()
                return Token(OP, op, pos, pos + len(op))
            if c == "{":
                m = _NAMED_FD.match(src, pos)
                if m:                             # {fd}>file: the shell picks the descriptor
                    return Token(IONUMBER, m.group(1), pos, m.end())
            else:
                m = _DIGITS.match(src, pos)
                assert m is not None        # c is a digit: the rest of _TOKEN_SPECIAL is above
                if m.end() < len(src) and src[m.end()] in "<>":
                    return Token(IONUMBER, m.group(), pos, m.end())
        if c in "$\"'":
            word = self._simple_expansion(c, pos)
            if word is not None:
                return Token(WORD, None, pos, self.pos, word, None, mode)
            return self._scan_word(mode)        # (no assignment starts with these)
        if mode == COMMAND_START:           # (a word the common match did not take: an assignment, mostly)
            tok = self._scan_assignment_or_none()
            if tok is not None:
                return tok
        end = _plain_word_end(src, pos)
        if end > 0:                     # a word of plain characters only
            text = src[pos:end]
            if mode == ARGUMENT or ("=" not in text and "[" not in text):
                self.pos = end
                return Token(WORD, text, pos, end, None, None, mode)
        return self._scan_word(mode)

    def _literal_assignment(self, text: str, start: int, end: int) -> Optional[Token]:
        """`name=value` or `name+=value` whose value is literal characters, the whole of a
        common token `text` (src[start:end]): the token _scan_assignment makes of it, without
        reading it again. None for any other (a subscript, an empty value: the general path)."""
        eq = text.find("=")
        head = eq - 1 if eq > 0 and text[eq - 1] == "+" else eq
        name = text[:head]
        if eq == len(text) - 1 or not name.isidentifier():     # (text is ASCII: _NAME's test)
            return None
        self.pos = end
        value = Word(start + eq + 1, None, text[eq + 1:])
        return Token(ASSIGN, None, start, end, assign=Assign(start, name, None, head != eq, value),
                     mode=COMMAND_START)

    def _scan_assignment_or_none(self) -> Optional[Token]:
        if COMPILED:
            head = _assignment_head(self.src, self.pos)
            if head is None:
                return None
            name, op, end = head            # (not `*head`: compiled, that is a generic call)
            return self._scan_assignment(name, op, end)
        m = _ASSIGN_HEAD.match(self.src, self.pos)
        return self._scan_assignment(m[1], m[2], m.end()) if m is not None else None

    def _simple_expansion(self, c: str, pos: int) -> Optional[Word]:
        """`$name`, a single-quoted string, or a double-quoted string of literal text and
        `$name` / `$1` / `$@` ...: the word as scan_parts builds it, from one match (None for
        any other word)."""
        if c == '"':
            return self._simple_double_quoted(pos)
        if c == "'":
            if COMPILED:                # (by hand: a find and a test cost less than the match)
                close = self.src.find("'", pos + 1)
                if close < 0 or not _at_word_end(self.src, close + 1):
                    return None
                self.pos = close + 1
                return Word(pos, [SingleQuoted(pos, self.src[pos + 1:close])])
            m = _SINGLE_QUOTED.match(self.src, pos)
            if m is None:
                return None
            self.pos = m.end()
            return Word(pos, [SingleQuoted(pos, m.group(1))])
        if c == "$":            # (one regex call at most: each costs as much as many tests)
            after = char_at(self.src, pos + 1)
            if after != "(":
                if COMPILED:
                    return self._bare_parameter_by_hand(pos)
                m = _BARE_PARAM.match(self.src, pos)
                if m is None:
                    return None
                self.pos = m.end()
                return Word(pos, [ParamExp(pos, m.group(1), braced=False)])
            if char_at(self.src, pos + 2) != "(":
                return self._command_sub_word(pos)
            m = _SIMPLE_ARITH_WORD.match(self.src, pos)
            if m is not None:
                self.pos = m.end()
                return Word(pos, [_literal_arith(pos, m.group(1))])
        return None

    def _bare_parameter_by_hand(self, pos: int) -> Optional[Word]:
        """_BARE_PARAM's word compiled: a loop over the characters costs less than the match."""
        src = self.src
        end = _name_end(src, pos + 1)
        if end < 0 or not _at_word_end(src, end):
            return None
        self.pos = end
        return Word(pos, [ParamExp(pos, src[pos + 1:end], braced=False)])

    def _command_sub_word(self, pos: int) -> Optional[Word]:
        """A word that is one `$( )`, if it ends there; else None, and the general scanner
        parses the body again as part of the longer word (`$(date)-log`, which is rare)."""
        body, end = self.parse_nested(self.depth, pos + 2, ")")
        if _AT_WORD_END.match(self.src, end) is None:
            return None
        self.pos = end
        return Word(pos, [CommandSub(pos, body)])

    def _simple_double_quoted(self, pos: int) -> Optional[Word]:
        """_simple_expansion's double-quoted form, built as scan_double_quoted builds it."""
        if COMPILED:
            return self._simple_double_quoted_by_hand(pos)
        m = _SIMPLE_DQ.match(self.src, pos)
        if m is None:
            return None
        parts: list = []
        lit: list = []
        end = m.end()
        for piece in _DQ_PIECE.finditer(self.src, pos + 1, end - 1):
            name = piece[1]
            if name is None:
                lit.append(piece[0])
                continue
            at = piece.start()
            _flush(parts, lit, at)        # a literal is placed where it ends
            parts.append(ParamExp(at, name, braced=False))
        _flush(parts, lit, end - 1)
        self.pos = end
        return Word(pos, [DoubleQuoted(pos, parts)])

    def _simple_double_quoted_by_hand(self, pos: int) -> Optional[Word]:
        """_simple_double_quoted compiled: one pass over the characters, which native code
        makes in a tenth of the two regular expressions' time (they stay the pure path's,
        which the word-scanning tests compare this with)."""
        src = self.src
        n = len(src)
        parts: list = []
        i = start = pos + 1
        while True:
            if i >= n:
                return None
            c = src[i]
            if c == '"':
                break
            if c == "\\" or c == "`":
                return None
            if c != "$":
                i += 1
                continue
            end = _parameter_end(src, i + 1)
            if end < 0:
                return None
            if start < i:
                parts.append(Lit(i, src[start:i]))        # a literal is placed where it ends
            parts.append(ParamExp(i, src[i + 1:end], braced=False))
            i = start = end
        if not _at_word_end(src, i + 1):
            return None
        if start < i:
            parts.append(Lit(i, src[start:i]))
        self.pos = i + 1
        return Word(pos, [DoubleQuoted(pos, parts)])

    def _scan_word(self, mode: int) -> Token:
        start = self.pos
        parts = self.scan_parts(PLAIN_WORD, start)
        if not parts and self.pos == start:
            raise self.error(f"syntax error near unexpected token `{self.src[start]}'")
        word = Word(start, parts)
        return Token(WORD, word.literal(), start, self.pos, word=word, mode=mode)

    # ------------------------------------------------------------ assignments

    def _scan_assignment(self, name: str, op: str, pos: int) -> Optional[Token]:
        """The assignment that starts with `name` and `op` (`[`, `=` or `+=`), which ends at pos."""
        start = self.pos
        index = None
        if op == "[":
            close = self._find_bracket_close(pos)
            if close < 0:
                return None
            after = close + 1
            if self.src.startswith("=", after):
                op_end = after + 1
            elif self.src.startswith("+=", after):
                op_end = after + 2
            else:
                return None
            index = self.sub_word(pos, close)
            append = self.src[after] == "+"
            pos = op_end
        else:
            append = op == "+="
        self.pos = pos
        if char_at(self.src, pos) == "(":
            array = self.scan_array_literal()      # with an index: refused when it runs
            assign = Assign(start, name, index, append, None, array)
        else:
            value = self._simple_value(pos)
            if value is None:
                self.assignment_depth += 1        # `x=${u-~:~}`: tildes after `:` inside too
                try:
                    value = Word(pos, self.scan_parts(PLAIN_WORD, pos, assignment=True))
                finally:
                    self.assignment_depth -= 1
            assign = Assign(start, name, index, append, value)
        return Token(ASSIGN, None, start, self.pos, assign=assign, mode=COMMAND_START)

    def _simple_value(self, pos: int) -> Optional[Word]:
        """An assignment's value of literal characters, or one of _simple_expansion's forms:
        the word as scan_parts builds it, from one match (None for any other value)."""
        c = char_at(self.src, pos)
        if c in "$\"'":                # (none of them starts a plain word)
            return self._simple_expansion(c, pos)
        end = _plain_word_end(self.src, pos)
        if end < 0:
            return None
        self.pos = end
        return Word(pos, None, self.src[pos:end])

    def _find_bracket_close(self, pos: int, stops: str = "\n;|&<>") -> int:
        """The `]` closing an array subscript that starts at pos, or -1 (at the end, or at a
        character of stops outside brackets)."""
        src, depth = self.src, 0
        while pos < len(src):
            c = src[pos]
            if c == "\\":
                pos += 2
                continue
            if c in "'\"":
                end = src.find(c, pos + 1)
                if end < 0:
                    return -1
                pos = end + 1
                continue
            if c == "[":
                depth += 1
            elif c == "]":
                if depth == 0:
                    return pos
                depth -= 1
            elif c in stops and depth == 0:
                return -1
            pos += 1
        return -1

    def sub_word(self, start: int, end: int, arithmetic: bool = False) -> Word:
        """Scan src[start:end] as a word in which blanks are literal (subscripts, arithmetic).
        In arithmetic, single quotes are not quoting: bash reports them as errors."""
        saved = self.pos
        self.pos = start
        parts = self.scan_parts(FREE_TEXT, start, limit=end, dq=arithmetic)
        self.pos = saved
        return Word(start, parts)

    def scan_array_literal(self) -> list:
        src = self.src
        self.pos += 1      # (
        elems: list = []
        while True:
            self.skip_blanks_and_newlines()
            if self.pos >= len(src):
                raise self.unexpected_eof(")")
            if src[self.pos] == ")":
                self.pos += 1
                return elems
            start = self.pos
            if src[start] == "[":
                close = self._find_bracket_close(start + 1)
                if close >= 0 and (src.startswith("=", close + 1) or src.startswith("+=", close + 1)):
                    key = self.sub_word(start + 1, close)
                    append = src[close + 1] == "+"
                    self.pos = close + (3 if append else 2)
                    value = Word(self.pos, self.scan_parts(PLAIN_WORD, self.pos, assignment=True))
                    elems.append(ArrayElem(start, key, value, append))
                    continue
            parts = self.scan_parts(PLAIN_WORD, start)
            if self.pos == start:
                raise self.error(f"syntax error near unexpected token `{src[start]}'")
            elems.append(ArrayElem(start, None, Word(start, parts)))

    def skip_blanks_and_newlines(self) -> None:
        while True:
            self.skip_blanks()
            if self.pos < len(self.src) and self.src[self.pos] == "\n":
                self.pos += 1
                if self.pending_heredocs:
                    self.read_heredoc_bodies()
                continue
            return

    # ------------------------------------------------------------ word parts

    def scan_parts(self, mode: int, start: int, limit: int = -1, stops: str = "",
                   assignment: bool = False, dq: bool = False, tilde: bool = False) -> list:
        """Scan word parts from self.pos (_scan_parts), one level deeper: the word parts of
        `${x:-${y:-...}}` nest without a command between them."""
        self.nest(start)
        try:
            return self._scan_parts(mode, start, limit, stops, assignment, dq, tilde)
        finally:
            self.depth -= 1

    def _scan_parts(self, mode: int, start: int, limit: int, stops: str, assignment: bool, dq: bool,
                    tilde: bool) -> list:
        """Scan word parts from self.pos.

        PLAIN_WORD: an ordinary word, ended by a metacharacter;
        FREE_TEXT: everything up to `limit` (or a char of `stops` outside quotes), blanks
        literal; ${...} arguments use it with stops such as '}' or '/}'. `dq`: the argument of
        ${x:-...} inside double quotes, where single quotes are kept literally and a backslash
        escapes only $ ` " \\ and }.
        """
        src = self.src
        n = len(src) if limit < 0 else limit
        parts: list = []
        lit: list = []
        lit_start = self.pos
        in_single = False

        pos = self.pos
        if (mode == PLAIN_WORD or tilde) and pos < n and src[pos] == "~":
            pos = self._scan_tilde(pos, parts, "}" if tilde else "")
        # bash (not in POSIX mode) expands tildes after `=` and `:` in arguments that look like
        # assignments too (`echo PATH=~/bin`)
        assign_like = mode == PLAIN_WORD and not assignment and _ASSIGN_LIKE.match(src, pos) is not None
        while pos < n:
            if mode != PLAIN_WORD and _classes_at(src, pos) & _IS_FREE_PLAIN:
                end = min(_run_end(src, pos + 1, _IS_FREE_PLAIN), n)
                lit.append(src[pos:end])    # (a run at once: most of a ${x:-...} or $(( )) text)
                pos = end
                continue
            c = src[pos]
            if mode == PLAIN_WORD:
                if c in META:
                    if c in "<>" and src.startswith("(", pos + 1):
                        _flush(parts, lit, lit_start)
                        self.pos = pos
                        parts.append(self._scan_process_sub())
                        pos = self.pos
                        continue
                    break
                end = _plain_normal_end(src, pos)
                if end > pos:
                    text = src[pos:end]
                    cut = _tilde_cut(text, assignment or assign_like, assign_like and not parts and not lit)
                    if cut < 0:
                        lit.append(text)
                        pos = end
                        continue
                    lit.append(text[:cut])    # `a=~/x`, `PATH=a:~/bin`: a tilde prefix follows
                    pos += cut
                    _flush(parts, lit, lit_start)
                    self.pos = pos
                    after = self._scan_tilde(pos, parts)
                    if after == pos:
                        lit.append("~")
                        after += 1
                    pos = lit_start = after
                    continue
                if c in EXTGLOB_PREFIX:
                    if src.startswith("(", pos + 1):
                        self._find_extglob_end(pos + 2)          # it must be closed
                        _flush(parts, lit, lit_start)
                        self.pos = pos
                        parts.extend(self._scan_extglob())
                        pos = self.pos
                        lit_start = pos
                    else:
                        lit.append(c)
                        pos += 1
                    continue
            elif c in stops and not in_single:
                break
            elif c == "~" and assignment and lit and lit[-1].endswith(":"):
                # ${u-~:~} in an assignment's value: a tilde after `:` as in the value itself
                _flush(parts, lit, lit_start)
                after = self._scan_tilde(pos, parts, stops)
                if after > pos:
                    pos = lit_start = after
                    continue
                lit_start = pos
            if dq and c == "'":
                # inside "${x:-...}" a single quote is an ordinary character, but a } between
                # two of them does not end the expansion
                lit.append("'")
                in_single = not in_single
                pos += 1
                continue
            if dq and c == "\\" and src[pos + 1:pos + 2] not in ("$", "`", '"', "\\", "}", "\n"):
                lit.append("\\")
                pos += 1
                continue
            if c == "\\":
                if pos + 1 >= n:
                    lit.append("\\")
                    pos += 1
                elif src[pos + 1] == "\n":
                    pos += 2
                else:
                    _flush(parts, lit, lit_start)
                    parts.append(Lit(pos, src[pos + 1], escaped=True))
                    pos += 2
            elif c == "'":
                end = src.find("'", pos + 1)
                if end < 0 or end >= n and limit >= 0:
                    raise self.unexpected_eof("'")
                _flush(parts, lit, lit_start)
                parts.append(SingleQuoted(pos, src[pos + 1:end]))
                pos = end + 1
            elif c == '"':
                _flush(parts, lit, lit_start)
                self.pos = pos + 1
                inner = self.scan_double_quoted(n)
                parts.append(DoubleQuoted(pos, inner))
                pos = self.pos
            elif c == "$":
                _flush(parts, lit, lit_start)
                self.pos = pos
                part = self.scan_dollar(quoted=False)
                if part is None:
                    lit.append("$")
                    pos += 1
                else:
                    parts.append(part)
                    pos = self.pos
            elif c == "`":
                _flush(parts, lit, lit_start)
                self.pos = pos
                parts.append(self.scan_backtick(False))
                pos = self.pos
            else:
                lit.append(c)
                pos += 1
        self.pos = pos
        _flush(parts, lit, lit_start)
        return parts

    def _scan_tilde(self, pos: int, parts: list, also_ends: str = "") -> int:
        m = _TILDE_PREFIX.match(self.src, pos)
        assert m is not None                # the callers are at a `~`
        end = m.end()
        if end >= len(self.src) or self.src[end] in "/: \t\n;&|<>()" or self.src[end] in also_ends:
            parts.append(Tilde(pos, m.group(1)))
            return end
        return pos

    def _scan_extglob(self) -> list:
        """@(a|$b|c*) and the like: the group's text stays pattern text, but expansions inside
        it are expanded."""
        src = self.src
        parts = [Lit(self.pos, src[self.pos:self.pos + 2])]
        self.pos += 2
        depth = 1
        while self.pos < len(src):
            c = src[self.pos]
            if c in EXTGLOB_PREFIX and src.startswith("(", self.pos + 1):
                parts.extend(self._scan_extglob())
                continue
            if c in "()|":
                parts.append(Lit(self.pos, c))
                self.pos += 1
                if c == "(":
                    depth += 1
                elif c == ")":
                    depth -= 1
                    if depth == 0:
                        return parts
                continue
            before = self.pos
            parts.extend(self.scan_parts(FREE_TEXT, self.pos, stops="()|?*+@!" + " \t\n"))
            if self.pos == before:
                parts.append(Lit(self.pos, c))
                self.pos += 1
        raise self.unexpected_eof(")")

    def _find_extglob_end(self, pos: int) -> int:
        end = group_end(self.src, pos)
        if end < 0:
            raise self.unexpected_eof(")")
        return end

    def _scan_process_sub(self) -> ProcessSub:
        start = self.pos
        body, end = self.parse_nested(self.depth, start + 2, ")")
        self.pos = end
        return ProcessSub(start, body, self.src[start])

    def scan_double_quoted(self, limit: int) -> list:
        """Parts of "..." from self.pos (after the opening quote) to the closing quote."""
        src = self.src
        parts: list = []
        lit: list = []
        pos = self.pos
        while True:
            if pos >= len(src):
                raise self.unexpected_eof('"')
            c = src[pos]
            if c == '"':
                break
            m = _PLAIN_DQ.match(src, pos)
            if m:
                lit.append(m.group())
                pos = m.end()
                continue
            if c == "\\":
                nxt = src[pos + 1:pos + 2]
                if nxt == "\n":
                    pos += 2
                elif nxt in ("$", "`", '"', "\\"):
                    lit.append(nxt)
                    pos += 2
                else:
                    lit.append("\\")
                    pos += 1
            elif c == "$":
                self.pos = pos
                part = self.scan_dollar(quoted=True)
                if part is None:
                    lit.append("$")
                    pos += 1
                else:
                    if lit:
                        parts.append(Lit(pos, "".join(lit)))
                        lit.clear()
                    parts.append(part)
                    pos = self.pos
            else:   # backtick
                if lit:
                    parts.append(Lit(pos, "".join(lit)))
                    lit.clear()
                self.pos = pos
                parts.append(self.scan_backtick(True))
                pos = self.pos
        if lit:
            parts.append(Lit(pos, "".join(lit)))
        self.pos = pos + 1
        return parts

    def scan_heredoc_text(self, text_start: int, text_end: int) -> Word:
        """An unquoted here-document body: only $, ` and \\ are special."""
        src = self.src
        parts: list = []
        lit: list = []
        pos = text_start
        while pos < text_end:
            c = src[pos]
            m = _PLAIN_HEREDOC.match(src, pos, text_end)
            if m:
                lit.append(m.group())
                pos = m.end()
                continue
            if c == "\\":
                nxt = src[pos + 1:pos + 2]
                if nxt == "\n":
                    pos += 2
                elif nxt in ("$", "`", "\\"):
                    lit.append(nxt)
                    pos += 2
                else:
                    lit.append("\\")
                    pos += 1
                continue
            self.pos = pos
            part = self.scan_dollar(quoted=True) if c == "$" else self.scan_backtick(True)
            if part is None:
                lit.append("$")
                pos += 1
                continue
            if lit:
                parts.append(Lit(pos, "".join(lit)))
                lit.clear()
            parts.append(part)
            pos = self.pos
        if lit:
            parts.append(Lit(pos, "".join(lit)))
        return Word(text_start, [DoubleQuoted(text_start, parts)])

    def scan_regex_word(self) -> Word:
        """The right side of `[[ x =~ re ]]`: parentheses and `|` belong to the regex."""
        src, start = self.src, self.pos
        parts: list = []
        depth = 0
        while self.pos < len(src):
            c = src[self.pos]
            if c in " \t\n" and depth == 0:
                break
            if c == "(":
                depth += 1
            elif c == ")":
                if depth == 0:
                    break
                depth -= 1
            elif c in " \t\n|":
                pass
            elif c in "&;<>":
                if depth == 0:
                    break
            else:
                parts.extend(self.scan_parts(FREE_TEXT, self.pos, stops=" \t\n()|&;<>"))
                continue
            parts.append(Lit(self.pos, c))
            self.pos += 1
        if not parts:
            raise self.error("syntax error in conditional expression", start)
        return Word(start, parts)

    # ------------------------------------------------------------ $ forms

    def scan_dollar(self, quoted: bool):
        """At a `$`: return the expansion part, or None when the `$` is literal."""
        src, pos = self.src, self.pos
        nxt = src[pos + 1:pos + 2]
        if nxt == "(":
            if src.startswith("((", pos + 1):
                m = _SIMPLE_ARITH.match(src, pos)
                if m is not None:
                    self.pos = m.end()
                    return _literal_arith(pos, m.group(1))
                arith = self._try_arith(pos + 3)
                if arith is not None:
                    return ArithSub(pos, arith)
            body, end = self.parse_nested(self.depth, pos + 2, ")")
            self.pos = end
            return CommandSub(pos, body)
        if nxt == "{":
            return self._scan_braced_param(pos, quoted)
        if nxt == "'" and not quoted:
            end = self._find_ansi_c_end(pos + 2)
            self.pos = end + 1
            return SingleQuoted(pos, decode_ansi_c(src[pos + 2:end]))
        if nxt == '"' and not quoted:
            self.pos = pos + 2
            return DoubleQuoted(pos, self.scan_double_quoted(len(src)))
        if nxt == "[":   # obsolete $[ expr ], which (as in bash) may span lines and commands
            close = self._find_bracket_close(pos + 2, stops="")
            if close < 0:
                raise self.unexpected_eof("]")
            self.pos = close + 1
            return ArithSub(pos, self.sub_word(pos + 2, close))
        m = _NAME.match(src, pos + 1)
        if m:
            self.pos = m.end()
            return ParamExp(pos, m.group(), braced=False)
        if nxt and nxt in SPECIAL_PARAMS:
            self.pos = pos + 2
            return ParamExp(pos, nxt, braced=False)
        return None

    def _find_ansi_c_end(self, pos: int) -> int:
        src = self.src
        while pos < len(src):
            c = src[pos]
            if c == "\\":
                pos += 2
                continue
            if c == "'":
                return pos
            pos += 1
        raise self.unexpected_eof("'")

    def _try_arith(self, start: int):
        """$(( ... )): the expression word if the parentheses balance to `))`, else None
        (then it is a command substitution starting with a subshell)."""
        src, depth, pos, n = self.src, 0, start, len(self.src)
        while pos < n:
            cp = ord(src[pos])              # (compiled, character codes are integer tests)
            if not pos & 255:
                self.source.step()
            if cp == 40:                    # (
                depth += 1
            elif cp == 41:                  # )
                if depth == 0:
                    if pos + 1 < n and src[pos + 1] == ")":
                        word = self.sub_word(start, pos, arithmetic=True)
                        self.pos = pos + 2
                        return word
                    return None
                depth -= 1
            elif cp == 92:                  # \
                pos += 1
            elif cp == 39 or cp == 34:      # ' "
                end = src.find(src[pos], pos + 1)
                if end < 0:
                    return None
                pos = end
            elif cp == 36 and src.startswith("$(", pos) and not src.startswith("$((", pos):
                try:
                    _, end = self.parse_nested(self.depth, pos + 2, ")")
                except ShellSyntaxError:
                    return None
                pos = end
                continue
            pos += 1
        return None

    def scan_backtick(self, quoted: bool) -> CommandSub:
        src, start = self.src, self.pos
        pos = start + 1
        body: list = []
        while True:
            if pos >= len(src):
                raise self.unexpected_eof("`")
            c = src[pos]
            if c == "`":
                break
            if c == "\\" and pos + 1 < len(src) and (src[pos + 1] in "$`\\" or
                                                     (quoted and src[pos + 1] == '"')):
                body.append(src[pos + 1])
                pos += 2
                continue
            body.append(c)
            pos += 1
        self.pos = pos + 1
        self.source.step()          # (its body is read by a parser of its own, counting anew)
        assert self.parsers is not None     # (only a lexer made by a Parser reads commands)
        node = self.parsers.backtick("".join(body), self.source.line_of(start) - 1, self.depth + 1,
                                     self.max_depth)
        return CommandSub(start, node, backtick=True)

    def _scan_braced_param(self, start: int, quoted: bool = False) -> ParamExp:
        try:
            return self._scan_braced_param_checked(start, quoted)
        except _BadSubstitution as b:
            self.pos = b.end
            return b.node

    def _scan_braced_param_checked(self, start: int, quoted: bool) -> ParamExp:
        src = self.src
        pos = start + 2
        n = len(src)
        length = indirect = False
        first = char_at(src, pos)
        if first == "#" or first == "!":
            if src.startswith("##", pos) and src[pos + 2:pos + 3] not in ("}", ""):
                pass            # ${##...}: $# followed by a # or ## operator
            elif first == "#" and pos + 1 < n and src[pos + 1] not in "}":
                # ${#x} is a length unless it reads as ${#} followed by an operator
                if _name_end(src, pos + 1) > 0 or src[pos + 1] in SPECIAL_PARAMS:
                    length = True
                    pos += 1
            elif first == "!" and pos + 1 < n and src[pos + 1] != "}":
                if _name_end(src, pos + 1) > 0 or src[pos + 1] in "@*#?$-0123456789":
                    indirect = True
                    pos += 1
        end = _name_end(src, pos)
        named = end > 0
        if named:
            name = src[pos:end]
            pos = end
        elif pos < n and src[pos] in SPECIAL_PARAMS:
            if (src[pos].isascii() and src[pos].isdigit()):
                m = _DIGITS.match(src, pos)
                assert m is not None        # at a digit
                name, pos, named = m.group(), m.end(), True    # (`${1[0]}` takes an index too)
            else:
                name, pos = src[pos], pos + 1
        else:
            raise self._bad_substitution(start)
        node = ParamExp(start, name, length=length, indirect=indirect)
        if pos < n and src[pos] == "[" and named:
            close = self._find_bracket_close(pos + 1)
            if close < 0:
                raise self._bad_substitution(start)
            node.index = self.sub_word(pos + 1, close)
            pos = close + 1
        if pos >= n:
            raise self.unexpected_eof("}")
        c = src[pos]
        if c == "}":
            self.pos = pos + 1
            return node
        if length:
            raise self._bad_substitution(start)
        if indirect and c in "*@" and src.startswith("}", pos + 1) and node.index is None:
            node.indirect = False
            node.prefix_list = c
            self.pos = pos + 2
            return node
        op = None
        for cand in _PARAM_OPERATORS.get(c, ()):
            if src.startswith(cand, pos):
                op = cand
                break
        if op is None:
            raise self._bad_substitution(start)
        node.op = op
        pos += len(op)
        self.pos = pos
        if op == "@":
            if pos + 1 < n and src[pos] in TRANSFORMS and src[pos + 1] == "}":
                node.arg = Word(pos, [Lit(pos, src[pos])])
                self.pos = pos + 2
                return node
            # bash finds out only when it expands it: nothing for an unset variable, else a
            # fatal bad substitution (arg2: the text, for the message)
            close = self._skip_to_brace_close(start + 2)
            node.arg = Word(pos, [Lit(pos, src[pos:close])])
            node.arg2 = Word(start, [Lit(start, src[start:close + 1])])
            self.pos = close + 1
            return node
        if op in ("/", "//", "/#", "/%"):
            # after / or //, a pattern starts with at least one character, even a '/'
            lead = [Lit(pos, "/")] if src.startswith("/", pos) and op in ("/", "//") else []
            if lead:
                pos += 1
                self.pos = pos
            # a leading ~ is expanded in the pattern and the replacement, inside double
            # quotes too (bash 5.2)
            node.arg = Word(pos, lead + self.scan_parts(FREE_TEXT, pos, stops="/}", tilde=not lead))
            if self.pos < n and src[self.pos] == "/":
                self.pos += 1
                node.arg2 = Word(self.pos, self.scan_parts(FREE_TEXT, self.pos, stops="}", tilde=True))
        elif op == ":":
            parts = self.scan_parts(FREE_TEXT, pos, stops=":}")
            # ${s: c ? 2 : 0 : 1}: a colon that closes a ?: belongs to the offset
            while self.pos < n and src[self.pos] == ":" and \
                    src.count("?", pos, self.pos) > src.count(":", pos, self.pos):
                parts.append(Lit(self.pos, ":"))
                self.pos += 1
                parts.extend(self.scan_parts(FREE_TEXT, self.pos, stops=":}"))
            node.arg = Word(pos, parts)
            if self.pos < n and src[self.pos] == ":":
                self.pos += 1
                node.arg2 = Word(self.pos, self.scan_parts(FREE_TEXT, self.pos, stops="}"))
        else:
            literal_quotes = quoted and op.lstrip(":") in ("-", "=", "?", "+")
            # ${x:-~/d} expands the tilde unless quoted; a # or % pattern always does
            node.arg = Word(pos, self.scan_parts(FREE_TEXT, pos, stops="}", dq=literal_quotes,
                                                 tilde=not literal_quotes,
                                                 assignment=self.assignment_depth > 0 and not quoted))
        if self.pos >= n or src[self.pos] != "}":
            raise self.unexpected_eof("}")
        self.pos += 1
        return node

    def _bad_substitution(self, start: int) -> Exception:
        """bash parses a malformed ${...} and fails when it is expanded; one that is never
        closed is a syntax error (unexpected EOF)."""
        src = self.src
        close = self._skip_to_brace_close(start + 2)
        if close >= len(src):               # (bash counts the line without the final newlines)
            return self.error("unexpected EOF while looking for matching `}'",
                              len(src.rstrip("\n")), eof=True)
        return _BadSubstitution(ParamExp(start, src[start:close + 1], op="bad", braced=True), close + 1)

    def _skip_to_brace_close(self, pos: int) -> int:
        end = self.src.find("}", pos)
        return len(self.src) if end < 0 else end

    # ------------------------------------------------------------ here-documents

    def read_heredoc_bodies(self) -> None:
        docs, self.pending_heredocs = self.pending_heredocs, []
        src = self.src
        for doc in docs:
            start = pos = group_start = self.pos
            body_end = None
            logical = ""          # an unquoted body joins lines ending in \ before the check
            while pos <= len(src):
                nl = src.find("\n", pos)
                line_end = len(src) if nl < 0 else nl
                line = src[pos:line_end]
                check = line.lstrip("\t") if doc.strip_tabs else line
                if not doc.quoted and nl >= 0 and _ends_in_escape(check):
                    logical += check[:-1]
                    pos = nl + 1
                    continue
                if logical + check == doc.delimiter:
                    body_end = group_start
                    self.pos = line_end + 1 if nl >= 0 else line_end
                    break
                logical = ""
                if nl < 0:           # no delimiter: the body runs to the end, a line like any
                    self.heredoc_at_eof = True
                    body_end = len(src)
                    self.pos = len(src)
                    break
                pos = group_start = nl + 1
            text = src[start:body_end]
            after = self.pos
            if doc.strip_tabs:
                text = _strip_leading_tabs(text, continuations=not doc.quoted)
                doc.body = Word(start, [SingleQuoted(start, text)]) if doc.quoted else \
                    self._heredoc_word_from_text(text, start)
            elif doc.quoted:
                doc.body = Word(start, [SingleQuoted(start, text)])
            else:
                doc.body = self.scan_heredoc_text(start, start + len(text))
            if text and body_end == len(src) and not text.endswith("\n"):
                doc.body.parts.append(SingleQuoted(body_end, "\n"))
            self.pos = after
            self.peeked = None

    def _heredoc_word_from_text(self, text: str, start: int) -> Word:
        sub = Lexer(Source(text, self.source.line_of(start) - 1), self.parse_nested_text(text),
                    self.depth + 1, self.max_depth, self.parsers)
        return sub.scan_heredoc_text(0, len(text))

    def parse_nested_text(self, text: str):
        assert self.parsers is not None     # (only a lexer made by a Parser reads commands)
        return functools.partial(self.parsers.nested, Source(text), self.max_depth)
