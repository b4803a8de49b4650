"""The tool layer contains its callbacks: a failing, hung or misbehaving callback is a failing
command, never a crash of the caller, and never affects a later call.

Hung callbacks wait on an Event that the test sets at the end, so no test depends on how long
anything takes; the deadline checks compare against generous bounds only."""
import asyncio
import threading
import time

import pytest

from scripted_kernel import ExecutionLimits, ScriptedTool
from scripted_kernel.base.limits import CancelToken
from scripted_kernel.tools import redaction
from scripted_kernel.tools.redaction import sanitize
from scripted_kernel.tools.definitions import ToolDef


class _Unprintable:
    def __str__(self):
        raise RuntimeError("no text")

    __repr__ = __str__


def _cycle():
    d = {}
    d["self"] = d
    return d


def _raise(error):
    def callback(args):
        raise error
    return callback


MISBEHAVING = {
    "system_exit": (_raise(SystemExit(2)), "exited with status 2"),
    "generator_exit": (_raise(GeneratorExit()), "GeneratorExit"),
    "returns_interrupt": (lambda a: KeyboardInterrupt("stop"), "stop"),
    "raises_interrupt_on_runner": (_raise(KeyboardInterrupt()), "KeyboardInterrupt"),
    "circular": (lambda a: _cycle(), "cannot print the result: nested more than 500 levels deep (a cycle?)"),
    "tuple_keys": (lambda a: {(1, 2): 3}, "cannot print the result: a key of type tuple has no JSON form"),
    "bad_str": (lambda a: _Unprintable(), "cannot print the result: a value of type _Unprintable has no JSON form"),
    "huge_int": (lambda a: 10 ** 5000, "cannot print the result: Exceeds the limit"),
    "exception_str_raises": (_raise(ValueError(_Unprintable())), "ValueError"),
}


@pytest.mark.parametrize("name", sorted(MISBEHAVING))
def test_a_misbehaving_callback_is_a_failing_command(name):
    callback, message = MISBEHAVING[name]
    t = ScriptedTool.builder("t").tool(ToolDef("bad", "misbehaves"), callback).build()
    r = t.execute("bad; echo status=$?")
    assert r.stdout == "status=1\n", r.stderr
    assert r.stderr.startswith("bad: ") and message in r.stderr and "internal" not in r.stderr
    assert t.execute("echo next").stdout == "next\n"


def test_a_lone_surrogate_becomes_a_replacement_character():
    t = ScriptedTool.builder("t").tool(ToolDef("surrogate", "odd text"), lambda a: "a\ud800b\n").build()
    r = t.execute("surrogate | wc -c; surrogate")
    assert r.exit_code == 0 and r.stdout == "6\na\ufffdb\n"


def _hanging_tool(release: threading.Event, timeout: float, on_call=lambda: None) -> ScriptedTool:
    """A tool whose callbacks `hang` (sync), `hang_async` (blocks its event loop, as a careless
    async tool does) and `sleep_async` (awaits) wait until `release` is set; `ok` answers."""
    def hang(args):
        on_call()
        release.wait(60)
        return "late\n"

    async def hang_async(args):
        release.wait(60)
        return "late\n"

    async def sleep_async(args):
        await asyncio.sleep(60)
    return (ScriptedTool.builder("t").limits(ExecutionLimits(timeout_seconds=timeout))
            .tool(ToolDef("hang", "hangs"), hang).tool(ToolDef("hang_async", "blocks"), hang_async)
            .tool(ToolDef("sleep_async", "sleeps"), sleep_async).tool(ToolDef("ok", "fine"), lambda a: "ok\n")
            .build())


@pytest.mark.parametrize("tool_name", ["hang", "hang_async", "sleep_async"])
def test_the_deadline_stops_waiting_for_a_hung_callback(tool_name):
    release = threading.Event()
    t = _hanging_tool(release, 0.5)
    try:
        r = t.execute(f"echo before; {tool_name}; echo never")
        assert r.exit_code == 124 and r.error == "timeout" and r.stdout == "before\n"
        assert "timed out after 0.5 s" in r.stderr
        # a hung callback leaves nothing behind that a later call could wait on
        for _ in range(6):
            assert t.execute("ok; echo done").stdout == "ok\ndone\n"
    finally:
        release.set()


def test_hung_callbacks_never_fill_anything():
    """More hung calls than any pool has threads; every later call still runs."""
    release = threading.Event()
    t = _hanging_tool(release, 0.2)
    patient = _hanging_tool(release, 300)      # its deadline never comes before `timeout 0.05`
    try:
        for _ in range(10):
            assert t.execute("hang").exit_code == 124
            assert t.execute("hang_async").exit_code == 124
            assert patient.execute("timeout 0.05 hang; echo $?").stdout == "124\n"
        assert t.execute("ok").stdout == "ok\n"
    finally:
        release.set()


def test_a_cancel_stops_waiting_for_a_hung_callback():
    release = threading.Event()
    cancel = CancelToken()
    t = _hanging_tool(release, 300, on_call=cancel.cancel)     # cancelled once the tool hangs
    try:
        r = t.execute("echo a; hang", cancel=cancel)
        assert r.exit_code == 130 and r.error == "cancelled" and r.stdout == "a\n"
        assert "tool 'hang' did not return" in r.stderr
    finally:
        release.set()


def test_execute_async_serves_others_while_a_tool_hangs():
    release = threading.Event()
    t = _hanging_tool(release, 300)

    async def main():
        hung = [asyncio.ensure_future(t.execute_async("hang")) for _ in range(8)]
        quick = await asyncio.gather(*(t.execute_async(f"ok; echo {i}") for i in range(20)))
        assert [r.stdout for r in quick] == [f"ok\n{i}\n" for i in range(20)]
        assert not any(h.done() for h in hung)
        release.set()
        assert [r.stdout for r in await asyncio.gather(*hung)] == ["late\n"] * 8
    try:
        asyncio.run(main())
    finally:
        release.set()


# ---------------------------------------------------------------- concurrency

def test_concurrent_runs_keep_their_own_output_status_lineno_and_trace():
    t = ScriptedTool.builder("t").tool(ToolDef("echo_id", "echoes", {
        "type": "object", "properties": {"id": {"type": "integer"}}}), lambda a: f"{a.params['id']}\n").build()
    failures = []

    def worker(k):
        for j in range(40):
            n = k * 1000 + j
            pad = "\n" * (n % 7)            # a distinct text and distinct line numbers each time
            script = f"# run {n}\n{pad}echo_id --id {n}\necho line=$LINENO\nexit $(( {n} % 5 ))"
            r = t.execute(script)
            expected = f"{n}\nline={3 + n % 7}\n"
            if (r.stdout, r.exit_code) != (expected, n % 5) or \
                    [(e.name, e.params) for e in r.trace] != [("echo_id", {"id": n})] or \
                    [e.params for e in t.last_trace] != [{"id": n}]:
                failures.append((n, r.stdout, r.exit_code, r.trace))
    threads = [threading.Thread(target=worker, args=(k,)) for k in range(32)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not failures, failures[:3]


# ---------------------------------------------------------------- sanitising

@pytest.mark.parametrize("message, secret", [
    ("{'password': 'hunter2', 'user': 'bob'}", "hunter2"),
    ('{"api_key": "abc123xyz", "n": 1}', "abc123xyz"),
    ("postgres://admin:pa55w0rd@db/prod unreachable", "pa55w0rd"),
    ("https://user:tok@example.com/x failed", "tok@"),
    ("connect token=abc.def.ghi failed", "abc.def.ghi"),
    ("refused by 10.0.0.5:5432", "10.0.0.5"),
    ("refused by fe80::1ff:fe23:4567:890a", "fe80::1ff"),
    ("no route to db1.prod.internal", "db1.prod.internal"),
    ("cannot open /srv/app/config.py", "/srv/app"),
    ("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload", "eyJhbGci"),
    ("Traceback (most recent call last):\n  File \"/srv/x.py\", line 1\nValueError: boom", "/srv/x.py"),
    # the shapes the first sanitiser missed
    ("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U bad",
     "dozjgNryP4J3"),
    ("stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc failed", "4eC39HqLyjWD"),
    ("google AIzaSyD-1234567890abcdefghijklmnopqrstu x", "SyD-1234567890"),
    ("gitlab glpat-xxxxxxxxxxxxxxxxxxxx y", "glpat-xxxxxxxx"),
    ("hf hf_abcdefghijklmnopqrstuvwxyzABCDEFGH z", "hf_abcdefgh"),
    ("password=correct horse battery staple", "horse"),
    ("password=correct horse battery staple", "staple"),
    ("password=s3cr3t;TAIL", "TAIL"),
    ("postgres://admin:p@ssw0rd@db.example.com/x", "ssw0rd"),
    ("pass=abc123 user=bob", "abc123"),
    # common credential formats, by their published prefixes
    ("anthropic sk-ant-api03-abcdefghijklmnop0123", "api03-abcdefgh"),
    ("openai sk-proj-abcdefghijklmnop0123", "abcdefghijklmnop"),
    ("AKIAIOSFODNN7EXAMPLE", "IOSFODNN7"),
    ("ASIAY34FZKBOKMUTVV7A expired", "Y34FZKBOK"),
    ("aws_secret_access_key: wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUt"),
    ("GOCSPX-abcdefghijklmnopqrstuvwx1234", "abcdefghijklmnop"),
    ("token ya29.a0AfH6SMBx-abcdefghijklmnopqrstuv", "a0AfH6SMBx"),
    ("azure client secret abc8Q~defghijklmnopqrstuvwxyz0123456789 rejected", "defghijklmnop"),
    ("DefaultEndpointsProtocol=https;AccountName=x;AccountKey=abcdEFGH1234==;EndpointSuffix=y", "abcdEFGH"),
    ("https://x.blob.core.windows.net/c?sv=2022&sig=abcd1234EFGH%3D&se=2024", "abcd1234EFGH"),
    ("slack xoxb-123456789012-1234567890123-abcdefghij", "1234567890123"),
    ("github ghp_abcdefghijklmnopqrstuvwxyz0123 and github_pat_11ABCDEFG0abcdefghijklmnop", "11ABCDEFG0"),
    ("npm npm_abcdefghijklmnopqrstuvwxyz0123456789", "abcdefghijklmnopqrst"),
    ("pypi-AgEIcHlwaS5vcmcCJGE4ZjY5YjQ0LTk0ZjYtNGU4Ny1iYTM3LWE2ZjJkNWE2ZTA5NQ", "AgEIcHlwaS5vcmc"),
    ('{"api_key": "k 1", "Authorization": "Token abc"}', "Token abc"),
    ("X-Api-Key: 'k-123-abc' rejected", "k-123-abc"),
    ("redis://:s3cret@cache:6379/0", "s3cret"),
    ("https://api.x.com/v1?api_key=SECRET123&page=2 returned 401", "SECRET123"),
])
def test_sanitize_redacts(message, secret):
    clean = sanitize(message)
    assert secret not in clean and "\n" not in clean


@pytest.mark.parametrize("message, clean", [
    ("password=hunter2 token=abc user=bob", "password=<redacted> token=<redacted> user=bob"),
    ("{'password': 'hunter2', 'user': 'bob'}", "{'password': '<redacted>', 'user': 'bob'}"),
    ("postgres://admin:p@ssw0rd@db.example.com/prod down", "postgres://<redacted>@db.example.com/prod down"),
    ("cannot print the result: keys must be str, int", "cannot print the result: keys must be str, int"),
    ("retry at 10:32 for version 1.2", "retry at 10:32 for version 1.2"),
])
def test_sanitize_keeps_what_is_not_secret(message, clean):
    assert sanitize(message) == clean


def test_values_of_the_hosts_secret_environment_variables_are_redacted(monkeypatch):
    monkeypatch.setenv("SERVICE_PASSWORD", "Zq9xLw77vv")
    monkeypatch.setenv("DEPLOY_TOKEN", "correct horse battery")
    monkeypatch.setenv("LANGUAGE_NAME", "Zq9xLw")          # not a secret's name: kept
    clean = sanitize("login with Zq9xLw77vv failed; phrase was correct horse battery; Zq9xLw")
    assert clean == "login with <redacted> failed; phrase was <redacted>; Zq9xLw"


def test_a_long_message_is_cut_at_a_word():
    secret = "x" * 30 + "SECRETTAIL"
    clean = sanitize("word " * 399 + "abc " + secret + " more")   # the secret crosses the cut
    assert len(clean) <= redaction.MAX_MESSAGE + 4 and clean.endswith("abc ...")
    assert "xxx" not in clean


# Adversarial texts for every pattern: long runs of what each pattern scans, repeated openings
# that used to make a backtracking pattern rescan the rest of the text at each of them.
ADVERSARIAL = ["a", "a.", "a:", "1:", "a/", "-/a", "password=", "'password': '", 'password="', "a://",
               "a://b@", "eyJ", "eyJaa.", "sk-", "bearer ", " ", ", ;&", "1.", "A+", "'", "\\'",
               "password= x ", "k=", "abc1Q~", "ab ", "@", "AKIA", "x=password= ", "'a'='", "a-",
               "a.b:1", "::", "./"]


def _cpu_cost(fn, text) -> float:
    best = float("inf")
    for _ in range(3):
        started = time.thread_time()
        fn(text)
        best = min(best, time.thread_time() - started)
    return best


@pytest.mark.parametrize("unit", ADVERSARIAL)
def test_redaction_is_linear_in_the_text(unit):
    """Ten times the text costs about ten times the work (a rescanning pattern: a hundred)."""
    small, large = unit * (20_000 // len(unit)), unit * (200_000 // len(unit))
    small_cost, large_cost = _cpu_cost(redaction._redact, small), _cpu_cost(redaction._redact, large)
    assert large_cost < 30 * max(small_cost, 1e-4), (small_cost, large_cost)


def test_sanitize_looks_at_a_bounded_part_of_any_message(monkeypatch):
    """1 MB of any adversarial text: the patterns see at most MAX_MESSAGE characters of it."""
    seen = []
    real = redaction._redact
    monkeypatch.setattr(redaction, "_redact", lambda text: seen.append(len(text)) or real(text))
    for unit in ADVERSARIAL:
        assert "\n" not in sanitize(unit * (1_000_000 // len(unit)))
    assert len(seen) == len(ADVERSARIAL) and max(seen) <= redaction.MAX_MESSAGE + 4


def test_sanitize_keeps_the_useful_part():
    assert sanitize("Traceback (most recent call last):\n  File \"x\"\nValueError: boom") == "ValueError: boom"
    assert sanitize("user 42 not found") == "user 42 not found"
    assert sanitize("bad input\u2028password=x") == "bad input"


def test_a_huge_argument_in_a_callbacks_error_does_not_hold_the_process():
    """The reproducer: a tool raising KeyError(arg) on a 40 KB argument froze the whole
    process for 78 s; now it is one short line."""
    def lookup(args):
        raise KeyError(args.params["key"])
    t = ScriptedTool.builder("t").tool(ToolDef("lookup", "looks up", {
        "type": "object", "properties": {"key": {"type": "string"}}}), lookup).build()
    r = t.execute("""lookup --key "$(printf 'a.%.0s' {1..20000})"; echo status=$?""")
    assert r.stdout == "status=1\n"
    assert r.stderr.startswith("lookup: ") and len(r.stderr) < redaction.MAX_MESSAGE + 20


def test_secrets_from_callbacks_do_not_reach_the_script_unless_asked():
    def leaky(args):
        raise KeyError({"password": "hunter2", "host": "10.1.2.3"})
    t = ScriptedTool.builder("t").tool(ToolDef("leaky", "fails"), leaky).build()
    r = t.execute("leaky")
    assert "hunter2" not in r.stderr and "10.1.2.3" not in r.stderr and "password" in r.stderr
    raw = ScriptedTool.builder("t").tool(ToolDef("leaky", "fails"), leaky).sanitize_errors(False).build()
    assert "hunter2" in raw.execute("leaky").stderr
