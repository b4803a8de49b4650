"""Approvals that wait: a before_tool hook pauses a run, and the run resumes later, in another
process, from its continuation; a resumed run's output equals that of a run approved at once,
and nothing it already did is done again. Rollback undoes what ran, newest first."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from scripted_kernel import BashTool, ContinuationError, Pause, ScriptedTool, tool

KEY = b"k" * 32
SCRIPT = """echo "start $RANDOM $((RANDOM % 7))"
total=$(get_order --id 7 | jq .total)
refund --amount "$total" | jq -c .
notify --text "refunded $total"
echo "end $(date +%Y)"
"""

# the module a subprocess imports to build the same tool (a fresh process: nothing shared)
TOOL_MODULE = textwrap.dedent('''
    import json, sys
    from scripted_kernel import Pause, ScriptedTool, tool
    CALLS = []

    def get_order(id: int) -> dict:
        """An order."""
        CALLS.append(["get_order", id])
        return {"id": id, "total": 12.5}

    def refund(amount: float) -> dict:
        """Refund an amount."""
        CALLS.append(["refund", amount])
        return {"refunded": amount}

    def notify(text: str) -> str:
        """Notify."""
        CALLS.append(["notify", text])
        return "sent\\n"

    def build(pause=True):
        hook = (lambda call: Pause("refunds need approval") if call.name == "refund" else None) if pause \\
            else (lambda call: None)
        return (ScriptedTool.builder("api").continuation_key(b"k" * 32)
                .function(tool(get_order, register=False)).function(tool(refund, register=False))
                .function(tool(notify, register=False)).before_tool(hook).build())
''')


@pytest.fixture
def module(tmp_path, monkeypatch):
    (tmp_path / "refunds.py").write_text(TOOL_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("refunds", None)
    import refunds
    yield refunds
    sys.modules.pop("refunds", None)


def _resume_elsewhere(tmp_path: Path, continuation: bytes, decision: str) -> dict:
    """Resume in a new Python process; its result and the callbacks it called."""
    (tmp_path / "paused.bin").write_bytes(continuation)
    code = textwrap.dedent(f'''
        import json, sys
        sys.path.insert(0, {str(tmp_path)!r})
        from scripted_kernel import Deny
        import refunds
        decision = json.loads({decision!r})
        decision = Deny(decision["deny"]) if isinstance(decision, dict) and "deny" in decision else decision
        r = refunds.build().resume(open({str(tmp_path / "paused.bin")!r}, "rb").read(), decision)
        print(json.dumps({{"stdout": r.stdout, "stderr": r.stderr, "exit": r.exit_code, "status": r.status,
                          "calls": refunds.CALLS}}))
    ''')
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_pause_before_the_second_call_and_nothing_after_it_runs(module):
    r = module.build().execute(SCRIPT)
    assert (r.status, r.exit_code, r.error) == ("paused", 148, "paused")
    assert r.stdout.startswith("start ") and "end" not in r.stdout
    assert r.stderr == "bash: paused before refund: refunds need approval\n"
    assert (r.pending.name, r.pending.params) == ("refund", {"amount": 12.5})
    assert module.CALLS == [["get_order", 7]]
    assert [(e.name, e.status) for e in r.trace] == [("get_order", "done")]


@pytest.mark.parametrize("decision,expected_calls", [
    ('"allow"', [["refund", 12.5], ["notify", "refunded 12.5"]]),
    ('{"deny": "not today"}', [["notify", "refunded 12.5"]]),
    ('{"amount": 5}', [["refund", 5], ["notify", "refunded 12.5"]]),
])
def test_resume_in_another_process_equals_an_approval_at_once(module, tmp_path, decision, expected_calls):
    paused = module.build().execute(SCRIPT)
    module.CALLS.clear()
    resumed = _resume_elsewhere(tmp_path, paused.continuation, decision)
    assert resumed["calls"] == expected_calls           # get_order answered from the journal
    if decision == '"allow"':
        at_once = module.build(pause=False)
        # the same $RANDOM draws: seeded as the paused run was
        direct = at_once._prepare(SCRIPT, "", None, None, None, journal=_journal_like(paused.continuation, at_once))
        approved = at_once._run_and_wait(*direct, None)
        assert (resumed["stdout"], resumed["stderr"], resumed["exit"]) == \
            (approved.stdout, approved.stderr, approved.exit_code)
    assert resumed["stdout"].startswith(paused.stdout)    # what the person saw comes first, unchanged
    if "deny" in decision:
        assert "refund: denied: not today\n" in resumed["stderr"] and '{"refunded"' not in resumed["stdout"]
    if "amount" in decision:
        assert '{"refunded":5}' in resumed["stdout"]
    assert resumed["status"] == "completed" and resumed["exit"] == 0


def _journal_like(continuation: bytes, tool):
    """A fresh journal with the paused run's seed and clock, nothing to replay: the run as it
    would have gone had the person approved at once."""
    from scripted_kernel.tools.journal import Journal
    loaded = tool._load_continuation(continuation, KEY)
    return Journal(seed=loaded.journal.seed, clock=loaded.journal.clock)


@pytest.mark.parametrize("damage", ["truncated", "flipped", "foreign", "unsigned", "garbage", "empty", "huge"])
def test_a_damaged_or_foreign_continuation_runs_nothing(module, damage):
    paused = module.build().execute(SCRIPT)
    data = paused.continuation
    module.CALLS.clear()
    other = ScriptedTool.builder("other").continuation_key(KEY).build()
    if damage == "truncated":
        data = data[:len(data) // 2]
    elif damage == "flipped":
        data = data[:-3] + bytes([data[-3] ^ 1]) + data[-2:]
    elif damage == "unsigned":
        unsigned = ScriptedTool.builder("api").function(tool(module.get_order, register=False)) \
            .function(tool(module.refund, register=False)).function(tool(module.notify, register=False)) \
            .before_tool(lambda c: Pause("x") if c.name == "refund" else None).build()
        data = unsigned.execute(SCRIPT).continuation
        module.CALLS.clear()
    elif damage == "garbage":
        data = b"SKCONT1\n" + bytes(32) + b"\xff" * 100
    elif damage == "empty":
        data = b""
    elif damage == "huge":
        data = data + b" " * (200 << 20)
    target = other if damage == "foreign" else module.build()
    with pytest.raises(ContinuationError):
        target.resume(data)
    assert module.CALLS == []


def test_divergence_when_an_answer_would_change_the_path(module):
    # an unsigned continuation whose recorded answer was changed: the script takes another
    # branch, and the resume stops at the first call that differs, calling nothing
    api = ScriptedTool.builder("api").function(tool(module.get_order, register=False)) \
        .function(tool(module.refund, register=False)).function(tool(module.notify, register=False)) \
        .before_tool(lambda c: Pause("approve") if c.name == "refund" else None).build()
    script = ('o=$(get_order --id 1); if [ "$(jq .total <<< "$o")" = 12.5 ]; then notify --text big; fi; '
              'refund --amount 1')
    paused = api.execute(script)
    assert paused.status == "paused" and [c[0] for c in module.CALLS] == ["get_order", "notify"]
    module.CALLS.clear()
    edited = paused.continuation.replace(b'\\"total\\": 12.5', b'\\"total\\": 99')
    assert edited != paused.continuation
    r = api.resume(edited)
    assert r.error == "divergence" and module.CALLS == []
    assert "divergence at call 2: expected notify" in r.stderr and "got refund" in r.stderr


def test_a_bash_tool_run_that_wrote_files_resumes_with_the_same_files():
    deployed = []
    hook = lambda call: Pause("deploys need approval") if call.name == "deploy" else None  # noqa: E731

    def build():
        return (BashTool.builder().snapshot_key(KEY).before_tool(hook)
                .builtin("deploy", lambda args, stdin: deployed.append(args) or "deployed\n").build())
    first = build()
    first.execute("echo base > base.txt; x=1")
    paused = first.execute('echo one >> log; x=$((x + 1)); deploy prod; echo "two $x" >> log; cat log')
    assert paused.status == "paused" and deployed == []
    second = build()                                    # another process would build it the same way
    resumed = second.resume(paused.continuation)
    assert (resumed.stdout, resumed.exit_code) == ("deployed\none\ntwo 2\n", 0) and deployed == [["prod"]]
    assert second.execute("cat base.txt log; echo $x").stdout == "base\none\ntwo 2\n2\n"


def test_curl_before_a_pause_is_not_sent_again(monkeypatch):
    import http.server
    import threading
    hits = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            hits.append(self.path)
            self.send_response(200)
            self.send_header("Content-Length", "3")
            self.end_headers()
            self.wfile.write(b"ok\n")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        def step(n: int) -> int:
            """A step."""
            return n
        api = (ScriptedTool.builder("api").network(allow=[url]).function(tool(step, register=False))
               .before_tool(lambda c: Pause("x") if c.params == {"n": 2} else None).build())
        paused = api.execute(f"curl -s {url}/a; step --n 2; curl -s {url}/b")
        assert paused.status == "paused" and hits == ["/a"]
        resumed = api.resume(paused.continuation)
        assert resumed.stdout == "ok\n2\nok\n" and hits == ["/a", "/b"]
    finally:
        server.shutdown()


def test_a_pause_past_what_a_continuation_keeps_is_a_denial():
    from scripted_kernel import ExecutionLimits

    def big() -> str:
        """Prints a lot."""
        return "x" * 5000
    calls = []

    def hook(call):
        calls.append(call)
        return Pause("later") if len(calls) == 2 else None
    api = (ScriptedTool.builder("api").limits(ExecutionLimits(max_output_bytes=4000))
           .function(tool(big, register=False)).before_tool(hook).build())
    r = api.execute("big >/dev/null; big >/dev/null; echo after $?")
    assert r.status == "completed" and r.stdout == "after 126\n"
    assert "cannot pause for 'later': the calls so far printed 5000 bytes" in r.stderr


def test_rollback_newest_first_and_partial_failure():
    undone = []

    def create(name: str) -> dict:
        """Create a thing."""
        return {"created": name}

    def charge(amount: int) -> dict:
        """Charge."""
        return {"charged": amount}

    def log_entry(text: str) -> str:
        """Log."""
        return "logged\n"

    def undo_create(call, output):
        undone.append(("create", call.params["name"], json.loads(output)["created"]))

    def undo_charge(call, output):
        raise RuntimeError("the payment provider refuses refunds after an hour")
    api = (ScriptedTool.builder("api").function(tool(create, register=False, revert=undo_create))
           .function(tool(charge, register=False, revert=undo_charge)).function(tool(log_entry, register=False))
           .build())
    r = api.execute("create --name a; charge --amount 5; log_entry --text x; create --name b; create --name")
    report = api.rollback(r)
    assert undone == [("create", "b", "b"), ("create", "a", "a")]
    assert [c.name for c in report.reverted] == ["create", "create"]
    assert [(c.name, m) for c, m in report.failed] == [("charge", "the payment provider refuses refunds after an hour")]
    assert [c.name for c in report.irreversible] == ["log_entry"] and not report.complete


def test_rollback_of_a_paused_run_undoes_what_it_did(module):
    undone = []
    api = (ScriptedTool.builder("api").continuation_key(KEY)
           .function(tool(module.get_order, register=False, revert=lambda c, o: undone.append(json.loads(o)["id"])))
           .function(tool(module.refund, register=False)).function(tool(module.notify, register=False))
           .before_tool(lambda c: Pause("approve") if c.name == "refund" else None).build())
    paused = api.execute(SCRIPT)
    report = api.rollback(paused.continuation)
    assert undone == [7] and [c.name for c in report.reverted] == ["get_order"]


@pytest.mark.parametrize("decision, refund", [("allow", ("done", 0)), ("deny", ("denied", 126))])
def test_a_resumed_runs_call_log_is_the_whole_runs(module, decision, refund):
    """The calls answered from the continuation are in the resumed run's log, and so is the
    paused call under its decision (a denied one too): a host reads one log, not two."""
    from scripted_kernel import Deny
    paused = module.build().execute(SCRIPT)
    resumed = module.build().resume(paused.continuation, Deny("no") if decision == "deny" else "allow")
    assert [(e.name, e.status, e.exit_code) for e in resumed.trace] == [
        ("get_order", "done", 0), ("refund", *refund), ("notify", "done", 0)]
    assert [c[0] for c in module.CALLS] == ["get_order", "refund", "notify"][:1] + \
        (["refund"] if decision == "allow" else []) + ["notify"]
