"""Snapshots from an untrusted store: every malformed, oversized, forged or tampered one is
refused with a clear SnapshotError, before it allocates what it declares, and nothing in one runs."""
from __future__ import annotations

import copy
import json
import struct
import time
import tracemalloc
import zlib

import pytest

from scripted_kernel import BashTool
from scripted_kernel.base.limits import ExecutionLimits
from scripted_kernel.tools import snapshot as snap
from scripted_kernel.tools.snapshot import HEADER_BYTES, SnapshotError, SnapshotLimits, decode, encode


@pytest.fixture(scope="module")
def original():
    tool = BashTool()
    tool.execute("mkdir -p /tmp/d; seq 2000 > /tmp/d/numbers; ln -s numbers /tmp/d/l; "
                 "x=1; a=(1 2 3); f() { echo f; }")
    return tool.snapshot()


def _loaded(data):
    return decode(data, SnapshotLimits.of(ExecutionLimits()))


def _forge(manifest, blobs, **counts):
    manifest = copy.deepcopy(manifest)
    manifest.pop("blobs", None)
    real = dict.fromkeys(snap.COUNTS, 0)
    real.update(inodes=len((manifest.get("fs") or {}).get("inodes", [])),
                names=len((manifest.get("fs") or {}).get("inodes", [])),
                variables=len((manifest.get("shell") or {}).get("variables", [])),
                elements=100, functions=len((manifest.get("shell") or {}).get("functions", [])))
    real.update(counts)
    manifest["counts"] = real
    return encode(manifest, blobs)


def _refused(data, match, **kw):
    with pytest.raises(SnapshotError, match=match):
        BashTool.builder().from_snapshot(data, **kw).build()


def test_not_a_snapshot():
    _refused(b"", "truncated|not a snapshot")
    _refused(b"PK\x03\x04" + bytes(100), "not a snapshot")
    with pytest.raises(SnapshotError, match="bytes"):
        BashTool().restore("a string")


def test_truncated(original):
    for cut in (3, 10, HEADER_BYTES - 1, HEADER_BYTES + 5, len(original) // 2, len(original) - 1):
        _refused(original[:cut], "truncated|not a snapshot")
    _refused(original + b"x", "after its end")


def test_wrong_version_and_flags(original):
    _refused(original[:6] + struct.pack(">H", 2) + original[8:], "version 2")
    _refused(original[:8] + struct.pack(">H", 0x80) + original[10:], "unknown snapshot flags")


def test_oversized_is_refused_before_it_is_read(original):
    tool = BashTool()
    tool.execute("seq 100000 > /tmp/big")
    small = ExecutionLimits(max_fs_bytes=1000, max_shell_state_bytes=1000, max_file_count=10)
    with pytest.raises(SnapshotError, match="too large"):
        BashTool.builder().limits(small).from_snapshot(tool.snapshot()).build()
    with pytest.raises(SnapshotError, match="declares 2[0-9] variables"):
        BashTool.builder().limits(small).from_snapshot(original).build()
    # a header declaring a manifest bigger than the limits allow: refused on the declaration
    forged = original[:12] + struct.pack(">I", 1 << 31) + original[16:]
    _refused(forged, "manifest of")


def test_forged_sizes(original):
    loaded = _loaded(original)
    # the blob section longer than the data
    _refused(original[:16] + struct.pack(">Q", 1 << 40) + original[24:], "truncated")
    # a blob declaring 10 GB
    manifest = copy.deepcopy(loaded.manifest)
    manifest["blobs"][0][1] = manifest["blobs"][0][2] = 10 << 30
    raw = _raw(manifest, loaded)
    _refused(raw, "blob size|blobs declare")
    # a blob whose stored size disagrees with the section
    manifest = copy.deepcopy(loaded.manifest)
    manifest["blobs"][0][1] += 1
    manifest["blobs"][0][2] += 1
    _refused(_raw(manifest, loaded), "blob table declares")
    # a blob whose content is not its hash
    body = bytearray(original)
    body[-1] ^= 1
    _refused(bytes(body), "sha256")


def _raw(manifest, loaded):
    """Bytes with `manifest` (blob table included, as given) and the original blobs."""
    preamble = json.dumps({"counts": dict({k: 100 for k in snap.COUNTS}, blobs=len(manifest["blobs"]))}).encode()
    body = json.dumps(manifest).encode()
    blobs = b"".join(loaded.blobs[entry[0]] for entry in _loaded_table(loaded))
    header = struct.pack(">6sHHHIQ32s", b"SKSNAP", 1, 0, len(preamble), len(body), len(blobs), bytes(32))
    return header + preamble + body + blobs


def _loaded_table(loaded):
    return loaded.manifest["blobs"]


def test_paths_with_dot_dot_and_bad_names(original):
    loaded = _loaded(original)
    for bad in ("..", ".", "", "a/b", "x\0y", "n" * 300):
        manifest = copy.deepcopy(loaded.manifest)
        root = manifest["fs"]["inodes"][0][4]
        root[0][0] = bad
        _refused(_forge(manifest, loaded.blobs), "not a valid name|file name")
    for cwd in ("/tmp/../etc", "tmp", "/tmp/", "/a//b", "/./x"):
        manifest = copy.deepcopy(loaded.manifest)
        manifest["shell"]["cwd"] = cwd
        _refused(_forge(manifest, loaded.blobs), "normalised")


def test_modes_inodes_and_targets_in_range(original):
    loaded = _loaded(original)
    inodes = loaded.manifest["fs"]["inodes"]
    link = next(i for i, r in enumerate(inodes) if r[0] == "l")
    cases = [(1, 0o10000, "file mode"), (1, -1, "file mode"), (2, float("nan"), "JSON|time"),
             (3, 1 << 63, "inode number"), (0, "c", "kind")]
    for field, value, match in cases:
        manifest = copy.deepcopy(loaded.manifest)
        manifest["fs"]["inodes"][link][field] = value
        with pytest.raises((SnapshotError, ValueError), match=match):
            BashTool.builder().from_snapshot(_forge(manifest, loaded.blobs)).build()
    manifest = copy.deepcopy(loaded.manifest)
    manifest["fs"]["inodes"][link][4] = "x" * 5000
    _refused(_forge(manifest, loaded.blobs), "link target")


def test_a_symlink_loop_is_kept_and_a_directory_cycle_refused(original):
    tool = BashTool()
    tool.execute("ln -s b /tmp/a; ln -s a /tmp/b")
    copy_ = BashTool.builder().from_snapshot(tool.snapshot()).build()
    started = time.monotonic()
    result = copy_.execute("cat /tmp/a")
    assert "Too many levels of symbolic links" in result.stderr and time.monotonic() - started < 5
    loaded = _loaded(original)
    manifest = copy.deepcopy(loaded.manifest)
    inodes = manifest["fs"]["inodes"]
    tmp = inodes[0][4][0][1]
    inodes[tmp][4].append(["loop", 0])              # /tmp/loop is the root again
    _refused(_forge(manifest, loaded.blobs), "cycle|names no inode|two names")
    manifest = copy.deepcopy(loaded.manifest)
    manifest["fs"]["inodes"][tmp][4].append(["me", tmp])
    _refused(_forge(manifest, loaded.blobs), "cycle|two names")


def test_a_million_variables_in_a_small_file():
    # declared honestly: refused on the preamble's count, before the manifest is parsed
    variables = ",".join(f'["v{i}",0,"s",""]' for i in range(1_000_000))
    body = ('{"format":"scripted-snapshot","version":1,"meta":{"username":"user","hostname":"h"},'
            '"fs":null,"shell":{"variables":[' + variables + ']},"blobs":[]}').encode()

    def raw(declared):
        counts = dict.fromkeys(snap.COUNTS, 0) | {"variables": declared}
        preamble = json.dumps({"counts": counts}).encode()
        return struct.pack(">6sHHHIQ32s", b"SKSNAP", 1, 0, len(preamble), len(body), 0, bytes(32)) + preamble + body
    _refused(raw(1_000_000), "declares 1000000 variables")
    # declared as one: the manifest is larger than one record can be, refused unparsed
    data = raw(1)
    tracemalloc.start()
    try:
        _refused(data, "larger than its")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * len(data)


def test_a_compression_bomb_is_not_inflated():
    bomb = zlib.compress(bytes(200 << 20), 9)            # 200 MB of zeros in ~200 KB
    sha = "0" * 64
    manifest = {"format": "scripted-snapshot", "version": 1, "meta": {"username": "user", "hostname": "h"},
                "fs": None, "shell": None, "blobs": [[sha, 100, len(bomb), "zlib"]]}
    preamble = json.dumps({"counts": dict.fromkeys(snap.COUNTS, 0) | {"blobs": 1}}).encode()
    body = json.dumps(manifest).encode()
    header = struct.pack(">6sHHHIQ32s", b"SKSNAP", 1, 2, len(preamble), len(body), len(bomb), bytes(32))
    tracemalloc.start()
    try:
        _refused(header + preamble + body + bomb, "inflate to its declared size")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20


def test_a_tampered_signed_snapshot():
    tool = BashTool.builder().snapshot_key(b"secret").build()
    tool.execute("echo 'safe' > /tmp/f; x=1")
    data = tool.snapshot()
    restored = BashTool.builder().from_snapshot(data, key=b"secret").build()
    assert restored.execute("cat /tmp/f").stdout == "safe\n"
    at = data.index(b'"x"')
    tampered = data[:at] + b'"y"' + data[at + 3:]
    _refused(tampered, "signature", key=b"secret")
    _refused(data, "signature", key=b"wrong")
    # stripping the signature does not help: a tool with a key refuses unsigned snapshots
    unsigned = data[:8] + struct.pack(">H", 0) + data[10:24] + bytes(32) + data[HEADER_BYTES:]
    _refused(unsigned, "unsigned", key=b"secret")


def test_a_function_text_cannot_run_anything(original):
    loaded = _loaded(original)
    for text in ("f() { echo f; }; echo pwned > /tmp/pwned", "echo pwned > /tmp/pwned", "g() { :; }",
                 "f() { echo f; }\necho pwned > /tmp/pwned", "f() {"):
        manifest = copy.deepcopy(loaded.manifest)
        manifest["shell"]["functions"] = [["f", 1, text]]
        _refused(_forge(manifest, loaded.blobs), "not one definition|does not parse")
    manifest = copy.deepcopy(loaded.manifest)
    manifest["shell"]["traps"] = {"EXIT; rm": "x"}
    _refused(_forge(manifest, loaded.blobs), "not a signal name")


def test_variables_validated(original):
    loaded = _loaded(original)
    for entry, match in ((["1x", 0, "s", "v"], "valid name"), (["x", 999, "s", "v"], "attributes"),
                         (["x", 0, "q", "v"], "unknown kind"), (["x", 0, "a", [0, [[5, "v"]]]], "top"),
                         (["x", 0, "a", [9, [[5, "v"], [2, "w"]]]], "out of order"),
                         (["x", 0, "s", {"blob": "f" * 64}], "blob")):
        manifest = copy.deepcopy(loaded.manifest)
        manifest["shell"]["variables"].append(entry)
        _refused(_forge(manifest, loaded.blobs), match)
    manifest = copy.deepcopy(loaded.manifest)
    manifest["shell"]["random"] = "AAAA"
    _refused(_forge(manifest, loaded.blobs), "RANDOM")
