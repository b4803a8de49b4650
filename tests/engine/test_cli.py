"""`python -m scripted_kernel run` as a user runs it: a real subprocess."""
import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def cli(*args, stdin=""):
    return subprocess.run([sys.executable, "-m", "scripted_kernel", *args], input=stdin,
                          capture_output=True, text=True, timeout=60)


def test_run_dash_c_prints_and_exits_with_the_status():
    p = cli("run", "-c", "echo out; echo err >&2; exit 3")
    assert (p.stdout, p.stderr, p.returncode) == ("out\n", "err\n", 3)


def test_run_file_and_stdin_script():
    p = cli("run", str(EXAMPLES / "orders.sh"))
    assert p.returncode == 0 and "Total: 83.75" in p.stdout
    p = cli("run", "-", stdin="echo from-stdin")
    assert p.stdout == "from-stdin\n"


def test_script_reads_the_process_stdin():
    p = cli("run", "-c", "tr a-z A-Z", stdin="shout\n")
    assert p.stdout == "SHOUT\n"


def test_syntax_error_exits_2_without_traceback():
    p = cli("run", "-c", "if then")
    assert p.returncode == 2 and "syntax error" in p.stderr and "Traceback" not in p.stderr


def test_missing_file():
    p = cli("run", "/nonexistent/script.sh")
    assert p.returncode == 127 and "No such file" in p.stderr


def test_run_with_a_scratch_filesystem():
    script = "echo staged > /tmp/a; cat /tmp/a"
    p = cli("run", "--fs", "scratch", "-c", script)
    assert (p.stdout, p.returncode) == ("staged\n", 0)
    p = cli("run", "-c", script)
    assert p.returncode == 1 and "disabled in logic mode" in p.stderr


def test_help_names_every_command():
    p = cli("--help")
    assert p.returncode == 0
    for command in ("run", "prompt", "catalog", "notebook", "mcp", "install"):
        assert command in p.stdout.split("{", 1)[1].split("}", 1)[0].split(",")
    assert "SCRIPTED_KERNEL_STUB=1" in cli("catalog", "--help").stdout.replace("\n", " ").replace("  ", " ")
