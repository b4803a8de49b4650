"""Glob patterns made of literal text and `*` only are matched without a regex; every such
pattern over a small alphabet must decide as the regex translation does."""
import itertools

from scripted_kernel.shell import patterns


def words(alphabet: str, longest: int):
    for n in range(longest + 1):
        for letters in itertools.product(alphabet, repeat=n):
            yield "".join(letters)


def test_star_patterns_match_as_their_regex_does():
    texts = list(words("ab", 4))
    checked = 0
    for pattern in words("ab*", 4):
        if "*" not in pattern:
            continue
        rx = patterns.compile_glob(pattern)
        for text in texts:
            assert patterns.glob_match(pattern, text) == (rx.fullmatch(text) is not None), \
                (pattern, text)
            checked += 1
    assert checked > 1000


def test_patterns_with_other_wildcards_still_match():
    assert patterns.glob_match("a?*", "abc") and not patterns.glob_match("a?*", "a")
    assert patterns.glob_match("*(ab)", "abab") and not patterns.glob_match("*(ab)", "aba")
    assert patterns.glob_match("[ab]*", "bx") and patterns.glob_match(r"a\*", "a*")
    assert not patterns.glob_match(r"a\*", "ab")
