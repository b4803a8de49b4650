"""The README's "Tools in ten lines" block runs unchanged and prints what its comment says."""
import contextlib
import io
import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def test_tools_in_ten_lines_runs_as_written():
    section = README.read_text().split("## Tools in ten lines", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    expected = re.search(r"print\(.*\)\s+# (.*)\n", code).group(1).encode().decode("unicode_escape")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, "README.md", "exec"), {})
    assert printed.getvalue() == expected + "\n"
