"""Incremental saves of stored BashTool sessions: a call writes the manifest and only the blobs
the store does not hold yet, removes the blobs no manifest names any more, and a worker keeps
the session it saved in memory, so that its next call reads no blob. Hostile stores: a blob
replaced, a manifest naming a missing blob or a huge number of them; two workers alternating
on one session (a directory, a real redis-server) answer as one worker does."""
from __future__ import annotations

import asyncio
import json
import os
import struct

import pytest

from scripted_kernel.tools.mcp_sessions import StoredSessions
from scripted_kernel.tools.session_store import DirectoryStore, MemoryStore, RedisStore, new_session_id

KEY = b"the server's key"
REFUSED = "bash: the stored session was refused: "


@pytest.fixture(params=["memory", "directory", "redis"])
def store(request, tmp_path):
    if request.param == "memory":
        return MemoryStore()
    if request.param == "directory":
        return DirectoryStore(str(tmp_path / "sessions"))
    return RedisStore(request.getfixturevalue("redis_url"))


def _blobs_held(store, sid: str) -> dict:
    """{sha256: bytes} the store holds for the session."""
    if isinstance(store, MemoryStore):
        return dict(store._blob_store.get(sid, {}))
    if isinstance(store, DirectoryStore):
        folder = store._file(sid, "blobs")
        names = os.listdir(folder) if os.path.isdir(folder) else []
        return {name: open(os.path.join(folder, name), "rb").read() for name in names}
    return {k.decode(): v for k, v in store.client.hgetall(store.BLOBS_PREFIX + sid).items()}


def _replace_blob(store, sid: str, sha: str, content: bytes):
    if isinstance(store, MemoryStore):
        store._blob_store[sid][sha] = content
    elif isinstance(store, DirectoryStore):
        with open(os.path.join(store._file(sid, "blobs"), sha), "wb") as f:
            f.write(content)
    else:
        store.client.hset(store.BLOBS_PREFIX + sid, sha, content)


def _remove_blob(store, sid: str, sha: str):
    if isinstance(store, MemoryStore):
        del store._blob_store[sid][sha]
    elif isinstance(store, DirectoryStore):
        os.unlink(os.path.join(store._file(sid, "blobs"), sha))
    else:
        store.client.hdel(store.BLOBS_PREFIX + sid, sha)


def _call(stored: StoredSessions, sid: str, script: str):
    return asyncio.run(stored.execute(sid, script))


def _session(stored: StoredSessions, script: str) -> str:
    sid = new_session_id()
    stored.create(sid)
    assert _call(stored, sid, script).exit_code == 0
    return sid


def _sha(content: bytes) -> str:
    import hashlib
    return hashlib.sha256(content).hexdigest()


BIG = 'x=$(printf "%1000000s" ""); echo "$x$x$x" > /data/big'


def test_a_call_saves_only_what_it_changed(store):
    stored = StoredSessions(store, KEY)
    sid = _session(stored, f"mkdir /data; {BIG}; echo one > /data/small")
    saves = []
    save = store.save
    store.save = lambda *args, **kw: saves.append((args, kw)) or save(*args, **kw)
    assert _call(stored, sid, "echo two > /data/small; y=1").exit_code == 0
    (args, _), = saves
    written, dropped = args[6], args[7]
    assert set(written) == {_sha(b"two\n")} and list(dropped) == [_sha(b"one\n")]
    held = _blobs_held(store, sid)
    assert _sha(b"one\n") not in held and held[_sha(b"two\n")] == b"two\n"
    assert len(held) == 3                      # the big file, the text of $x, the small file
    # the next call of this worker reads no blob: it holds the session as saved
    reads = []
    blobs = store.blobs
    store.blobs = lambda *args: reads.append(args) or blobs(*args)
    assert _call(stored, sid, "cat /data/small; echo $y; wc -c < /data/big").stdout == "two\n1\n3000001\n"
    assert reads == []
    # another worker loads it all, and checks it
    assert _call(StoredSessions(store, KEY), sid, "cat /data/small").stdout == "two\n"


def test_a_save_that_loses_its_compare_and_set_writes_no_blob(store):
    stored = StoredSessions(store, KEY)
    sid = _session(stored, "echo one > /tmp/f")
    version = store.sizes(sid).version
    assert not store.save(sid, version - 1, b"manifest", 1, blobs={_sha(b"lost"): b"lost"})
    assert _sha(b"lost") not in _blobs_held(store, sid)


def test_a_blob_no_manifest_names_is_not_seen_and_goes_with_its_session(store):
    """What a save that stopped between its blobs and its commit leaves."""
    stored = StoredSessions(store, KEY)
    sid = _session(stored, "echo one > /tmp/f")
    _replace_blob(store, sid, _sha(b"stray\n"), b"stray\n")
    other = StoredSessions(store, KEY)
    assert _call(other, sid, "cat /tmp/*; ls /tmp").stdout == "one\nf\n"
    store.delete(sid)
    assert _blobs_held(store, sid) == {}


def test_a_blob_replaced_in_the_store_is_refused(store):
    stored = StoredSessions(store, KEY)
    sid = _session(stored, "echo 'the real content' > /tmp/f")
    sha = _sha(b"the real content\n")
    _replace_blob(store, sid, sha, b"a forged content\n")            # of the same size
    answer = _call(StoredSessions(store, KEY), sid, "cat /tmp/f")
    assert (answer.stdout, answer.stderr, answer.exit_code, answer.error) == (
        "", REFUSED + "a blob's content does not match its sha256; the call did not run\n", 1, "session")
    _replace_blob(store, sid, sha, b"longer than the real one\n")
    answer = _call(StoredSessions(store, KEY), sid, "cat /tmp/f")
    assert answer.stderr == REFUSED + f"a blob the snapshot names ({sha[:12]}) is missing, or not of its size; " \
                                      "the call did not run\n"


def test_a_manifest_naming_a_missing_blob_is_refused(store):
    stored = StoredSessions(store, KEY)
    sid = _session(stored, "echo content > /tmp/f")
    sha = _sha(b"content\n")
    _remove_blob(store, sid, sha)
    answer = _call(StoredSessions(store, KEY), sid, "cat /tmp/f")
    assert (answer.stderr, answer.exit_code, answer.error) == (
        REFUSED + f"a blob the snapshot names ({sha[:12]}) is missing, or not of its size; the call did not run\n",
        1, "session")


def test_a_manifest_naming_a_huge_number_of_blobs_is_refused_unread(store):
    """Without a key (nothing authenticated), the count of blobs is checked against the limits
    before the manifest is parsed or any blob fetched."""
    stored = StoredSessions(store)
    sid = _session(stored, "echo content > /tmp/f")
    record = store.load(sid)
    header = struct.Struct(">6sHHHIQ32s")
    magic, version, flags, plen, mlen, blen, mac = header.unpack_from(record.data)
    preamble = json.loads(record.data[header.size:header.size + plen])
    preamble["counts"]["blobs"] = 10 ** 9
    forged_preamble = json.dumps(preamble).encode()
    forged = (header.pack(magic, version, flags, len(forged_preamble), mlen, blen, mac) + forged_preamble
              + record.data[header.size + plen:])
    assert store.save(sid, store.sizes(sid).version, forged, record.kept, stored=len(forged) + 1000)
    fetched = []
    blobs = store.blobs
    store.blobs = lambda *args: fetched.append(args) or blobs(*args)
    answer = _call(StoredSessions(store), sid, "cat /tmp/f")
    assert answer.stderr.startswith(REFUSED + "snapshot declares 1000000000 blobs, more than the limits allow (")
    assert (answer.exit_code, answer.error, fetched) == (1, "session", [])


SCRIPTS = [
    "mkdir -p /w; echo a > /w/one; n=1",
    "echo b >> /w/one; n=$((n+1)); head -c 200000 /dev/zero > /w/zeros",
    "cp /w/one /w/two; echo c > /w/one; declare -A m=([k]=v)",
    "rm /w/zeros; ln -s /w/two /w/link; f() { echo \"f $n ${m[k]}\"; }",
    "cat /w/one /w/link; f; ls /w",
    "echo c > /w/two; wc -c /w/*; ls /w; f",
    "truncate -s 0 /w/one 2>/dev/null || : > /w/one; cat /w/one; echo $n; cat /w/two",
]


@pytest.mark.parametrize("kind", ["directory", "redis"])
def test_two_workers_alternating_answer_as_one(kind, request, tmp_path):
    def store():
        if kind == "directory":
            return DirectoryStore(str(tmp_path / "sessions"))
        return RedisStore(request.getfixturevalue("redis_url"))

    single = StoredSessions(store(), KEY)
    alone = new_session_id()
    single.create(alone)
    workers = [StoredSessions(store(), KEY), StoredSessions(store(), KEY)]
    shared = new_session_id()
    workers[0].create(shared)
    for n, script in enumerate(SCRIPTS):
        expected, got = _call(single, alone, script), _call(workers[n % 2], shared, script)
        assert (got.stdout, got.stderr, got.exit_code) == (expected.stdout, expected.stderr, expected.exit_code)
    # and each worker's next call, on what the other saved last
    for worker in workers + workers:
        assert _call(worker, shared, "echo z >> /w/two; cat /w/two").stdout == \
            _call(single, alone, "echo z >> /w/two; cat /w/two").stdout
    held = set(_blobs_held(workers[0].store, shared))
    names = set(workers[1].budget.held[shared].names)
    assert held == names                         # no blob is left that the manifest does not name


MB20 = 'x=$(printf "%1000000s" ""); for f in a b; do for i in $(seq 10); do echo "$x"; done > /tmp/$f; done'


def test_held_sessions_stay_within_the_memory_bound():
    """The sessions a worker keeps after their calls count against max_sessions_bytes, and the
    least recently used goes when a call could use its room (each call here may reserve up to
    2 x 80 MiB: its files' 64 MiB and a shell state's 16 MiB)."""
    store = MemoryStore()
    bound = 170 << 20
    stored = StoredSessions(store, KEY, max_bytes=bound)
    first = _session(stored, MB20)
    assert set(stored.budget.held) == {first}
    second = _session(stored, "echo small > /tmp/f")
    assert set(stored.budget.held) == {second}
    assert stored.budget.reserved <= bound
    assert _call(stored, first, "cat /tmp/a /tmp/b | wc -c").stdout == "20000020\n"


def test_a_held_session_gets_its_own_calls_room_again():
    """A call's files may grow into what the calls in flight leave: a session held from a call
    that had little room has the whole room of its next call."""
    stored = StoredSessions(MemoryStore(), KEY, max_bytes=60 << 20)
    sid = _session(stored, "echo small > /tmp/f")
    assert _call(stored, sid, MB20).exit_code == 1            # ~13 MiB of room for files in 60 MiB
    stored.budget.max_bytes = 512 << 20
    assert sid in stored.budget.held
    answer = _call(stored, sid, MB20 + "; cat /tmp/a /tmp/b | wc -c")
    assert (answer.stdout, answer.exit_code) == ("20000020\n", 0)


def test_a_call_refused_for_memory_leaves_its_session_held():
    stored = StoredSessions(MemoryStore(), KEY)
    sid = _session(stored, "echo kept > /tmp/f")
    held = stored.budget.held[sid]
    assert stored.budget.reserved == held.kept
    stored.budget.max_bytes = 1 << 20                         # less than any call needs
    assert _call(stored, sid, "echo never").error == "limit:max_sessions_bytes"
    assert stored.budget.held[sid] is held and stored.budget.reserved == held.kept
    stored.budget.max_bytes = 512 << 20
    assert _call(stored, sid, "cat /tmp/f").stdout == "kept\n"
