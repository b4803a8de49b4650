"""The README's snippets about files and the notebook run on their own: the BashTool block as a
Python program, each `<!-- notebook cell -->` block as the one cell of a fresh notebook on the
real kernel, the papermill command as typed."""
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
CELLS = re.findall(r"<!-- notebook cell -->\n```bash\n(.*?)```", README, re.S)


def run_cell(source: str):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "scripted", "display_name": "Scripted Tool", "language": "bash"}
    nb.cells = [nbformat.v4.new_code_cell(source)]
    nbclient.NotebookClient(nb, timeout=120, kernel_name="scripted", allow_errors=True).execute()
    return nb.cells[0].outputs


def test_the_bashtool_block_runs_alone():
    section = README.split("## Files: BashTool", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "/home/agent/src" in p.stdout and "hi\n" in p.stdout and p.stdout.endswith("Ada\n\n")


def test_there_are_notebook_cells_in_the_readme():
    assert len(CELLS) >= 2


@pytest.mark.parametrize("source", CELLS, ids=[c.splitlines()[0][:40] for c in CELLS])
def test_each_notebook_cell_runs_alone(source):
    outputs = run_cell(source)
    errors = [o for o in outputs if o.output_type == "error"]
    if "lookup --key zzz" in source:       # the tool-error example fails on purpose
        assert [(o.ename, o.evalue) for o in errors] == [("ScriptError", "exit status 1")]
        stderr = re.sub(r"\x1b\[[0-9;]*m", "", "".join(o.text for o in outputs if o.output_type == "stream"))
        assert stderr.startswith("lookup: zzz\n") and "KeyError: 'zzz'" in stderr
    else:
        assert not errors, errors
        shown = [o.data["text/plain"] for o in outputs if o.output_type == "display_data"]
        assert "--timeout              300 s" in shown[0] and "--timeout              none" in shown[1]


def test_the_papermill_command_runs_as_typed(tmp_path):
    pytest.importorskip("papermill")
    command = re.search(r"```bash\n(papermill .*?)\n```", README).group(1)
    (tmp_path / "examples").mkdir()
    shutil.copy(ROOT / "examples" / "customer_report.ipynb", tmp_path / "examples")
    words = shlex.split(command)
    p = subprocess.run([sys.executable, "-m", "papermill", *words[1:]], cwd=tmp_path,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    out = nbformat.read(tmp_path / words[2], as_version=4)
    assert "Bob (silver)" in "".join(o.get("text", "") for c in out.cells if c.cell_type == "code"
                                     for o in c.outputs)
