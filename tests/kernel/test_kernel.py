"""The `scripted` kernel as a real process: the Jupyter protocol suite with bash samples, and
jupyter_client tests for streaming, errors, JSON results, widgets, paging, completion,
inspection, limits, tool tracebacks and interrupts."""
import re
import shutil
import subprocess
import time

import pytest

jupyter_client = pytest.importorskip("jupyter_client")
jkt = pytest.importorskip("jupyter_kernel_test")
from jupyter_client.manager import start_new_kernel  # noqa: E402
from jupyter_kernel_test.msgspec_v5 import validate_message  # noqa: E402

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
    """jupyter_kernel_test's twelve tests, every sample a bash cell, its message validator
    unpatched (it has no schema for comm messages: the kernel sends none to a client that
    showed no widget manager)."""
    kernel_name = "scripted"
    language_name = "bash"
    file_extension = ".sh"
    code_hello_world = "echo hello, world"
    code_stderr = "echo oops >&2"
    completion_samples = [{"text": "ech", "matches": {"echo"}}, {"text": "whil", "matches": {"while"}},
                          {"text": "sort --num", "matches": {"--numeric-sort"}},
                          {"text": "%%python\nimport itertoo", "matches": {"itertools"}}]
    complete_code_samples = ["echo hi", "%%python\nx = 1", "for i in 1 2; do echo $i; done", "cat <<EOF\nabc\nEOF"]
    incomplete_code_samples = ["echo 'abc", "echo x |", "if true; then", "%%python\nfor i in range(3):",
                               "cat <<EOF\nabc", "cat <<'END'\nx\nEN"]
    invalid_code_samples = ["echo )", "%%python\n1 2"]
    code_page_something = "man jq"
    code_generate_error = "exit 3"
    code_execute_result = [{"code": "echo '{\"answer\": 42}'", "result": '{"answer": 42}'},
                           {"code": "jq -n '[6 * 7]'", "mime": "application/json"}]
    code_display_data = [{"code": "help", "mime": "text/html"}, {"code": "help", "mime": "text/plain"}]
    code_history_pattern = "echo*answer*42*"
    supported_history_operations = ("tail", "search")
    code_inspect_sample = "grep"
    code_clear_output = "echo before; clear"


@pytest.fixture(scope="module")
def kernel():
    km, kc = start_new_kernel(kernel_name="scripted", startup_timeout=60)
    run(kc, DEFINE_TOOL)
    yield km, kc
    kc.stop_channels()
    km.shutdown_kernel(now=True)


@pytest.fixture(scope="module")
def widget_kernel():
    """A kernel whose client says, as JupyterLab's widget manager does when it connects, that it
    renders widgets (it asks for the `jupyter.widget` comms)."""
    km, kc = start_new_kernel(kernel_name="scripted", startup_timeout=60)
    kc.comm_info(target_name="jupyter.widget", reply=True, timeout=60)
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


def results(out):
    return [c for _, k, c in out if k == "execute_result"]


def test_a_json_stdout_is_the_cells_result_once_as_a_tree_with_the_text_as_fallback(kernel):
    _, kc = kernel
    reply, out = run(kc, 'echo \'{"a": [1, 2]}\' | jq -c .')
    assert streams(out) == "" and not [k for _, k, _ in out if k == "display_data"]
    [result] = results(out)
    assert result["execution_count"] == reply["execution_count"]          # Out[n] numbering
    assert result["data"]["application/json"] == {"a": [1, 2]}
    assert result["data"]["text/plain"] == '{"a":[1,2]}'
    assert "scripted-json" in result["data"]["text/html"]
    reply, out = run(kc, f"%%python\nOut[{reply['execution_count']}]['a'], _.value")
    assert results(out)[0]["data"]["text/plain"] == "([1, 2], {'a': [1, 2]})"


def test_a_json_tree_keeps_the_key_order_jq_printed(kernel):
    _, kc = kernel
    reply, out = run(kc, "jq -n '{zebra: 1, apple: {pear: 2, fig: [3]}}'")
    [result] = results(out)
    # notebooks are saved with sorted keys: application/json would come back reordered, so
    # the tree is HTML, whose order is in the markup
    assert "application/json" not in result["data"]
    html = result["data"]["text/html"]
    assert [html.index(k) for k in ("zebra", "apple", "pear", "fig")] == sorted(
        html.index(k) for k in ("zebra", "apple", "pear", "fig"))
    assert result["data"]["text/plain"].index("zebra") < result["data"]["text/plain"].index("apple")


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
    assert streams(out) == "" and [c["data"]["application/json"] for c in results(out)] == [[1, 2]]
    reply, out = run(kc, "%%scripted --out text\necho '[1, 2]'")
    assert everything_shown(out, reply) == ""
    reply, out = run(kc, "%%python\ntext")
    assert results(out)[0]["data"]["text/plain"] == "'[1, 2]\\n'"


def test_help_cell_renders_the_widget_with_fallbacks_and_piped_help_stays_text(widget_kernel):
    _, kc = widget_kernel
    reply, out = run(kc, "help")
    bundles = [c["data"] for _, k, c in out if k == "display_data"]
    assert set(bundles[0]) == {"application/vnd.jupyter.widget-view+json", "text/plain", "text/html"}
    assert "greet" in bundles[0]["text/plain"] and "<details>" in bundles[0]["text/html"]
    assert any(k == "comm_open" and c["target_name"] == "jupyter.widget" for _, k, c in out)
    reply, out = run(kc, "help --list | grep greet")
    assert streams(out) == "greet  Greet someone.\n" and not [k for _, k, _ in out if k == "display_data"]


def test_help_tool_cell_is_a_page_and_an_unknown_tool_stays_an_error(kernel):
    _, kc = kernel
    reply, out = run(kc, "help greet")
    pages = [c["data"] for _, k, c in out if k == "display_data"]
    assert reply["status"] == "ok" and streams(out) == "" and len(pages) == 1
    assert set(pages[0]) == {"text/plain", "text/html"}
    assert "Usage: greet --name <string> [--times <integer>]" in pages[0]["text/plain"]
    assert "<b>greet</b>" in pages[0]["text/html"] and "scripted-flags" in pages[0]["text/html"]
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


def test_without_a_widget_front_end_help_is_static_html_and_sends_no_comm(kernel):
    _, kc = kernel                 # jupyter_client, nbclient, papermill: no widget manager
    reply, out = run(kc, "help")
    assert not [k for _, k, _ in out if k.startswith("comm_")]
    [bundle] = [c["data"] for _, k, c in out if k == "display_data"]
    assert "application/vnd.jupyter.widget-view+json" not in bundle
    assert "<table class='scripted-tools'" in bundle["text/html"] and "greet" in bundle["text/html"]


def test_widget_comm_messages_follow_the_protocol(widget_kernel):
    _, kc = widget_kernel
    reply, out = run(kc, "discover --search greet")
    comms = [(k, c) for _, k, c in out if k.startswith("comm_")]
    assert comms and all(isinstance(c["comm_id"], str) and isinstance(c["data"], dict) for _, c in comms)
    assert all(isinstance(c["target_name"], str) for k, c in comms if k == "comm_open")
    view = [c["data"] for _, k, c in out if k == "display_data"][0]["application/vnd.jupyter.widget-view+json"]
    assert view["model_id"] in {c["comm_id"] for k, c in comms if k == "comm_open"}


def test_stdout_and_stderr_keep_the_order_the_script_wrote_them(kernel):
    _, kc = kernel
    script = "echo a; echo b >&2; echo c; printf 'd' >&2; echo e >&2; echo f"
    reply, out = run(kc, script)
    shown = [(c["name"], c["text"]) for _, k, c in out if k == "stream"]
    assert shown == [("stdout", "a\n"), ("stderr", "b\n"), ("stdout", "c\n"), ("stderr", "de\n"), ("stdout", "f\n")]
    bash = shutil.which("bash")
    if bash:       # the same text bash gives when both streams go to one terminal
        both = subprocess.run([bash, "--norc", "-c", "{ " + script + "; } 2>&1"], capture_output=True, text=True).stdout
        assert "".join(text for _, text in shown) == both


def test_man_pages_like_obj_question_mark(kernel):
    _, kc = kernel
    for name, expected in (("greet", "Usage: greet --name <string>"), ("read", "read: read [-ers]"),
                           ("sort", "-n, --numeric-sort")):
        reply, out = run(kc, f"man {name}")
        assert reply["status"] == "ok" and not out
        [page] = reply["payload"]
        assert page["source"] == "page" and expected in page["data"]["text/plain"]


def test_clear_clears_the_cell_output(kernel):
    _, kc = kernel
    reply, out = run(kc, "echo one; clear; echo two")
    assert [k for _, k, _ in out] == ["stream", "clear_output", "stream"]
    assert [c.get("text") for _, k, c in out if k == "stream"] == ["one\n", "two\n"]
    reply, out = run(kc, "clear | cat -v")          # piped, it is the terminal's sequence
    assert streams(out) == "^[[H^[[2J^[[3J" and not [k for _, k, _ in out if k == "clear_output"]


def test_a_cell_may_start_with_line_magics_then_bash(kernel):
    _, kc = kernel
    reply, out = run(kc, "%scripted trace on\ngreet --name Ada\necho done")
    run(kc, "%scripted trace off")
    assert reply["status"] == "ok", reply
    assert streams(out) == "tool trace on\nhello Ada\ndone\n"
    assert any(k == "display_data" and "greet" in c["data"]["text/plain"] for _, k, c in out)


def test_completion_like_a_shell(kernel):
    _, kc = kernel
    run(kc, "mkdir -p /tmp/proj/src && echo x > /tmp/proj/readme.md")

    def matches(code):
        return kc.complete(code, reply=True)["content"]["matches"]
    assert matches("cat /tmp/proj/") == ["/tmp/proj/readme.md", "/tmp/proj/src/"]
    assert matches("cd /tmp/pr") == ["/tmp/proj/"]
    assert "while" in matches("wh") and "function" in matches("fun")
    assert matches("grep --inv") == ["--invert-match"] and "-E" in matches("grep -")
    assert matches("jq --ra") == ["--raw-output"] or "--raw-output" in matches("jq --ra")
    assert matches("help ec") == ["echo"]
    assert matches("%scripted trace on\ngreet --n") == ["--name"]


def test_inspection_covers_builtins_and_text_commands(kernel):
    _, kc = kernel
    for code, expected in (("read -r line", "read: read [-ers]"), ("uniq -c", "-c, --count")):
        content = kc.inspect(code, cursor_pos=2, reply=True)["content"]
        assert content["found"] and expected in content["data"]["text/plain"]


def test_a_tool_exception_shows_its_line_then_its_traceback_in_colour(kernel):
    _, kc = kernel
    run(kc, '%%python\n@tool\ndef lookup(key: str) -> str:\n    """Look up."""\n    return {"a": "1"}[key]')
    reply, out = run(kc, "echo before; lookup --key zzz")
    assert reply["status"] == "error" and reply["evalue"] == "exit status 1"
    err = streams(out, "stderr")
    assert err.startswith("lookup: zzz\n") and "\x1b[" in err             # IPython's colours
    plain = re.sub(r"\x1b\[[0-9;]*m", "", err)
    assert 'return {"a": "1"}[key]' in plain and plain.rstrip().endswith("KeyError: 'zzz'")
    assert "scripted_tool.py" not in plain and "site-packages" not in plain


def test_limits_no_wall_clock_by_default_and_a_set_timeout_names_the_magic(kernel):
    _, kc = kernel
    reply, out = run(kc, "%scripted limits")
    [table] = [c["data"] for _, k, c in out if k == "display_data"]
    assert re.search(r"--timeout\s+none\s+30 s", table["text/plain"])
    run(kc, "%scripted limits --timeout 1")
    try:
        start = time.monotonic()
        reply, out = run(kc, "echo started; sleep 30; echo never")
        assert time.monotonic() - start < 25
    finally:
        run(kc, "%scripted limits --reset")
    assert reply["status"] == "error" and reply["evalue"] == "exit status 124"
    assert streams(out) == "started\n"
    assert "%scripted limits --timeout SECONDS raises it" in "\n".join(reply["traceback"])


def test_every_message_of_a_rich_session_validates(kernel):
    """The validator jupyter_kernel_test uses, over the messages of the cells above."""
    _, kc = kernel
    for code in ("help", "jq -n '{b: 1}'", "man echo", "echo x; clear", "echo a >&2; echo b"):
        kc.execute(code)
        while True:
            msg = kc.get_iopub_msg(timeout=60)
            validate_message(msg, msg["msg_type"])
            if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                break
        reply = kc.get_shell_msg(timeout=60)
        validate_message(reply, "execute_reply")


def test_a_cell_alternating_thousands_of_times_stays_fast_and_short(kernel):
    _, kc = kernel
    start = time.monotonic()
    reply, out = run(kc, "for i in $(seq 3000); do echo o; echo e >&2; done")
    shown = [c for _, k, c in out if k == "stream"]
    assert reply["status"] == "ok" and time.monotonic() - start < 30
    assert "".join(c["text"] for c in shown if c["name"] == "stdout") == "o\n" * 3000
    assert "".join(c["text"] for c in shown if c["name"] == "stderr") == "e\n" * 3000
    assert 501 <= len(shown) < 700        # the first 500 switches in order, then the buffers
