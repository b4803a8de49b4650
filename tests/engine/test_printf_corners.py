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
