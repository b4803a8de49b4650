"""The bash oracle starts with default signal dispositions even when the test run ignores
SIGINT (pytest under `nohup`, or as a background job), so `trap` lists only what a script set."""
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_run_bash_resets_ignored_signals_for_the_oracle():
    probe = ("import signal, sys; sys.path.insert(0, sys.argv[1]); "
             "signal.signal(signal.SIGINT, signal.SIG_IGN); signal.signal(signal.SIGQUIT, signal.SIG_IGN); "
             "from support import run_bash; print(repr(run_bash(\"trap 'echo a' INT; trap\")[0]))")
    out = subprocess.run([sys.executable, "-c", probe, str(TESTS)], capture_output=True, text=True,
                         timeout=60).stdout
    assert out.strip() == repr("trap -- 'echo a' SIGINT\n")
    # without the reset, bash inherits the ignored SIGQUIT and lists it
    plain = subprocess.run(["bash", "--norc", "-c", "trap"], capture_output=True, text=True,
                           preexec_fn=lambda: signal.signal(signal.SIGQUIT, signal.SIG_IGN)).stdout
    assert "SIGQUIT" in plain
