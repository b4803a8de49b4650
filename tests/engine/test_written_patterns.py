"""A pattern written out in a `case` item or on the right of `[[ == ]]` is sorted when it is
compiled (conditions.WrittenPattern): its test must answer as glob_match does, called or
through a case item's any_matches, for every pattern and value of a small alphabet, with and
without nocasematch."""
import itertools

from scripted_kernel.base.patterns import glob_match
from scripted_kernel.shell.conditions import WrittenPattern, any_matches

PATTERN_CHARS = ["a", "B", "*", "?", "[", "]", "\\", "+", "@", "!", "(", ")", "."]
VALUES = ["", "a", "A", "b", "B", "ab", "aB", "Ba", "a*", "*", "aab", "a.B", "?", "[a]", "\\", "ba.b", "a+b"]


def _outcome(fn, *args):
    try:
        return fn(*args)
    except Exception as e:       # an error must be the same error either way
        return type(e)


def test_a_written_pattern_answers_as_glob_match_does():
    for n in range(4):
        for chars in itertools.product(PATTERN_CHARS, repeat=n):
            pattern = "".join(chars)
            test = WrittenPattern(pattern)
            for value in VALUES:
                for nocase in (False, True):
                    want = _outcome(glob_match, pattern, value, nocase)
                    assert _outcome(test, None, value, nocase) == want, (pattern, value, nocase)
                    assert _outcome(any_matches, None, [test], value, nocase) == want, (pattern, value, nocase)
