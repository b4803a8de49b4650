"""The example notebooks, executed headlessly through their real kernels (nbclient, nbconvert,
papermill, `python -m scripted_kernel notebook`), and exported to HTML."""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def execute(name: str, allow_errors=False):
    nb = nbformat.read(EXAMPLES / name, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=120, kernel_name=nb.metadata.kernelspec.name,
                                     allow_errors=allow_errors)
    client.execute()
    return nb


def text_of(cell) -> str:
    parts = []
    for out in cell.outputs:
        if out.output_type == "stream":
            parts.append(out.text)
        elif out.output_type in ("display_data", "execute_result"):
            parts.append(out.data.get("text/plain", ""))
    return "".join(parts)


def check_ecommerce_outputs(nb, customer="Alice (gold)"):
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert text_of(code[0]) == "3"
    assert code[1].outputs == []                        # the parameters cell prints nothing
    help_cell = code[2].outputs[0]
    # no widget manager listens to nbclient: the static table, which every viewer shows
    assert "application/vnd.jupyter.widget-view+json" not in help_cell.data
    assert "get_user" in help_cell.data["text/plain"] and "scripted-tools" in help_cell.data["text/html"]
    assert "widgets" not in nb.metadata
    return code


def test_ecommerce_notebook_runs_clean_and_its_tagged_error_cell_shows_the_error():
    nb = execute("ecommerce.ipynb")               # no CellExecutionError: the cell is tagged
    code = check_ecommerce_outputs(nb)
    assert text_of(code[3]) == "Alice (gold)\n"
    assert text_of(code[4]) == "discount SAVE15-1\n  widget: 42 in stock\n  gadget: 0 in stock\n  gizmo: 7 in stock\n"
    assert [(o.output_type, o.data["application/json"]) for o in code[5].outputs] == [
        ("execute_result", {"count": 2, "total": 17.5})]
    assert text_of(code[6]).startswith("list_orders")
    assert text_of(code[7]) == "3\n"                    # orders staged in a file by this cell ...
    [grouped] = code[8].outputs                          # ... read back by the next
    assert json.loads(grouped.data["text/plain"]) == [{"status": "pending", "count": 1},
                                                      {"status": "shipped", "count": 2}]
    # keys not in sorted order: no application/json (saving would reorder it); the HTML keeps jq's
    assert "application/json" not in grouped.data
    assert grouped.data["text/html"].index("status") < grouped.data["text/html"].index("count")
    failing = code[9]
    assert "raises-exception" in failing.metadata.tags
    assert "no such user, carrying on" in text_of(failing)
    errors = [o for o in failing.outputs if o.output_type == "error"]
    assert [(o.ename, o.evalue) for o in errors] == [("ScriptError", "exit status 1")]
    stderr = re.sub(r"\x1b\[[0-9;]*m", "", "".join(o.text for o in failing.outputs
                                                   if o.output_type == "stream" and o.name == "stderr"))
    # each failing tool: its line, then its traceback for the author (ending in the exception)
    assert stderr.count("create_discount: percent must be between 1 and 50") == 1
    assert stderr.count("ValueError: percent must be between 1 and 50") == 1
    assert stderr.index("get_user: no user with id 9") < stderr.index("LookupError") < stderr.index("create_discount:")
    assert text_of(code[10]) == "after the error\n"


def test_nbconvert_executes_the_example_without_failing(tmp_path):
    nbconvert = pytest.importorskip("nbconvert")
    out = tmp_path / "executed.ipynb"
    p = subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute",
                        str(EXAMPLES / "ecommerce.ipynb"), "--output", str(out)],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    assert nbconvert and text_of(nbformat.read(out, as_version=4).cells[-1]) == "after the error\n"


def test_nbconvert_html_of_an_executed_notebook_shows_the_tables_offline(tmp_path):
    pytest.importorskip("nbconvert")
    executed = tmp_path / "executed.ipynb"
    nbformat.write(execute("ecommerce.ipynb"), executed)
    p = subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "html", str(executed)],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    page = (tmp_path / "executed.html").read_text()
    assert "application/vnd.jupyter.widget-view+json" not in page      # nothing that needs a CDN
    assert page.count('class="scripted-tools"') == 2                    # help and discover
    assert "create_discount" in page and "scripted-json" in page


def test_the_notebook_command_stops_at_an_untagged_error_like_nbconvert(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "scripted", "display_name": "Scripted Tool", "language": "bash"}
    nb.cells = [nbformat.v4.new_code_cell("echo first"),
                nbformat.v4.new_code_cell("echo tagged; exit 4", metadata={"tags": ["raises-exception"]}),
                nbformat.v4.new_code_cell("echo failing; exit 3"),
                nbformat.v4.new_code_cell("echo never")]
    path = tmp_path / "stops.ipynb"
    nbformat.write(nb, path)
    p = subprocess.run([sys.executable, "-m", "scripted_kernel", "notebook", str(path)],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 1
    assert "first\n" in p.stdout and "tagged\n" in p.stdout and "failing\n" in p.stdout
    assert "never" not in p.stdout and "ScriptError: exit status 3" in p.stderr
    p = subprocess.run([sys.executable, "-m", "scripted_kernel", "notebook", str(EXAMPLES / "ecommerce.ipynb")],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0 and p.stdout.rstrip().endswith("after the error"), p.stderr[-2000:]


def test_the_papermill_example_runs_clean_with_parameters(tmp_path):
    pytest.importorskip("papermill")
    out = tmp_path / "report-2.ipynb"
    p = subprocess.run([sys.executable, "-m", "papermill", str(EXAMPLES / "customer_report.ipynb"), str(out),
                        "-p", "customer", "2", "-p", "status", "shipped"],
                       capture_output=True, text=True, timeout=300, env=dict(os.environ))
    assert p.returncode == 0, p.stderr[-3000:]
    nb = nbformat.read(out, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert not [o for c in code for o in c.outputs if o.output_type == "error"]
    assert "injected-parameters" in code[2].metadata.tags
    assert text_of(code[3]) == "Bob (silver)\n"
    assert json.loads(text_of(code[4])) == {"orders": 1, "total": 19.98}
    assert text_of(code[5]) == "gizmo\tshipped\t19.98\n"


def test_papermill_parameters_reach_the_later_cells(tmp_path):
    papermill = pytest.importorskip("papermill")
    out = tmp_path / "customer2.ipynb"
    # papermill reports every error output, `raises-exception` or not: it runs all the cells,
    # writes them, then names the example's deliberate failure
    with pytest.raises(papermill.PapermillExecutionError) as info:
        papermill.execute_notebook(str(EXAMPLES / "ecommerce.ipynb"), str(out),
                                   parameters={"customer": 2, "discount_percent": 20}, progress_bar=False)
    assert (info.value.ename, info.value.evalue) == ("ScriptError", "exit status 1")
    nb = nbformat.read(out, as_version=4)
    injected = [c for c in nb.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert [c.source for c in injected] == ["# Parameters\ncustomer=2\ndiscount_percent=20\n"]
    by_source = {c.source.splitlines()[0]: c for c in nb.cells if c.cell_type == "code"}
    assert text_of(by_source['get_user --id "$customer" | jq -r \'.name + " (" + .tier + ")"\'']) == "Bob (silver)\n"
    assert text_of(by_source["for id in 1 2 3; do"]).startswith("discount SAVE20-1\n")
    assert text_of(by_source['echo "after the error"']) == "after the error\n"


def test_magics_notebook_in_the_python_kernel():
    nb = execute("magics.ipynb")
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert text_of(code[2]) == "oslo: 3°C\nlima: 19°C\ncairo: 31°C\n"
    assert text_of(code[4]) == "{'city': 'cairo', 'celsius': 31}"
    help_output = code[5].outputs[0].data
    assert "application/vnd.jupyter.widget-view+json" not in help_output   # nbclient shows no widgets
    assert "temperature" in help_output["text/plain"] and "<details>" in help_output["text/html"]
