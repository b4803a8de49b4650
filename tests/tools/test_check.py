"""The pre-flight check: what a static read of a script finds, as `line L, col C: message`,
without running anything; and nothing on scripts that are right."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Literal, Optional, TypedDict

import pytest

from scripted_kernel import BashTool, ScriptedTool, tool

ROOT = Path(__file__).resolve().parents[2]


class Order(TypedDict):
    id: int
    total: float


CALLED: list = []


def get_user(id: int, tier: Literal["gold", "silver"] = "gold") -> dict:
    """Fetch a user."""
    CALLED.append(("get_user", id))
    return {"id": id}


def list_orders(user_id: int, status: Optional[Literal["open", "shipped"]] = None, tags: list[str] = ()) -> list:
    """Orders of a user."""
    CALLED.append(("list_orders", user_id))
    return []


def refund(amount: float, reason: str = "", notify: bool = False) -> dict:
    """Refund."""
    CALLED.append(("refund", amount))
    return {}


@pytest.fixture(scope="module")
def api():
    return (ScriptedTool.builder("api").function(tool(get_user, register=False))
            .function(tool(list_orders, register=False)).function(tool(refund, register=False)).build())


BROKEN = [
    ("get_usr --id 1", ["line 1, col 1: unknown command 'get_usr' (did you mean 'get_user'?)"]),
    ("echo hi\n  lsit_orders --user_id 1",
     ["line 2, col 3: unknown command 'lsit_orders' (did you mean 'list_orders'?)"]),
    ("frobnicate", ["line 1, col 1: unknown command 'frobnicate'"]),
    ("get_user --idd 1", ["line 1, col 1: get_user: missing required flag --id (integer)",
                          "line 1, col 10: get_user: unknown flag --idd (did you mean --id?)"]),
    ("get_user", ["line 1, col 1: get_user: missing required flag --id (integer)"]),
    ("get_user --id x", ["line 1, col 10: get_user: --id: expected integer, got 'x'"]),
    ("get_user --id 0x10", ["line 1, col 10: get_user: --id: expected integer, got '0x10'"]),
    ("get_user --id 1 --tier platinum",
     ['line 1, col 17: get_user: --tier: "platinum" is not one of "gold", "silver"']),
    ("get_user --id=1 --tier=bronze", ['line 1, col 17: get_user: --tier: "bronze" is not one of "gold", "silver"']),
    ("list_orders --user_id 2 --status lost",
     ["line 1, col 25: get_user: --status: \"lost\" is not one of \"open\", \"shipped\", null".replace(
         "get_user", "list_orders")]),
    ("refund --amount ten", ["line 1, col 8: refund: --amount: expected number, got 'ten'"]),
    ("refund --amount 5 --notify maybe",
     ["line 1, col 28: refund: expected --flag, got 'maybe' (arguments are passed as --flag value)"]),
    ("refund 5", ["line 1, col 1: refund: missing required flag --amount (number)",
                  "line 1, col 8: refund: expected --flag, got '5' (arguments are passed as --flag value)"]),
    ("for i in 1 2; do\n  get_user --id $i --verbose\ndone",
     ["line 2, col 20: get_user: unknown flag --verbose (known flags: --id, --tier)"]),
    ("x=$(get_user)", ["line 1, col 5: get_user: missing required flag --id (integer)"]),
    ("f() {\n  refund --amount $1 --reason\n}", ["line 2, col 22: refund: --reason: missing value (string)"]),
    # jq's own words after "jq: error: " are libjq's (a newer libjq may say it otherwise)
    ("get_user --id 1 | jq '.name |'", [r"line 1, col 22: jq: error: syntax error, .*unexpected end of file.*"]),
    ("jq -r '.[' <<< '[]'", [r"line 1, col 7: jq: error: syntax error, .*"]),
    ("jq 'map(.x' <<< 1", [r"line 1, col 4: jq: error: syntax error, .*"]),
    ("jq '.a | nosuchfn' <<< 1", [r"line 1, col 4: jq: error: nosuchfn/0 is not defined.*line 1, column 6"]),
    ("jq '$undefined' <<< 1", [r"line 1, col 4: jq: error: \$undefined is not defined.*"]),
    ("if true; then echo; fi fi", ["line 1, col 24: syntax error near unexpected token `fi'"]),
    ("echo $(", ["line 1, col 8: unexpected EOF while looking for matching `)'"]),
    ("case x in a) echo ;; esac esac", ["line 1, col 27: syntax error near unexpected token `esac'"]),
    ("while true; do echo; done done", ["line 1, col 27: syntax error near unexpected token `done'"]),
    ("timeout 5 get_user --nope 1", ["line 1, col 11: get_user: missing required flag --id (integer)",
                                     "line 1, col 20: get_user: unknown flag --nope (known flags: --id, --tier)"]),
    ("printf 1 | xargs get_user --idd", ["line 1, col 27: get_user: unknown flag --idd (did you mean --id?)"]),
    ("command get_user --id one", ["line 1, col 18: get_user: --id: expected integer, got 'one'"]),
    ("get_user --id 1 && refund --amount 1 --notify --reason", [
        "line 1, col 47: refund: --reason: missing value (string)"]),
    ("echo \"$(list_orders --user_id 1 --status=closed)\"",
     ['line 1, col 33: list_orders: --status: "closed" is not one of "open", "shipped", null']),
]


@pytest.mark.parametrize("script,expected", BROKEN)
def test_broken_scripts_point_at_the_problem(api, script, expected):
    CALLED.clear()
    found = [str(d) for d in api.check(script)]
    assert len(found) == len(expected) and all(
        f == e or "jq: error" in e and re.fullmatch(e, f) for f, e in zip(found, expected)), found
    assert CALLED == []                     # nothing ran


@pytest.mark.parametrize("script", [
    'get_user --id "$1" | jq -r .name',                     # a value known only at run time
    'f() { get_user "$@"; }; f --id 2',                     # flags known only at run time
    'args=(--id 1); get_user "${args[@]}"',
    "get_user --json '{\"id\": 1}'",
    "printf '1\\n' | xargs get_user --id",
    "refund --amount 1 --notify false --reason 'late'",
    "refund --amount 1 --no-notify",
    "list_orders --user_id 1 --status null --tags a --tags 'b, c'",
    "jq --arg n 1 '.x == $n' <<< '{}'",
    "get_usr() { echo mine; }; get_usr",                    # a function the script defines
    "command -v get_user; type -t jq; help get_user",
])
def test_right_scripts_have_no_diagnostic(api, script):
    assert api.check(script) == []


def test_example_and_readme_scripts_check_clean(api):
    logic = ScriptedTool.builder("t").build()
    assert logic.check((ROOT / "examples" / "orders.sh").read_text()) == []
    sys.path.insert(0, str(ROOT / "examples"))
    try:
        import ecommerce
    finally:
        sys.path.pop(0)
    assert ecommerce.api.check(ecommerce.DEMO) == []
    readme = (ROOT / "README.md").read_text()
    scripts = re.findall(r"\bexecute\((?:'([^']*)'|\"([^\"]*)\")\)", readme)
    scripts += re.findall(r"run (?:--tools \S+ )?-c '([^']*)'", readme)
    texts = [s for group in scripts for s in (group if isinstance(group, tuple) else (group,)) if s]
    assert len(texts) >= 5
    bash = BashTool()
    for text in texts:
        # README snippets call tools the prose defines: unknown names aside, nothing to report
        tool_for = ecommerce.api if any(n in text for n in ("get_user", "list_orders")) else bash
        assert [str(d) for d in tool_for.check(text) if "unknown command" not in d.message] == [], text


def test_the_command_line_check():
    bad = subprocess.run([sys.executable, "-m", "scripted_kernel", "check", "--tools", "examples/ecommerce.py:api",
                          "-c", "get_user --idd 1"], capture_output=True, text=True, cwd=ROOT)
    assert bad.returncode == 1
    assert bad.stdout.splitlines() == ["line 1, col 1: get_user: missing required flag --id (integer)",
                                       "line 1, col 10: get_user: unknown flag --idd (did you mean --id?)"]
    good = subprocess.run([sys.executable, "-m", "scripted_kernel", "check", "--tools", "examples/ecommerce.py:api",
                           "-c", "get_user --id 1 | jq .name"], capture_output=True, text=True, cwd=ROOT)
    assert (good.returncode, good.stdout) == (0, "")


def test_a_hostile_script_is_checked_in_bounded_time(api):
    deep = "$(" * 5000
    found = api.check(deep)
    assert len(found) == 1 and found[0].line == 1
    many = "get_user --id x\n" * 2000
    assert len(api.check(many)) == 2000
