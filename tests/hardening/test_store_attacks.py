"""A hostile writer of the MCP service's session store (a directory, Redis, or the memory of the
process): it can read and write every record, but does not hold the server's key. Records moved
to another session, older records, the empty new-session record over a used session, records
signed with another key and malformed ones are refused with one clear line; what such a writer
can still do (delete a session, replay an older record to a worker that has not seen the newer
one) is pinned down too (SECURITY.md, "The session store's threat model")."""
from __future__ import annotations

import asyncio
import json
import os
import time

import pytest

from scripted_kernel.tools.mcp_server import StoredSessions
from scripted_kernel.tools.session_store import DirectoryStore, MemoryStore, Record, RedisStore, new_session_id
from scripted_kernel.tools.snapshot import bound_key

KEY = b"the server's key"
REFUSED = "bash: the stored session was refused: "
NOT_SIGNED = REFUSED + ("snapshot signature does not match: tampered with, or signed with another key; "
                        "the call did not run\n")


class Writer:
    """What a store writer does: read a session's record as it is kept, write any record (with
    every blob it has read: a manifest it writes finds the blobs it names)."""

    def __init__(self, store):
        self.store = store
        self.seen: dict = {}                  # sha256 -> bytes, of every session read

    def read(self, sid: str) -> tuple:
        """(version, manifest, kept bytes)."""
        self.seen.update(self._blobs(sid))
        if isinstance(self.store, MemoryStore):
            return tuple(self.store._sessions[sid][0])
        if isinstance(self.store, DirectoryStore):
            with open(self.store._file(sid, "json")) as f:
                meta = json.load(f)
            with open(self.store._file(sid, "snap"), "rb") as f:
                return meta["version"], f.read(), meta["kept"]
        version, data, kept = self.store.client.hmget(self.store.PREFIX + sid, "version", "data", "kept")
        return int(version), data, int(kept)

    def _blobs(self, sid: str) -> dict:
        if isinstance(self.store, MemoryStore):
            return dict(self.store._blob_store.get(sid, {}))
        if isinstance(self.store, DirectoryStore):
            folder = self.store._file(sid, "blobs")
            return {name: open(os.path.join(folder, name), "rb").read() for name in os.listdir(folder)}
        return {k.decode(): v for k, v in self.store.client.hgetall(self.store.BLOBS_PREFIX + sid).items()}

    def write(self, sid: str, version, data: bytes, kept):
        stored = len(data) + sum(len(b) for b in self.seen.values())
        if isinstance(self.store, MemoryStore):
            self.store._sessions[sid] = [Record(version, data, kept), time.time(), stored]
            self.store._blob_store.setdefault(sid, {}).update(self.seen)
        elif isinstance(self.store, DirectoryStore):
            for sha, content in self.seen.items():
                with open(os.path.join(self.store._file(sid, "blobs"), sha), "wb") as f:
                    f.write(content)
            with open(self.store._file(sid, "snap"), "wb") as f:
                f.write(data)
            with open(self.store._file(sid, "json"), "w") as f:
                json.dump({"version": version, "kept": kept, "stored": stored, "last_used": time.time()}, f)
        else:
            if self.seen:
                self.store.client.hset(self.store.BLOBS_PREFIX + sid, mapping=self.seen)
            self.store.client.hset(self.store.PREFIX + sid, mapping={"version": version, "data": data, "kept": kept,
                                                                     "stored": stored})


def _store(kind: str, request, tmp_path):
    if kind == "memory":
        return MemoryStore()
    if kind == "directory":
        return DirectoryStore(str(tmp_path / "sessions"))
    return RedisStore(request.getfixturevalue("redis_url"))


@pytest.fixture(params=["memory", "directory", "redis"])
def store(request, tmp_path):
    return _store(request.param, request, tmp_path)


def _session(stored: StoredSessions, *scripts: str) -> str:
    """A new session of `stored`, after `scripts` ran in it, each one call."""
    sid = new_session_id()
    stored.create(sid)
    for script in scripts:
        assert _call(stored, sid, script).exit_code == 0
    return sid


def _call(stored: StoredSessions, sid: str, script: str):
    """The call, by a worker that loads the session's record (what a worker keeps in memory of
    its own last call of a session is the record it saved, and not read again)."""
    stored.budget.forget(sid)
    return asyncio.run(stored.execute(sid, script))


def _refused(answer, stderr: str):
    assert (answer.stdout, answer.stderr, answer.exit_code, answer.error) == ("", stderr, 1, "session")


def test_a_record_moved_to_another_session_is_refused(store):
    stored, writer = StoredSessions(store, KEY), Writer(store)
    alice = _session(stored, "echo 'alice private' > /tmp/secret")
    bob = _session(stored, "echo bob > /tmp/mine")
    writer.write(bob, *writer.read(alice))                     # alice's record, her version too
    _refused(_call(stored, bob, "cat /tmp/secret"), NOT_SIGNED)
    _, data, kept = writer.read(alice)
    writer.write(bob, writer.read(bob)[0], data, kept)         # at bob's own version
    _refused(_call(stored, bob, "cat /tmp/secret"), NOT_SIGNED)
    # and alice's session is hers still
    assert _call(stored, alice, "cat /tmp/secret").stdout == "alice private\n"


def test_an_older_record_of_the_session_is_refused(store):
    stored, writer = StoredSessions(store, KEY), Writer(store)
    sid = _session(stored, "echo one > /tmp/state")
    old_version, old_data, old_kept = writer.read(sid)
    assert _call(stored, sid, "echo two > /tmp/state").exit_code == 0
    newer = writer.read(sid)[0]
    writer.write(sid, old_version, old_data, old_kept)        # the older record as it was
    _refused(_call(stored, sid, "cat /tmp/state"),
             REFUSED + f"its version {old_version} is older than version {newer}, which this server has seen "
             "(a rollback); the call did not run\n")
    writer.write(sid, newer, old_data, old_kept)              # the older snapshot at the newer version
    _refused(_call(stored, sid, "cat /tmp/state"), NOT_SIGNED)


def test_the_new_session_record_cannot_reset_a_used_session(store):
    stored, writer = StoredSessions(store, KEY), Writer(store)
    sid = new_session_id()
    stored.create(sid)
    marker = writer.read(sid)
    assert marker[0] == 0 and marker[1]                       # the new session's own signed snapshot
    assert _call(stored, sid, "echo kept > /tmp/f").exit_code == 0
    writer.write(sid, 0, b"", 0)                              # the empty record of before
    _refused(_call(stored, sid, "cat /tmp/f"), REFUSED + "its version 0 is older than version 1, which this "
             "server has seen (a rollback); the call did not run\n")
    writer.write(sid, *marker)                                # the session's own new-session record
    _refused(_call(stored, sid, "cat /tmp/f"), REFUSED + "its version 0 is older than version 1, which this "
             "server has seen (a rollback); the call did not run\n")
    other = StoredSessions(store, KEY)                        # a worker that has not seen it: still signed
    writer.write(sid, 0, b"", 0)
    _refused(_call(other, sid, "cat /tmp/f"),
             REFUSED + "truncated snapshot: shorter than its header; the call did not run\n")


def test_a_record_signed_with_another_key_is_refused(store):
    stored, writer = StoredSessions(store, KEY), Writer(store)
    sid = _session(stored, "x=1")
    version, _, kept = writer.read(sid)
    forger = StoredSessions(store, b"another key")
    forged = forger._tool().snapshot(key=bound_key(b"another key", "session", sid, version, kept))
    writer.write(sid, version, forged, kept)
    _refused(_call(stored, sid, "echo $x"), NOT_SIGNED)
    # nor is an unsigned one taken
    writer.write(sid, version, StoredSessions(store)._tool().snapshot(), kept)
    _refused(_call(stored, sid, "echo $x"), REFUSED + "unsigned snapshot refused: a signing key is set; "
             "the call did not run\n")


@pytest.mark.parametrize("kind", ["directory", "redis"])         # the memory store's numbers are its own
@pytest.mark.parametrize("number", ["x1", "-1", "9" * 40])
def test_a_record_without_valid_numbers_is_refused(kind, number, request, tmp_path):
    store = _store(kind, request, tmp_path)
    stored, writer = StoredSessions(store, KEY), Writer(store)
    sid = _session(stored)
    version, data, kept = writer.read(sid)
    writer.write(sid, number, data, kept)
    _refused(_call(stored, sid, "echo hi"), REFUSED + "the session's record has no valid version; "
             "the call did not run\n")
    writer.write(sid, version, data, number)
    _refused(_call(stored, sid, "echo hi"), REFUSED + "the session's record has no valid size in memory; "
             "the call did not run\n")


def test_a_record_that_understates_its_session_is_refused_before_it_is_rebuilt(store):
    """The bytes a record says its session holds decide what a call reserves before loading
    it: a record saying less than its snapshot rebuilds is refused by the signature, which
    is checked before any file is made."""
    stored, writer = StoredSessions(store, KEY), Writer(store)
    sid = _session(stored, "for i in 1 2 3 4; do head -c 100000 /dev/zero > /tmp/f$i; done")
    version, data, kept = writer.read(sid)
    assert kept > 400000 > len(data)                           # one content, four files
    writer.write(sid, version, data, 1000)
    _refused(_call(stored, sid, "ls /tmp"), NOT_SIGNED)


def test_what_a_store_writer_can_still_do(store):
    """The limits SECURITY.md states: a writer can delete a session, and a worker that has not
    seen a session's newer versions (another worker, or one restarted) accepts an older record
    that was the session's own."""
    stored, writer = StoredSessions(store, KEY), Writer(store)
    sid = _session(stored, "echo one > /tmp/state")
    older = writer.read(sid)
    assert _call(stored, sid, "echo two > /tmp/state").exit_code == 0
    writer.write(sid, *older)
    fresh = StoredSessions(store, KEY)
    assert _call(fresh, sid, "cat /tmp/state").stdout == "one\n"
    store.delete(sid)
    answer = _call(stored, sid, "cat /tmp/state")
    assert (answer.stderr, answer.exit_code) == ("bash: this session is unknown or expired: start a new one\n", 1)
