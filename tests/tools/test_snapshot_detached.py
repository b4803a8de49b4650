"""Snapshots whose blobs are kept apart (what a session store saves), and the digests a capture
reuses for the file contents that did not change since the last one."""
from __future__ import annotations

import pytest

from scripted_kernel.base.records import SnapshotError, SnapshotLimits
from scripted_kernel.tools import snapshot
from scripted_kernel.tools.bash_tool import BashTool

KEY = b"key"


def _blob_names(manifest: dict) -> dict:
    """{path-independent inode number: content sha256} of a captured manifest's files."""
    return {r[3]: r[4] for r in manifest["fs"]["inodes"] if r[0] == "-"}


CHANGES = [
    "echo more >> /tmp/grown",                            # appended in place
    "echo BBBB > /tmp/same",                              # new bytes of the same length
    "rm /tmp/gone; echo AAAA > /tmp/gone",                # removed and made again
    "cp /tmp/same /tmp/copy",
    ": > /tmp/grown; echo x >> /tmp/grown",               # emptied, then grown again
    "mv /tmp/copy /tmp/moved; ln /tmp/moved /tmp/hard",
]


def test_digests_of_unchanged_contents_are_reused_and_changed_ones_taken_again():
    tool = BashTool()
    tool.execute("echo AAAA > /tmp/same; echo start > /tmp/grown; echo AAAA > /tmp/gone")
    digests = snapshot.Digests()
    tool._capture(known=digests)
    for change in CHANGES:
        assert tool.execute(change).exit_code == 0
        reused, _ = tool._capture(known=digests)
        fresh, _ = tool._capture()
        assert _blob_names(reused) == _blob_names(fresh), change


def test_a_capture_with_digests_hashes_only_the_changed_contents(monkeypatch):
    tool = BashTool()
    tool.execute("for i in 1 2 3 4 5; do echo $i > /tmp/f$i; done")
    digests = snapshot.Digests()
    tool._capture(known=digests)
    tool.execute("echo six >> /tmp/f3")
    hashed = []
    real = snapshot.hashlib.sha256
    monkeypatch.setattr(snapshot.hashlib, "sha256", lambda data=b"": hashed.append(bytes(data)) or real(data))
    tool._capture(known=digests)
    assert hashed == [b"3\nsix\n"]


def test_a_detached_snapshot_round_trips_through_its_blobs():
    tool = BashTool()
    tool.execute("echo hello > /tmp/a; cp /tmp/a /tmp/b; v=1")
    manifest, blobs = tool._capture()
    head = snapshot.encode_detached(manifest, blobs, KEY)
    asked = []

    def fetch(wanted):
        asked.append(wanted)
        return {sha: bytes(blobs[sha]) for sha in wanted}
    loaded = snapshot.decode(head, SnapshotLimits.of(tool.limits), KEY, fetch)
    assert asked == [{sha: len(b) for sha, b in blobs.items()}]
    _, fs, _ = snapshot.rebuild(loaded.manifest, loaded.blobs, tool.limits)
    assert fs.read_bytes("/tmp/b") == b"hello\n"
    assert b"hello" not in head                   # the manifest names the content, and does not hold it


def test_a_detached_snapshot_refuses_what_its_store_gives_wrongly():
    tool = BashTool()
    tool.execute("echo hello > /tmp/a")
    manifest, blobs = tool._capture()
    head = snapshot.encode_detached(manifest, blobs, KEY)
    limits = SnapshotLimits.of(tool.limits)
    (sha, content), = blobs.items()
    cases = {
        "a blob's content does not match its sha256": {sha: b"HELLO\n"},
        f"a blob the snapshot names ({sha[:12]}) is missing, or not of its size": {},
    }
    for message, given in cases.items():
        with pytest.raises(SnapshotError, match=message.replace("(", r"\(").replace(")", r"\)")):
            snapshot.decode(head, limits, KEY, lambda wanted, given=given: given)
    with pytest.raises(SnapshotError, match="nowhere to get them from"):
        snapshot.decode(head, limits, KEY)
    with pytest.raises(SnapshotError, match="signature does not match"):
        snapshot.decode(head, limits, b"another key", lambda wanted: {sha: bytes(content)})


def test_digests_seeded_from_a_rebuild_hash_nothing_until_a_file_changes(monkeypatch):
    tool = BashTool()
    tool.execute("mkdir -p /d/e; echo 1 > /d/one; echo 2 > /d/e/two; ln /d/one /d/e/hard; ln -s /d/one /d/link")
    manifest, blobs = tool._capture()
    meta, fs, shell = snapshot.rebuild(manifest, {sha: bytes(b) for sha, b in blobs.items()}, tool.limits)
    digests = snapshot.Digests()
    digests.seed(fs, manifest, blobs)
    restored = BashTool()
    restored._install(fs, shell)
    hashed = []
    real = snapshot.hashlib.sha256
    monkeypatch.setattr(snapshot.hashlib, "sha256", lambda data=b"": hashed.append(bytes(data)) or real(data))
    again, _ = restored._capture(known=digests)
    assert hashed == [] and _blob_names(again) == _blob_names(manifest)
    restored.execute("echo 3 >> /d/e/two")
    restored._capture(known=digests)
    assert hashed == [b"2\n3\n"]
