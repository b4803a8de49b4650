"""scripted_kernel.compat.bashkit against bashkit 0.20.1 itself: the same programs, run against
both, must agree (skipped where bashkit is not installed); then the rulings the compat module
documents, which hold without bashkit."""
import asyncio
import json

import pytest

from scripted_kernel.compat import bashkit as compat

try:
    from bashkit.scripted import ScriptedTool as PeerScriptedTool
except ImportError:                      # pragma: no cover - the peer is a test extra
    PeerScriptedTool = None

IMPLEMENTATIONS = [pytest.param(compat.ScriptedTool, id="compat"),
                   pytest.param(PeerScriptedTool, id="bashkit",
                                marks=pytest.mark.skipif(PeerScriptedTool is None, reason="bashkit not installed"))]

USER_SCHEMA = {"type": "object", "properties": {"id": {"type": "integer"}, "verbose": {"type": "boolean"}},
               "required": ["id"]}


class Boom(RuntimeError):
    pass


def build(cls, **limits):
    tool = cls("api", **limits)
    tool.add_tool("get_user", "Fetch user by ID",
                  lambda p, s=None: json.dumps({"id": p["id"], "verbose": p.get("verbose", False)}) + "\n",
                  USER_SCHEMA)
    tool.add_tool("upper", "Uppercase stdin", lambda p, s=None: (s or "").upper())
    tool.add_tool("stdin_kind", "Shows stdin", lambda p, s=None: ("none" if s is None else repr(s)) + "\n")
    tool.add_tool("none_result", "Returns None", lambda p, s=None: None)
    tool.add_tool("int_result", "Returns an int", lambda p, s=None: 42)
    tool.add_tool("bytes_result", "Returns bytes", lambda p, s=None: b"x\n")
    tool.add_tool("boom", "Raises", lambda p, s=None: (_ for _ in ()).throw(Boom("postgres://u:pw@db/x")))

    async def async_greet(p, s=None):
        await asyncio.sleep(0)
        return f"hello {p.get('name', 'world')}\n"
    tool.add_tool("async_greet", "Async greeting", async_greet)

    class AsyncCallable:
        async def __call__(self, p, s=None):
            return "from an async __call__\n"
    tool.add_tool("async_object", "Async callable object", AsyncCallable())
    tool.env("API_URL", "https://example.com")
    return tool


# Scripts whose whole result (stdout, stderr, status) is the same on both.
SAME_RESULT = [
    "get_user --id 5",
    "get_user --id=7 --verbose | jq -r .verbose",
    "get_user --id 3 --verbose=false",
    "echo hello | upper",
    "stdin_kind",
    "echo x | stdin_kind",
    "none_result; echo status=$?",
    "int_result || echo fallback",
    "bytes_result; echo status=$?",
    "boom; echo status=$?",
    "async_greet --name Ann",
    "async_object",
    "echo $API_URL",
    "for i in 1 2 3; do get_user --id $i | jq -c .id; done | awk '{s += $1} END {print s}'",
    'u=$(get_user --id 9); echo "${u}" | jq .id',
    "echo out; echo err >&2; exit 3",
    "",
]


@pytest.mark.parametrize("script", SAME_RESULT)
@pytest.mark.skipif(PeerScriptedTool is None, reason="bashkit not installed")
def test_programs_agree_with_bashkit(script):
    ours = build(compat.ScriptedTool).execute_sync(script)
    theirs = build(PeerScriptedTool).execute_sync(script)
    assert (ours.stdout, ours.stderr, ours.exit_code) == (theirs.stdout, theirs.stderr, theirs.exit_code)
    assert ours.to_dict() == theirs.to_dict()
    assert (ours.success, ours.stdout_bytes, ours.stderr_bytes) == (theirs.success, theirs.stdout_bytes,
                                                                    theirs.stderr_bytes)
    assert (repr(ours), str(ours)) == (repr(theirs), str(theirs))


@pytest.mark.skipif(PeerScriptedTool is None, reason="bashkit not installed")
@pytest.mark.parametrize("limits, script", [
    ({"max_commands": 5}, "echo 1; echo 2; echo 3; echo 4; echo 5; echo 6"),
    ({"max_loop_iterations": 3}, "for i in 1 2 3 4 5; do :; done"),
])
def test_limits_are_reported_in_bashkits_words(limits, script):
    ours = build(compat.ScriptedTool, **limits).execute_sync(script)
    theirs = build(PeerScriptedTool, **limits).execute_sync(script)
    assert (ours.exit_code, ours.error) == (theirs.exit_code, theirs.error)
    assert ours.stderr.endswith(theirs.stderr)


@pytest.mark.skipif(PeerScriptedTool is None, reason="bashkit not installed")
def test_introspection_agrees_with_bashkit():
    ours, theirs = build(compat.ScriptedTool), build(PeerScriptedTool)
    for method in ("description", "system_prompt", "tool_count", "input_schema", "output_schema"):
        mine, peer = getattr(ours, method)(), getattr(theirs, method)()
        if method.endswith("schema"):            # bashkit's also names its timeout_ms extension
            mine, peer = json.loads(mine), json.loads(peer)
            peer["properties"].pop("timeout_ms", None)
        assert mine == peer, method
    assert (ours.name, ours.short_description, repr(ours)) == (theirs.name, theirs.short_description, repr(theirs))
    def section(text, heading):
        return text.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
    assert section(ours.help(), "Tool Commands") == section(theirs.help(), "Tool Commands")
    assert ours.help().startswith(f"# api\n\n{theirs.description()}\n")
    public = {name for name in dir(theirs) if not name.startswith("_")}
    assert public <= {name for name in dir(ours) if not name.startswith("_")}


@pytest.mark.parametrize("cls", IMPLEMENTATIONS)
def test_registration_errors(cls):
    tool = cls("api")
    with pytest.raises(TypeError, match="tool 'x' callback must be callable"):
        tool.add_tool("x", "not callable", 5)
    nested: list = [1]
    for _ in range(70):
        nested = [nested]
    with pytest.raises(ValueError, match="nesting depth exceeds maximum of 64"):
        tool.add_tool("deep", "too deep", lambda p, s=None: "", {"type": "object", "properties": {"a": nested}})
    tool.add_tool("echo", "a tool named like a builtin", lambda p, s=None: "tool echo\n")
    tool.add_tool("twice", "first", lambda p, s=None: "first\n")
    tool.add_tool("twice", "second", lambda p, s=None: "second\n")
    assert tool.tool_count() == 3
    assert tool.description().endswith("echo, twice, twice")
    result = tool.execute_sync("echo; twice")
    assert (result.stdout, result.exit_code) == ("tool echo\nfirst\n", 0)


@pytest.mark.parametrize("cls", IMPLEMENTATIONS)
def test_await_execute_runs_async_callbacks_on_the_callers_loop(cls):
    async def main():
        loop = asyncio.get_running_loop()

        async def which_loop(p, s=None):
            return f"same={asyncio.get_running_loop() is loop}\n"
        tool = cls("api")
        tool.add_tool("which_loop", "Which loop", which_loop)
        return await tool.execute("which_loop; which_loop")
    result = asyncio.run(main())
    assert (result.stdout, result.exit_code) == ("same=True\nsame=True\n", 0)


@pytest.mark.parametrize("cls", IMPLEMENTATIONS)
def test_cancelling_execute_cancels_the_callback(cls):
    async def main():
        started, released, cancelled = asyncio.Event(), asyncio.Event(), asyncio.Event()
        finished = []

        async def block(p, s=None):
            started.set()
            try:
                await released.wait()
            except asyncio.CancelledError:
                cancelled.set()
                raise
            finished.append(True)
            return "done\n"
        tool = cls("api")
        tool.add_tool("block", "Blocks", block)
        task = tool.execute("block; echo after")
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        released.set()                       # too late: the callback was cancelled first
        await asyncio.wait_for(cancelled.wait(), 60)   # a bound for a broken build, not a race
        return finished
    assert asyncio.run(main()) == []


def test_execute_needs_a_running_loop():
    with pytest.raises(RuntimeError, match="no running event loop"):
        compat.ScriptedTool("api").execute("true")


# ---------------------------------------------------------------- the compat module's own rulings

def test_a_schema_that_is_not_an_object_is_refused():
    tool = compat.ScriptedTool("api")
    for schema in ("a string", [1, 2], 3):
        with pytest.raises(TypeError, match="schema must be a dict"):
            tool.add_tool("t", "d", lambda p, s=None: "", schema)
    with pytest.raises(TypeError, match="not JSON"):
        tool.add_tool("t", "d", lambda p, s=None: "", {"type": "object", "properties": {"a": {1, 2}}})
    assert tool.tool_count() == 0


def test_timeout_is_status_1_in_bashkits_words_and_keeps_earlier_output():
    async def slow(p, s=None):
        await asyncio.Event().wait()         # never returns by itself
    tool = compat.ScriptedTool("api", timeout_seconds=0.2)
    tool.add_tool("slow", "Never returns", slow)
    result = tool.execute_sync("echo before; slow; echo after")
    assert (result.stdout, result.exit_code) == ("before\n", 1)
    assert result.error == "resource limit exceeded: execution timeout (0.2s)"
    assert result.stderr.endswith(result.error)


def test_callback_failure_does_not_show_the_exception_text():
    result = build(compat.ScriptedTool).execute_sync("boom")
    assert (result.stderr, result.exit_code) == ("boom: callback failed\n", 1)


def test_the_native_tool_keeps_its_own_rulings():
    from scripted_kernel import ScriptedTool
    native = ScriptedTool("api")
    with pytest.raises(ValueError, match="taken by the shell builtin .echo.; pass shadow=True"):
        native.add_tool("echo", "d", lambda p, s=None: "")
    native.add_tool("data", "d", lambda p, s=None: {"a": 1})
    assert native.execute("data").stdout == '{"a": 1}\n'
