"""What a person sees: JupyterLab in Debian's Chromium (driven by Playwright) runs the example
notebooks, shows the tool browser, completes flags, and stops Run All at a failing cell.

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
    for plugin, values in {"notebook-extension/tracker": '{"windowingMode": "none"}',
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
         "--LabApp.news_url=None", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"],
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


def open_notebook(browser, lab, name):
    """Open an example notebook and wait until its own kernel (by the notebook's metadata) is
    idle. Under load JupyterLab may first ask which kernel to use; the notebook's is chosen."""
    kernel = json.loads((ROOT / "examples" / name).read_text())["metadata"]["kernelspec"]["display_name"]
    page = browser.new_page()
    page.goto(f"{lab}/lab/tree/{name}?reset&token={TOKEN}")
    kernel_shown = """(name) => [...document.querySelectorAll('.jp-Toolbar-kernelName')]
                                  .some(e => e.innerText.trim().startsWith(name))"""
    page.wait_for_function(f"(name) => !!document.querySelector('.jp-Dialog') || ({kernel_shown})(name)",
                           arg=kernel, timeout=90_000)
    choose_kernel(page, kernel)
    page.wait_for_function(kernel_shown, arg=kernel, timeout=90_000)
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=90_000)
    return page


def choose_kernel(page, kernel: str):
    """Answer JupyterLab's "Select Kernel" dialog with `kernel` (a display name)."""
    dialog = page.locator(".jp-Dialog")
    while dialog.count():
        select = dialog.locator("select")
        if select.count():
            labels = select.first.locator("option").all_inner_texts()
            match = next((label for label in labels if label.strip().startswith(kernel)), None)
            if match is not None:
                select.first.select_option(label=match)
        dialog.locator(".jp-mod-accept").first.click()
        page.wait_for_timeout(200)


def run_all(page):
    """Run > Run All Cells, once the kernel has answered (the first cell gets a count)."""
    for _ in range(4):
        try:
            page.get_by_role("menuitem", name="Run", exact=True).click(timeout=10_000)
            page.locator("li[data-command='runmenu:run-all']").click(timeout=10_000)
            page.wait_for_function(
                "() => /\\[1\\]/.test(document.querySelector('.jp-Notebook').innerText)", timeout=30_000)
            return
        except Exception:
            page.screenshot(path=str(SHOTS / "run-all-retry.png"))
    raise AssertionError("Run All did not start")


def test_ecommerce_notebook_runs_shows_the_tool_browser_and_stops_at_the_error(browser, lab):
    page = open_notebook(browser, lab, "ecommerce.ipynb")
    run_all(page)
    page.wait_for_function(
        "() => /ScriptError: exit status 1/.test(document.querySelector('.jp-Notebook').innerText)",
        timeout=90_000)
    outputs = page.locator(".jp-Notebook .jp-Cell")
    text = page.locator(".jp-Notebook").inner_text()
    assert "Alice (gold)" in text
    assert "discount SAVE15-1" in text and "gadget: 0 in stock" in text
    assert "no such user, carrying on" in text
    outputs_text = " ".join(page.locator(".jp-OutputArea").all_inner_texts())
    assert "after the error" not in outputs_text          # Run All stopped at the error
    browser_widget = page.locator(".scripted-tool-browser").first      # the help cell
    browser_widget.wait_for(timeout=30_000)
    search = browser_widget.locator(".widget-text input")
    assert search.count() == 1
    titles = browser_widget.locator(".jupyter-widget-Collapse-header")
    assert titles.count() == 4
    search.fill("discount")
    page.wait_for_function(
        "() => /1 of 4 tools/.test(document.querySelector('.scripted-tool-browser').innerText)", timeout=30_000)
    assert browser_widget.locator(".jupyter-widget-Collapse-header").count() == 1
    browser_widget.locator(".jupyter-widget-Collapse-header").first.click()
    page.wait_for_timeout(300)
    browser_widget.screenshot(path=str(SHOTS / "tool-browser.png"))
    page.screenshot(path=str(SHOTS / "ecommerce.png"), full_page=True)
    assert outputs.count() >= 8
    page.close()


def test_tab_completes_flags_from_the_schema(browser, lab):
    page = open_notebook(browser, lab, "ecommerce.ipynb")
    page.locator(".jp-Cell").nth(1).click()        # the %%python cell defines the tools
    page.keyboard.press("Shift+Enter")
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=60_000)
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
    run_all(page)
    page.locator(".scripted-tool-browser").first.wait_for(timeout=90_000)
    page.wait_for_function("() => /cairo: 31°C/.test(document.querySelector('.jp-Notebook').innerText)",
                           timeout=60_000)
    text = page.locator(".jp-Notebook").inner_text()
    assert "oslo: 3°C" in text and "'celsius': 31" in text
    assert page.locator(".scripted-tool-browser .jupyter-widget-Collapse-header").count() == 2
    page.screenshot(path=str(SHOTS / "magics.png"), full_page=True)
    page.close()
