"""Sessions by handle: a 2026-07-28 client (which has no Mcp-Session-Id) opens a `--bash` session
with `bash_session_open`, names it in each call's `session` argument and ends it with
`bash_session_close`. In a worker's memory; and in a session store (a directory, a real
`redis-server`), where two worker processes serve one handle alternately. A forged handle, an
expired one and one opened with another client's token are refused, each with one line saying
which; the handle (its session and principal) is bound into the stored record's signature."""
from __future__ import annotations

import asyncio
import hashlib

import pytest

pytest.importorskip("mcp.server.mcpserver")      # mcp 2.x
pytest.importorskip("uvicorn")
from services import Service  # noqa: E402

from scripted_kernel.tools.mcp_sessions import SessionHandles, StoredSessions  # noqa: E402
from scripted_kernel.tools.session_store import MemoryStore, new_session_id  # noqa: E402

KEY = {"SCRIPTED_MCP_SESSION_KEY": "the service's key"}
TOKEN, OTHER_TOKEN = "token-of-alice", "token-of-bob"


def run(coroutine):
    return asyncio.run(asyncio.wait_for(coroutine, 120))


async def open_session(client) -> str:
    opened = await client.call_tool("bash_session_open", {})
    assert not opened.is_error, opened.content
    return opened.structured_content["session"]


async def in_session(client, handle: str, commands: str) -> dict:
    return (await client.call_tool("bash", {"commands": commands, "session": handle})).structured_content


def test_a_handle_keeps_a_session_in_a_workers_memory():
    s = Service("--bash")

    async def scenario():
        async with s.client() as client:
            assert client.protocol_version == "2026-07-28"
            tools = [t.name for t in (await client.list_tools()).tools]
            mine, yours = await open_session(client), await open_session(client)
            await in_session(client, mine, "cd /tmp; echo mine > f; n=1")
            await in_session(client, yours, "n=2")
            kept = await in_session(client, mine, "cat f; echo $n; pwd")
            without = (await client.call_tool("bash", {"commands": "cat /tmp/f; echo ${n-none}"})).structured_content
            closed = await client.call_tool("bash_session_close", {"session": mine})
            after = await in_session(client, mine, "echo $n")
            return tools, kept, await in_session(client, yours, "echo $n"), without, closed, after
    try:
        tools, kept, yours, without, closed, after = run(scenario())
    finally:
        s.stop()
    assert tools == ["bash", "bash_session_open", "bash_session_close"]
    assert kept["stdout"] == "mine\n1\n/tmp\n" and yours["stdout"] == "2\n"
    assert without["stdout"] == "none\n"               # no handle: a fresh shell and files of its own
    assert closed.structured_content == {"closed": True}
    assert (after["stderr"], after["exit_code"]) == ("bash: this session was closed: open a new one\n", 1)


def test_two_workers_serve_one_handle_alternately(store_url):
    a = Service("--bash", "--session-store", store_url, env=KEY, token=TOKEN)
    b = Service("--bash", "--session-store", store_url, env=KEY, token=TOKEN)

    async def scenario():
        async with a.client() as on_a, b.client() as on_b:
            handle = await open_session(on_a)
            await in_session(on_b, handle, "echo 1 > /tmp/log; n=1; cd /tmp")
            for turn in range(2, 7):
                await in_session((on_a, on_b)[turn % 2], handle, f"echo {turn} >> log; n=$((n+1))")
            kept = await in_session(on_a, handle, "echo $n; pwd; tr '\\n' ' ' < log")
            closed = await on_b.call_tool("bash_session_close", {"session": handle})
            gone = await in_session(on_a, handle, "echo $n")
            return kept, closed, gone
    try:
        kept, closed, gone = run(scenario())
    finally:
        a.stop()
        b.stop()
    assert kept["stdout"] == "6\n/tmp\n1 2 3 4 5 6 "
    assert closed.structured_content == {"closed": True}
    assert gone["stderr"] == "bash: this session is unknown or expired: start a new one\n"


def test_forged_expired_and_other_clients_handles_are_refused(tmp_path):
    store = f"file://{tmp_path}/sessions"
    alice = Service("--bash", "--session-store", store, env=KEY, token=TOKEN)
    bob = Service("--bash", "--session-store", store, env=KEY, token=OTHER_TOKEN)
    # a handle the service's own key made, for alice, that expired a minute ago
    from scripted_kernel.tools.mcp_service import ServiceConfig, _Front
    expired, _ = SessionHandles(ServiceConfig(session_key=KEY["SCRIPTED_MCP_SESSION_KEY"]).key(), -60).mint(
        new_session_id(), _Front(None, TOKEN, 1, 1).principal)

    async def scenario():
        async with alice.client() as as_alice, bob.client() as as_bob:
            handle = await open_session(as_alice)
            head, payload, mac = handle.split(".")
            forged = ".".join([head, payload[:-1] + ("A" if payload[-1] != "A" else "B"), mac])
            answers = [await in_session(as_alice, h, "echo hi") for h in (forged, "not a handle", expired)]
            answers.append(await in_session(as_bob, handle, "echo hi"))
            answers.append(await in_session(as_alice, handle, "echo still mine"))
            return answers
    try:
        forged, nonsense, old, stolen, mine = run(scenario())
    finally:
        alice.stop()
        bob.stop()
    not_ours = ("bash: this session handle is not one this service issued (or it was altered): open a session and "
                "use the handle it returns\n")
    assert forged["stderr"] == nonsense["stderr"] == not_ours
    assert old["stderr"].startswith("bash: this session handle expired at ") and old["stderr"].endswith(
        ": open a new session\n")
    assert stolen["stderr"] == ("bash: this session handle belongs to another client (it was opened with other "
                                "credentials): open a session of your own\n")
    assert all(r["exit_code"] == 1 and r["stdout"] == "" for r in (forged, nonsense, old, stolen))
    assert mine["stdout"] == "still mine\n"


def test_the_principal_is_bound_into_the_stored_records_signature():
    """A stored session's record is signed for the client that opened it: presented as another
    client's (as a copied session id would be), it is refused before anything in it is read."""
    stored = StoredSessions(MemoryStore(), b"key")
    sid = new_session_id()
    stored.create(sid, principal=hashlib.sha256(b"alice").hexdigest())
    assert run(stored.execute(sid, "echo x > /tmp/f", principal=hashlib.sha256(b"alice").hexdigest())).exit_code == 0
    refused = run(stored.execute(sid, "cat /tmp/f", principal=hashlib.sha256(b"bob").hexdigest()))
    assert (refused.stdout, refused.exit_code, refused.error) == ("", 1, "session")
    assert refused.stderr == ("bash: the stored session was refused: snapshot signature does not match: tampered "
                              "with, or signed with another key; the call did not run\n")
