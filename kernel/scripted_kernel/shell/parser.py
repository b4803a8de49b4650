"""Tokens → syntax tree: a recursive-descent parser for the bash grammar of DESIGN.md."""
from __future__ import annotations

import functools
import re
from typing import Any, Final, Optional, Union

from .nodes import (AndOr, Assign, Background, ArithCommand, ArithFor, BraceGroup, Case, CaseItem, CommandList,
                  CondAndOr, CondBinary, CondCommand, CondNot, CondUnary, CondWord,
                  For, FunctionDef, HereDoc, If, Pipeline, Redirect, SimpleCommand,
                  Subshell, While, COMPOUND_NODES, Node)
from ..base.errors import ShellSyntaxError
from .lexer import (ARGUMENT, ASSIGN, COMMAND_START, DEFAULT_MAX_DEPTH, EOF, IONUMBER, NEWLINE, OP, REDIRECT_OPS, WORD,
                    Lexer, Source, SubParsers, Token, char_at)


# (Final: compiled, the module keeps these in C variables rather than look them up by name)
RESERVED: Final = frozenset(("if", "then", "else", "elif", "fi", "do", "done", "case", "esac",
                             "while", "until", "for", "in", "function", "select", "{", "}", "[[",
                             "]]", "!", "time", "coproc"))
# the words that end a list, by construct
_BRACE_END: Final = frozenset(("}",))
_THEN: Final = frozenset(("then",))
_IF_BODY_END: Final = frozenset(("elif", "else", "fi"))
_FI: Final = frozenset(("fi",))
_DONE: Final = frozenset(("done",))
_DO: Final = frozenset(("do",))
_ESAC: Final = frozenset(("esac",))
_NOT_FUNCTION_NAMES: Final = RESERVED - {"{", "}", "!"}
DECLARATION_BUILTINS: Final = frozenset(("declare", "typeset", "local", "export", "readonly"))
# commands whose arguments are scanned for `name=value` (let's are expressions, kept as words)
ASSIGNMENT_ARGUMENTS: Final = DECLARATION_BUILTINS | {"let"}
COND_UNARY: Final = frozenset("-a -b -c -d -e -f -g -h -k -p -r -s -t -u -w -x -G -L -N -O -S "
                              "-z -n -o -v -R".split())
COND_BINARY: Final = frozenset("== = != =~ < > -eq -ne -lt -le -gt -ge -nt -ot -ef".split())
_VALID_FUNC_NAME: Final = re.compile(r"[^\s$`'\"\\|&;()<>]+")
_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def _function_parens_end(src: str, pos: int) -> int:
    """Where the `()` of a function definition, blanks around the `(` allowed, that starts at
    pos ends; -1 where none does. (By hand: a pattern's match cost more than the test.)"""
    pos = _blanks_end(src, pos)
    if char_at(src, pos) != "(":
        return -1
    pos = _blanks_end(src, pos + 1)
    return pos + 1 if char_at(src, pos) == ")" else -1


def _blanks_end(src: str, pos: int) -> int:
    while pos < len(src) and (src[pos] == " " or src[pos] == "\t"):
        pos += 1
    return pos


class Parser:
    def __init__(self, text: str, depth: int = 0, base_line: int = 0,
                 max_depth: int = DEFAULT_MAX_DEPTH, source: Optional[Source] = None):
        self.source = source or Source(text, base_line)
        # the lexer's way back to a parser for `$( )` holds no reference to this one: no cycle
        # between the two, so both go as soon as parsing is done (no wait for the collector)
        self.lex = Lexer(self.source, functools.partial(parse_nested, self.source, max_depth),
                         depth, max_depth, SUB_PARSERS)
        # an error met reading the here-documents after a unit, raised when the next is asked
        # for: the unit it follows is whole and runs first
        self.after_unit: Optional[ShellSyntaxError] = None

    # ------------------------------------------------------------ entry points

    def parse_program(self) -> CommandList:
        """The script as a list of top-level commands, one per line (bash's unit of execution:
        an error that abandons a command abandons the rest of its line, not the script)."""
        units: list = []
        try:
            self._parse_units(units)
        except ShellSyntaxError as e:
            e.partial = CommandList(0, units)
            raise
        return CommandList(0, units)

    def _parse_units(self, units: list):
        unit = self.next_unit()
        while unit is not None:
            units.append(unit)
            unit = self.next_unit()

    def next_unit(self) -> Optional[CommandList]:
        """The next top-level command (one line of commands), or None at the end of the text:
        a script read as bash reads one, each command before the next is read."""
        if self.after_unit is not None:
            error, self.after_unit = self.after_unit, None
            raise error
        tok = self.skip_newlines()
        if tok.kind == EOF:
            return None
        items: list = []
        while True:
            node = self.parse_and_or(tok)
            tok = self.lex.peeked or self.lex.peek()
            if tok.kind == OP and tok.value in (";", "&"):
                self.lex.advance()
                items.append(Background(node.pos, node, tok.pos) if tok.value == "&" else node)
                tok = self.lex.peek(COMMAND_START)
                if tok.kind in (NEWLINE, EOF):
                    break
                continue
            items.append(node)
            if tok.kind == NEWLINE or tok.kind == EOF:
                break
            raise self.unexpected(tok)
        if tok.kind == NEWLINE and self.lex.pending_heredocs:
            try:
                self.lex.advance()        # the line's here-documents are read with its newline
            except ShellSyntaxError as e:
                self.after_unit = e
        return CommandList(items[0].pos, items)

    # ------------------------------------------------------------ helpers

    def unexpected(self, tok: Token) -> ShellSyntaxError:
        if tok.kind == EOF:
            return self.lex.error("syntax error: unexpected end of file", tok.pos, eof=True)
        if tok.kind == NEWLINE:
            text = "newline"
        elif tok.kind == WORD:
            text = self.source.text[tok.pos:tok.end]
        else:
            text = (tok.value or "") if tok.kind != IONUMBER else self.source.text[tok.pos:tok.end]
        return self.lex.error(f"syntax error near unexpected token `{text}'", tok.pos)

    def is_word(self, tok: Token, text: str) -> bool:
        return tok.kind == WORD and tok.value == text

    def consume_keyword(self) -> int:
        """Consumes the reserved word at hand, which starts a compound command (its token
        recycled: parse_command's callers hold none they passed it): where it starts."""
        tok = self.lex.advance()
        pos = tok.pos
        self.lex.recycle(tok)
        return pos

    def expect_word(self, text: str):
        """Consumes the reserved word `text` (its token recycled: no caller holds it)."""
        tok = self.lex.peek(COMMAND_START)
        if not self.is_word(tok, text):
            raise self.unexpected(tok)
        self.lex.recycle(self.lex.advance())

    def skip_newlines(self) -> Token:
        """Skips newline tokens; returns the token after them (peeked in command position)."""
        lex = self.lex
        tok = lex.peek(COMMAND_START)
        while tok.kind == NEWLINE:
            lex.recycle(lex.advance())
            tok = lex.peek(COMMAND_START)
        return tok

    # ------------------------------------------------------------ lists

    def parse_list(self, stop_words: frozenset) -> Node:
        """The commands up to one of `stop_words` (or a `)` or `;;`): a CommandList, or the
        command itself where there is one (most bodies: a list would be two objects more)."""
        items: list = []
        lex = self.lex
        tok = lex.peek(COMMAND_START)
        if tok.kind == NEWLINE:         # (skip_newlines, called only where there are any)
            tok = self.skip_newlines()
        start = tok.pos
        while True:
            kind = tok.kind
            if kind == EOF:
                break
            if kind == WORD and tok.value in stop_words:
                break
            if kind == OP and tok.value in (")", ";;", ";&", ";;&"):
                break
            node = self.parse_and_or(tok)
            tok = lex.peeked or lex.peek()
            if tok.kind == OP and tok.value in (";", "&"):
                lex.advance()
                if tok.value == "&":
                    node = Background(node.pos, node, tok.pos)
                lex.recycle(tok)
                items.append(node)
            elif tok.kind == NEWLINE:
                lex.recycle(lex.advance())
                items.append(node)
            else:
                items.append(node)
                break
            tok = lex.peek(COMMAND_START)
            if tok.kind == NEWLINE:
                tok = self.skip_newlines()
        if len(items) == 1:
            return items[0]
        return CommandList(start, items)

    # parse_and_or, parse_pipeline and parse_command take the token at hand (peeked in command
    # position) and leave the token after what they parsed peeked: their callers read it at
    # lex.peeked (peeking again only if it is not there) instead of asking the lexer again

    def parse_and_or(self, tok: Token):
        first = self.parse_pipeline(tok)
        tok = self.lex.peeked or self.lex.peek()
        if tok.kind != OP or tok.value not in ("&&", "||"):
            return first
        rest: list = []
        while tok.kind == OP and tok.value in ("&&", "||"):
            self.lex.advance()
            rest.append((tok.value, self.parse_pipeline(self.skip_newlines())))
            tok = self.lex.peeked or self.lex.peek()
        return AndOr(first.pos, first, rest)

    def parse_pipeline(self, tok: Token):
        start = tok.pos
        negate = timed = False
        if tok.kind == WORD and (tok.value == "time" or tok.value == "!"):
            if tok.value == "time":
                timed = True
                self.lex.advance()
                tok = self.lex.peek(COMMAND_START)
                if self.is_word(tok, "-p"):
                    self.lex.advance()
                    tok = self.lex.peek(COMMAND_START)
            while self.is_word(tok, "!"):
                negate = not negate
                self.lex.advance()
                tok = self.lex.peek(COMMAND_START)
            if timed and (tok.kind in (NEWLINE, EOF) or (tok.kind == OP and tok.value in (";", "&&", "||"))):
                return Pipeline(start, [], negate, timed)
        first = self.parse_command(tok)
        tok = self.lex.peeked or self.lex.peek()
        piped = tok.kind == OP and tok.value in ("|", "|&")
        if not (piped or negate or timed):
            return first
        commands, stderr_too = [first], []
        while piped:
            self.lex.advance()
            stderr_too.append(tok.value == "|&")
            commands.append(self.parse_command(self.skip_newlines()))
            tok = self.lex.peeked or self.lex.peek()
            piped = tok.kind == OP and tok.value in ("|", "|&")
        return Pipeline(start, commands, negate, timed, stderr_too)

    # ------------------------------------------------------------ commands

    def parse_command(self, tok: Token):
        """`tok`: the token at hand (peeked in command position)."""
        self.source.step()
        kind = tok.kind
        if kind == WORD:
            if tok.value in RESERVED:
                return self.parse_compound_command(tok)
            # `name ()`
            src, end = self.source.text, tok.end
            c = char_at(src, end)
            if c == "(" or ((c == " " or c == "\t") and char_at(src, end + 1) in " \t("):
                parens_end = _function_parens_end(src, end)
                if parens_end >= 0:
                    return self.parse_function_parens(tok, parens_end)
            return self.parse_simple_command(tok)
        if kind == OP:
            if tok.value == "(":
                if self.source.text.startswith("((", tok.pos):
                    node = self.try_arith_command(tok.pos)
                    if node is not None:
                        return self.with_redirects(node)
                return self.with_redirects(self.parse_subshell())
            if tok.value in REDIRECT_OPS:
                return self.parse_simple_command(tok)
            raise self.unexpected(tok)
        if kind == EOF or kind == NEWLINE:
            raise self.unexpected(tok)
        return self.parse_simple_command(tok)          # an assignment or a redirection first

    def parse_compound_command(self, tok: Token):
        """`tok`: the reserved word it starts with."""
        word = tok.value or ""
        handler = _COMPOUND_PARSERS.get(word)
        if handler is None:
            if word == "coproc":
                raise self.lex.error(f"`{word}' is not supported", tok.pos)
            raise self.unexpected(tok)
        node = handler(self)
        if isinstance(node, FunctionDef):
            return node
        return self.with_redirects(node)

    def with_redirects(self, node):
        """`node` with the redirections that follow it, if any (most have none: the empty
        tuple, no object of their own; the few there are added one tuple at a time, as a
        simple command's)."""
        redirects: tuple[Redirect, ...] = ()
        while True:
            tok = self.lex.peek()
            if tok.kind == IONUMBER or (tok.kind == OP and tok.value in REDIRECT_OPS):
                redirects += (self.parse_redirect(),)
            else:
                if redirects:
                    node.redirects = redirects
                return node

    def parse_simple_command(self, first: Token) -> SimpleCommand:
        """`first`: its first token, peeked in command position."""
        lex = self.lex
        start = first.pos
        # (a command's fields are tuples: most are empty, and the empty tuple is no object of
        # its own; assignments and redirections are few, added one tuple at a time)
        assigns: tuple[Assign, ...] = ()
        words: list = []
        redirects: tuple[Redirect, ...] = ()
        is_let = False
        mode = COMMAND_START    # `name=value` is an assignment here, and in a declaration's
        end = start             # arguments
        tok = first
        while True:
            kind = tok.kind
            if kind == WORD:
                lex.peeked = None             # lex.advance(), inline (a word is no newline)
                lex.pos = end = tok.end
                if not words:
                    if tok.value in ASSIGNMENT_ARGUMENTS:
                        is_let = tok.value == "let"
                    else:
                        mode = ARGUMENT
                words.append(tok.as_word())
                lex.recycle(tok)        # (parse_command's callers hold no token they passed it)
            elif kind == ASSIGN:
                lex.peeked = None
                lex.pos = end = tok.end
                if is_let:
                    # let's arguments are expressions: in `let x=( 1 )` the parentheses group
                    words.append(lex.sub_word(tok.pos, tok.end))
                elif words:
                    words.append(tok.assign)
                else:
                    assigns += (tok.assign,)
                lex.recycle(tok)
            elif kind == IONUMBER or (kind == OP and tok.value in REDIRECT_OPS):
                redirects += (self.parse_redirect(),)
                end = lex.pos
            else:
                break
            tok = lex.peek(mode)
        if not (assigns or words or redirects):
            raise self.unexpected(lex.peek())
        return SimpleCommand(start, assigns, tuple(words), redirects, end)

    def parse_redirect(self) -> Redirect:
        tok = self.lex.advance()
        fd: Union[int, str, None] = None
        start = tok.pos
        if tok.kind == IONUMBER:           # `2>`: the number; `{fd}>`: the name
            text = tok.value or ""
            fd = text if self.source.text[tok.pos] == "{" else int(text)
            tok = self.lex.advance()
        op = tok.value or ""
        target = self.lex.peek()
        if target.kind != WORD:
            raise self.unexpected(target)
        self.lex.advance()
        if op in ("<<", "<<-"):
            delimiter, quoted = heredoc_delimiter(self.source.text[target.pos:target.end])
            doc = HereDoc(target.pos, delimiter, quoted, op == "<<-")
            self.lex.pending_heredocs.append(doc)
            return Redirect(start, fd, op, doc)
        return Redirect(start, fd, op, target.as_word())

    # ------------------------------------------------------------ compound commands

    def parse_brace_group(self) -> BraceGroup:
        pos = self.consume_keyword()
        self.lex.nest(pos)
        body = self.parse_list(_BRACE_END)
        self.require_nonempty(body)
        self.expect_word("}")
        self.lex.depth -= 1
        return BraceGroup(pos, body)

    def parse_subshell(self) -> Subshell:
        tok = self.lex.advance()
        self.lex.nest(tok.pos)
        body = self.parse_list(frozenset())
        self.require_nonempty(body)
        close = self.lex.peek()
        if not (close.kind == OP and close.value == ")"):
            raise self.unexpected(close)
        self.lex.advance()
        self.lex.depth -= 1
        return Subshell(tok.pos, body)

    def try_arith_command(self, pos: int) -> Optional[ArithCommand]:
        lex = self.lex
        lex.peeked = None
        lex.pos = pos + 2
        expr = lex._try_arith(pos + 2)
        if expr is None:
            lex.pos = pos
            return None
        return ArithCommand(pos, expr)

    def parse_if(self) -> If:
        pos = self.consume_keyword()
        self.lex.nest(pos)
        clauses: list = []
        cond = self.parse_list(_THEN)
        self.require_nonempty(cond)
        self.expect_word("then")
        body = self.parse_list(_IF_BODY_END)
        self.require_nonempty(body)
        clauses.append((cond, body))
        else_body = None
        while True:
            nxt = self.lex.peek(COMMAND_START)
            if self.is_word(nxt, "elif"):
                self.lex.advance()
                cond = self.parse_list(_THEN)
                self.require_nonempty(cond)
                self.expect_word("then")
                body = self.parse_list(_IF_BODY_END)
                self.require_nonempty(body)
                clauses.append((cond, body))
            elif self.is_word(nxt, "else"):
                self.lex.recycle(self.lex.advance())
                else_body = self.parse_list(_FI)
                self.require_nonempty(else_body)
                self.expect_word("fi")
                break
            else:
                self.expect_word("fi")
                break
        self.lex.depth -= 1
        return If(pos, clauses, else_body)

    def require_nonempty(self, body: Node):
        if type(body) is CommandList and not body.items:
            raise self.unexpected(self.lex.peek(COMMAND_START))

    def parse_do_group(self) -> Node:
        self.skip_newlines()
        tok = self.lex.peek(COMMAND_START)
        if self.is_word(tok, "{"):
            return self.parse_brace_group()
        self.expect_word("do")
        body = self.parse_list(_DONE)
        self.require_nonempty(body)
        self.expect_word("done")
        return body

    def parse_while(self) -> While:
        tok = self.lex.advance()
        self.lex.nest(tok.pos)
        cond = self.parse_list(_DO)
        self.require_nonempty(cond)
        self.expect_word("do")
        body = self.parse_list(_DONE)
        self.require_nonempty(body)
        self.expect_word("done")
        self.lex.depth -= 1
        return While(tok.pos, cond, body, until=tok.value == "until")

    def parse_for(self) -> ArithFor | For:
        tok = self.lex.advance()
        self.lex.nest(tok.pos)
        lex = self.lex
        lex.skip_blanks()
        node: ArithFor | For
        if tok.value == "for" and self.source.text.startswith("((", lex.pos):
            node = self.parse_arith_for(tok.pos)
        else:
            name_tok = lex.peek()
            if name_tok.kind != WORD:
                raise self.unexpected(name_tok)
            name = self._name_text(name_tok)    # checked when the loop runs
            lex.advance()
            words = None
            self.skip_newlines()
            nxt = lex.peek(COMMAND_START)
            if self.is_word(nxt, "in"):
                lex.advance()
                words = []
                while True:
                    w = lex.peek()
                    if w.kind == WORD:
                        lex.advance()
                        words.append(w.as_word())
                    else:
                        break
                if w.kind == OP and w.value == ";":
                    lex.advance()
                elif w.kind != NEWLINE:
                    raise self.unexpected(w)
            elif nxt.kind == OP and nxt.value == ";":
                lex.advance()
            body = self.parse_do_group()
            node = For(tok.pos, name, tuple(words) if words is not None else None, body,
                       select=tok.value == "select")
        self.lex.depth -= 1
        return node

    def parse_arith_for(self, pos: int) -> ArithFor:
        lex = self.lex
        start = lex.pos + 2
        src = self.source.text
        depth, i, semis = 0, start, []
        while i < len(src):
            c = src[i]
            if c == "(":
                depth += 1
            elif c == ")":
                if depth == 0:
                    break
                depth -= 1
            elif c == ";" and depth == 0:
                semis.append(i)
            i += 1
        if i >= len(src) or not src.startswith("))", i) or len(semis) != 2:
            raise lex.error("syntax error: `((...))' in for: expected `(( init; cond; step ))'", pos)
        bounds = [(start, semis[0]), (semis[0] + 1, semis[1]), (semis[1] + 1, i)]
        exprs = [lex.sub_word(a, b) if src[a:b].strip() else None for a, b in bounds]
        lex.peeked = None
        lex.pos = i + 2
        tok = lex.peek()
        if tok.kind == OP and tok.value == ";":
            lex.advance()
        body = self.parse_do_group()
        return ArithFor(pos, exprs[0], exprs[1], exprs[2], body)

    def parse_case(self) -> Case:
        pos = self.consume_keyword()
        self.lex.nest(pos)
        lex = self.lex
        subject = lex.peek()
        if subject.kind != WORD:
            raise self.unexpected(subject)
        lex.advance()
        self.skip_newlines()
        self.expect_word("in")
        items: list = []
        while True:
            nxt = lex.peek(COMMAND_START)
            if nxt.kind == NEWLINE:
                nxt = self.skip_newlines()
            if nxt.kind == WORD and nxt.value == "esac":
                lex.recycle(lex.advance())
                break
            if nxt.kind == EOF:
                raise self.unexpected(nxt)
            item_pos = nxt.pos
            if nxt.kind == OP and nxt.value == "(":
                lex.advance()
            patterns: list = []
            while True:
                p = lex.peek()
                if p.kind != WORD:
                    raise self.unexpected(p)
                lex.peeked = None             # lex.advance(), inline: no newline here
                lex.pos = p.end
                patterns.append(p.as_word())
                lex.recycle(p)
                sep = lex.peek()
                if sep.kind == OP and (sep.value == "|" or sep.value == ")"):
                    lex.peeked = None
                    lex.pos = sep.end
                    closed = sep.value == ")"
                    lex.recycle(sep)
                    if closed:
                        break
                    continue
                raise self.unexpected(sep)
            body = self.parse_list(_ESAC)
            term = lex.peek(COMMAND_START)
            if term.kind == OP and term.value in (";;", ";&", ";;&"):
                lex.advance()
                items.append(CaseItem(item_pos, patterns, body, term.value))
                lex.recycle(term)
            elif self.is_word(term, "esac"):
                items.append(CaseItem(item_pos, patterns, body, ";;"))
            else:
                raise self.unexpected(term)
        self.lex.depth -= 1
        return Case(pos, subject.as_word(), items)

    def parse_function_parens(self, name_tok: Token, parens_end: int) -> FunctionDef:
        """`name_tok` `()`, the parentheses ending at parens_end."""
        name, pos = self._name_text(name_tok), name_tok.pos
        self.lex.peeked = None
        self.lex.pos = parens_end
        self.lex.recycle(name_tok)          # (as consume_keyword)
        return self.parse_function_body(pos, name)

    def parse_function_keyword(self) -> FunctionDef:
        tok = self.lex.advance()
        name_tok = self.lex.peek()
        if name_tok.kind != WORD:
            raise self.unexpected(name_tok)
        self.lex.advance()
        parens_end = _function_parens_end(self.source.text, self.lex.pos)
        if parens_end >= 0:
            self.lex.peeked = None
            self.lex.pos = parens_end
        return self.parse_function_body(tok.pos, self._name_text(name_tok))

    def _name_text(self, tok: Token) -> str:
        """A function's or a `for` variable's name: a word with quotes or expansions is
        named by its text (and refused when the definition or the loop runs)."""
        return tok.value if tok.value is not None else self.source.text[tok.pos:tok.end]

    def parse_function_body(self, pos: int, name: str) -> FunctionDef:
        if name in _NOT_FUNCTION_NAMES:
            raise self.lex.error(f"`{name}': not a valid identifier", pos)
        self.lex.nest(pos)
        body = self.parse_command(self.skip_newlines())
        if not isinstance(body, COMPOUND_NODES):
            raise self.lex.error("syntax error: a function body must be a compound command", body.pos)
        self.lex.depth -= 1
        # (an identifier is a valid name: a test much cheaper than the regex)
        valid = name.isidentifier() or _VALID_FUNC_NAME.fullmatch(name) is not None
        return FunctionDef(pos, name, body, valid_name=valid)

    # ------------------------------------------------------------ [[ ]]

    def parse_cond_command(self) -> CondCommand:
        pos = self.consume_keyword()
        self.lex.nest(pos)
        try:
            expr = self.cond_or()
            end = self.cond_peek()
            if not self.is_word(end, "]]"):
                raise self.unexpected(end)
        except ShellSyntaxError as e:
            e.keeps_status = True      # bash ends with the last status on a [[ ]] parse error
            raise
        self.lex.recycle(self.lex.advance())       # ]]
        self.lex.depth -= 1
        return CondCommand(pos, expr)

    def cond_peek(self) -> Token:
        while True:
            tok = self.lex.peek()
            if tok.kind != NEWLINE:
                return tok
            self.lex.advance()

    def cond_or(self) -> Any:
        left = self.cond_and()
        while True:
            tok = self.cond_peek()
            if tok.kind == OP and tok.value == "||":
                self.lex.advance()
                left = CondAndOr(tok.pos, "||", left, self.cond_and())
            else:
                return left

    def cond_and(self) -> Any:
        left = self.cond_not()
        while True:
            tok = self.cond_peek()
            if tok.kind == OP and tok.value == "&&":
                self.lex.advance()
                left = CondAndOr(tok.pos, "&&", left, self.cond_not())
            else:
                return left

    def cond_not(self) -> Any:
        tok = self.cond_peek()
        if self.is_word(tok, "!"):
            self.lex.advance()
            return CondNot(tok.pos, self.cond_not())
        return self.cond_primary()

    def cond_primary(self) -> Any:
        lex = self.lex
        tok = self.cond_peek()
        if tok.kind == OP and tok.value == "(":
            lex.advance()
            self.lex.nest(tok.pos)
            inner = self.cond_or()
            close = self.cond_peek()
            if not (close.kind == OP and close.value == ")"):
                raise self.unexpected(close)
            lex.advance()
            self.lex.depth -= 1
            return inner
        if tok.kind != WORD or self.is_word(tok, "]]"):
            raise self.cond_error(tok)
        lex.advance()
        if tok.value in COND_UNARY:
            pos, test = tok.pos, tok.value or ""
            lex.recycle(tok)
            operand = self.cond_peek()
            if operand.kind == WORD and not self.is_word(operand, "]]"):
                lex.advance()
                unary = CondUnary(pos, test, operand.as_word())
                lex.recycle(operand)
                return unary
            raise self.cond_error(operand)
        op_tok = self.cond_peek()
        op = None
        if op_tok.kind == WORD and op_tok.value in COND_BINARY:
            op = op_tok.value
        elif op_tok.kind == OP and op_tok.value in ("<", ">"):
            op = op_tok.value
        if op is None:
            if op_tok.kind == WORD and not self.is_word(op_tok, "]]"):
                raise self.cond_error(op_tok)
            if op_tok.kind not in (WORD, NEWLINE) and not (
                    op_tok.kind == OP and op_tok.value in ("&&", "||", ")")):
                raise self.cond_error(op_tok)
            return CondWord(tok.pos, tok.as_word())
        lex.advance()
        if op == "=~":
            lex.pos = op_tok.end
            lex.peeked = None
            lex.skip_blanks()
            right = lex.scan_regex_word()
        else:
            r = self.cond_peek()
            if r.kind != WORD or self.is_word(r, "]]"):
                raise self.cond_error(r)
            lex.advance()
            right = r.as_word()
        return CondBinary(tok.pos, op, tok.as_word(), right)

    def cond_error(self, tok: Token) -> ShellSyntaxError:
        if tok.kind == EOF:
            return self.unexpected(tok)
        text = self.source.text[tok.pos:tok.end]
        err = self.lex.error(f"syntax error in conditional expression: unexpected token `{text}'", tok.pos)
        err.keeps_status = True
        return err


# the reserved words that open a compound command → the method that parses it
_COMPOUND_PARSERS: Final = {
    "if": Parser.parse_if, "while": Parser.parse_while, "until": Parser.parse_while,
    "for": Parser.parse_for, "select": Parser.parse_for, "case": Parser.parse_case,
    "{": Parser.parse_brace_group, "[[": Parser.parse_cond_command,
    "function": Parser.parse_function_keyword,
}


def heredoc_delimiter(text: str) -> tuple[str, bool]:
    """The delimiter is the word's text with quotes removed and no expansion; any quoting
    makes the body literal."""
    quoted = any(c in text for c in "'\"\\")
    out, i = [], 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            out.append(text[i + 1])
            i += 2
            continue
        if c in "'\"":
            i += 1
            continue
        out.append(c)
        i += 1
    return "".join(out), quoted


def parse_nested(source: Source, max_depth: int, depth: int, pos: int, closer: str):
    """The body of `$(` (or `<(`) starting at pos in the source of a lexer at `depth`, up to
    its `)`: (node, end offset)."""
    sub = Parser("", depth, max_depth=max_depth, source=source)
    sub.lex.nest(pos)
    sub.lex.pos = pos
    body = sub.parse_list(frozenset())
    tok = sub.lex.peek()
    if tok.kind == EOF:
        raise sub.lex.unexpected_eof(closer)
    if tok.kind != OP or tok.value != closer:
        raise sub.unexpected(tok)
    return body, tok.end


def parse(text: str, max_depth: int = DEFAULT_MAX_DEPTH) -> CommandList:
    return Parser(text, max_depth=max_depth).parse_program()


def parse_backtick(text: str, base_line: int, depth: int, max_depth: int) -> CommandList:
    return Parser(text, depth=depth, base_line=base_line, max_depth=max_depth).parse_program()


SUB_PARSERS: Final = SubParsers(parse_nested, parse_backtick)
