"""printf's integer conversions against bash's own printf over every combination of flags,
width and precision (C's rules: zero with precision 0 prints no digits, `#` only on non-zero
values but %#o keeps its 0, `0` ignored when a precision is given)."""
import itertools
import shutil
import subprocess

import pytest

from scripted_kernel import ScriptedTool

BASH = shutil.which("bash")
pytestmark = pytest.mark.skipif(BASH is None, reason="bash is not installed")

FLAGS = ["", "#", "+", " ", "-", "0", "#0", "-#", "+0", " -"]
WIDTHS = ["", "4"]
PRECISIONS = [None, "", "0", "2"]
VALUES = ["0", "7", "-3", "255"]


def _lines(conv: str) -> str:
    specs = []
    for flags, width, precision in itertools.product(FLAGS, WIDTHS, PRECISIONS):
        spec = "%" + flags + width + ("" if precision is None else "." + precision) + conv
        specs.append(spec)
    fmt = "".join(f"[{s}]" for s in specs) + "\\n"
    return "\n".join(f"printf '{fmt}' " + " ".join([v] * len(specs)) for v in VALUES)


@pytest.mark.parametrize("conv", list("diouxX"))
def test_integer_conversions_match_bash(conv):
    script = _lines(conv)
    real = subprocess.run([BASH, "-c", script], capture_output=True, text=True, timeout=30)
    ours = ScriptedTool.builder("t").build().execute(script)
    assert (ours.stdout, ours.exit_code) == (real.stdout, real.returncode)


# Formats whose conversions are all a plain %s take a path of their own (printf.py's
# _plain_pieces); these are read like any other format.
PLAIN_FORMATS = ["%s=%s", "%s\\n", "[%s]\\t(%s)\\n", "\\%s", "%s\\", "\\045s|%s", "%ss%s", "no conversion\\n",
                 "%s%%", "%%s", "\\x41%s\\101", "%s\\0101"]


@pytest.mark.parametrize("fmt", PLAIN_FORMATS)
def test_plain_string_formats_match_bash(fmt):
    script = "\n".join(f"printf '{fmt}' {args}; echo \"|$?\"; printf -v v '{fmt}' {args}; echo \"<$v>\""
                       for args in ("", "a", "a b c", "'x y' '' z"))
    real = subprocess.run([BASH, "-c", script], capture_output=True, text=True, timeout=30)
    ours = ScriptedTool.builder("t").build().execute(script)
    assert (ours.stdout, ours.exit_code) == (real.stdout, real.returncode)


def test_the_plain_path_fills_as_the_general_one_does():
    from scripted_kernel.shell.builtins import printf
    alphabet = ["%s", "%", "s", "\\", "n", "0", "4", "x", "c", "="]
    taken = 0
    for size in range(1, 5):
        for parts in itertools.product(alphabet, repeat=size):
            fmt = "".join(parts)
            pieces = printf._plain_pieces(fmt)
            if pieces is None:
                continue
            taken += 1
            for args in ([], ["a"], ["a", "b", "c"]):
                for pos in range(len(args) + 1):
                    general = printf.format_once(None, fmt, args, pos, [])
                    assert printf._fill_plain(pieces, args, pos) == general, (fmt, args, pos)
    assert taken > 1000           # (the formats it takes: it does take them)
    assert printf._plain_pieces("%s=%s") == ["", "=", ""]
    assert printf._plain_pieces("%d") is None and printf._plain_pieces("%-5s") is None


def test_echo_with_and_without_options_matches_bash():
    """echo without an option word first writes its words as they are (a path of its own);
    with one, its options are read as bash reads them."""
    lines = ["echo", "echo a  b", "echo '' a", "echo 'a\\tb'", "echo -n a", "echo -e 'a\\tb'", "echo -nE 'x\\n'",
             "echo - a", "echo -- a", "echo -x a", "echo -ne", "set -- -n z; echo \"$@\" x", "echo a -n"]
    script = "\n".join(f"{line}; echo \"|$?\"" for line in lines)
    real = subprocess.run([BASH, "-c", script], capture_output=True, text=True, timeout=30)
    ours = ScriptedTool.builder("t").build().execute(script)
    assert (ours.stdout, ours.exit_code) == (real.stdout, real.returncode)
