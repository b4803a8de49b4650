"""Extglob patterns that make a backtracking matcher (bash's own included) run for ages answer
at once, with bash's answer: the matcher's work is counted in steps (a step is one pattern
item applied to a set of positions) and bounded, so a loaded machine cannot fail these tests.
What is still long (a large value) ends at the deadline, not later."""
import pytest
from scripted_kernel import ExecutionLimits, ScriptedTool
from scripted_kernel.base import extglob, limits, patterns

A62 = "a" * 62

# script -> bash's output; each ran past a 3 s deadline (13-15 s on a loaded machine)
BOMBS = {
    f"shopt -s extglob; s={A62}; case $s in +(a|aa)+(a|aa)b) echo m;; *) echo no;; esac": "no\n",
    f"shopt -s extglob; s={A62}; [[ $s == +(a|aa)+(a|aa)b ]]; echo $?": "1\n",
    f"shopt -s extglob; x={A62}{A62}; y=${{x//+(a|aa)b/}}; echo ${{#y}}": "124\n",
    f"shopt -s extglob; x={A62}; y=${{x#+(a|aa)+(a|aa)b}}; z=${{x%%+(a|aa)b}}; echo ${{#y}} ${{#z}}":
        "62 62\n",
    f"shopt -s extglob; x={A62}b; y=${{x##+(a|aa)+(a|aa)b}}; echo \"[$y]\" ${{x/+(a|aa)+(a|aa)b/X}}":
        "[] X\n",
    # nested repetitions and negations
    f"shopt -s extglob; s={A62 * 4}; [[ $s == +(+(a|aa)|*(aa|a))+(a|aa)c ]] || echo no": "no\n",
    f"shopt -s extglob; s={A62 * 4}; [[ $s == !(!(a|aa)|+(a))b ]] || echo no": "no\n",
    f"shopt -s extglob; s={A62 * 4}; [[ $s == *(a|aa|aaa)*(a|aa)*(b|a)c ]] || echo no": "no\n",
    # many `*`s: exponential in their number for a backtracking regex
    f"s={A62 * 8}; [[ $s == *a*a*a*a*a*a*a*a*a*a*b ]] || echo no; echo ${{#s}} ${{s%%*a*a*a*a*b}}":
        f"no\n{62 * 8} {A62 * 8}\n",
}


@pytest.fixture(scope="module")
def tool():
    return ScriptedTool.builder("bombs").limits(ExecutionLimits(timeout_seconds=3)).build()


@pytest.mark.parametrize("script", list(BOMBS), ids=lambda s: s[17:75])
def test_bomb_answers_as_bash(tool, script):
    r = tool.execute(script)
    assert (r.error, r.stdout) == (None, BOMBS[script]), r.stderr[-300:]
    assert tool.execute("echo alive").stdout == "alive\n"


@pytest.fixture
def steps(monkeypatch):
    """The number of matcher steps taken since the fixture started."""
    counted = [0]
    tick = extglob.Matching.tick

    def counting(run):
        counted[0] += 1
        tick(run)
    monkeypatch.setattr(extglob.Matching, "tick", counting)
    previous = limits.activate(limits.Budget(limits.ExecutionLimits(timeout_seconds=600),
                                             limits.CancelToken()))
    yield counted
    limits.activate(previous)


@pytest.mark.parametrize("pattern,length,bound", [
    ("+(a|aa)+(a|aa)b", 62, 200),
    ("+(a|aa)+(a|aa)b", 2000, 5000),
    ("+(+(a|aa)|+(aa|a))b", 2000, 10_000),
    ("*(a|aa|aaa)*(a|aa)*(b|a)c", 2000, 5000),
    ("!(!(a|aa)|+(a))b", 300, 1000),
    ("*!(a)*!(b)*!(c)d", 2000, 15_000),
])
def test_matching_steps_grow_with_the_text_not_exponentially(steps, pattern, length, bound):
    patterns.glob_match(pattern, "a" * length)
    assert 0 < steps[0] <= bound


@pytest.mark.parametrize("operation", ["#", "##", "%", "%%", "/", "//", "/#", "/%"])
def test_removal_and_replacement_steps_are_bounded(steps, operation):
    """Each form finds its match with a few runs of the matcher, not one per place."""
    text = "a" * 124
    if operation[0] == "#":
        patterns.remove_prefix(text, "+(a|aa)+(a|aa)b", operation == "##")
    elif operation[0] == "%":
        patterns.remove_suffix(text, "+(a|aa)+(a|aa)b", operation == "%%")
    else:
        patterns.replace(text, "+(a|aa)b", lambda m: "", operation)
    assert 0 < steps[0] <= 2000


def test_a_long_replacement_ends_at_the_deadline():
    """Polynomial is not free: a large value still ends at the clock, as the matcher looks
    at it every 1024 steps."""
    tool = ScriptedTool.builder("slow").limits(ExecutionLimits(timeout_seconds=1)).build()
    r = tool.execute("shopt -s extglob; printf -v x '%*s' 200000 ''; x=${x// /ab}; "
                     "y=${x//*(a|b)x/}; echo never")
    assert r.error == "timeout" and r.stdout == ""
    assert tool.execute("echo alive").stdout == "alive\n"
