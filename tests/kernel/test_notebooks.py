"""The example notebooks, executed headlessly through their real kernels (nbclient)."""
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


def test_ecommerce_notebook_runs_and_stops_at_the_failing_cell():
    with pytest.raises(nbclient.exceptions.CellExecutionError) as info:
        execute("ecommerce.ipynb")
    assert "ScriptError" in str(info.value) and "exit status 1" in str(info.value)
    nb = execute("ecommerce.ipynb", allow_errors=True)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert text_of(code[0]) == "3"
    help_cell = code[1].outputs[0]
    assert "application/vnd.jupyter.widget-view+json" in help_cell.data
    assert "get_user" in help_cell.data["text/plain"]
    assert text_of(code[2]) == "Alice (gold)\n"
    assert text_of(code[3]) == "discount SAVE15-1\n  widget: 42 in stock\n  gadget: 0 in stock\n  gizmo: 7 in stock\n"
    assert code[4].outputs[1].data["application/json"] == {"count": 2, "total": 17.5}
    assert text_of(code[5]).startswith("list_orders")
    assert text_of(code[6]) == "3\n"                    # orders staged in a file by this cell ...
    assert code[7].outputs[1].data["application/json"] == [{"status": "pending", "count": 1},
                                                           {"status": "shipped", "count": 2}]
    failing = code[8]                                   # ... and read back by the next one
    assert "no such user, carrying on" in text_of(failing)
    assert [o.ename for o in failing.outputs if o.output_type == "error"] == ["ScriptError"]
    assert text_of(code[9]) == "after the error\n"      # runs only because errors are allowed here


def test_magics_notebook_in_the_python_kernel():
    nb = execute("magics.ipynb")
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert text_of(code[2]) == "oslo: 3°C\nlima: 19°C\ncairo: 31°C\n"
    assert text_of(code[4]) == "{'city': 'cairo', 'celsius': 31}"
    help_output = code[5].outputs[0].data
    assert "application/vnd.jupyter.widget-view+json" in help_output      # a live kernel: the widget
    assert "temperature" in help_output["text/plain"] and "<details>" in help_output["text/html"]
