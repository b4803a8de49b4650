"""The notebook against what scripts, tools, files and users can put in front of it: markup in
every HTML view (and in an nbconvert export), output that would grow the kernel's memory cell
after cell, cells that would make is_complete slow, and callbacks that an interrupt cannot stop."""
import ast
import json
import os
import re
import shlex
import sys
import tempfile
import threading
import _thread
from html.parser import HTMLParser
from pathlib import Path

import pytest

# The kernel processes inherit these (as in tests/kernel/conftest.py): no history from other
# sessions, and a JSON result is a tree however slow the machine is.
os.environ.setdefault("IPYTHONDIR", tempfile.mkdtemp(prefix="ipython-"))
os.environ.setdefault("SCRIPTED_JSON_HOLD_SECONDS", "600")

from scripted_kernel import BashTool, MemoryFs, ToolDef  # noqa: E402
from scripted_kernel.commands._options import QUOTED_CHARS  # noqa: E402
from scripted_kernel.tools import containment  # noqa: E402
from scripted_kernel.tools.hooks import ToolCall  # noqa: E402
from support import real_with_files  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]

ATTACKS = ["<img src=x onerror=alert(1)>", '"><script>alert(1)</script>', "' onmouseover='alert(1)' x='",
           "javascript:alert(1)", "</style><script>alert(1)</script>"]
IMG = ATTACKS[0]

# ------------------------------------------------------------------ what a view may contain

TABLE = {"table", "thead", "tbody", "tr", "th", "td", "code", "p"}
VIEWS = {
    "trace": TABLE,
    "json": {"div", "details", "summary", "span"},
    "files": TABLE,
    "history": TABLE,
    "limits": TABLE,
    "tools": TABLE | {"b", "i", "span", "details", "summary", "br"},
    "approval": {"b", "code", "small"},
}
ATTRIBUTES = {"class", "style", "title", "open"}


class _Markup(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags: list = []
        self.attrs: list = []
        self.text: list = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs += attrs

    handle_startendtag = handle_starttag

    def handle_data(self, data):
        self.text.append(data)


def checked(markup: str, view: str) -> str:
    """The text of a view's HTML, once no element but the view's own, no attribute but
    class/style/title/open (no event handler, no URL), and no attacker's text in an
    attribute were found in it."""
    parsed = _Markup()
    parsed.feed(markup)
    parsed.close()
    assert set(parsed.tags) <= VIEWS[view], (view, set(parsed.tags) - VIEWS[view])
    for name, value in parsed.attrs:
        assert name in ATTRIBUTES, (view, name, value)
        assert "alert(" not in (value or ""), (view, name, value)
    return "".join(parsed.text)


def test_the_checker_finds_the_attack_the_trace_table_used_to_let_through():
    with pytest.raises(AssertionError):
        checked(f"<table><tr><td>{IMG}</td></tr></table>", "trace")
    with pytest.raises(AssertionError):
        checked("<table><tr><td title='' onmouseover='alert(1)'>x</td></tr></table>", "trace")


# ------------------------------------------------------------------ every view, in process

def hostile_tool_def(name=IMG) -> ToolDef:
    schema = {"type": "object", "required": [ATTACKS[0]], "properties": {
        ATTACKS[0]: {"type": "string", "description": ATTACKS[1], "enum": [ATTACKS[2], ATTACKS[3]]},
        ATTACKS[4]: {"type": ATTACKS[1], "description": ATTACKS[4]}}}
    return ToolDef(name, " ".join(ATTACKS), schema, tags=[ATTACKS[3]], category=ATTACKS[4])


def test_trace_table_escapes_tool_names_and_parameters():
    from scripted_kernel.tools.scripted_tool import TraceEntry
    from scripted_magic.magics import _trace_table
    trace = [TraceEntry(attack, "tool", [attack], {attack: attack}, 0, 1.5) for attack in ATTACKS]
    text = checked(_trace_table(trace)["text/html"], "trace")
    for attack in ATTACKS:
        assert attack in text and json.dumps({attack: attack}) in text


def test_trace_table_shows_its_first_rows_and_how_many_more():
    from scripted_kernel.tools.scripted_tool import TraceEntry
    from scripted_magic.magics import TRACE_ROWS, _trace_table
    bundle = _trace_table([TraceEntry("t", "tool", ["t"], {}, 0, 0.1)] * (TRACE_ROWS + 5))
    assert bundle["text/html"].count("<tr>") == TRACE_ROWS + 1          # the head row and TRACE_ROWS
    assert "... 5 more tool calls" in bundle["text/plain"] and "5 more tool calls" in bundle["text/html"]


def test_json_tree_escapes_keys_and_values():
    from scripted_magic.jsonview import json_bundle
    document = {attack: [attack, {attack: attack}] for attack in ATTACKS}
    text = checked(json_bundle(document, json.dumps(document))["text/html"], "json")
    for attack in ATTACKS:
        assert json.dumps(attack) in text


def test_tool_browser_and_tool_page_escape_names_descriptions_and_schemas():
    from scripted_magic.widgets import html_details, params_html, tool_page
    tool_def = hostile_tool_def()
    for markup in (html_details([tool_def]), params_html(tool_def), tool_page(tool_def)["text/html"]):
        text = checked(markup, "tools")
        assert IMG in text and ATTACKS[2] in text
    assert set(tool_page(tool_def)) == {"text/plain", "text/html"}     # no Markdown, which passes HTML on


def test_files_view_escapes_file_names():
    from scripted_magic.magics import files_bundle
    fs = MemoryFs()
    for attack in ATTACKS:
        fs.add_file("/home/user/" + attack.replace("/", "|"), "x")
    text = checked(files_bundle(fs, True)["text/html"], "files")
    assert IMG in text


def test_limits_view_is_only_its_own_markup():
    from scripted_magic.limits import notebook_limits, table
    assert "--max-output" in checked(table(notebook_limits())["text/html"], "limits")


def test_history_view_escapes_file_names(ip):
    from scripted_magic.magics import shell_state
    state = shell_state(ip)
    names = " ".join(shlex.quote(attack.replace("/", "|")) for attack in ATTACKS)
    assert ip.run_cell(f"%%scripted\ntouch {names}").success
    try:
        text = checked(state.history.bundle()["text/html"], "history")
        assert IMG in text
    finally:
        ip.run_cell(f"%%scripted\nrm -f {names}")


def test_approval_question_escapes_the_call():
    pytest.importorskip("ipywidgets")
    from scripted_magic.approval import WidgetQuestion
    question = WidgetQuestion(ToolCall(IMG, {attack: attack for attack in ATTACKS}, [IMG, "--x", ATTACKS[1]]))
    text = checked(question.box.children[0].value, "approval")
    assert IMG in text and ATTACKS[1] in text


def test_paused_run_view_escapes_the_call_and_the_reason():
    pytest.importorskip("ipywidgets")
    from scripted_magic.pending import PausedCell, PausedView
    call = ToolCall(IMG, {attack: attack for attack in ATTACKS}, [IMG, "--x", ATTACKS[1]])
    paused = PausedCell(IMG, call, ATTACKS[2], b"", ({}, {}), {}, False, (0, 0))
    view = PausedView(paused, lambda run_id, answer: None)
    text = checked(view.text.value, "approval")
    assert IMG in text and ATTACKS[1] in text and ATTACKS[2] in text
    view.buttons["allow"].click()                    # the view, once decided, says so
    assert IMG in checked(view.text.value, "approval")


def _html_literals(tree) -> list:
    """f-strings, `+` and `%` that put values into markup (a tag in a literal part)."""
    tag = re.compile(r"<[A-Za-z/!]")
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            literal = "".join(v.value for v in node.values if isinstance(v, ast.Constant))
            if tag.search(literal):
                found.append(node.lineno)
        elif isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mod)):
            sides = [s for s in (node.left, node.right) if isinstance(s, ast.Constant) and isinstance(s.value, str)]
            if any(tag.search(s.value) for s in sides):
                found.append(node.lineno)
    return found


def test_no_html_is_built_outside_the_markup_helper():
    """Every view builds its HTML with markup.html (which escapes every value): the sources
    hold no f-string, `+` or `%` that puts a value into a literal with a tag in it."""
    sources = sorted((ROOT / "extension" / "scripted_magic").glob("*.py")) + [
        ROOT / "kernel" / "scripted_kernel" / "kernel.py"]
    offenders = {str(p.relative_to(ROOT)): _html_literals(ast.parse(p.read_text())) for p in sources}
    assert {p: lines for p, lines in offenders.items() if lines} == {}
    assert _html_literals(ast.parse('x = f"<td>{v}</td>"\ny = "<b>" + v'))      # the check finds them


# ------------------------------------------------------------------ every view, through the kernel

jupyter_client = pytest.importorskip("jupyter_client")
from jupyter_client.manager import start_new_kernel  # noqa: E402

DEFINE_TOOLS = f'''%%python
from scripted_kernel import ToolDef
ATTACKS = {ATTACKS!r}
schema = {{"type": "object", "properties": {{
    "text": {{"type": "string", "description": ATTACKS[1], "enum": [ATTACKS[0], ATTACKS[2]]}},
    ATTACKS[0]: {{"type": "string", "description": ATTACKS[4]}}}}}}
tools.register(ToolDef("echo_it", " ".join(ATTACKS), schema, tags=[ATTACKS[3]], category=ATTACKS[4]),
               lambda args: str(args.params.get("text")) + "\\n")

def fails(args):
    raise ValueError(ATTACKS[0])
tools.register(ToolDef("fails", ATTACKS[1]), fails)
'''


def run(kc, code, timeout=120):
    out = []

    def hook(msg):
        if msg["msg_type"] not in ("status", "execute_input"):
            out.append((msg["msg_type"], msg["content"]))
    reply = kc.execute_interactive(code, output_hook=hook, timeout=timeout)
    return reply["content"], out


def shown_html(out, reply) -> list:
    """Every text/html of a cell: its displays and results, and the pages of its payload."""
    found = [c["data"]["text/html"] for k, c in out
             if k in ("display_data", "execute_result") and "text/html" in c["data"]]
    return found + [p["data"]["text/html"] for p in reply.get("payload", []) if "text/html" in p.get("data", {})]


@pytest.fixture(scope="module")
def kernel():
    km, kc = start_new_kernel(kernel_name="scripted", startup_timeout=60)
    reply, _ = run(kc, DEFINE_TOOLS)
    assert reply["status"] == "ok", reply
    yield km, kc
    kc.stop_channels()
    km.shutdown_kernel(now=True)


NAMES = " ".join(shlex.quote(attack.replace("/", "|")) for attack in ATTACKS)
KERNEL_VIEWS = [  # (view, cells run first, the cell whose HTML is checked, text it must show)
    ("trace", ["%scripted trace on"], f'echo_it --text {shlex.quote(IMG)} --{shlex.quote(IMG)} "$(printf x)"', IMG),
    ("json", [], "cat <<'EOF'\n" + json.dumps({attack: [attack] for attack in ATTACKS}) + "\nEOF", json.dumps(IMG)),
    ("files", [f"mkdir -p /tmp/a && cd /tmp/a && touch {NAMES}"], "%scripted files", IMG),
    ("history", [], "%scripted history", IMG),
    ("limits", [], "%scripted limits", "--max-output"),
    ("tools", [], "help", IMG),
    ("tools", [], "discover --search onerror", IMG),
    ("tools", [], "help echo_it", IMG),
]


@pytest.mark.parametrize("view,before,cell,expected", KERNEL_VIEWS, ids=[v[2][:24] for v in KERNEL_VIEWS])
def test_kernel_views_escape_what_scripts_tools_and_files_put_in_them(kernel, view, before, cell, expected):
    _, kc = kernel
    for code in before:
        assert run(kc, code)[0]["status"] == "ok"
    try:
        reply, out = run(kc, cell)
    finally:
        run(kc, "%scripted trace off")
    markups = shown_html(out, reply)
    assert reply["status"] == "ok" and markups, (reply, out)
    assert any(expected in checked(markup, view) for markup in markups)


def test_tool_errors_and_pages_are_text_and_inspection_html_is_escaped(kernel):
    _, kc = kernel
    reply, out = run(kc, "fails")                      # its message, its traceback: streams
    assert reply["status"] == "error" and not shown_html(out, reply)
    assert IMG in "".join(c.get("text", "") for k, c in out if k == "stream")
    reply, out = run(kc, "man echo_it")                # a page, in the pager: text
    assert reply["status"] == "ok" and reply["payload"] and not shown_html(out, reply)
    content = kc.inspect("echo_it", cursor_pos=3, reply=True)["content"]
    assert content["found"] and set(content["data"]) == {"text/plain", "text/html"}
    assert IMG in checked(content["data"]["text/html"], "tools")


def test_live_tool_browser_widgets_hold_escaped_html():
    """With a widget front-end the browser is widgets: their HTML values are escaped too (the
    accordion's titles are text: ipywidgets sets them with textContent)."""
    km, kc = start_new_kernel(kernel_name="scripted", startup_timeout=60)
    try:
        kc.comm_info(target_name="jupyter.widget", reply=True, timeout=60)
        assert run(kc, DEFINE_TOOLS)[0]["status"] == "ok"
        reply, out = run(kc, "help")
        values = [c["data"]["state"]["value"] for k, c in out if k == "comm_open"
                  and c["data"].get("state", {}).get("_model_name") == "HTMLModel"]
        values += [c["data"]["state"]["value"] for k, c in out if k == "comm_msg"
                   and "value" in c["data"].get("state", {})]
        assert reply["status"] == "ok" and values
        assert any(IMG in checked(value, "tools") for value in values)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def test_nbconvert_export_of_a_traced_cell_runs_no_script_in_the_reader():
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nbconvert = pytest.importorskip("nbconvert")
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "scripted", "display_name": "Scripted Tool", "language": "bash"}
    nb.cells = [nbformat.v4.new_code_cell(DEFINE_TOOLS), nbformat.v4.new_code_cell("%scripted trace on"),
                nbformat.v4.new_code_cell(f"echo_it --text {shlex.quote(IMG)}")]
    nbclient.NotebookClient(nb, timeout=120, kernel_name="scripted").execute()
    assert any("text/html" in o.get("data", {}) for o in nb.cells[2].outputs)      # the trace table
    page, _ = nbconvert.HTMLExporter().from_notebook_node(nb)
    assert IMG not in page and "&lt;img src=x onerror=alert(1)&gt;" in page
    parsed = _Markup()
    parsed.feed(page)
    assert not [(n, v) for n, v in parsed.attrs if n.startswith("on") and "alert(" in (v or "")]
    assert "img" not in parsed.tags


# ------------------------------------------------------------------ is_complete

def is_complete(kc, code: str, timeout=30) -> dict:
    msg_id = kc.is_complete(code)
    while True:
        reply = kc.get_shell_msg(timeout=timeout)
        if reply["parent_header"].get("msg_id") == msg_id:
            return reply["content"]


MiB = 1 << 20


@pytest.mark.parametrize("code,status", [
    ("$(" * (MiB // 2), "complete"),               # past 4 KiB: let the run report the error
    ("x[$((" * (MiB // 5), "complete"),
    ("let x[" * (MiB // 6), "complete"),
    ("a" * (MiB + 1), "invalid"),                    # past max_script_bytes: the run refuses it
    ("$(" * 300, "invalid"),                         # past max_parser_depth
    ("echo 'abc", "incomplete"),
    ("echo hi", "complete"),
], ids=["$(", "x[$((", "let x[", "too-large", "too-deep", "open-quote", "simple"])
def test_is_complete_answers_pathological_cells_quickly(kernel, code, status):
    import time
    _, kc = kernel
    started = time.monotonic()
    assert is_complete(kc, code)["status"] == status
    assert time.monotonic() - started < 5         # 2-3.5 s before (35 s for x[$(( in pure Python)


def test_is_complete_uses_the_sessions_parser_depth(kernel):
    _, kc = kernel
    assert is_complete(kc, "echo $(echo $(echo $(echo hi)))")["status"] == "complete"
    run(kc, "%scripted limits --max-parser-depth 2")
    try:
        assert is_complete(kc, "echo $(echo $(echo $(echo hi)))")["status"] == "invalid"
    finally:
        run(kc, "%scripted limits --reset")


def test_a_parse_past_its_time_is_complete():
    from scripted_kernel.kernel import script_completeness
    from scripted_magic.limits import notebook_limits
    slow = "x[$((" * 800                    # invalid, once parsed: 0.13 s in pure Python
    assert script_completeness(slow, notebook_limits(), seconds=60)["status"] == "invalid"
    assert script_completeness(slow, notebook_limits(), seconds=1e-9)["status"] == "complete"


# ------------------------------------------------------------------ interrupting a busy callback

def _until(condition, seconds: float = 60) -> bool:
    """Wait for `condition` (checked every millisecond) at most `seconds`; whether it held."""
    pause = threading.Event()
    for _ in range(int(seconds * 1000)):
        if condition():
            return True
        pause.wait(0.001)
    return condition()


def _main_thread_waits_for_a_run() -> bool:
    frame = sys._current_frames().get(threading.main_thread().ident)
    while frame is not None:
        if frame.f_code.co_name == "wait" and frame.f_code.co_filename.endswith("scripted_tool.py"):
            return True
        frame = frame.f_back
    return False


def test_interrupt_names_the_callback_left_running_and_counts_it(ip, capsys):
    """A callback spinning on the CPU cannot be stopped: the cell's one line says which tool
    goes on in the background, and the abandoned-threads limit counts it until it returns."""
    from scripted_kernel import tool
    stop, spinning, returned = threading.Event(), threading.Event(), threading.Event()

    @tool
    def spin() -> str:
        """Spin until told to stop."""
        spinning.set()
        while not stop.is_set():
            pass
        returned.set()
        return "done\n"

    def interrupt():                  # once the cell waits for the callback, as a user would
        spinning.wait(60)
        _until(_main_thread_waits_for_a_run)
        _thread.interrupt_main()
    assert _until(lambda: containment.ABANDONED.count == 0)       # earlier tests' released threads
    threading.Thread(target=interrupt, daemon=True).start()
    try:
        result = ip.run_cell("%%scripted\necho before; spin; echo never")
        assert type(result.error_in_exec).__name__ == "ScriptInterrupted"
        assert containment.ABANDONED.count == 1 and not returned.is_set()
        shown = capsys.readouterr().out
        [line] = [ln for ln in shown.splitlines() if "Interrupted" in ln]
        assert "tool 'spin' did not return" in line and "goes on in the background" in line
        assert "abandoned-threads limit (1 of 64" in line and "never" not in shown
    finally:
        stop.set()
    assert returned.wait(60)
    assert _until(lambda: containment.ABANDONED.count == 0)      # the script ended, the thread too


def test_interrupt_after_the_tool_returned_says_only_interrupted(ip, capsys):
    from scripted_kernel import tool
    returned = threading.Event()

    @tool
    def quick() -> str:
        """Return at once."""
        returned.set()
        return "ok\n"

    def interrupt():
        returned.wait(60)
        _until(_main_thread_waits_for_a_run)
        _thread.interrupt_main()
    threading.Thread(target=interrupt, daemon=True).start()
    result = ip.run_cell("%%scripted\nquick; sleep 60")
    assert type(result.error_in_exec).__name__ == "ScriptInterrupted"
    [line] = [ln for ln in capsys.readouterr().out.splitlines() if "Interrupted" in ln]
    assert line == "Interrupted (the output so far is kept)"


SPIN = """%%python
import threading
from scripted_kernel.tools import containment
stop_spinning = threading.Event()

@tool
def spin() -> str:
    \"\"\"Spin until told to stop.\"\"\"
    while not stop_spinning.is_set():
        pass
    return "done\\n"
"""
UNTIL_NONE_LEFT = """%%python
pause = threading.Event()
for _ in range(60_000):
    if containment.ABANDONED.count == 0:
        break
    pause.wait(0.001)
print(containment.ABANDONED.count)
"""


def test_interrupt_in_the_kernel_names_the_spinning_callback(kernel):
    km, kc = kernel
    assert run(kc, SPIN)[0]["status"] == "ok"
    assert run(kc, UNTIL_NONE_LEFT)[1][-1][1]["text"] == "0\n"
    out = []

    def hook(msg):                     # interrupt once the cell has surely started: it printed
        if msg["msg_type"] == "stream":
            out.append(msg["content"]["text"])
            km.interrupt_kernel()
    try:
        reply = kc.execute_interactive("echo started; spin; echo never", output_hook=hook, timeout=60)["content"]
        assert reply["ename"] == "ScriptInterrupted" and "".join(out) == "started\n"
        [line] = reply["traceback"]
        assert "tool 'spin' did not return" in line and "(1 of 64, max_abandoned_threads)" in line
    finally:
        run(kc, "%%python\nstop_spinning.set()")
    assert run(kc, UNTIL_NONE_LEFT)[1][-1][1]["text"] == "0\n"       # it returned, and is no longer counted


# ------------------------------------------------------------------ bounded messages and memory

@pytest.mark.parametrize("script", [
    'ln -s "$t" l1', 'cp "$t" x', 'cat "$t"', 'mkdir "$t"', 'rm "$t"', 'touch "$t"', 'mv "$t" y',
    'chmod 644 "$t"', 'seq "$t"', 'head -n "$t"', 'sha256sum "$t"', 'wc "$t"'])
def test_a_message_quotes_a_bounded_prefix_of_an_operand(script):
    tool = BashTool.builder().build()
    response = tool.execute(f"t=$(printf '%*s' 100000 '' | tr ' ' a); {script}")
    [line] = [ln for ln in response.stderr.splitlines() if "aaaa" in ln]
    assert "a" * (QUOTED_CHARS - 100) in line and "..." in line and len(line) < QUOTED_CHARS + 400, line[-200:]
    assert response.exit_code != 0


def test_a_message_quotes_an_operand_up_to_path_max_as_coreutils_does():
    import shutil
    if not shutil.which("bash"):
        pytest.skip("no bash")
    name = "b" * 300
    script = f"cat {name}; ln -s {'c' * 4000} l; cat l"
    ours = BashTool.builder().build().execute(script)
    assert ours.stderr == real_with_files(script, {})[1]


def rss_mib(km) -> int:
    with open(f"/proc/{km.provisioner.process.pid}/status") as status:
        return next(int(line.split()[1]) // 1024 for line in status if line.startswith("VmRSS:"))


# over 24 cells that each print 8 MiB: measured +34 to +38 MiB; +289 MiB before, and +147 MiB
# with messages bounded but the notebook keeping what the cells printed
RSS_GROWTH_MIB = 64


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads the kernel's RSS in /proc")
def test_the_kernels_memory_stays_bounded_whatever_its_cells_print():
    """The issue's eight cells of 40 refused `ln -s` of a long target, scaled down (1 MB
    targets, an 8 MiB output limit), beside cells that fill the limit on stderr and on stdout
    and then fail: eight rounds grow the kernel by less than RSS_GROWTH_MIB."""
    km, kc = start_new_kernel(kernel_name="scripted", startup_timeout=60)
    try:
        assert run(kc, "%scripted limits --max-output 8M")[0]["status"] == "ok"
        make = "t=$(printf '%*s' 1000000 '' | tr ' ' a); "
        cells = [make + 'for i in $(seq 40); do ln -s "$t" l$i; done',
                 make + 'for i in $(seq 40); do echo "$t" >&2; done',
                 make + 'for i in $(seq 40); do echo "$t"; done; exit 1']
        for cell in cells:                    # the first round: what any such cell needs
            assert run(kc, cell)[0]["status"] == "error"
        baseline = rss_mib(km)
        for _ in range(8):
            for cell in cells:
                reply, out = run(kc, cell)
                assert reply["status"] == "error" and km.is_alive()
        assert rss_mib(km) - baseline < RSS_GROWTH_MIB, (baseline, rss_mib(km))
        refusals = "".join(c["text"] for k, c in run(kc, cells[0])[1] if k == "stream").splitlines()
        assert len(refusals) == 40 and max(map(len, refusals)) < 2 * QUOTED_CHARS   # a bounded prefix each
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
