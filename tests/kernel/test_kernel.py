"""The `scripted` kernel as a real process: the Jupyter protocol suite, and jupyter_client
tests for streaming, errors, JSON display, widgets, completion, inspection and interrupts."""
import time

import pytest

jupyter_client = pytest.importorskip("jupyter_client")
jkt = pytest.importorskip("jupyter_kernel_test")
from jupyter_client.manager import start_new_kernel  # noqa: E402
from jupyter_kernel_test import msgspec_v5  # noqa: E402

# jupyter_kernel_test 0.7 has no schemas for comm messages (widgets send them)
for _type, _keys in {"comm_open": ["comm_id", "target_name", "data"], "comm_msg": ["comm_id", "data"],
                     "comm_close": ["comm_id", "data"]}.items():
    msgspec_v5.schema_fragments.setdefault(_type, {
        "properties": {k: {"type": "object" if k == "data" else "string"} for k in _keys},
        "required": _keys})

DEFINE_TOOL = '''%%python
@tool(category="demo")
def greet(name: str, times: int = 1) -> str:
    """Greet someone.

    Args:
        name: Who to greet.
        times: How often.
    """
    return ("hello " + name + "\\n") * times
'''


class TestProtocol(jkt.KernelTests):
    kernel_name = "scripted"
    language_name = "bash"
    file_extension = ".sh"
    code_hello_world = "echo hello, world"
    code_stderr = "echo oops >&2"
    completion_samples = [{"text": "ech", "matches": {"echo"}},
                          {"text": "%%python\nimport itertoo", "matches": {"itertools"}}]
    complete_code_samples = ["echo hi", "%%python\nx = 1", "for i in 1 2; do echo $i; done", "cat <<EOF\nabc\nEOF"]
    incomplete_code_samples = ["echo 'abc", "echo x |", "if true; then", "%%python\nfor i in range(3):",
                               "cat <<EOF\nabc", "cat <<'END'\nx\nEN"]
    invalid_code_samples = ["echo )", "%%python\n1 2"]
    code_page_something = "%%python\nprint?"
    code_generate_error = "exit 3"
    code_execute_result = [{"code": "%%python\n6*7", "result": "42"}]
    code_display_data = [{"code": "help", "mime": "application/vnd.jupyter.widget-view+json"},
                         {"code": "help", "mime": "text/html"}]
    code_history_pattern = "%%python?6?7"
    supported_history_operations = ("tail", "search")
    code_inspect_sample = "%%python\nprint"
    code_clear_output = "%%python\nfrom IPython.display import clear_output\nclear_output()"


@pytest.fixture(scope="module")
def kernel():
    km, kc = start_new_kernel(kernel_name="scripted", startup_timeout=60)
    run(kc, DEFINE_TOOL)
    yield km, kc
    kc.stop_channels()
    km.shutdown_kernel(now=True)


def run(kc, code, timeout=60):
    out, t0 = [], time.monotonic()

    def hook(msg):
        if msg["msg_type"] not in ("status", "execute_input"):
            out.append((time.monotonic() - t0, msg["msg_type"], msg["content"]))
    reply = kc.execute_interactive(code, output_hook=hook, timeout=timeout)
    return reply["content"], out


def streams(out, name="stdout"):
    return "".join(c["text"] for _, k, c in out if k == "stream" and c["name"] == name)


def test_cells_are_scripts_and_tools_come_from_python_cells(kernel):
    _, kc = kernel
    reply, out = run(kc, "greet --name Ada --times 2 | tr a-z A-Z")
    assert reply["status"] == "ok" and streams(out) == "HELLO ADA\nHELLO ADA\n"


def test_no_shell_state_carries_between_cells_python_state_does(kernel):
    _, kc = kernel
    run(kc, "x=1; f() { :; }")
    reply, out = run(kc, 'echo "[${x:-}]"; type -t f || echo no-function')
    assert streams(out) == "[]\nno-function\n"
    run(kc, "%%python\nanswer = 41")
    reply, out = run(kc, "%%python\nanswer + 1")
    assert [c["data"]["text/plain"] for _, k, c in out if k == "execute_result"] == ["42"]


def test_files_outlive_a_cell_and_can_be_listed(kernel):
    _, kc = kernel
    run(kc, "mkdir -p /tmp/k && greet --name Ada > /tmp/k/greeting.txt")
    reply, out = run(kc, "cat /tmp/k/greeting.txt; pwd")
    assert reply["status"] == "ok" and streams(out) == "hello Ada\n/home/user\n"
    reply, out = run(kc, "%scripted files")
    shown = [c["data"] for _, k, c in out if k == "display_data"]
    assert shown and "/tmp/k/greeting.txt" in shown[0]["text/plain"]
    assert "<table" in shown[0]["text/html"]


def test_output_streams_while_the_cell_runs(kernel):
    _, kc = kernel
    reply, out = run(kc, "echo a; sleep 2; echo b; sleep 2; echo c")
    times = {c["text"]: t for t, k, c in out if k == "stream"}
    assert reply["status"] == "ok"
    # streamed, not collected at the end: "a" arrives while the two sleeps before "c" still
    # run (collected output would arrive all at once; a slow machine only widens the gap)
    assert times["c\n"] - times["a\n"] >= 1.5, times


def everything_shown(out, reply) -> str:
    """All the text a person sees for a cell: streams, display fallbacks and the traceback."""
    shown = [c["text"] for _, k, c in out if k == "stream"]
    shown += [c["data"].get("text/plain", "") for _, k, c in out if k in ("display_data", "execute_result")]
    return "".join(shown) + "\n".join(reply.get("traceback", []))


def test_a_failing_cell_shows_its_stderr_once_and_names_the_status(kernel):
    _, kc = kernel
    reply, out = run(kc, "echo partial; greet --times 2")
    assert reply["status"] == "error" and reply["ename"] == "ScriptError"
    assert reply["evalue"] == "exit status 2"
    assert streams(out) == "partial\n"
    assert everything_shown(out, reply).count("missing required flag --name") == 1
    assert [line for line in reply["traceback"] if "exit status 2" in line] == reply["traceback"]


def test_a_syntax_error_is_shown_once(kernel):
    _, kc = kernel
    reply, out = run(kc, "echo ok\nif then")
    assert reply["status"] == "error" and reply["evalue"] == "exit status 2"
    assert everything_shown(out, reply).count("syntax error") == 1


def test_a_json_stdout_is_shown_once_as_a_tree_with_the_text_as_fallback(kernel):
    _, kc = kernel
    reply, out = run(kc, 'echo \'{"a": [1, 2]}\' | jq -c .')
    shown = [c["data"] for _, k, c in out if k == "display_data"]
    assert streams(out) == ""
    assert shown == [{"application/json": {"a": [1, 2]}, "text/plain": '{"a":[1,2]}'}]


def test_stdout_that_is_not_one_json_document_streams_as_text(kernel):
    _, kc = kernel
    reply, out = run(kc, "echo '[1]'; echo '[2]'")
    assert streams(out) == "[1]\n[2]\n" and not [k for _, k, _ in out if k == "display_data"]
    reply, out = run(kc, "echo '{\"a\": 1}'; echo done")
    assert streams(out) == '{"a": 1}\ndone\n' and not [k for _, k, _ in out if k == "display_data"]


def test_out_and_json_options_show_each_result_once(kernel):
    _, kc = kernel
    reply, out = run(kc, "%%scripted --out res --json\necho '{\"n\": 3}'")
    assert reply["status"] == "ok" and everything_shown(out, reply) == ""
    reply, out = run(kc, "%%python\nres")
    assert [c["data"]["text/plain"] for _, k, c in out if k == "execute_result"] == ["{'n': 3}"]
    reply, out = run(kc, "%%scripted --json\necho '[1, 2]'")
    assert streams(out) == "" and [c["data"]["application/json"] for _, k, c in out
                                   if k == "display_data"] == [[1, 2]]


def test_help_cell_renders_the_widget_with_fallbacks_and_piped_help_stays_text(kernel):
    _, kc = kernel
    reply, out = run(kc, "help")
    bundles = [c["data"] for _, k, c in out if k == "display_data"]
    assert set(bundles[0]) == {"application/vnd.jupyter.widget-view+json", "text/plain", "text/html",
                               "text/markdown"}
    assert "greet" in bundles[0]["text/plain"] and "<details>" in bundles[0]["text/html"]
    assert any(k == "comm_open" and c["target_name"] == "jupyter.widget" for _, k, c in out)
    reply, out = run(kc, "help --list | grep greet")
    assert streams(out) == "greet  Greet someone.\n" and not [k for _, k, _ in out if k == "display_data"]


def test_help_tool_cell_is_a_page_and_an_unknown_tool_stays_an_error(kernel):
    _, kc = kernel
    reply, out = run(kc, "help greet")
    pages = [c["data"] for _, k, c in out if k == "display_data"]
    assert reply["status"] == "ok" and streams(out) == "" and len(pages) == 1
    assert set(pages[0]) == {"text/plain", "text/markdown", "text/html"}
    assert "Usage: greet --name <string> [--times <integer>]" in pages[0]["text/plain"]
    assert "### `greet`" in pages[0]["text/markdown"] and "scripted-flags" in pages[0]["text/html"]
    reply, out = run(kc, "help nosuch")
    assert reply["status"] == "error" and "nosuch" in streams(out, "stderr")


def test_completion_of_tools_flags_and_variables(kernel):
    _, kc = kernel
    matches = kc.complete("gre", reply=True)["content"]["matches"]
    assert "greet" in matches and "grep" in matches
    content = kc.complete("greet --", reply=True)["content"]
    assert content["matches"] == ["--name", "--times"]
    types = {m["text"]: m["type"] for m in content["metadata"]["_jupyter_types_experimental"]}
    assert types == {"--name": "string", "--times": "integer"}
    assert kc.complete("count=1\necho $co", reply=True)["content"]["matches"] == ["$count"]


def test_inspection_shows_the_tool_help(kernel):
    _, kc = kernel
    content = kc.inspect("greet --name x", cursor_pos=2, reply=True)["content"]
    assert content["found"] and "Usage: greet --name <string> [--times <integer>]" in content["data"]["text/plain"]


def test_interrupt_keeps_the_output_and_the_kernel_usable(kernel):
    km, kc = kernel
    out = []

    def hook(msg):                 # interrupt once the cell has surely started: it printed
        if msg["msg_type"] == "stream":
            out.append(msg["content"]["text"])
            km.interrupt_kernel()
    start = time.monotonic()
    reply = kc.execute_interactive("echo started; sleep 30; echo never", output_hook=hook, timeout=60)
    assert reply["content"]["status"] == "error" and time.monotonic() - start < 20     # not the sleep
    assert "".join(out) == "started\n"
    assert run(kc, "echo alive")[0]["status"] == "ok"


def test_trace_magic_shows_tool_calls(kernel):
    _, kc = kernel
    run(kc, "%scripted trace on")
    reply, out = run(kc, "greet --name a >/dev/null")
    tables = [c["data"]["text/plain"] for _, k, c in out if k == "display_data"]
    run(kc, "%scripted trace off")
    assert tables and tables[0].startswith("tool trace:") and "greet" in tables[0]
