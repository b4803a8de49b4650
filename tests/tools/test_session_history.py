"""A BashTool's history: commit, checkout, log, diff, fork, and what the history costs."""
from __future__ import annotations

import pytest

from scripted_kernel import BashTool
from scripted_kernel.base.limits import ExecutionLimits
from scripted_kernel.tools.history import HistoryFull


def test_commit_checkout_log_and_diff():
    tool = BashTool()
    tool.execute("echo one > /tmp/a; x=1; f() { echo f1; }")
    first = tool.commit("first")
    tool.execute("echo two > /tmp/a; echo new > /tmp/b; rm -f /tmp/none; x=2; y=3; unset -f f; cd /tmp")
    second = tool.commit()
    assert [c["id"] for c in tool.log()] == [second, first]
    assert tool.log()[0]["head"] and tool.log()[1]["message"] == "first"

    change = tool.diff(first, second)
    assert change["files"] == {"added": ["/tmp/b"], "removed": [], "changed": ["/tmp/a"]}
    assert change["variables"]["added"] == ["OLDPWD", "y"]
    assert "x" in change["variables"]["changed"] and "PWD" in change["variables"]["changed"]
    assert change["functions"]["removed"] == ["f"]

    assert tool.checkout(first) == first
    assert tool.execute("cat /tmp/a; ls /tmp; echo $x ${y-unset}; f; pwd").stdout == \
        "one\na\n1 unset\nf1\n/home/user\n"
    # the next commit follows the checked-out one; a prefix and a number name commits
    tool.execute("echo three > /tmp/c")
    third = tool.commit("branch")
    assert tool.history.find(third).parent == first
    assert tool.checkout(second[:8]) == second and tool.execute("cat /tmp/b").stdout == "new\n"
    assert tool.checkout(0) == first
    # diff against the session as it is now
    tool.execute("echo changed > /tmp/a")
    assert tool.diff(first)["files"]["changed"] == ["/tmp/a"]
    with pytest.raises(KeyError):
        tool.checkout("ffffffff")


def test_fork_from_a_commit():
    tool = BashTool()
    tool.execute("echo v1 > /tmp/f; n=1")
    first = tool.commit()
    tool.execute("echo v2 > /tmp/f; n=2")
    tool.commit()
    fork = BashTool.builder().from_snapshot(tool.snapshot(at=first)).build()
    assert fork.execute("cat /tmp/f; echo $n").stdout == "v1\n1\n"
    assert tool.execute("cat /tmp/f; echo $n").stdout == "v2\n2\n"


def test_a_hundred_commits_of_a_10_mb_file_cost_about_10_mb():
    tool = BashTool()
    tool.execute("seq 1500000 > /tmp/big; wc -c < /tmp/big")
    size = tool.filesystem.used_bytes
    assert size > 10_000_000
    for i in range(100):
        tool.execute(f"echo {i} > /tmp/counter; v{i % 5}=$RANDOM")
        tool.commit(f"turn {i}")
    used = tool.history.used_bytes
    print(f"100 commits of a {size:,}-byte session keep {used:,} bytes")
    assert size < used < size * 1.1
    assert len(tool.log()) == 100
    assert tool.kept_bytes() >= used + size


def test_history_counts_against_its_budget_and_prunes():
    tool = BashTool.builder().max_history_bytes(400_000).build()
    for i in range(3):
        tool.execute(f"seq {i * 100000} {i * 100000 + 15000} > /tmp/f{i}")
        tool.commit()
    with pytest.raises(HistoryFull, match="history full"):
        for i in range(3, 30):
            tool.execute(f"seq {i * 100000} {i * 100000 + 15000} > /tmp/f{i}")
            tool.commit()
    before = tool.history.used_bytes
    freed = tool.prune(keep=1)
    assert freed > 0 and tool.history.used_bytes == before - freed and len(tool.log()) == 1
    tool.execute("rm /tmp/f*")
    tool.commit("after prune")


def test_default_history_budget_follows_the_limits():
    tool = BashTool(limits=ExecutionLimits(max_fs_bytes=1000, max_shell_state_bytes=50_000))
    assert tool.history.max_bytes == 51_000
