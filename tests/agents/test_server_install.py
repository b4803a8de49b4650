"""A server install without the notebook: the engine and an MCP server (`agents`, `sessions`)
need no Jupyter, which is the `notebook` extra's (in `test`). Checked in a process where no
Jupyter module can be imported: the server serves a call, and the commands that need Jupyter
say which extra to install, in one line."""
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp.server.mcpserver")      # mcp 2.x
tomllib = pytest.importorskip("tomllib")          # Python 3.11+

ROOT = Path(__file__).resolve().parents[2]
JUPYTER = ("IPython", "ipykernel", "ipywidgets", "jupyter_client", "nbclient", "nbformat")
# a process in which Jupyter cannot be imported, as in an install without the `notebook` extra
WITHOUT_JUPYTER = f"""
import sys
class NoJupyter:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {JUPYTER!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
sys.meta_path.insert(0, NoJupyter())
"""


def run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", WITHOUT_JUPYTER + code], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)


def test_the_base_install_has_no_jupyter_and_the_notebook_extra_has_it():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = lambda deps: {d.split(">")[0].split("=")[0].split("[")[0].strip().lower() for d in deps}   # noqa: E731
    jupyter = {"ipykernel", "ipython", "ipywidgets", "jupyter_client", "nbclient", "nbformat"}
    assert not names(project["dependencies"]) & jupyter
    assert names(project["optional-dependencies"]["notebook"]) == jupyter
    assert "scripted-kernel[notebook]" in project["optional-dependencies"]["test"]


def test_an_mcp_server_serves_without_jupyter():
    p = run("""
import asyncio, sys
sys.path.insert(0, "examples")
import ecommerce
from mcp import Client
from scripted_kernel.tools.mcp import build_server, create_app, ServiceConfig
create_app(ServiceConfig(bash=True))
async def main():
    async with Client(build_server(ecommerce.api)) as client:
        return await client.call_tool("ecommerce", {"commands": "get_user --id 1 | jq -r .name"})
print(asyncio.run(main()).structured_content["stdout"], end="")
print(sorted(m for m in sys.modules if m.split(".")[0] in %r))
""" % (JUPYTER,))
    assert p.returncode == 0, p.stderr[-3000:]
    assert p.stdout == "Alice\n[]\n"


@pytest.mark.parametrize("command", [["notebook", "examples/ecommerce.ipynb"], ["install", "--user"]])
def test_the_notebook_commands_name_the_extra(command):
    p = run(f"from scripted_kernel.__main__ import main; main({command!r})")
    assert p.returncode == 1
    assert p.stderr.count("\n") == 1 and p.stderr.startswith("scripted_kernel: the notebook needs Jupyter (")
    assert p.stderr.endswith(" is not installed): pip install 'scripted-kernel[notebook]'\n")
