"""The IPython extension in an InteractiveShell (terminal IPython has no kernel: text only)."""
import pytest

IPython = pytest.importorskip("IPython")

from scripted_kernel import ScriptedTool, ToolDef  # noqa: E402
from scripted_magic.magics import shell_state  # noqa: E402


def test_cell_magic_runs_scripts_against_tool_functions(ip, capsys):
    result = ip.run_cell("%%scripted\ndouble --x 21 | jq '. + 1'")
    assert result.success and capsys.readouterr().out == "43\n"


def test_non_zero_status_fails_the_cell_unless_no_raise(ip, capsys):
    result = ip.run_cell("%%scripted\necho before; exit 4")
    assert not result.success and type(result.error_in_exec).__name__ == "ScriptError"
    assert str(result.error_in_exec) == "exit status 4"
    assert ip.run_cell("%%scripted --no-raise\nexit 4").success


def test_out_stores_stdout_as_a_string_and_result_the_result_object(ip, capsys):
    ip.run_cell("%%scripted --out text --result res\ndouble --x 5; echo warn >&2")
    assert ip.user_ns["text"] == "10\n"                 # as %%bash --out: the string
    res = ip.user_ns["res"]
    assert (res.stdout, res.stderr, res.exit_code, res.error) == ("10\n", "warn\n", 0, "")
    assert [e.name for e in res.trace] == ["double"]
    assert capsys.readouterr() == ("", "warn\n")         # stdout stored, not shown; stderr shown


def test_json_parses_stdout(ip):
    ip.run_cell("%%scripted --json --out data\necho '{\"a\": [1, 2]}'")
    assert ip.user_ns["data"] == {"a": [1, 2]}


def test_env_passes_literals_and_python_variables(ip, capsys):
    ip.run_cell("who = 'Ada'")
    ip.run_cell('%%scripted --env GREETING=hi --env NAME=$who\necho "$GREETING $NAME"')
    assert capsys.readouterr().out.endswith("hi Ada\n")


def test_named_scripted_tool(ip, capsys):
    ip.user_ns["api"] = ScriptedTool.builder("api").tool(ToolDef("ping", "pong"), lambda a: "pong\n").build()
    assert ip.run_cell("%%scripted api\nping").success
    assert capsys.readouterr().out.endswith("pong\n")
    assert not ip.run_cell("%%scripted nothing_here\nping").success


def test_line_magics_help_and_prompt_in_text(ip, capsys):
    ip.run_line_magic("scripted", "help")
    assert "double  Double a number." in capsys.readouterr().out
    ip.run_line_magic("scripted", "prompt")
    assert "- `double`: Double a number." in capsys.readouterr().out


def test_magic_help_text(ip):
    from scripted_magic.magics import ScriptedMagics
    assert "--out VAR" in ScriptedMagics.scripted_cell.__doc__ or "--out" in ip.find_cell_magic("scripted").__doc__


def test_files_carry_over_between_cells_and_can_be_mounted_and_reset(ip, capsys, tmp_path):
    (tmp_path / "input.csv").write_text("a,1\nb,2\n")
    assert ip.run_cell("%%scripted\necho staged > /tmp/stage.txt").success
    assert ip.run_cell("%%scripted\ncat /tmp/stage.txt").success
    assert capsys.readouterr().out == "staged\n"
    ip.run_line_magic("scripted", f"mount {tmp_path} /data")
    assert ip.run_cell("%%scripted\ncut -d, -f2 /data/input.csv; echo x > /data/new || echo read-only").success
    assert capsys.readouterr().out.endswith("1\n2\nread-only\n")
    ip.run_line_magic("scripted", "files")
    listing = capsys.readouterr().out
    assert "/tmp/stage.txt  7 B" in listing and "/data/input.csv" in listing
    ip.run_line_magic("scripted", "fs reset")
    assert not ip.run_cell("%%scripted\ncat /tmp/stage.txt").success


def test_misuse_is_one_line_without_a_traceback(ip, capsys):
    result = ip.run_cell("%%scripted nosuchtool\necho hi")
    assert not result.success and type(result.error_in_exec).__name__ == "MagicUsageError"
    result = ip.run_cell("%%scripted --json\necho not json")
    assert not result.success and "the output is not JSON" in str(result.error_in_exec)
    shown = capsys.readouterr()
    text = shown.out + shown.err
    assert "Traceback" not in text and "magics.py" not in text
    assert "MagicUsageError: nosuchtool is not a ScriptedTool in the namespace" in text


def test_held_json_looking_stdout_is_released_as_text_once_the_hold_ends(capsys):
    from scripted_magic.magics import _CellOutput
    output = _CellOutput("json")
    output.write("stdout", '{"a":\n')
    assert capsys.readouterr().out == ""                 # could still be one JSON document
    output._release()                                    # what the hold timer does
    output.write("stdout", "1}\n")
    assert capsys.readouterr().out == '{"a":\n1}\n' and output.finish() is None
    output = _CellOutput("json")
    output.write("stdout", "  \n")
    output.write("stdout", "plain text\n")               # not JSON: streams at once
    assert capsys.readouterr().out == "  \nplain text\n" and output.finish() is None
    output = _CellOutput("json")
    output.write("stdout", "[1]\n")
    output.write("stderr", "note\n")                     # stderr is never held
    assert capsys.readouterr() == ("", "note\n") and output.finish() == "[1]\n"


def test_terminal_json_option_makes_the_pretty_form_the_cells_result(ip, capsys):
    result = ip.run_cell("%%scripted --json\necho '{\"a\": [1]}'")
    assert result.success and result.result == {"a": [1]} and result.result["a"] == [1]
    assert capsys.readouterr().out.endswith('{\n  "a": [\n    1\n  ]\n}\n')


def test_a_cell_printing_one_json_document_returns_it_only_in_a_kernel(ip, capsys):
    # terminal IPython streams stdout as it comes: the text, no Out[n]
    result = ip.run_cell("%%scripted\necho '{\"b\": 1, \"a\": 2}'")
    assert result.result is None and capsys.readouterr().out == '{"b": 1, "a": 2}\n'


def test_help_and_question_mark_show_the_real_usage(ip, capsys):
    assert ip.run_cell("%%scripted --help\necho not run").success
    out = capsys.readouterr().out
    assert out.lstrip(":\n ").startswith("%%scripted [-h] [--trace] [--out VAR] [--result VAR]")
    assert "not run" not in out and "%scripted_cell" not in out
    ip.run_cell("%%scripted?")
    out = capsys.readouterr().out
    assert "%%scripted [-h]" in out and "%scripted_cell" not in out


def test_limits_are_the_notebooks_and_can_be_shown_and_set(ip, capsys):
    from scripted_kernel.base.limits import ExecutionLimits
    limits = shell_state(ip).tools.tool.limits
    assert limits.timeout_seconds == 0                              # no wall clock: interrupt instead
    assert limits.max_commands > ExecutionLimits().max_commands
    assert shell_state(ip).fs.limits is limits                      # the session's files share them
    ip.run_line_magic("scripted", "limits")
    table = capsys.readouterr().out
    assert "--timeout              none" in table and "30 s" in table and "--max-output           64 MiB" in table
    try:
        ip.run_line_magic("scripted", "limits --timeout 300 --max-output 50M --max-commands 100")
        assert (limits.timeout_seconds, limits.max_output_bytes, limits.max_commands) == (300, 50 << 20, 100)
        capsys.readouterr()
        result = ip.run_cell("%%scripted\nfor i in $(seq 200); do :; done")
        assert type(result.error_in_exec).__name__ == "ScriptError"
        assert "max_commands" in capsys.readouterr().err
        assert "%scripted limits --max-commands N raises it" in "\n".join(result.error_in_exec._render_traceback_())
        bad = ip.run_cell("%scripted limits --max-commands lots")
        assert "--max-commands expects a whole number" in str(bad.error_in_exec)
    finally:
        ip.run_line_magic("scripted", "limits --reset")
    assert limits.timeout_seconds == 0 and limits.max_commands == 100_000_000
    assert ExecutionLimits().timeout_seconds == 30                  # the library's defaults stay


def test_timeout_set_for_the_session_stops_a_cell_and_names_the_magic(ip, capsys):
    ip.run_line_magic("scripted", "limits --timeout 1")
    try:
        result = ip.run_cell("%%scripted\necho started; sleep 20; echo never")
    finally:
        ip.run_line_magic("scripted", "limits --reset")
    error = result.error_in_exec
    assert type(error).__name__ == "ScriptError" and error.status == 124
    assert "timeout_seconds" in error.hint and "%scripted limits --timeout SECONDS" in error.hint
    assert "never" not in capsys.readouterr().out


BROKEN_TOOL = '''
@tool
def lookup(key: str) -> str:
    """Look a key up."""
    table = {"a": "1"}
    return table[key]
'''


def test_a_failing_tool_shows_its_message_then_its_own_traceback(ip, capsys):
    ip.run_cell(BROKEN_TOOL)
    capsys.readouterr()
    result = ip.run_cell("%%scripted\nlookup --key zzz")
    assert not result.success
    err = capsys.readouterr().err
    line, _, rest = err.partition("\n")
    assert line == "lookup: zzz"                                 # the script's stderr line first
    assert "KeyError" in rest and "return table[key]" in rest    # then the user's frame
    assert "scripted_tool.py" not in rest and "definitions.py" not in rest and "threading" not in rest
    r = ip.run_cell("%%scripted --result res\nlookup --key zzz 2>/dev/null; echo after")
    assert r.success and "KeyError" in capsys.readouterr().err     # shown though stderr went away
    assert ip.user_ns["res"].stderr == ""                        # and it is not the script's stderr
    ip.run_line_magic("scripted", "sanitize on")
    try:
        capsys.readouterr()
        ip.run_cell("%%scripted\nlookup --key zzz")
        assert capsys.readouterr().err == "lookup: zzz\n"         # what a model sees
    finally:
        ip.run_line_magic("scripted", "sanitize off")


def test_clear_prints_the_terminals_clear_sequence(ip, capsys):
    assert ip.run_cell("%%scripted\necho a; clear; echo b").success
    assert capsys.readouterr().out == "a\n\x1b[H\x1b[2J\x1b[3Jb\n"


def test_man_pages_a_builtin_a_tool_and_a_text_command(ip, capsys):
    for name, expected in (("echo", "echo: echo [-neE] [arg ...]"), ("double", "Usage: double --x <integer>"),
                           ("grep", "Usage: grep [OPTION]... PATTERNS [FILE]...")):
        assert ip.run_cell(f"%%scripted\nman {name}").success
        assert expected in capsys.readouterr().out
    result = ip.run_cell("%%scripted\nman nosuch")
    assert result.error_in_exec.status == 16 and capsys.readouterr().err == "No manual entry for nosuch\n"


def test_loading_never_overwrites_a_users_tool_or_tools_variable():
    import subprocess
    import sys
    code = "\n".join(["tool = 'mine'", "tools = ['mine']", "%load_ext scripted_magic",
                      "print('after:', tool, tools)",
                      "from scripted_kernel import tool as t",
                      "%load_ext scripted_magic"])
    p = subprocess.run([sys.executable, "-m", "IPython", "--colors=NoColor", "-c", code],
                       capture_output=True, text=True, timeout=120)
    assert "after: mine ['mine']" in p.stdout, p.stdout + p.stderr
    assert "kept your `tool` and `tools`" in p.stderr and "from scripted_kernel import tool" in p.stderr




def test_failing_cell_names_the_status_without_repeating_stderr_or_raw_colour(ip, capsys):
    ip.colors = "NoColor"
    try:
        assert not ip.run_cell("%%scripted\necho bad >&2; exit 3").success
    finally:
        ip.colors = "Neutral"
    shown = capsys.readouterr()
    assert (shown.out + shown.err).count("bad") == 1
    assert "ScriptError: exit status 3" in shown.out + shown.err and "\x1b[" not in shown.out + shown.err


def test_bad_env_option_is_a_usage_error(ip, capsys):
    result = ip.run_cell("%%scripted --env NOEQUALS\necho hi")
    assert type(result.error_in_exec).__name__ == "MagicUsageError"
    assert "--env expects NAME=VALUE, got 'NOEQUALS'" in str(result.error_in_exec)


def test_session_carries_variables_functions_and_directory_until_turned_off(ip, capsys):
    ip.run_line_magic("scripted", "session on")
    try:
        assert ip.run_cell("%%scripted\nx=41; f() { echo $((x + 1)); }; mkdir -p /tmp/w && cd /tmp/w").success
        assert ip.run_cell("%%scripted\nf; pwd").success
        assert capsys.readouterr().out.endswith("42\n/tmp/w\n")
    finally:
        ip.run_line_magic("scripted", "session off")
    assert ip.run_cell('%%scripted\necho "[${x:-}]"; type -t f || echo none; pwd').success
    assert capsys.readouterr().out.endswith("[]\nnone\n/home/user\n")
    assert type(ip.run_cell("%scripted session maybe").error_in_exec).__name__ == "MagicUsageError"


def test_parameters_cells_reach_every_later_cell(ip, capsys):
    assert ip.run_cell("%%scripted\n# Parameters\ncount=2\nnames=(a b)").success
    assert ip.run_cell("%%scripted\n# parameters\ncount=3").success       # papermill's, injected later
    assert ip.run_cell('%%scripted\nseq $count; echo "${names[@]}"; count=9').success
    assert ip.run_cell("%%scripted\necho $count").success                  # a later cell: still 3
    assert capsys.readouterr().out.endswith("1\n2\n3\na b\n3\n")
    shell_state(ip).tools.tool.parameters.clear()


def test_terminal_ipython_piped_shows_plain_one_line_errors():
    import subprocess
    import sys
    cells = ["echo bad >&2; exit 3", "%%scripted nosuchtool\necho hi", "%%scripted --json\necho not json"]
    code = "; ".join(["get_ipython().run_line_magic('load_ext', 'scripted_magic')"] +
                     [f"get_ipython().run_cell({('%%scripted' + chr(10) + c) if not c.startswith('%') else c!r})"
                      for c in cells])
    p = subprocess.run([sys.executable, "-m", "IPython", "--colors=Neutral", "-c", code],
                       capture_output=True, text=True, timeout=120)
    shown = p.stdout + p.stderr
    assert "\x1b[" not in shown and "Traceback" not in shown
    assert shown.count("bad") == 1 and "ScriptError: exit status 3" in shown
    assert "MagicUsageError: nosuchtool is not a ScriptedTool in the namespace" in shown
    assert "not json\n" in shown and "MagicUsageError: --json: the output is not JSON" in shown


def test_terminal_ipython_shows_a_tools_traceback_after_its_line():
    import subprocess
    import sys
    code = "\n".join(["%load_ext scripted_magic",
                      "@tool",
                      "def lookup(key: str) -> str:",
                      "    '''Look a key up.'''",
                      "    return {'a': '1'}[key]",
                      "",
                      "get_ipython().run_cell('%%scripted\\nlookup --key zzz')"])
    p = subprocess.run([sys.executable, "-m", "IPython", "--colors=Neutral", "-c", code],
                       capture_output=True, text=True, timeout=120)
    shown = p.stdout + p.stderr
    assert "\x1b[" not in shown                                   # piped: no colours
    line = shown.index("lookup: zzz")
    assert line < shown.index("return {'a': '1'}[key]") < shown.index("KeyError: 'zzz'")
    assert "scripted_tool.py" not in shown and "ScriptError: exit status 1" in shown


def test_a_notebook_tool_whose_result_has_the_wrong_shape_fails_at_once(ip, capsys):
    ip.run_cell('''
from typing import TypedDict
from scripted_kernel import tool

class Point(TypedDict):
    x: int
    y: int

@tool
def wrong_point() -> Point:
    """A point, wrongly."""
    return {"x": 1, "y": "two"}
''')
    result = ip.run_cell("%%scripted --no-raise\nwrong_point; echo status=$?")
    out, err = capsys.readouterr()
    assert result.success and "status=1" in out
    assert "wrong_point: the result does not match its output schema: $.y: " in err
