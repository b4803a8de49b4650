"""The IPython extension in an InteractiveShell (terminal IPython has no kernel: text only)."""
import pytest

IPython = pytest.importorskip("IPython")
from IPython.testing.globalipapp import start_ipython  # noqa: E402

from scripted_kernel import ScriptedTool, ToolDef  # noqa: E402
from scripted_kernel.tools.definitions import REGISTRY  # noqa: E402
from scripted_magic.magics import shell_state  # noqa: E402


_SHELL = []


@pytest.fixture
def ip():
    if not _SHELL:
        _SHELL.append(start_ipython())     # IPython's test shell: a singleton, started once
    shell = _SHELL[0]
    shell.run_line_magic("load_ext", "scripted_magic")
    REGISTRY.clear()
    shell.run_cell('''
@tool
def double(x: int) -> int:
    """Double a number."""
    return 2 * x
''')
    yield shell
    REGISTRY.clear()


def test_cell_magic_runs_scripts_against_tool_functions(ip, capsys):
    result = ip.run_cell("%%scripted\ndouble --x 21 | jq '. + 1'")
    assert result.success and capsys.readouterr().out == "43\n"


def test_non_zero_status_fails_the_cell_unless_no_raise(ip, capsys):
    result = ip.run_cell("%%scripted\necho before; exit 4")
    assert not result.success and type(result.error_in_exec).__name__ == "ScriptError"
    assert str(result.error_in_exec) == "exit status 4"
    assert ip.run_cell("%%scripted --no-raise\nexit 4").success


def test_out_stores_a_result_object(ip):
    ip.run_cell("%%scripted --out res\ndouble --x 5; echo warn >&2")
    res = ip.user_ns["res"]
    assert (res.stdout, res.stderr, res.exit_code) == ("10\n", "warn\n", 0)
    assert [e.name for e in res.trace] == ["double"]


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


def test_terminal_json_option_prints_the_pretty_form_only(ip, capsys):
    assert ip.run_cell("%%scripted --json\necho '{\"a\": [1]}'").success
    assert capsys.readouterr().out == '{\n  "a": [\n    1\n  ]\n}\n'


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
