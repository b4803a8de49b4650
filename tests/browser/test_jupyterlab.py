"""What a person sees: JupyterLab in Debian's Chromium (driven by Playwright) runs the example
notebooks, shows the tool browser in the light and the dark theme, completes flags, and shows a
failing cell's error once.

No step waits for a time: the kernel is chosen by creating the notebook's session (with the
kernel its metadata names) through the server's API before the page opens, so JupyterLab never
asks; commands run through JupyterLab's command registry, not menus; every wait is for a state
of the page.

Marked `browser`; skipped, with the reason, where JupyterLab, Playwright or Chromium is absent.
Screenshots go to tests/browser/screenshots/ (not committed).
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
SHOTS = Path(__file__).with_name("screenshots")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
TOKEN = "browser-test-token"

missing = []
try:
    from playwright.sync_api import sync_playwright
except ImportError:
    missing.append("playwright is not installed")
if shutil.which("jupyter-lab") is None and shutil.which("jupyter") is None:
    missing.append("jupyterlab is not installed")
if not Path(CHROMIUM).exists():
    missing.append("Chromium is not installed (apt-get install chromium)")
if missing:
    pytest.skip("; ".join(missing), allow_module_level=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def lab():
    home = Path(tempfile.mkdtemp(prefix="lab-home-"))
    root = Path(tempfile.mkdtemp(prefix="lab-root-"))
    for name in ("ecommerce.ipynb", "magics.ipynb"):
        shutil.copy(ROOT / "examples" / name, root / name)
    settings = home / "lab-settings"
    # every cell rendered (no windowing), and no news toast over the notebook
    for plugin, values in {
            "notebook-extension/tracker": '{"windowingMode": "none"}',
            "apputils-extension/notification": '{"fetchNews": "false", "checkForUpdates": false}'}.items():
        target = settings / "@jupyterlab" / (plugin + ".jupyterlab-settings")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(values)
    port = free_port()
    env = dict(os.environ, HOME=str(home), IPYTHONDIR=str(home / ".ipython"),
               JUPYTERLAB_SETTINGS_DIR=str(settings))
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--allow-root", "--no-browser", "--ServerApp.ip=127.0.0.1",
         f"--ServerApp.port={port}", f"--IdentityProvider.token={TOKEN}", f"--ServerApp.root_dir={root}",
         "--LabApp.news_url=None", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
         "--LabApp.expose_app_in_browser=True"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"{url}/api/status?token={TOKEN}", timeout=2)
            break
        except OSError:
            time.sleep(0.25)
    else:
        proc.kill()
        pytest.fail("JupyterLab did not start")
    yield url
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()


@pytest.fixture(scope="module")
def browser():
    SHOTS.mkdir(exist_ok=True)
    profile = tempfile.mkdtemp(prefix="chromium-profile-")
    with sync_playwright() as p:
        ctx = p.chromium.launch_persistent_context(profile, executable_path=CHROMIUM, headless=True, args=ARGS,
                                                   viewport={"width": 1280, "height": 1000})
        yield ctx
        ctx.close()


def start_session(lab, name, spec: dict | None = None) -> str:
    """The notebook's kernel session, started through the REST API with the kernel named in the
    notebook's metadata (`spec`, else an example's): JupyterLab attaches to it instead of asking
    which kernel to use."""
    spec = spec or json.loads((ROOT / "examples" / name).read_text())["metadata"]["kernelspec"]
    body = json.dumps({"path": name, "name": name, "type": "notebook", "kernel": {"name": spec["name"]}})
    request = urllib.request.Request(f"{lab}/api/sessions?token={TOKEN}", data=body.encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        assert json.load(response)["kernel"]["name"] == spec["name"]
    return spec["display_name"]


def open_notebook(browser, lab, name, spec: dict | None = None):
    """Open a notebook (an example's, or one put with `spec`) on its own kernel and wait until
    that kernel is idle."""
    kernel = start_session(lab, name, spec)
    page = browser.new_page()
    page.goto(f"{lab}/lab/tree/{name}?reset&token={TOKEN}")
    page.wait_for_function("""(name) => [...document.querySelectorAll('.jp-Toolbar-kernelName')]
                                        .some(e => e.innerText.trim().startsWith(name))""",
                           arg=kernel, timeout=90_000)
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=90_000)
    assert page.locator(".jp-Dialog").count() == 0
    return page


def command(page, name: str, args: dict | None = None, wait: bool = True):
    """Run a JupyterLab command (what a menu item or shortcut runs); `wait=False`: start it and
    return (running cells wait for their kernel, which may wait for a click)."""
    page.evaluate("([name, args, wait]) => { const done = window.jupyterapp.commands.execute(name, args); "
                  "return wait ? done : null; }", [name, args or {}, wait])


def notebook_shows(page, pattern: str, timeout=90_000):
    page.wait_for_function("(p) => new RegExp(p).test(document.querySelector('.jp-Notebook').innerText)",
                           arg=pattern, timeout=timeout)


def table_header_background(widget) -> str:
    return widget.locator(".scripted-flags th").first.evaluate("e => getComputedStyle(e).backgroundColor")


def test_ecommerce_notebook_runs_and_shows_the_tool_browser_in_both_themes(browser, lab):
    page = open_notebook(browser, lab, "ecommerce.ipynb")
    command(page, "notebook:run-all-cells")
    notebook_shows(page, "after the error")           # the failing cell is tagged raises-exception
    text = page.locator(".jp-Notebook").inner_text()
    assert "Alice (gold)" in text
    assert "discount SAVE15-1" in text and "gadget: 0 in stock" in text
    assert "no such user, carrying on" in text
    outputs = " ".join(page.locator(".jp-OutputArea").all_inner_texts())
    assert outputs.count("ScriptError: exit status 1") == 1
    # the tool's line once, then its traceback for the author (ending in the exception), and
    # the error itself names only the status
    assert outputs.count("create_discount: percent must be between 1 and 50") == 1
    assert outputs.count("ValueError: percent must be between 1 and 50") == 1
    browser_widget = page.locator(".scripted-tool-browser").first      # the help cell
    browser_widget.wait_for(timeout=30_000)
    search = browser_widget.locator(".widget-text input")
    assert search.count() == 1
    assert browser_widget.locator(".jupyter-widget-Collapse-header").count() == 4
    search.fill("discount")
    page.wait_for_function(
        "() => /1 of 4 tools/.test(document.querySelector('.scripted-tool-browser').innerText)", timeout=30_000)
    assert browser_widget.locator(".jupyter-widget-Collapse-header").count() == 1
    browser_widget.locator(".jupyter-widget-Collapse-header").first.click()
    browser_widget.locator(".scripted-flags").first.wait_for(state="visible", timeout=30_000)
    assert browser_widget.locator(".scripted-flags th").all_inner_texts() == ["flag", "type", "description"]
    assert browser_widget.locator(".scripted-required").count() == 2
    light = table_header_background(browser_widget)
    browser_widget.screenshot(path=str(SHOTS / "tool-browser-light.png"))
    page.screenshot(path=str(SHOTS / "ecommerce.png"), full_page=True)
    command(page, "apputils:change-theme", {"theme": "JupyterLab Dark"})
    page.wait_for_function("(light) => getComputedStyle(document.querySelector('.scripted-flags th'))"
                           ".backgroundColor !== light", arg=light, timeout=30_000)
    browser_widget.screenshot(path=str(SHOTS / "tool-browser-dark.png"))
    command(page, "apputils:change-theme", {"theme": "JupyterLab Light"})
    page.wait_for_function("(light) => getComputedStyle(document.querySelector('.scripted-flags th'))"
                           ".backgroundColor === light", arg=light, timeout=30_000)
    page.close()


def test_tab_completes_flags_from_the_schema(browser, lab):
    page = open_notebook(browser, lab, "ecommerce.ipynb")
    tools_cell = page.locator(".jp-Cell").nth(1)   # the %%python cell defines the tools
    tools_cell.click()
    command(page, "notebook:run-cell")
    page.wait_for_function("(cell) => /\\[\\d+\\]/.test(cell.querySelector('.jp-InputPrompt').innerText)",
                           arg=tools_cell.element_handle(), timeout=60_000)
    page.keyboard.press("Escape")
    page.keyboard.press("b")                         # a new cell below
    page.keyboard.press("Enter")
    page.keyboard.type("get_user --")
    page.keyboard.press("Tab")
    completer = page.locator(".jp-Completer")
    completer.wait_for(timeout=30_000)
    assert "--id" in completer.inner_text()
    page.screenshot(path=str(SHOTS / "completion.png"))
    page.close()


def test_magics_notebook_in_the_python_kernel(browser, lab):
    page = open_notebook(browser, lab, "magics.ipynb")
    command(page, "notebook:run-all-cells")
    page.locator(".scripted-tool-browser").first.wait_for(timeout=90_000)
    notebook_shows(page, "cairo: 31°C", timeout=60_000)
    text = page.locator(".jp-Notebook").inner_text()
    assert "oslo: 3°C" in text and "'celsius': 31" in text
    assert page.locator(".scripted-tool-browser .jupyter-widget-Collapse-header").count() == 2
    page.screenshot(path=str(SHOTS / "magics.png"), full_page=True)
    page.close()


def test_html_export_of_an_executed_notebook_shows_the_tool_table_offline(browser, tmp_path):
    """nbconvert --to html of a notebook run headless (nbclient), opened from a file with no
    network: the help cell's table is visible, and the JSON tree keeps jq's key order."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.read(ROOT / "examples" / "ecommerce.ipynb", as_version=4)
    nbclient.NotebookClient(nb, timeout=120, kernel_name="scripted").execute()
    nbformat.write(nb, tmp_path / "executed.ipynb")
    p = subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "html", str(tmp_path / "executed.ipynb")],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    page = browser.new_page()
    page.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file:") else route.abort())
    page.goto((tmp_path / "executed.html").as_uri())
    table = page.locator("table.scripted-tools").first
    table.wait_for(state="visible", timeout=30_000)
    names = table.locator("tbody tr td:first-child").all_inner_texts()
    assert names == ["get_user", "list_orders", "get_inventory", "create_discount"]
    assert table.bounding_box()["height"] > 40
    tree = page.locator(".scripted-json").nth(1)          # jq -s 'group_by(.status) | map({status, count})'
    text = tree.inner_text()
    assert text.index('"status"') < text.index('"count"') and tree.is_visible()
    page.screenshot(path=str(SHOTS / "export.png"), full_page=True)
    page.close()


def put_notebook(lab, name: str, cells: list) -> dict:
    """A notebook of these code cells on the scripted kernel, saved through the contents API;
    its kernelspec."""
    spec = {"name": "scripted", "display_name": "Scripted Tool", "language": "bash"}
    notebook = {"nbformat": 4, "nbformat_minor": 5, "metadata": {"kernelspec": spec},
                "cells": [{"cell_type": "code", "id": f"c{i}", "source": source, "metadata": {},
                           "outputs": [], "execution_count": None} for i, source in enumerate(cells)]}
    body = json.dumps({"type": "notebook", "format": "json", "content": notebook}).encode()
    request = urllib.request.Request(f"{lab}/api/contents/{name}?token={TOKEN}", data=body, method="PUT",
                                     headers={"Content-Type": "application/json"})
    urllib.request.urlopen(request, timeout=60).close()
    return spec


def test_a_cell_left_for_later_resumes_in_its_output_when_allowed(browser, lab):
    spec = put_notebook(lab, "decide-later.ipynb", [
        '%%python\n@tool\ndef double(x: int) -> int:\n    """Double a number."""\n    return 2 * x',
        "%scripted approve on",
        "echo before; double --x 21; echo after $?"])
    page = open_notebook(browser, lab, "decide-later.ipynb", spec)
    command(page, "notebook:run-all-cells", wait=False)             # the last cell waits for a click
    page.get_by_role("button", name="Decide later").click(timeout=90_000)
    view = page.locator(".scripted-paused")
    view.wait_for(timeout=60_000)
    notebook_shows(page, "Paused: double --x 21 waits for a decision", timeout=60_000)
    assert "waits before double --x 21" in view.inner_text()
    outputs = page.locator(".jp-Cell").nth(2).locator(".jp-Cell-outputArea")
    assert "before" in outputs.inner_text() and "after" not in outputs.inner_text()
    page.screenshot(path=str(SHOTS / "decide-later-paused.png"), full_page=True)
    view.get_by_role("button", name="Allow").click()
    page.wait_for_function("() => /42\\s+after 0/.test(document.querySelector('.scripted-paused').innerText)",
                           timeout=60_000)
    shown = outputs.inner_text()
    assert shown.index("before") < shown.index("42") < shown.index("after 0")
    assert "allowed double --x 21" in view.inner_text()
    page.screenshot(path=str(SHOTS / "decide-later-allowed.png"), full_page=True)
    page.close()
