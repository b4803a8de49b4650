"""The reproducers of the reliability issue: each ends with a named limit error or bash's own
answer, the host alive and the next execution correct.

The tests check outcomes only (a loaded machine must not fail them): a case that expects the
deadline runs with a 3 s clock, every other case with a clock no machine reaches, so that the
answer or the limit it expects, never the clock, ends it. How long each took and
how much memory the process held are a measurement, printed by running this file:
    python tests/hardening/test_survival.py [TIMEOUT_SECONDS]
"""
import sys

import pytest

from scripted_kernel import ExecutionLimits, ScriptedTool

A62 = "a" * 62
TIMEOUT = 3.0

# script -> the `error` the response must carry (None: bash's answer, exit status as shown)
REPRODUCERS = {
    # libjq failing an allocation (abort() in process) or running away
    "jq -n '.[100000000]=1'": ("status", 5),
    "jq -n 'setpath([300000000];1)'": ("status", 5),
    "jq -n '\"x\"*100000000|explode|length'": ("status", 5),
    "jq -n '\"x\"*100000|gsub(\"\";\"y\")|length'": ("error", "timeout"),
    # the values' memory bound, reached after ~3.3 s of CPU (on the 3 s clock, a race)
    "jq -n '[\"x\"*30000000|explode|foreach .[] as $c (0; .+1)]|length'": ("status", 5),
    "jq -n 'def f: f; f'": ("error", "timeout"),
    # loops that used to ignore the clock
    "printf '%.0s' {1..100000}; echo done": ("stdout", "done\n"),
    # extglob bombs: bash's answer (the matcher is polynomial; bash itself never answers)
    f"shopt -s extglob; s={A62}; case $s in +(a|aa)+(a|aa)b) echo m;; esac; echo no": ("stdout", "no\n"),
    f"shopt -s extglob; s={A62[:38]}; [[ $s == +(a|aa)+(a|aa)b ]]": ("status", 1),
    f"shopt -s extglob; x={A62}{A62}; y=${{x//+(a|aa)b/}}; echo ${{#y}}": ("stdout", "124\n"),
    "shopt -s extglob; x=$(printf 'a%.0s' {1..100000}); y=${x//@(a)/b}; echo ${#y} ${y:0:3}":
        ("stdout", "100000 bbb\n"),
    "echo $(( $(printf '(%.0s' {1..100000}) 1 ))": ("status", 1),
    "awk 'BEGIN { while (1) x++ }'": ("error", "timeout"),
    "echo a | sed ':a;ba'": ("error", "timeout"),
    "echo x | sed ':a;s/.*/&&/;ta'": ("error", "limit:max_string_length"),
    # memory
    "x=$(printf '%8000000s'); x=$x$x; for i in {1..300}; do a[i]=$x$i; done":
        ("error", "limit:max_memory_bytes"),
    "x=$(printf '%1000000s'); while :; do echo \"$x\"; done | head -c 10":
        ("error", "limit:max_memory_bytes"),
    "x='a b c d e f g h'; y=${x// /$x}; y=${y// /$y}; y=${y// /$y}; y=${y// /$y}":
        ("error", "limit:max_string_length"),
    "awk 'BEGIN { x = sprintf(\"%3000000000s\", \"\"); print length(x) }'": ("error", "limit:max_string_length"),
    "awk 'BEGIN { s = \"ab\"; for (i = 0; i < 40; i++) s = s s; print length(s) }'":
        ("error", "limit:max_string_length"),
    "awk 'BEGIN { printf \"%*d\", 3e9, 1 }'": ("error", "limit:max_string_length"),
    "echo a | awk '{ NF = 1e9; print length($0) }'": ("error", "limit:max_array_length"),
    "echo abc | tr abc '[x*2000000000]'": ("stdout", "xxx\n"),
    "echo a | nl -w 2000000000": ("status", 1),
    "printf '%.1000000000f' 1 | wc -c": ("error", "limit:max_string_length"),
    # what used to be internal errors
    "date -d @0d; echo next": ("stdout", "next\n"),
    "set -- a b; x=${u:-{\"$@\"}; echo \"$x\"": ("stdout", "{a b\n"),
    "awk 'BEGIN { printf \"%c\", 1114112 }' | wc -c": ("stdout", "1\n"),
    "awk 'BEGIN { é = 1 }'; echo status=$?": ("stdout", "status=2\n"),
    "echo x | sed 'bnope'; echo status=$?": ("stdout", "status=1\n"),
    "declare x=1 | cat; export y=2 | cat; echo next": ("stdout", "next\n"),
}


@pytest.fixture(scope="module")
def tools():
    """(the tool with the 3 s clock, the tool with a clock no machine reaches)"""
    return tuple(ScriptedTool.builder("survival").limits(ExecutionLimits(timeout_seconds=seconds)).build()
                 for seconds in (TIMEOUT, 300))


@pytest.mark.parametrize("script", list(REPRODUCERS), ids=lambda s: s[:60])
def test_reproducer_ends_cleanly(tools, script):
    field, expected = REPRODUCERS[script]
    tool = tools[0] if (field, expected) == ("error", "timeout") else tools[1]
    r = tool.execute(script)
    actual = {"error": r.error, "stdout": r.stdout, "status": r.exit_code}[field]
    assert actual == expected, (r.exit_code, r.error, r.stdout[:200], r.stderr[-300:])
    assert "internal error" not in r.stderr and "Traceback" not in r.stderr
    assert tool.execute("echo alive; echo $((6*7))").stdout == "alive\n42\n"


def _report(timeout: float):
    import resource
    import time
    tool = ScriptedTool.builder("survival").limits(ExecutionLimits(timeout_seconds=timeout)).build()
    print(f"timeout_seconds={timeout:g}; seconds, peak RSS of this process, outcome")
    for script in REPRODUCERS:
        start = time.monotonic()
        r = tool.execute(script)
        elapsed = time.monotonic() - start
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
        late = "  LATE" if elapsed > timeout + 0.5 else ""
        print(f"{elapsed:6.2f} s {peak:5d} MB  {r.error or r.exit_code!s:28}  {script[:70]}{late}")


if __name__ == "__main__":
    _report(float(sys.argv[1]) if len(sys.argv) > 1 else TIMEOUT)
