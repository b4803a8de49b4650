"""The lexer's one-match path for words of literal characters must build the word exactly as
its general word scanner does: every word of up to four characters from an alphabet of
literals, wildcards, braces, brackets and extglob prefixes is scanned both ways."""
import itertools
import random

import pytest

from support import scaled, script_corpus
from scripted_kernel.shell.lexer import (_ASSIGN_HEAD, _COMMON_TOKEN, _PLAIN_NORMAL, _PLAIN_WORD, EOF, WORD, Lexer,
                                         Source, _assignment_head, _common_token, _plain_normal_end_by_hand,
                                         _plain_word_end_by_hand)

ALPHABET = "a{}[]?*+@!-=.,:%^~#\\("


def scan(text: str, general: bool):
    lexer = Lexer(Source(text), parse_nested=None)
    token = lexer._scan_word(0) if general else lexer.peek(0)
    return token.kind, token.value, token.pos, token.end, word_of(token)


def word_of(token):
    """The token's word as the parser takes it (a literal word's is made when it is asked for)."""
    return token.as_word() if token.kind == WORD else token.word


def test_literal_words_scan_as_the_general_scanner_does():
    compared = 0
    for n in range(1, 5):
        for letters in itertools.product(ALPHABET, repeat=n):
            text = "".join(letters)
            if text[0] == "#":
                continue      # a comment
            try:
                fast = scan(text + " x", general=False)
            except Exception:
                continue      # not a word (an unclosed group): the general scanner decides
            if fast[0] != WORD:
                continue
            assert fast == scan(text + " x", general=True), text
            compared += 1
    assert compared > 10_000


def test_parameters_and_simple_quoted_words_scan_as_the_general_scanner_does():
    contents = ["".join(letters) for n in range(5) for letters in itertools.product("a1 $@{[-'", repeat=n)]
    words = (['"' + c + '"' for c in contents] + ["'" + c + "'" for c in contents]
             + ["$" + c for c in contents if c])
    compared = fast = 0
    for text in words:
        try:
            general = scan(text + " x", general=True)
        except Exception:
            continue              # an unclosed ${ or quote: an error either way
        assert scan(text + " x", general=False) == general, text
        compared += 1
        fast += Lexer(Source(text + " x"), parse_nested=None)._simple_expansion(text[0], 0) is not None
    assert compared > 10_000 and fast > 3_000


def test_double_quoted_words_scanned_by_hand_are_the_general_scanners_words():
    """The compiled build's one-pass scan of "text $name $1" words, checked in either build."""
    contents = ["".join(letters) for n in range(5) for letters in itertools.product('a1 $@_\\`"-', repeat=n)]
    compared = 0
    for content, after in itertools.product(contents, (" x", "", ";", "<x", "<(x)", "b", "$y")):
        text = '"' + content + after
        lexer = Lexer(Source(text), parse_nested=None)
        by_hand = lexer._simple_double_quoted_by_hand(0)
        if by_hand is None:
            continue
        general = scan(text, general=True)
        assert (by_hand, lexer.pos) == (general[4], general[3]), text
        compared += 1
    assert compared > 2_000


def test_an_assignment_head_is_found_by_hand_as_the_pattern_finds_it():
    heads = 0
    for n in range(1, 6):
        for letters in itertools.product("aZ_1=+[$é ", repeat=n):
            text = "".join(letters)
            m = _ASSIGN_HEAD.match(text, 1) if n > 1 else None
            by_hand = _assignment_head(text, 1) if n > 1 else None
            assert by_hand == (None if m is None else (m[1], m[2], m.end())), text
            heads += by_hand is not None
    assert heads > 1_000


@pytest.mark.parametrize("pattern, by_hand, alphabet, at_none, end", [
    (_PLAIN_WORD, _plain_word_end_by_hand, "a=*(<> $\t", -1, lambda m: m.end(1)),
    (_PLAIN_NORMAL, _plain_normal_end_by_hand, "a~=;<$'*é\t", 1, lambda m: m.end()),
], ids=["a plain word", "a run of plain characters"])
def test_what_the_compiled_build_finds_by_hand_is_what_the_pattern_finds(pattern, by_hand, alphabet, at_none,
                                                                         end):
    found = 0
    for n in range(1, 6):
        for letters in itertools.product(alphabet, repeat=n):
            text = "x" + "".join(letters)
            m = pattern.match(text, 1)
            assert by_hand(text, 1) == (at_none if m is None else end(m)), text
            found += m is not None
    assert found > 1_000


def test_free_text_scanned_in_runs_is_the_text_scanned_a_character_at_a_time(monkeypatch):
    """The arguments of ${x:-...} and its kin, subscripts and arithmetic take the characters
    that none of them treats specially a run at a time (_IS_FREE_PLAIN); the pure build, where
    the module's constant can be patched, checks that against one character at a time."""
    from scripted_kernel.shell import lexer
    from scripted_kernel.shell.parser import Parser

    def tree(text: str):
        try:
            return repr(Parser(text).parse_program())
        except Exception as e:
            return type(e).__name__
    pieces = ["a", "b1", "-", "~", ":", "/", "}", "'", '"', "\\", "$x", " ", "#", "%", "{", "[0]", "*", "("]
    words = ["".join(p) for n in range(1, 4) for p in itertools.product(pieces, repeat=n)]
    forms = ("echo ${{v:-{}}}", 'echo "${{v:-{}}}"', "echo ${{v/{}/{}}}", "echo ${{v:{}}}", "echo $(( {} ))",
             "a[{}]=1", "x=${{v#{}}}", "echo ${{v%%{}}}")
    texts = [form.format(w, w) for w in words for form in forms]
    in_runs = {text: tree(text) for text in texts}
    monkeypatch.setattr(lexer, "_IS_FREE_PLAIN", 0)
    for text in texts:
        assert tree(text) == in_runs[text], text
    assert sum("ParamExp" in result for result in in_runs.values()) > 20_000


def test_assignment_values_scan_as_the_general_scanner_does(monkeypatch):
    values = ["".join(letters) for n in range(4) for letters in itertools.product("a1$\"'{*~:=@(", repeat=n)]

    def assignment(text: str):
        lexer = Lexer(Source(text), parse_nested=None)
        token = lexer.peek(1)
        return token.kind, token.pos, token.end, token.assign

    results = {}
    for value in values:
        try:
            results[value] = assignment(f"x={value} y")
        except Exception:
            continue
    monkeypatch.setattr(Lexer, "_simple_value", lambda self, pos: None)
    for value, fast in results.items():
        assert assignment(f"x={value} y") == fast, value
    assert len(results) > 500


def test_literal_assignments_scan_as_the_general_path_does(monkeypatch):
    """`name=value` taken whole from a common token (_literal_assignment) against the assignment
    scanner, over every text of up to five characters that mixes names, `=`, `+=`, subscripts,
    digits and the literal characters a value may hold."""
    texts = ["".join(letters) for n in range(1, 6) for letters in itertools.product("a_1=+[]:{}.-", repeat=n)]

    def first_token(text: str):
        lexer = Lexer(Source(text), parse_nested=None)
        try:
            token = lexer.peek(1)
        except Exception as e:
            return type(e).__name__
        return token.kind, token.value, token.pos, token.end, word_of(token), token.assign, lexer.pos

    fast = {text: first_token(text + " y") for text in texts}
    taken = sum(Lexer(Source(text + " y"), parse_nested=None)._literal_assignment(text, 0, len(text)) is not None
                for text in texts if "=" in text)
    monkeypatch.setattr(Lexer, "_literal_assignment", lambda self, text, start, end: None)
    for text, result in fast.items():
        assert first_token(text + " y") == result, text
    assert taken > 5_000


def test_simple_arithmetic_scans_as_the_general_scanner_does(monkeypatch):
    """`$((expr))` taken in one match, in a word, an assignment's value and double quotes,
    against the general path (the one-match forms turned off)."""
    import re

    from scripted_kernel.shell import lexer
    from scripted_kernel.shell.parser import Parser

    def tree(text: str):
        try:
            return repr(Parser(text).parse_program())
        except Exception as e:
            return type(e).__name__
    expressions = ["".join(letters) for n in range(4) for letters in itertools.product("1+ $()'\"", repeat=n)]
    texts = [form.format(e) for e in expressions
             for form in ("echo $(({}))", "x=$(({})) y", 'echo "$(({}))"', "echo a$(({}))b")]
    fast = {text: tree(text) for text in texts}
    never = re.compile(r"(?!)")
    monkeypatch.setattr(lexer, "_SIMPLE_ARITH", never)
    monkeypatch.setattr(lexer, "_SIMPLE_ARITH_WORD", never)
    for text in texts:
        assert tree(text) == fast[text], text
    assert sum("ArithSub" in result for result in fast.values()) > 300


def test_token_streams_scan_as_the_general_path_does(monkeypatch):
    """The one-match path for common tokens (a literal word, a newline, an operator, after at
    most one blank), against the general path, over every text of up to four pieces that
    mixes them with what they must leave alone: descriptor numbers, `<(`, comments, tabs,
    continuations, assignments, and the words with `=` or `[` that are not one (`[[`, `a[1]b`)."""
    import re

    from scripted_kernel.shell import lexer

    pieces = [" ", "  ", "\t", "a", "2", "x=", "{f}", ">", "<", "(", ")", ";", ";;", "&", "|",
              "\n", "#c", "\\\n", "$v", "*", "[", "]"]

    def tokens(text: str, mode: int):
        lex = Lexer(Source(text), parse_nested=None)
        out = []
        try:
            while True:
                tok = lex.peek(mode)
                out.append((tok.kind, tok.value, tok.pos, tok.end, word_of(tok), tok.assign, lex.pos))
                lex.advance()
                if tok.kind == EOF:
                    return out
        except Exception as e:
            return out + [type(e).__name__]

    # every text of up to three pieces, and a seeded sample of the 160,000 of four
    texts = ["".join(p) for n in range(1, 4) for p in itertools.product(pieces, repeat=n)]
    fours = ["".join(p) for p in itertools.product(pieces, repeat=4)]
    texts += random.Random(4).sample(fours, min(len(fours), scaled(8000)))
    fast = {(text, mode): tokens(text, mode) for text in texts for mode in (0, 1)}
    monkeypatch.setattr(lexer, "_COMMON_TOKEN", re.compile(r"(?!)"))
    for (text, mode), result in fast.items():
        assert tokens(text, mode) == result, (text, mode)
    assert len(fast) > 30_000


def test_command_substitution_words_scan_as_the_general_scanner_does(monkeypatch):
    """A word that is one `$( )` is taken with its parsed body; where more of the word follows,
    the general scanner takes the whole word. Compared with the general path alone."""
    from scripted_kernel.shell.parser import Parser

    def tree(text: str):
        try:
            return repr(Parser(text).parse_program())
        except Exception as e:
            return type(e).__name__
    bodies = ["a", "a b", "a | b", "a $(b)", "", "a)", "'a'"]
    follows = ["", " y", ";", "b", "<(c)", ">f", "|g", ")", "$(d)", "\n", "&&e", '"q"']
    texts = [form.format(body, after) for body in bodies for after in follows
             for form in ("echo $({}){}", "x=$({}){}", "$({}){}")]
    fast = {text: tree(text) for text in texts}
    monkeypatch.setattr(Lexer, "_command_sub_word", lambda self, pos: None)
    for text in texts:
        assert tree(text) == fast[text], text
    assert sum("CommandSub" in result for result in fast.values()) > 150


def test_a_process_substitution_joins_the_word_before_it():
    """`a<(y)` is one word, as in bash (which prints a/dev/fd/63): the one-match word forms
    stop short of it."""
    from scripted_kernel.shell.nodes import ProcessSub
    from scripted_kernel.shell.parser import parse

    for text in ("echo a<(y)", "echo $x<(y)", "echo 'q'>(y)", 'echo "$x"<(y)', "echo $((1))<(y)",
                 "echo $(a)<(y)"):
        words = parse(text).items[0].items[0].words
        assert len(words) == 2 and type(words[1].parts[-1]) is ProcessSub, text


def test_the_compiled_scan_of_the_common_tokens_finds_what_the_regex_does():
    """lexer._common_token (the compiled build's) against _COMMON_TOKEN (the pure build's), at
    every position of the test suite's scripts."""
    found = 0
    for text in script_corpus() + ["a;", "a ;;", "x )", "$x<(", "$x<y", "a?(", "a? (", " \n", "&>>", ">|",
                                   "    a  ;;", "  $x  \n", "   \t#c", "  <(x)"]:
        for pos in range(len(text) + 1):
            m = _COMMON_TOKEN.match(text, pos)
            if m is None:
                assert _common_token(text, pos)[0] == 0, (text, pos)
            else:
                assert _common_token(text, pos) == (m.lastindex, m[m.lastindex], m.end()), (text, pos)
                found += 1
    assert found > 10_000
