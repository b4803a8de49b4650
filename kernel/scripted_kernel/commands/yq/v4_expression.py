"""mikefarah yq v4's expression language, translated into a jq program for our jq.

Where the two languages agree (paths, `|`, `,`, `=`, `|=`, `+=`, `//`, `*` as a deep merge,
`select`, `has`, `length`, `to_entries`, `with_entries`, `sort_by`, `map`, `add`, `split`,
`join`, `test`, `del`, `..`, variables, `"\\(...)"` interpolation) the text passes through.
Otherwise:

- a prelude of jq definitions gives v4's meaning to `keys` (in the document's order),
  `unique`/`unique_by` (first occurrences, in order), `tag`, `kind`, `upcase`, `downcase`,
  `to_number`, `to_string`, `to_json`, `from_json`, `with`, `sort_keys`, `pick`, `omit`,
  `any_c`, `all_c`, `envsubst`, `explode`;
- `env(NAME)` and `strenv(NAME)` become the literal value of the script's exported variable;
- `key`, `parent` and `path` (v4's, without arguments) need the path of the current node:
  the pipeline before them is taken as a path expression, `path(...)`;
- `SOURCE as $x ireduce (INIT; UPDATE)` becomes `reduce SOURCE as $x (INIT; UPDATE)`;
- `.[]` iterates nothing on a scalar or null (v4), rather than failing (jq): `.[]?`;
- `fileIndex`/`fi`, `documentIndex`/`di` and `filename` read the document's place, bound by
  the caller as `$__yq`;
- with eval-all, the right operand of a binary operator at the top of the expression, and the
  source of a leading `ireduce`, run over every document (`$__all`).

What v4 has and jq cannot express here is refused with a one-line TranslationError naming the
operator (comments, styles, anchors, line numbers, file loading, merge flags such as `*+`).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Optional, Union

import yaml

PRELUDE = (
    "def keys: keys_unsorted;"
    "def unique: reduce .[] as $x ([]; if any(.[]; . == $x) then . else . + [$x] end);"
    "def unique_by(f): reduce .[] as $x ([]; ([$x | f]) as $k"
    " | if any(.[]; [f] == $k) then . else . + [$x] end);"
    "def tag: if type == \"object\" then \"!!map\" elif type == \"array\" then \"!!seq\""
    " elif type == \"string\" then \"!!str\" elif type == \"boolean\" then \"!!bool\""
    " elif type == \"null\" then \"!!null\" elif . == floor then \"!!int\" else \"!!float\" end;"
    "def kind: if type == \"object\" then \"map\" elif type == \"array\" then \"seq\" else \"scalar\" end;"
    "def upcase: ascii_upcase; def downcase: ascii_downcase;"
    "def to_number: tonumber; def to_string: tostring; def to_json: tojson; def from_json: fromjson;"
    "def with(p; f): p |= f;"
    "def sort_keys(p): p |= (if type == \"object\" then to_entries | sort_by(.key) | from_entries"
    " else . end);"
    "def pick($ks): . as $o | if type == \"array\" then [$ks[] | $o[.] // empty]"
    " else reduce $ks[] as $k ({}; if $o | has($k) then .[$k] = $o[$k] else . end) end;"
    "def omit($ks): . as $o | if type == \"array\""
    " then [range(length) | select(. as $i | $ks | index([$i]) | not) | $o[.]]"
    " else reduce $ks[] as $k (.; del(.[$k])) end;"
    "def any_c(f): any(.[]; f); def all_c(f): all(.[]; f);"
    "def envsubst: gsub(\"\\\\$\\\\{(?<n>[A-Za-z_][A-Za-z0-9_]*)(?:-(?<d>[^}]*))?\\\\}"
    "|\\\\$(?<m>[A-Za-z_][A-Za-z0-9_]*)\"; $ENV[.n // .m] // .d // \"\");"
    "def explode(f): .;"
    "def first(f): label $__first | (.[]? | select(f)) | ., break $__first;"
    "def __jq_has($k): has($k);"
    "def has($k): (type == \"object\" and ($k | type) == \"string\""
    " or type == \"array\" and ($k | type) == \"number\") and __jq_has($k);"
    "def __jq_sort: sort;"
    "def sort: if type == \"object\" then to_entries | sort_by(.value) | from_entries else __jq_sort end;"
    "def __jq_match(re; flags): match(re; flags);"
    "def match(re; flags): __jq_match(re; flags) | {string, offset, length,"
    " captures: [.captures[] | {string, offset, length} + (if .name then {name} else {} end)]};"
    "def match(re): match(re; null);"
    "def sub($re; $text): gsub($re; $text);"
    "def sub(pair): [pair] as [$re, $text] | gsub($re; $text);"
    "def filter(f): [(if type == \"object\" or type == \"array\" then .[] else empty end) | select(f)];"
    "def type: tag;"
)

# v4 operators that need what our documents do not keep, or that read files
UNSUPPORTED = {
    "line": "line numbers are not kept", "column": "column numbers are not kept",
    "style": "styles are not kept", "anchor": "anchors are not kept", "alias": "aliases are expanded on reading",
    "head_comment": "comments are not kept", "line_comment": "comments are not kept",
    "foot_comment": "comments are not kept", "comments": "comments are not kept",
    "load": "loading files from an expression is not available", "load_str": "loading files is not available",
    "load_xml": "loading files is not available", "load_props": "loading files is not available",
    "load_base64": "loading files is not available", "splitDoc": "documents cannot be split",
    "eval": "eval is not available", "to_yaml": "YAML encoding inside an expression is not available",
    "from_yaml": "YAML decoding inside an expression is not available", "shuffle": "shuffle is not available",
    "to_xml": "XML is not available", "from_xml": "XML is not available", "to_props": "not available",
    "from_props": "not available", "@yaml": "YAML encoding inside an expression is not available",
    "@props": "not available", "@xml": "XML is not available", "pivot": "not available",
    "system": "running commands is disabled", "with_dtf": "date formats are not available",
    "format_datetime": "date formats are not available", "now": "dates are not available",
    "tz": "dates are not available", "from_unix": "dates are not available", "to_unix": "dates are not available",
    "parents": "not available", "...": "the recursion into keys is not available",
}
# functions whose arguments see another input than the call's: a `key` there has no path
REBINDING = {"map", "map_values", "sort_by", "group_by", "unique_by", "min_by", "max_by", "with_entries",
             "walk", "any", "all", "any_c", "all_c", "recurse", "with", "sort_keys", "until", "while",
             "repeat"}
BINARY = {"=", "+=", "-=", "*=", "/=", "%=", "//=", "*", "+", "-", "/", "%", "//", "==", "!=", "<", "<=",
          ">", ">=", "and", "or"}
SEPARATORS = {";", "then", "elif", "else"}
ALL_DOCUMENTS = "$__all[] as $__yq | $__yq.d"
META = {"fileIndex": "$__yq.f", "fi": "$__yq.f", "file_index": "$__yq.f", "documentIndex": "$__yq.i",
        "di": "$__yq.i", "document_index": "$__yq.i", "filename": "$__yq.n", "root": "$__yq.d"}
# v4's operators on the current node's path ($__p, from the document $__r); the root has none
PATH_OPERATORS = {"key": "($__p[-1] // empty)",
                  "parent": "(if $__p == [] then empty else $__r | getpath($__p[:-1]) end)", "path": "$__p"}


class TranslationError(Exception):
    """A v4 expression that cannot run here: printed as one `yq:` line."""


@dataclass
class Token:
    kind: str          # str, num, var, ident, field, dot, recurse, format, op, open, close
    text: str
    space: str = ""    # what stood before it (spaces, comments)
    needs_path: bool = False    # (translated text) whether it uses the path of its input


@dataclass
class Group:
    open: Token
    items: list = field(default_factory=list)
    close: Optional[Token] = None


Item = Union[Token, Group]

_TOKEN = re.compile(r"""
    (?P<space>(?:\s+|\#[^\n]*)+)
  | (?P<op3>\.\.\.)
  | (?P<tilde>~)
  | (?P<num>\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?)
  | (?P<var>\$[A-Za-z_][A-Za-z0-9_]*)
  | (?P<format>@[A-Za-z0-9_]+)
  | (?P<field>\.[A-Za-z_][A-Za-z0-9_]*)
  | (?P<recurse>\.\.)
  | (?P<dot>\.)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*)*)
  | (?P<op>\?//|//=|\|=|\+=|-=|\*=|/=|%=|==|!=|<=|>=|//|[|,+\-*/%=<>;:?])
  | (?P<open>[(\[{])
  | (?P<close>[)\]}])
""", re.X)


def _string_end(text: str, start: int) -> int:
    """The index after the string literal opening at `start`, across `\\(...)` holes."""
    i = start + 1
    while i < len(text):
        c = text[i]
        if c == "\"":
            return i + 1
        if c == "\\" and text[i + 1:i + 2] == "(":
            i = _hole_end(text, i + 2)
            continue
        i += 2 if c == "\\" else 1
    raise TranslationError("unterminated string in the expression")


def _hole_end(text: str, i: int) -> int:
    depth = 1
    while i < len(text):
        c = text[i]
        if c == "\"":
            i = _string_end(text, i)
            continue
        depth += c == "("
        depth -= c == ")"
        i += 1
        if not depth:
            return i
    raise TranslationError("unterminated string interpolation in the expression")


def tokenize(text: str) -> list[Token]:
    tokens: list[Token] = []
    space, i = "", 0
    while i < len(text):
        if text[i] == "\"":
            end = _string_end(text, i)
            tokens.append(Token("str", text[i:end], space))
            space, i = "", end
            continue
        m = _TOKEN.match(text, i)
        if not m:
            raise TranslationError(f"unexpected character {text[i]!r} in the expression")
        kind = m.lastgroup or ""
        if kind == "space":
            space += m.group()
        else:
            tokens.append(Token(kind, m.group(), space))
            space = ""
        i = m.end()
    tokens.append(Token("end", "", space))
    return tokens


_PAIRS = {"(": ")", "[": "]", "{": "}", "if": "end"}
MAX_NESTING = 200        # brackets in brackets: the translation recurses once per level


def group(tokens: list[Token]) -> Group:
    """Nest the tokens by their brackets (and `if ... end`)."""
    root = Group(Token("open", ""))
    stack = [root]
    for token in tokens:
        if token.kind == "end":
            break
        if token.kind == "open" or (token.kind == "ident" and token.text == "if"):
            new = Group(token)
            stack[-1].items.append(new)
            stack.append(new)
            if len(stack) > MAX_NESTING:
                raise TranslationError(f"the expression is nested deeper than {MAX_NESTING} levels")
        elif token.kind == "close" or (token.kind == "ident" and token.text == "end"):
            if len(stack) == 1 or _PAIRS[stack[-1].open.text] != token.text:
                raise TranslationError(f"unbalanced {token.text!r} in the expression")
            stack.pop().close = token
        else:
            stack[-1].items.append(token)
    if len(stack) > 1:
        raise TranslationError(f"unclosed {stack[-1].open.text!r} in the expression")
    return root


@dataclass
class Translator:
    env: dict
    eval_all: bool = False

    def program(self, text: str) -> tuple[str, bool]:
        """The jq text of a v4 expression, and whether it must run once over all documents
        (eval-all's `ireduce` over `.`)."""
        root = group(tokenize(text))
        if not root.items:
            return ".", False
        once = False
        if self.eval_all:
            once = self._reduces_first(root.items)
        body, unresolved = self._sections(root.items, top=True, once=once)
        if unresolved:
            body = f". as $__r | [] as $__p | {body}"
        return body, once

    # ---- structure

    def _sections(self, items: list, top: bool = False, once: bool = False) -> tuple[str, bool]:
        """Text of a group's content, split at `;` (and `then`/`elif`/`else`): each section a
        pipeline. Also whether it uses the path of its input (an unresolved `key`)."""
        out: list[str] = []
        section: list = []
        unresolved = False
        for item in items:
            if isinstance(item, Token) and item.kind in ("op", "ident") and item.text in SEPARATORS:
                text, u = self._pipeline(section, top and not out, once)
                out.append(text + item.space + item.text)
                unresolved = unresolved or u
                section = []
            else:
                section.append(item)
        text, u = self._pipeline(section, top and not out, once)
        out.append(text)
        return "".join(out), unresolved or u

    def _pipeline(self, items: list, top: bool, once: bool) -> tuple[str, bool]:
        segments: list[list] = [[]]
        for item in items:
            if isinstance(item, Token) and item.kind == "op" and item.text == "|":
                segments.append([])
            else:
                segments[-1].append(item)
        done: Optional[str] = None            # the text of the segments so far
        unresolved = False
        for n, segment in enumerate(segments):
            text, needs_path = self._segment(segment, cross=top and n == 0 and self.eval_all, once=once)
            if done is None:
                done, unresolved = text, needs_path
            elif needs_path:
                done = f" . as $__r | path({done}) as $__p | getpath($__p) |{text}"
            else:
                done = f"{done}|{text}"
        return done or "", unresolved

    def _segment(self, items: list, cross: bool, once: bool) -> tuple[str, bool]:
        items = self._globs(self._ireduce(items, cross and once))
        out: list[str] = []
        unresolved = False
        previous: Optional[Item] = None
        operand_start = 0
        for i, item in enumerate(items):
            following = items[i + 1] if i + 1 < len(items) else None
            if isinstance(item, Group):
                text, u = self._group(item, previous, following)
                unresolved = unresolved or u
            else:
                text, u = self._token(item, previous, following)
                unresolved = unresolved or u
                if cross and not once and item.kind in ("op", "ident") and item.text in BINARY:
                    # eval-all: the right operand ranges over every document
                    out.append((")" if operand_start else "") + text + " (" + ALL_DOCUMENTS + " |")
                    operand_start = len(out)
                    previous = item
                    continue
            out.append(text)
            previous = item
        if operand_start:
            out.append(")")
        return "".join(out), unresolved

    def _group(self, g: Group, previous: Optional[Item], following: Optional[Item]) -> tuple[str, bool]:
        inner, unresolved = self._sections(g.items)
        name = previous.text if isinstance(previous, Token) and previous.kind == "ident" else None
        if unresolved and g.open.text == "(" and name in REBINDING:
            raise TranslationError(f"'key', 'parent' and 'path' inside {name}(...) are not supported")
        close = g.close.space + g.close.text if g.close else ""
        text = g.open.space + g.open.text + inner + close
        if (g.open.text == "[" and not g.items and not g.open.space and _iterable(previous)
                and not (isinstance(following, Token) and following.text == "?" and not following.space)):
            text += "?"                        # v4's .[] on a scalar or null: nothing
        if g.open.text == "(" and name in ("env", "strenv"):
            return g.open.space + self._env(name, g), False
        if g.open.text == "(" and name == "envsubst":
            raise TranslationError("envsubst's options (nu, ne, ff) are not supported")
        return text, unresolved

    def _token(self, token: Token, previous: Optional[Item], following: Optional[Item]) -> tuple[str, bool]:
        t = token.text
        if token.kind == "translated":
            return token.space + t, token.needs_path
        if token.kind == "tilde":
            return token.space + "null", False
        if token.kind == "op3":
            raise TranslationError(f"the v4 operator '...' is not supported: {UNSUPPORTED[t]}")
        if token.kind == "num" and t.startswith(".") and not token.space and _iterable(previous):
            return f"[{t[1:]}]", False         # v4's .a.0 is .a[0]
        if token.kind == "str" and "(?P<" in t:
            return token.space + t.replace("(?P<", "(?<"), False    # Go's named groups, Oniguruma's
        if token.kind == "format" and t in UNSUPPORTED:
            raise TranslationError(f"the v4 format {t} is not supported: {UNSUPPORTED[t]}")
        if token.kind == "op" and t == "*" and isinstance(following, Token) and not following.space \
                and following.text in ("+", "?", "d", "n", "c", "+="):
            raise TranslationError(f"the merge flags of '*{following.text}' are not supported")
        if token.kind != "ident" or _is_object_key(previous, following):
            return token.space + t, False
        if t in UNSUPPORTED:
            raise TranslationError(f"the v4 operator '{t}' is not supported: {UNSUPPORTED[t]}")
        if t in META:
            return token.space + META[t], False
        if t in ("env", "strenv") and isinstance(following, Group) and following.open.text == "(":
            return token.space, False          # the call's group gives the value
        if t in PATH_OPERATORS and not (isinstance(following, Group) and following.open.text == "("):
            return token.space + PATH_OPERATORS[t], True
        if t == "ireduce":
            raise TranslationError("ireduce must follow 'SOURCE as $name'")
        return token.space + t, False

    # ---- particular operators

    def _env(self, name: str, g: Group) -> str:
        inner = "".join(item.text for item in g.items if isinstance(item, Token))
        variable = inner.strip()
        if variable.startswith("\""):
            variable = json.loads(variable)
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", variable or ""):
            raise TranslationError(f"{name}() takes the name of an environment variable")
        value = self.env.get(variable)
        if name == "strenv":
            return json.dumps(value if value is not None else "")
        if value is None:
            raise TranslationError(f"Value for env variable '{variable}' not provided in env()")
        try:
            parsed = yaml.safe_load(value)
        except yaml.YAMLError:
            parsed = value
        try:
            return "(" + json.dumps(parsed) + ")"
        except (TypeError, ValueError):
            return json.dumps(value)

    def _globs(self, items: list) -> list:
        """v4's `A == "pat*tern"` (and `!=`): a string with `*` compares as a wildcard pattern,
        `(A | test("^pat.*tern$"))`. A is what stands before the operator, back to the nearest
        `and`, `or`, `,` or `//`."""
        for k, item in enumerate(items):
            pattern = items[k + 1] if k + 1 < len(items) else None
            if not (isinstance(item, Token) and item.kind == "op" and item.text in ("==", "!=")
                    and isinstance(pattern, Token) and pattern.kind == "str" and "*" in pattern.text
                    and "\\(" not in pattern.text and _ends_operand(items, k + 2)):
                continue
            start = k
            while start > 0 and not _ends_operand(items, start - 1):
                start -= 1
            left, needs_path = self._segment(items[start:k], cross=False, once=False)
            glob = json.loads(pattern.text)
            regex = "^" + "".join(".*" if c == "*" else re.escape(c) for c in glob) + "$"
            negate = " | not" if item.text == "!=" else ""
            text = f"(({left}) | test({json.dumps(regex)}){negate})"
            replaced = Token("translated", text, "", needs_path)
            return items[:start] + [replaced] + self._globs(items[k + 2:])
        return items

    def _reduces_first(self, items: list) -> bool:
        for item in items:
            if isinstance(item, Token) and item.text == "|" and item.kind == "op":
                return False
            if isinstance(item, Token) and item.kind == "ident" and item.text == "ireduce":
                return True
        return False

    def _ireduce(self, items: list, over_all: bool) -> list:
        """`SOURCE as $x ireduce (INIT; UPDATE)` as jq's `reduce (SOURCE) as $x (INIT; UPDATE)`."""
        at = next((i for i, item in enumerate(items)
                   if isinstance(item, Token) and item.kind == "ident" and item.text == "ireduce"), None)
        if at is None:
            return items
        as_at = next((i for i in range(at - 1, -1, -1)
                      if isinstance(items[i], Token) and items[i].text == "as"), None)
        if as_at is None or at + 1 >= len(items) or not isinstance(items[at + 1], Group):
            raise TranslationError("ireduce must be written 'SOURCE as $name ireduce (INIT; UPDATE)'")
        source, rest = items[:as_at], items[as_at:at] + items[at + 1:]
        source_text, unresolved = self._segment(source, cross=False, once=False)
        if unresolved:
            raise TranslationError("'key', 'parent' and 'path' in the source of ireduce are not supported")
        if over_all:
            source_text = f"({ALL_DOCUMENTS} | {source_text})"
        return [Token("ident", f"reduce ({source_text})", " ")] + rest


def _iterable(previous: Optional[Item]) -> bool:
    """Whether a `[` after `previous` indexes (rather than builds an array)."""
    if isinstance(previous, Group):
        return previous.open.text in ("(", "[")
    return previous is not None and previous.kind in ("dot", "field", "recurse", "str", "var") \
        or (previous is not None and previous.text == "?")


def _ends_operand(items: list, at: int) -> bool:
    """Whether `items[at]` is past the end or a word ending a comparison's operand."""
    if at >= len(items):
        return True
    item = items[at]
    return isinstance(item, Token) and item.text in ("and", "or", ",", "//")


def _is_object_key(previous: Optional[Item], following: Optional[Item]) -> bool:
    return isinstance(following, Token) and following.text == ":" and (
        previous is None or (isinstance(previous, Token) and previous.text in (",", "{")))


def translate(expression: str, env: dict, eval_all: bool = False) -> tuple[str, bool]:
    """The jq program of a v4 expression (without the prelude) and whether it runs once over
    all the documents; raises TranslationError."""
    return Translator(env, eval_all).program(expression)
