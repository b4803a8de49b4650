"""Word expansion, compiled: each Word becomes closures that expand it in one context.

Contexts: `fields` (command arguments: brace expansion, IFS splitting, "$@"), `string` (assignment
values, here-strings, `[[ ]]` operands: no splitting), `pattern` (case, `[[ == ]]`, `${x#p}`:
quoted characters are escaped with a backslash) and `regex` (`=~`: quoted characters escaped).

A compiled part returns a `str`; parts that can produce several fields ("$@", "${a[@]}",
`${x:-a b}` unquoted) return a list: a plain `list` whose elements are split further when
unquoted, or `Fields`, whose elements are final.
"""
from __future__ import annotations

import re
from typing import Callable, Optional

from .nodes import (TRANSFORMS, ArithSub, CommandSub, DoubleQuoted, Lit, ParamExp, ProcessSub, SingleQuoted,
                  Tilde, Word)
from ..base.errors import ArithError, FatalError, LimitExceeded, unbound
from ..base.limits import check_stop
from ..base import patterns
from .state import IndexedArray
from .braces import brace_expand, has_braces
from .quoting import ansi_c_escape, needs_ansi_c, printf_q, quote_for_reuse
from .split import DEFAULT_IFS, Fields, split_fields

SPLIT, QUOTED = 1, 0


class Disabled(Exception):
    """A construct logic mode refuses (process substitution)."""


# ---------------------------------------------------------------- pathname expansion

RAW, QUOTED_PART, ACTIVE = 0, 1, 2
_WILDCARD = re.compile(r"[*?\[]|[+@!]\(")
_MAY_EXPAND = re.compile(_WILDCARD.pattern + "|{")     # a wildcard, or a brace that may expand
# a text with none of these cannot match _MAY_EXPAND: a test much cheaper than the regex call
_MAY_EXPAND_CHARS = frozenset("*?[({")
_WILDCARD_CHARS = frozenset("*?[(")       # a wildcard has one of them


def _may_expand(text: str) -> bool:
    """Whether an unquoted literal text holds a wildcard or a brace that may expand."""
    return not _MAY_EXPAND_CHARS.isdisjoint(text) and _MAY_EXPAND.search(text) is not None


def _has_wildcard(text: str) -> bool:
    """Whether an unquoted literal text holds a wildcard (the same cheap test first)."""
    return not _WILDCARD_CHARS.isdisjoint(text) and _WILDCARD.search(text) is not None


def _glob_kind(p) -> int:
    """ACTIVE: the part can put a wildcard in a field (unquoted `*`, an unquoted expansion);
    QUOTED_PART: its text never acts as a wildcard; RAW: literal text without wildcards."""
    if isinstance(p, Lit):            # (isinstance: see WordCompiler.written_pattern)
        if p.escaped:
            return QUOTED_PART
        return ACTIVE if _has_wildcard(p.text) else RAW
    t = type(p)
    if t is ParamExp or t is CommandSub:
        return ACTIVE
    if t is ArithSub:
        return RAW
    return QUOTED_PART


def _escape_value(v):
    if type(v) is str:
        return patterns.escape_glob(v)
    return type(v)(patterns.escape_glob(x) for x in v)


_TILDE_PREFIX = re.compile(r"~([A-Za-z0-9_.+-]*)(?=/|$)")


def _leading_tilde(word: Word) -> Word:
    """A word from brace expansion that now starts with `~` gets tilde expansion, as in bash
    (`{a,~}/x` is `a/x $HOME/x`)."""
    first = word.parts[0] if word.parts else None
    if type(first) is not Lit or first.escaped or not first.text.startswith("~"):
        return word
    m = _TILDE_PREFIX.match(first.text)
    if m is None or (m.end() == len(first.text) and len(word.parts) > 1 and type(word.parts[1]) is not Lit):
        return word
    rest = first.text[m.end():]
    parts = [Tilde(first.pos, m.group(1))] + ([Lit(first.pos, rest)] if rest else []) + word.parts[1:]
    return Word(word.pos, parts)


def _file_read_only(body):
    """The `< file` redirection of a command substitution that is nothing else, or None."""
    node = body
    while type(node).__name__ == "CommandList" and len(node.items) == 1:
        node = node.items[0]
    if type(node).__name__ != "SimpleCommand" or node.words or node.assigns:
        return None
    if len(node.redirects) == 1 and node.redirects[0].op == "<" and node.redirects[0].fd in (None, 0):
        return node.redirects[0]
    return None


def _ignored(sh, matches: list) -> list:
    """Matches left after GLOBIGNORE's colon-separated patterns (`.` and `..` always go)."""
    ignore = sh.get_value("GLOBIGNORE")
    if not ignore:
        return matches
    rules = [r.split("/") for r in _colon_list(ignore) if r]

    def ignored(path: str) -> bool:      # `*` does not match a slash here
        parts = path.split("/")
        return any(len(rule) == len(parts) and all(patterns.glob_match(r, p) for r, p in zip(rule, parts))
                   for rule in rules)
    return [m for m in matches if m.rsplit("/", 1)[-1] not in (".", "..") and not ignored(m)]


def _colon_list(text: str) -> list:
    """GLOBIGNORE's patterns: split at colons outside brackets (`[[:alnum:]]*` is one)."""
    out: list = []
    cur: list = []
    depth = 0
    for c in text:
        if c == "[":
            depth += 1
        elif c == "]" and depth:
            depth -= 1
        if c == ":" and not depth:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(c)
    out.append("".join(cur))
    return out


def pathnames(sh, fields: list, escaped: list) -> list:
    """Replace each field whose pattern has an unquoted wildcard by the sorted paths matching
    it (nullglob: by nothing; failglob: an error; otherwise the field stays as it is)."""
    from . import glob
    out: list = []
    shopts = sh.shopts
    for field, pattern in zip(fields, escaped):
        if not glob.is_pattern(pattern):
            out.append(field)
            continue
        globignore = bool(sh.get_value("GLOBIGNORE"))
        matches = glob.expand(sh.fs, sh.cwd, pattern, dotglob=shopts["dotglob"] or globignore,
                              nocase=shopts["nocaseglob"], globstar=shopts["globstar"],
                              skipdots=shopts["globskipdots"])
        if globignore:
            matches = _ignored(sh, matches)
        if matches:
            out.extend(matches)
        elif shopts["failglob"]:
            raise FatalError(f"no match: {field}")
        elif not shopts["nullglob"]:
            out.append(field)
    return out


# ---------------------------------------------------------------- compiling words

class WordCompiler:
    """Turns Words into closures; the compile stage's Compiler (compile.py) is one, and
    compiles the commands inside words (compile_command)."""

    def __init__(self) -> None:
        # how many `<( )` / `>( )` were compiled: a command that compiled one is wrapped so
        # that their descriptors close when it ends (compile.py)
        self.process_substitutions = 0

    def compile_command(self, node) -> Callable:
        """fn(sh) for the commands of a `$( )` or `<( )` body."""
        raise NotImplementedError

    # -- public entry points

    def fields(self, word: Word) -> Callable:
        """fn(sh) -> list[str]: brace expansion, expansion, splitting, quote removal."""
        text = self._text_and_parameters(word)
        if text is not None:
            return lambda sh: [text(sh)]
        if has_braces(word):
            return self._brace_fields(word)
        return self._fields_no_brace(word)

    def fields_list(self, words: tuple) -> Callable:
        """fn(sh) -> list[str] for a list of words (command arguments, for-in lists)."""
        leading: list = []            # the literal words the list starts with (a command's name)
        for w in words:
            text = self._literal_text(w)
            if text is None:
                break
            leading.append(text)
        else:
            return lambda sh: list(leading)      # literal words: nothing to compile
        fns: list = []
        for w in words[len(leading):]:      # (a loop: compiled, map() would call each through Python)
            fns.append(self.fields(w))
        if len(fns) == 1 and not leading:
            return fns[0]

        def run(sh):
            out = list(leading)
            for fn in fns:
                out.extend(fn(sh))
            return out
        return run

    def string(self, word: Word) -> Callable:
        """fn(sh) -> str: expansion without splitting (assignments, here-strings, [[ ]])."""
        static = self._static_text(word)
        if static is not None:
            return lambda sh: static
        text = self._text_and_parameters(word)
        if text is not None:
            return text
        parts: list = []
        for p in word.parts:
            parts.append(self._part(p, quoted=type(p) is ParamExp))
        if len(parts) == 1:
            fn, _ = parts[0]
            return lambda sh: _as_string(fn(sh), sh)

        def run(sh):
            return _joined_as_strings(sh, parts)
        return run

    def pattern(self, word: Word) -> Callable:
        """fn(sh) -> str: a glob pattern in which quoted characters are backslash-escaped."""
        return self._escaped(word, patterns.escape_glob)

    def written_pattern(self, word: Word) -> Optional[str]:
        """What pattern(word) makes when the word has no expansion in it (its literal and
        single-quoted parts), else None."""
        if word.text is not None:
            return word.text
        text: list = []
        for p in word.parts:
            # (isinstance, not type(p) is: compiled, it tells the type of p, whose fields are
            # then read directly instead of looked up by name)
            if isinstance(p, Lit):
                text.append(patterns.escape_glob(p.text) if p.escaped else p.text)
            elif isinstance(p, SingleQuoted):
                text.append(patterns.escape_glob(p.text))
            else:
                return None
        return "".join(text)

    def regex(self, word: Word) -> Callable:
        """fn(sh) -> str for the right of `=~`: quoted characters escaped, but inside a bracket
        expression, where bash 5.2 passes a quoted character on as itself (`[^\\]]` is "not
        `]`"), which matters for words written out (the common case)."""
        if all(type(p) is Lit or type(p) is SingleQuoted for p in word.parts) and \
                any(type(p) is Lit and not p.escaped and "[" in p.text for p in word.parts):
            text = _regex_text([(p.text, type(p) is SingleQuoted or p.escaped) for p in word.parts])
            return lambda sh: text
        return self._escaped(word, re.escape)

    def replacement(self, word: Word) -> Callable:
        """fn(sh) -> str for ${x/p/REPLACEMENT}: quoted `&` and `\\` are escaped."""
        return self._escaped(word, lambda t: t.replace("\\", "\\\\").replace("&", "\\&"))

    # -- internals

    def _text_and_parameters(self, word: Word):
        """fn(sh) -> str for a word that is the most common double-quoted string, "text $name
        $1 text": literal text and plain parameters (no operator, subscript, `$@` or `$*`),
        always one field. None for any other word (and for a string without a parameter,
        which is static)."""
        if word.text is not None:
            return None
        quoted = word.parts[0] if len(word.parts) == 1 else None
        if not isinstance(quoted, DoubleQuoted):
            return None
        pieces: list = []
        for q in quoted.parts:          # (isinstance: see written_pattern)
            if isinstance(q, Lit):
                pieces.append(q.text)
            elif (isinstance(q, ParamExp) and q.op is None and q.index is None and not q.indirect
                  and not q.length and not q.prefix_list and q.name != "@" and q.name != "*"):
                pieces.append(self.param(q, True))
            else:
                return None
        if len(pieces) == 1:
            return pieces[0] if type(pieces[0]) is not str else None
        if all(type(p) is str for p in pieces):
            return None

        def text(sh):
            out = []
            for p in pieces:
                out.append(p if type(p) is str else p(sh))
            return "".join(out)
        return text

    def _literal_text(self, word: Word):
        """The word's text when nothing in it expands: no expansion, and no wildcard or brace
        in an unquoted literal. Else None."""
        if word.text is not None:
            return None if _may_expand(word.text) else word.text
        parts = word.parts
        lit = parts[0] if len(parts) == 1 else None
        if isinstance(lit, Lit):            # most words, without two calls
            return None if not lit.escaped and _may_expand(lit.text) else lit.text
        text = self._static_text(word)
        if text is None:
            return None
        for p in parts:
            if isinstance(p, Lit) and not p.escaped and _may_expand(p.text):
                return None
        return text

    def _static_text(self, word: Word):
        """The word's text when it has no expansion in it, else None."""
        if word.text is not None:
            return word.text
        parts = word.parts
        if len(parts) == 1:
            only = parts[0]
            if isinstance(only, Lit) or isinstance(only, SingleQuoted):
                return only.text
            if not isinstance(only, DoubleQuoted):         # one expansion
                return None
        text: list = []
        for p in parts:
            if isinstance(p, Lit) or isinstance(p, SingleQuoted):
                text.append(p.text)
            elif isinstance(p, DoubleQuoted):
                for q in p.parts:
                    if not isinstance(q, Lit):
                        return None
                    text.append(q.text)
            else:
                return None
        return "".join(text)

    def _escaped(self, word: Word, escape: Callable) -> Callable:
        """fn(sh) -> str: the word's text with its quoted (and backslash-escaped) parts passed
        through `escape`."""
        if word.text is not None:    # most patterns: `ITEM-*)`
            text = word.text
            return lambda sh: text
        lit = word.parts[0] if len(word.parts) == 1 else None
        if isinstance(lit, Lit):
            text = escape(lit.text) if lit.escaped else lit.text
            return lambda sh: text
        pieces: list = []
        for p in word.parts:
            t = type(p)
            if t is Lit:
                text = escape(p.text) if p.escaped else p.text
                pieces.append((lambda text: lambda sh: text)(text))
            elif t is SingleQuoted:
                text = escape(p.text)
                pieces.append((lambda text: lambda sh: text)(text))
            elif t is DoubleQuoted:
                inner = self._parts(p.parts, quoted=True)
                pieces.append((lambda inner: lambda sh: escape(_joined_as_strings(sh, inner)))(inner))
            else:
                fn, _ = self._part(p, quoted=False)
                pieces.append((lambda fn: lambda sh: _as_string(fn(sh), sh))(fn))
        if len(pieces) == 1:
            return pieces[0]
        return lambda sh: _joined(sh, pieces)

    def _brace_fields(self, word: Word) -> Callable:
        cache: list = []

        def run(sh):
            if not cache:
                words = brace_expand(word, sh.limits.max_brace_expansion, sh.budget.note)
                # each word's field when it is fixed text (`{1..1000}`), else its closure
                compiled: list = []
                for number, w in enumerate(words):
                    if not number & 255:      # under the clock: 100,000 words of five `$()` took 4 s
                        check_stop()
                    w = _leading_tilde(_rejoin_names(w))
                    fixed = self._fixed_field(w)
                    compiled.append(fixed if fixed is not None else self._fields_no_brace(w))
                cache.append(compiled)
            elif len(cache[0]) > sh.limits.max_brace_expansion:
                raise LimitExceeded("max_brace_expansion", "brace expansion: too many words")
            out = []
            for item in cache[0]:
                if type(item) is str:
                    out.append(item)
                else:
                    out.extend(item(sh))
            return out
        return run

    def _fixed_field(self, word: Word) -> Optional[str]:
        """The one field of `word` when it is fixed text: no expansion and no wildcard (the
        field _fields_no_brace would make, without a closure for each word of `{1..1000}`)."""
        if not word.parts:
            return None
        for p in word.parts:
            if _glob_kind(p) == ACTIVE:
                return None
        return self._static_text(word)

    def _fields_no_brace(self, word: Word) -> Callable:
        """Expansion, splitting and, on a filesystem, pathname expansion of unquoted
        wildcards. Words that cannot hold a wildcard compile to the plain path only."""
        kinds: list = []
        for part in word.parts:             # (a loop: compiled, map() would call each through Python)
            kinds.append(_glob_kind(part))
        if ACTIVE not in kinds:
            return self._fields_plain(word, False)
        if QUOTED_PART not in kinds:         # every field is its own pattern
            return self._fields_plain(word, True)
        parts = self._parts(word.parts, quoted=False)
        quoted = [k == QUOTED_PART for k in kinds]

        def globbed_quoted(sh):
            values = [fn(sh) for fn, _ in parts]
            ifs = sh.ifs
            fields = split_fields([(v, s) for v, (_, s) in zip(values, parts)], ifs)
            if not sh.fs.enabled or sh.noglob:
                return fields
            escaped = split_fields([(_escape_value(v) if q else v, s)
                                    for v, q, (_, s) in zip(values, quoted, parts)], ifs)
            if len(escaped) != len(fields):
                return fields
            return pathnames(sh, fields, escaped)
        return globbed_quoted

    def _fields_plain(self, word: Word, glob: bool) -> Callable:
        """`glob`: the fields are patterns too (no quoted part), expanded on a filesystem."""
        if not word.parts:           # an empty alternative of a brace expansion: no word
            return lambda sh: []
        static = self._static_text(word)
        if static is not None and not glob:
            return lambda sh: [static]
        parts = self._parts(word.parts, quoted=False)
        if len(parts) == 1:
            fn, splittable = parts[0]
            if not splittable:
                def one_quoted(sh):
                    v = fn(sh)
                    fields = [v] if type(v) is str else list(v)
                    if glob and sh.fs.enabled and not sh.noglob:
                        return pathnames(sh, fields, fields)
                    return fields
                return one_quoted

            def one_split(sh):
                v = fn(sh)
                if type(v) is str:
                    if not v:
                        return []
                    ifs = sh.ifs
                    fields = v.split() if ifs == DEFAULT_IFS else split_fields([(v, True)], ifs)
                else:
                    fields = split_fields([(v, True)], sh.ifs)
                if glob and sh.fs.enabled and not sh.noglob:
                    return pathnames(sh, fields, fields)
                return fields
            return one_split

        def run(sh):
            fields = split_fields(_values(sh, parts), sh.ifs)
            if glob and sh.fs.enabled and not sh.noglob:
                return pathnames(sh, fields, fields)
            return fields
        return run

    def _parts(self, parts: list, quoted: bool) -> list:
        """_part of each part (a loop, not a comprehension: that would make `self` a cell of
        every method that has one)."""
        out: list = []
        for p in parts:
            out.append(self._part(p, quoted))
        return out

    def _part(self, p, quoted: bool):
        """(fn(sh) -> str | list, splittable)."""
        if isinstance(p, Lit) or isinstance(p, SingleQuoted):     # (see written_pattern)
            text = p.text
            return (lambda sh: text), False
        if isinstance(p, DoubleQuoted):
            return self._double_quoted(p), False
        if isinstance(p, ParamExp):
            return self.param(p, quoted), not quoted
        if isinstance(p, CommandSub):
            redirect = _file_read_only(p.body)
            if redirect is not None:            # $(< file): the file's contents
                target = self.string(redirect.target)
                return (lambda sh: sh.file_substitution(target(sh))), not quoted
            body = self.compile_command(p.body)
            return (lambda sh: sh.command_substitution(body)), not quoted
        if isinstance(p, ArithSub):
            expr = self.string(p.expr)

            def arith_sub(sh):
                try:
                    return str(sh.arith_eval(expr(sh)))
                except FatalError as e:
                    e.ends_errexit_shell = False
                    raise
            return arith_sub, not quoted
        if isinstance(p, Tilde):
            user = p.user
            return (lambda sh: sh.tilde(user)), False
        if isinstance(p, ProcessSub):
            from .jobs import substitute
            body = self.compile_command(p.body)
            direction = p.direction
            self.process_substitutions += 1
            return (lambda sh: substitute(sh, body, direction)), False
        raise TypeError(f"unknown word part {type(p).__name__}")

    def _double_quoted(self, dq: DoubleQuoted) -> Callable:
        parts = self._parts(dq.parts, quoted=True)
        if not parts:
            return lambda sh: ""
        multi = _has_multi(dq.parts)
        if len(parts) == 1:
            fn = parts[0][0]
            if multi:
                return lambda sh: _dq_single(fn(sh))
            return fn
        if not multi:
            fns = [fn for fn, _ in parts]
            return lambda sh: _joined(sh, fns)

        def run(sh):
            # "pre$@post": the first field gets pre, the last gets post
            out, cur = [], []
            for fn, _ in parts:
                v = fn(sh)
                if type(v) is str:
                    cur.append(v)
                elif v:
                    cur.append(v[0])
                    for x in v[1:]:
                        out.append("".join(cur))
                        cur = [x]
            out.append("".join(cur))
            return Fields(out)
        return run

    # -- parameters

    def param(self, p: ParamExp, quoted: bool) -> Callable:
        name = p.name
        if p.op == "bad":
            message = f"{name}: bad substitution"

            def bad(sh):
                raise FatalError(message)
            return bad
        if p.prefix_list:
            star = p.prefix_list == "*"

            def names(sh):
                found = sorted(n for n in sh.all_var_names() if n.startswith(name))
                if star and quoted:
                    return sh.ifs[:1].join(found)
                return found
            return names
        if p.length:
            return self._length(p)
        if p.op is None and p.index is None and not p.indirect and _is_plain_name(name):
            def scalar(sh):
                v = sh.get_value(name)
                if v is None:
                    if sh.nounset:
                        raise unbound(name)
                    return ""
                return v
            return scalar
        base = self._base(p, quoted)
        if p.op is None:
            def not_none(sh):
                v = base(sh)
                return "" if v is None else v
            return not_none
        return self._operator(p, base, quoted)

    def _base(self, p: ParamExp, quoted: bool) -> Callable:
        """fn(sh) -> value: str, None (unset) or list (multi)."""
        name = p.name
        index = p.index
        nounset_ok = p.op in ("-", ":-", "=", ":=", "+", ":+", "?", ":?")
        if p.indirect:
            if index is not None and p.op is not None and index.literal() in ("@", "*"):
                # ${!a[@]OP}: with an operator, bash expands the variable the values name
                def through_values(sh):
                    var = sh.lookup(name)
                    target = sh.ifs[:1].join(var.values()) if var is not None else ""
                    if not target:
                        raise FatalError(f"{name}[{index.literal()}]: invalid indirect expansion")
                    return sh.resolve_reference(target, quoted)
                return through_values
            if index is not None:
                key = index.literal()
                if key in ("@", "*"):     # ${!a[@]}: the keys
                    star_joined = key == "*" and quoted

                    def keys(sh):
                        var = sh.lookup(name)
                        ks = var.keys() if var is not None else []
                        return sh.ifs[:1].join(ks) if star_joined else ks
                    return keys

            target_index = self.string(index) if index is not None else None

            special = sh_special(name) if not _is_plain_name(name) else None

            def indirect(sh):
                var = sh.lookup_raw(name) if special is None else None
                if var is not None and var.attrs & 32 and target_index is None:
                    return var.value          # nameref: ${!ref} is the name it refers to
                if special is not None:
                    target = special(sh)
                else:
                    target = sh.get_value(name) if target_index is None else sh.get_element(name, target_index(sh))
                    if target is None and target_index is None and var is None:
                        raise FatalError(f"{name}: invalid indirect expansion")
                if target is None:
                    if sh.nounset:
                        raise unbound(f"{name}")
                    return None
                value = sh.resolve_reference(target, quoted)
                if value is None and sh.nounset and not nounset_ok:
                    raise unbound(target)
                return value
            return indirect
        if index is not None:
            key = index.literal()
            if key in ("@", "*"):
                star_joined = key == "*" and quoted

                def all_values(sh):
                    var = sh.lookup(name)
                    if var is None or var.value is None:
                        if sh.nounset and not nounset_ok:
                            raise unbound(f"{name}[{key}]")
                        return "" if star_joined else []
                    vals = var.values()
                    return sh.ifs[:1].join(vals) if star_joined else vals
                return all_values
            key_str = self.string(index)

            def element(sh):
                v = sh.get_element(name, key_str(sh))
                if v is None and sh.nounset and not nounset_ok:
                    raise unbound(f"{name}[{key_str(sh)}]")
                return v
            return element
        if name in ("@", "*"):
            if name == "*" and quoted:
                return lambda sh: sh.ifs[:1].join(sh.positional)
            return lambda sh: list(sh.positional)
        if (name.isascii() and name.isdigit()) or name in "#?$!-":
            special = sh_special(name)
            if (name.isascii() and name.isdigit()) and name != "0":
                def positional(sh):
                    v = special(sh)
                    if v is None and sh.nounset and not nounset_ok:
                        raise unbound(f"{name}")
                    return v
                return positional
            return special

        def scalar(sh):
            v = sh.get_value(name)
            if v is None and sh.nounset and not nounset_ok:
                raise unbound(f"{name}")
            return v
        return scalar

    def _length(self, p: ParamExp) -> Callable:
        name = p.name
        if p.index is not None and p.index.literal() in ("@", "*"):
            def count(sh):
                var = sh.lookup(name)
                return str(len(var.values())) if var is not None else "0"
            return count
        if name in ("@", "*", "#"):
            if name == "#":
                return lambda sh: str(len(str(len(sh.positional))))
            return lambda sh: str(len(sh.positional))
        base = self._base(ParamExp(p.pos, name, index=p.index), True)

        def length(sh):
            v = base(sh)
            return str(len(v)) if v is not None else "0"
        return length

    def _operator(self, p: ParamExp, base: Callable, quoted: bool) -> Callable:
        if _star_joined(p, quoted) and p.op not in ("-", ":-", "+", ":+", "=", ":=", "?", ":?", ":", "@") \
                and not p.indirect:
            # "${a[*]#x}": the operator applies to each element, then they are joined
            each = self._operator(p, self._base(p, False), False)
            return lambda sh: _join_star(each(sh), sh)
        op = p.op
        name = p.name
        if op in ("-", ":-", "+", ":+", "=", ":=", "?", ":?"):
            colon = op.startswith(":")
            kind = op[-1]
            alt = self._alternative(p.arg, quoted)
            arg = p.arg
            assert arg is not None          # (the parser gives these operators a word, maybe empty)
            assign_str = self.string(arg) if kind == "=" else None
            message_fn = self.string(arg) if kind == "?" else None

            def test(sh):
                v = base(sh)
                if type(v) is list or type(v) is Fields:
                    is_set = bool(v)
                    is_null = not v or (len(v) == 1 and v[0] == "")
                else:
                    is_set = v is not None
                    is_null = not v
                missing = (not is_set) or (colon and is_null)
                if kind == "+":
                    return v if missing and False else (alt(sh) if not missing else "")
                if not missing:
                    return v
                if kind == "-":
                    return alt(sh)
                if kind == "=":
                    assert assign_str is not None   # (made for kind "=")
                    value = assign_str(sh)
                    sh.assign_from_expansion(p, value)
                    return value
                assert message_fn is not None   # (kind is "?": the others returned above)
                text = message_fn(sh) if p.arg and p.arg.parts else ""
                what = name if p.index is None else f"{name}[{p.index.literal() or ''}]"
                raise FatalError(f"{what}: {text or 'parameter null or not set'}", status=127,
                                 exits=True)
            return test
        if op in ("#", "##", "%", "%%"):
            pat = self.pattern(p.arg) if p.arg and p.arg.parts else (lambda sh: "")
            longest = len(op) == 2
            remove = patterns.remove_prefix if op[0] == "#" else patterns.remove_suffix

            def strip(sh):
                v = base(sh)
                pattern = pat(sh)
                return _map(v, lambda s: remove(s, pattern, longest))
            return strip
        if op in ("/", "//", "/#", "/%"):
            pat = self.pattern(p.arg) if p.arg and p.arg.parts else (lambda sh: "")
            rep = self.replacement(p.arg2) if p.arg2 is not None else (lambda sh: "")

            def substitute(sh):
                v = base(sh)
                pattern = pat(sh)
                template = rep(sh)
                fn = _replacement_fn(template)
                nocase = sh.shopts["nocasematch"]
                return _map(v, lambda s: patterns.replace(s, pattern, fn, op, nocase))
            return substitute
        if op in ("~", "~~"):
            toggle_all = op == "~~"

            def toggle(sh):
                return _map(base(sh), lambda s: s.swapcase() if toggle_all else s[:1].swapcase() + s[1:])
            return toggle
        if op in ("^", "^^", ",", ",,"):
            case_pattern = self.pattern(p.arg) if p.arg and p.arg.parts else None
            upper = op[0] == "^"
            all_chars = len(op) == 2

            def case(sh):
                v = base(sh)
                pattern = case_pattern(sh) if case_pattern else None
                return _map(v, lambda s: _change_case(s, upper, all_chars, pattern))
            return case
        if op == ":":
            return self._slice(p, base, quoted)
        if op == "@":
            assert p.arg is not None        # (the letter, or the text up to the `}`)
            letter = p.arg.parts[0].text
            joined = _star_joined(p, quoted)
            each = self._base(p, False) if joined else base
            if len(letter) != 1 or letter not in TRANSFORMS:
                assert p.arg2 is not None   # (the lexer keeps the text of a letter it does not know)
                message = f"{p.arg2.parts[0].text}: bad substitution"

                def unknown(sh):
                    if each(sh) in (None, [], ()):
                        return ""
                    raise FatalError(message, status=127, exits=True)
                return unknown

            def transform(sh):
                v = each(sh)
                if v is None:            # unset: no text, even for Q (bash prints nothing) ...
                    # ... but a declared array without element 0 still has its attributes
                    return sh.transform("", letter, p) if letter == "a" else ""
                result = _map(v, lambda s: sh.transform(s, letter, p))
                return sh.ifs[:1].join(result) if joined and type(result) is not str else result
            return transform
        raise FatalError(f"${{{name}{op}}}: bad substitution")

    def _alternative(self, arg, quoted: bool) -> Callable:
        """The word of ${x:-word}: unquoted, its unquoted text is split like an expansion."""
        if arg is None or not arg.parts:
            return lambda sh: ""
        if quoted:
            return self._double_quoted(DoubleQuoted(arg.pos, arg.parts))
        parts: list = []
        for p in arg.parts:
            if type(p) is Lit:
                text = p.text
                parts.append(((lambda text: lambda sh: text)(text), not p.escaped))
            else:
                parts.append(self._part(p, quoted=False))
        return lambda sh: Fields(split_fields([(fn(sh), s) for fn, s in parts], sh.ifs))

    def _slice(self, p: ParamExp, base: Callable, quoted: bool) -> Callable:
        assert p.arg is not None            # (the parser gives `:` a word, maybe empty)
        offset_fn = self.string(p.arg)
        length_fn = self.string(p.arg2) if p.arg2 is not None else None
        name = p.name
        positional = name in ("@", "*") and p.index is None and not p.indirect
        array_all = p.index is not None and p.index.literal() in ("@", "*") and not p.indirect
        star_joined = quoted and ((name == "*" and p.index is None) or
                                  (p.index is not None and p.index.literal() == "*"))

        def sliced(sh):
            offset = sh.arith_eval(offset_fn(sh))
            length = sh.arith_eval(length_fn(sh)) if length_fn else None
            if positional:
                items = ["bash"] + sh.positional
                result = _slice_list(items, offset, length, sh, p)
            elif array_all:
                var = sh.lookup(name)
                if var is None or var.value is None:
                    result = []
                elif type(var.value) is IndexedArray:
                    arr = var.value
                    keys = arr.keys()
                    if offset < 0:
                        offset += arr.top
                        if offset < 0:
                            return "" if star_joined else []
                    sel = [arr.d[k] for k in keys if k >= offset]
                    result = _slice_list(sel, 0, length, sh, p)
                else:    # bash counts an associative array's elements from 1 here (0 too)
                    result = _slice_list(var.values(), offset - 1 if offset > 0 else offset, length, sh, p)
            else:
                v = base(sh)
                if v is None:
                    return None if False else ""
                return _slice_str(v, offset, length, p)
            return sh.ifs[:1].join(result) if star_joined else result
        return sliced


def _join_star(v, sh):
    if v is None or type(v) is str:
        return v
    return sh.ifs[:1].join(v)


def _star_joined(p: ParamExp, quoted: bool) -> bool:
    """"${a[*]...}" and "$*...": the operator applies to each element, then they are joined."""
    if not quoted:
        return False
    if p.index is not None:
        return p.index.literal() == "*"
    return p.name == "*"


def _is_plain_name(name: str) -> bool:
    return name[0].isalpha() or name[0] == "_"


def _is_multi(p: ParamExp) -> bool:
    if p.length:
        return False
    if p.prefix_list == "@":
        return True
    if p.name in ("@", "*") and p.index is None:
        return p.name == "@"
    return p.index is not None and p.index.literal() == "@"


def _has_multi(parts) -> bool:
    """Whether a double-quoted text has a "$@"-like part (one nested in quotes included, as
    in ${u:-{"$@"}), which makes it several fields."""
    for q in parts:
        t = type(q)
        if t is ParamExp and (_is_multi(q) or _default_is_multi(q)):
            return True
        if t is DoubleQuoted and _has_multi(q.parts):
            return True
    return False


def _default_is_multi(p: ParamExp) -> bool:
    """"${u:-$@}": the word used in place of the parameter has a "$@" of its own."""
    return p.op in ("-", ":-", "+", ":+") and p.arg is not None and _has_multi(p.arg.parts)


def _dq_single(v):
    if type(v) is str:
        return v
    return Fields(v)


# Loops over a word's compiled parts, as functions of their own: a comprehension or generator
# inside a closure makes a cell of `sh` (and a generator a frame) at every call of the closure.

def _joined(sh, fns: list) -> str:
    out: list = []
    for fn in fns:
        out.append(fn(sh))
    return "".join(out)


def _joined_as_strings(sh, parts: list) -> str:
    """parts: (fn, splittable) pairs; list values joined as bash joins them into a string."""
    out: list = []
    for fn, _ in parts:
        out.append(_as_string(fn(sh), sh))
    return "".join(out)


def _values(sh, parts: list) -> list:
    """parts: (fn, splittable) pairs → (value, splittable) pairs, for split_fields."""
    out: list = []
    for fn, splittable in parts:
        out.append((fn(sh), splittable))
    return out


def _as_string(v, sh) -> str:
    if type(v) is str:
        return v
    if v is None:
        return ""
    return " ".join(v)


_NAME_CHARS = re.compile(r"[A-Za-z0-9_]+")


def _rejoin_names(word: Word) -> Word:
    """Brace expansion comes before parameter expansion, so in `$v{1,2}` the braces' text
    lengthens the name: bash expands $v1 and $v2. A bare $name followed by name characters
    after brace expansion takes them in."""
    parts = word.parts
    if not any(type(p) is ParamExp and not p.braced for p in parts):
        return word
    out: list = []
    for p in parts:
        prev = out[-1] if out else None
        if (type(p) is Lit and not p.escaped and type(prev) is ParamExp and not prev.braced
                and prev.op is None and prev.index is None and _NAME_CHARS.match(prev.name)
                and not prev.name[0].isdigit()):
            m = _NAME_CHARS.match(p.text)
            if m:
                out[-1] = ParamExp(prev.pos, prev.name + m.group(), braced=False)
                rest = p.text[m.end():]
                if rest:
                    out.append(Lit(p.pos + m.end(), rest))
                continue
        out.append(p)
    return Word(word.pos, out)


def _map(v, fn):
    if v is None:
        return fn("")
    if type(v) is str:
        return fn(v)
    return type(v)(fn(x) for x in v) if type(v) is Fields else [fn(x) for x in v]


def _replacement_fn(template: str):
    if "&" not in template and "\\" not in template:
        return lambda match: template
    pieces: list = []          # literal text, and None where the match goes
    lit: list = []
    i = 0
    while i < len(template):
        c = template[i]
        if c == "\\" and i + 1 < len(template):
            lit.append(template[i + 1])
            i += 2
            continue
        if c == "&":
            pieces.append("".join(lit))
            lit = []
            pieces.append(None)
        else:
            lit.append(c)
        i += 1
    pieces.append("".join(lit))
    return lambda match: "".join(match if x is None else x for x in pieces)


def _change_case(s: str, upper: bool, all_chars: bool, pattern) -> str:
    def conv(c):
        return c.upper() if upper else c.lower()
    if pattern is None:
        if all_chars:
            return s.upper() if upper else s.lower()
        return conv(s[:1]) + s[1:]
    out: list = []
    for k, c in enumerate(s):
        if (all_chars or k == 0) and patterns.glob_match(pattern, c):
            out.append(conv(c))
        else:
            out.append(c)
    return "".join(out)


def _slice_str(v, offset: int, length, p):
    """${x:offset:length} of a string, or of the elements an indirect reference names (a list,
    sliced alike: "${!ref[@]:1}" with ref='a[@]')."""
    n = len(v)
    if offset < 0:
        offset += n
        if offset < 0:
            return ""
    if offset > n:
        return ""
    if length is None:
        return v[offset:]
    if length < 0:
        end = n + length
        if end < offset:
            raise FatalError(f"{length}: substring expression < 0")
        return v[offset:end]
    return v[offset:offset + length]


def _slice_list(items: list, offset: int, length, sh, p) -> list:
    n = len(items)
    if offset < 0:
        offset += n
        if offset < 0:
            return []
    if length is None:
        return items[offset:]
    if length < 0:
        raise FatalError(f"{length}: substring expression < 0")
    return items[offset:offset + length]


def _regex_text(chunks: list) -> str:
    """The regex of `=~` from (text, quoted) chunks: quoted text escaped outside bracket
    expressions and kept as it is inside them."""
    out: list = []
    in_bracket = False
    start = False           # just after `[` or `[^`: a `]` here is a member
    for text, quoted in chunks:
        if quoted:
            out.append(text if in_bracket else re.escape(text))
            if in_bracket and text:
                start = False
            continue
        k = 0
        while k < len(text):
            c = text[k]
            if not in_bracket:
                if c == "\\" and k + 1 < len(text):
                    out.append(text[k:k + 2])
                    k += 2
                    continue
                if c == "[":
                    in_bracket, start = True, True
                    out.append(c)
                    if text.startswith("^", k + 1):
                        out.append("^")
                        k += 1
                    k += 1
                    continue
                out.append(c)
            else:
                if c == "[" and text[k + 1:k + 2] in (":", ".", "="):
                    end = text.find(text[k + 1] + "]", k + 2)
                    if end >= 0:
                        out.append(text[k:end + 2])
                        k = end + 2
                        start = False
                        continue
                if c == "]" and not start:
                    in_bracket = False
                out.append(c)
                start = False
            k += 1
    return "".join(out)


def sh_special(name: str) -> Callable:
    if name == "?":
        return lambda sh: str(sh.status)
    if name == "#":
        return lambda sh: str(len(sh.positional))
    if name == "$":
        return lambda sh: str(sh.pid)
    if name == "!":
        return lambda sh: None if sh.last_job_pid is None else str(sh.last_job_pid)
    if name == "-":
        return lambda sh: sh.option_letters()
    k = int(name)
    if k == 0:                                  # ${0}, ${00}: the script's name
        return lambda sh: sh.script_name

    def positional(sh):
        pos = sh.positional
        return pos[k - 1] if k <= len(pos) else None
    return positional


__all__ = ["WordCompiler", "Fields", "Disabled", "split_fields", "quote_for_reuse", "printf_q", "ansi_c_escape",
           "needs_ansi_c", "ArithError"]
