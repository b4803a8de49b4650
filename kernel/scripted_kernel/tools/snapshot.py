"""Snapshots of a session: its files and its shell's state as bytes, and back.

A snapshot is safe to load from an untrusted store: no pickle, nothing in it is run (a
function's text is parsed, checked to be exactly one function definition of its name, and
only that definition is compiled), every size is checked against the restoring tool's limits
before anything is allocated for it, every field is validated, and, when the host gives a key,
an HMAC-SHA256 signature is checked before anything else is read (`bound_key` derives a key
that binds a snapshot to a context, such as the session and version a store keeps it as).

This module owns the container (header, preamble, manifest, blobs, signature); each section
belongs to its owner: the files to fs/tree_io.py, the shell's state to shell/state_io.py
(reached through the shell's front door, shell/api.py), the checks of untrusted records to
base/records.py.

The format, version 1 (all integers big-endian):

    offset  size  field
    0       6     magic b"SKSNAP"
    6       2     version (1)
    8       2     flags: bit 0 signed, bit 1 some blobs are zlib-compressed, bit 2 the blobs
                  are kept apart (the blob section is empty: the reader gets each blob the
                  table names from where the snapshot is kept, and checks its sha256 and size),
                  bit 3 the manifest has a "pending" section (below); a reader without this bit
                  refuses such a snapshot rather than dropping what the section holds
    10      2     preamble length P (at most 4096)
    12      4     manifest length M
    16      8     blob section length B
    24      32    HMAC-SHA256 of everything after these 32 bytes (zero when unsigned)
    56      P     preamble: JSON {"counts": {...}}, the number of each kind of record the
                  manifest holds (checked against the limits before the manifest is parsed,
                  and against the manifest after)
    56+P    M     manifest: JSON (UTF-8, lone surrogates as `surrogatepass`), below
    56+P+M  B     blobs: their stored bytes one after another, in the manifest's blob order

The manifest:

    {"format": "scripted-snapshot", "version": 1,
     "meta":  {"username": str, "hostname": str, "created": float, "message": str?},
     "blobs": [[sha256 hex of the content, size, stored size, codec ("" or "zlib")], ...],
     "fs":    null (no files) | {
         "clock": float, "next_ino": int,
         "inodes": [[kind "d"|"-"|"l", mode, mtime, ino, payload], ...],   index = inode id;
             payload: a directory's [[name, inode id], ...] in its order, or "mount" for a host
             mount point (recorded, never copied); a file's content as a blob's sha256;
             a symbolic link's target
         "root": 0},
     "shell": null (no shell yet, or a fresh shell per call) | {
         "cwd", "dirstack", "umask", "status", "last_arg", "script_name", "seconds",
         "positional", "pipestatus", "options" {set -o name: bool}, "shopts" {name: bool},
         "traps" {name: action}, "exported_functions" [name],
         "variables": [[name, attrs, kind, value], ...] in the shell's order; kind "u" (declared,
             no value), "s" (value: text), "a" (value: [top, [[index, text], ...]]),
             "A" (value: [[key, text], ...] in insertion order, which bash's listing order needs)
         "functions": [[name, line, text], ...]: the definition's text, at its line
         "random": the $RANDOM generator's state (base64 of 625 32-bit words) or null,
         "random_seeded": bash's generator once `RANDOM=N` seeded it, [state, last value], or null},
     "pending": [record, ...]: only with flag bit 3, the runs a notebook keeps waiting for a
         decision; each record names its bytes as blobs of this snapshot (sharing them with the
         session's). This module checks only that it is a list: the reader that asks for the
         runs checks the records (scripted_magic/pending_io.py); any other reader ignores them.}

A text longer than INLINE_MAX characters (a variable's value, a function, a trap) is stored as a
blob and written in the manifest as {"blob": sha256}. Blobs are content-addressed: a file
content or a text held twice is stored once, which is also what makes history cheap
(tools/history.py keeps one blob store for all of a session's commits).

What is not kept: descriptors opened with `exec N>file` (closed on restore), the host
directories themselves (only their mount points: the restoring tool's own mounts are attached
there), a function's own redirections written after its body on another line.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import re
import struct
import time
import zlib
from dataclasses import dataclass
from typing import Optional

from ..base.limits import ExecutionLimits
from ..base.records import (COUNTS, HEADER_BYTES, MAX_PREAMBLE, Capture, SnapshotError, SnapshotLimits,  # noqa: F401
                            integer, listed, mapping, text)
from ..fs import MemoryFs
from ..fs.memory import NAME_MAX, PATH_MAX
from ..fs.tree_io import capture_tree, host_mounts, restore_tree  # noqa: F401  (host_mounts: callers' name for it)
from ..shell.api import ShellSession

MAGIC = b"SKSNAP"
VERSION = 1
_HEADER = struct.Struct(">6sHHHIQ32s")
assert _HEADER.size == HEADER_BYTES
FLAG_SIGNED, FLAG_COMPRESSED, FLAG_DETACHED, FLAG_PENDING = 1, 2, 4, 8
# the most manifest text one record may take: a link's target or a path (PATH_MAX bytes, six
# if every character were escaped), a name, the punctuation around them
_RECORD_BOUND = 6 * PATH_MAX + 6 * NAME_MAX + 64
_SHA = re.compile(r"[0-9a-f]{64}\Z")


def capture(fs, session: Optional[ShellSession], username: str, hostname: str, message: Optional[str] = None,
            known: Optional[dict] = None) -> tuple:
    """(manifest, blobs) of a filesystem (a MemoryFs, or None) and the shell a session keeps
    (or None). The caller holds the session so that nothing changes meanwhile; nothing here
    changes the session, but for giving a shell that draws $RANDOM from the shared generator
    one of its own. `known`: blobs held already (sha256 -> bytes), used rather than copied; or
    the Digests of the session's earlier captures, whose blobs are then its live contents (not
    copies: read them before the session runs again)."""
    cap = known.capture() if isinstance(known, Digests) else Capture(known)
    meta: dict = {"username": username, "hostname": hostname, "created": time.time()}
    if message is not None:
        meta["message"] = message
    manifest: dict = {"format": "scripted-snapshot", "version": VERSION,
                      "meta": meta,
                      "fs": capture_tree(fs, cap) if isinstance(fs, MemoryFs) else None,
                      "shell": session.capture(cap) if session is not None else None}
    cap.counts["blobs"] = len(cap.blobs)
    manifest["counts"] = cap.counts
    return manifest, cap.blobs


class Digests:
    """The sha256 of each file content a session's earlier capture saw, so that capturing a
    session whose files mostly did not change hashes only those that did (a session store
    saves only the blobs it does not hold yet). A content is known by its object and its
    length: MemoryFs changes a file's bytes only by appending to them (they grow) or by giving
    the file a new bytearray, so the same object at the same length holds the same bytes. Each
    entry holds its object, so no other object can take its id; a capture keeps the entries
    of the contents it saw and drops the others."""

    def __init__(self):
        self.known: dict = {}               # id(content) -> (content, length, sha256 hex)

    def capture(self) -> Capture:
        return _DigestCapture(self)

    def seed(self, fs, manifest: dict, blobs: dict):
        """The digests of the files of `fs`, just rebuilt from `manifest` and its checked
        `blobs`: each file's content is the blob its record names (walked name by name, as the
        rebuild made them), so the next capture hashes none of them again."""
        spec = manifest.get("fs")
        if not isinstance(fs, MemoryFs) or spec is None:
            return
        inodes = spec["inodes"]
        stack = [(fs.snapshot_parts()[0], inodes[0])]
        while stack:
            directory, record = stack.pop()
            if record[4] == "mount":
                continue
            for name, child in record[4]:
                node, kind = (directory.entries or {}).get(name), inodes[child][0]
                if node is None or node.kind != kind or node.host is not None:
                    continue
                if kind == "d":
                    stack.append((node, inodes[child]))
                elif kind == "-" and node.data is not None and len(node.data) == len(blobs[inodes[child][4]]):
                    self.known[id(node.data)] = (node.data, len(node.data), inodes[child][4])


class _DigestCapture(Capture):
    """A capture that takes the digests of unchanged contents from a Digests, and names each
    blob by the live content rather than a copy of it."""

    def __init__(self, digests: Digests):
        super().__init__()
        self.before = digests.known
        self.seen: dict = {}
        digests.known = self.seen           # what this capture sees is what the next one knows

    def blob(self, data) -> str:
        held = self.before.get(id(data))
        if held is not None and held[0] is data and held[1] == len(data):
            sha = held[2]
        else:
            sha = hashlib.sha256(data).hexdigest()
        self.seen[id(data)] = (data, len(data), sha)
        self.blobs.setdefault(sha, data)
        return sha


# ---------------------------------------------------------------- encoding

def encode(manifest: dict, blobs: dict, key: Optional[bytes] = None, compress: bool = False) -> bytes:
    """The snapshot's bytes: header, preamble, manifest, then each blob the manifest needs."""
    table, stored = [], []
    for sha in _blob_order(manifest, blobs):
        data = blobs[sha]
        codec = ""
        if compress and len(data) > 256:
            packed = zlib.compress(data, 1)
            if len(packed) < len(data) * 0.9:
                data, codec = packed, "zlib"
        table.append([sha, len(blobs[sha]), len(data), codec])
        stored.append(data)
    return b"".join(_pack(manifest, table, stored, key, FLAG_COMPRESSED if any(t[3] for t in table) else 0))


def encode_detached(manifest: dict, blobs: dict, key: Optional[bytes] = None) -> bytes:
    """The snapshot without its blobs (flag bit 2): its table names each blob by sha256 and
    size, and the signature covers the table, so a blob kept apart is checked by its digest."""
    table = [[sha, len(blobs[sha]), len(blobs[sha]), ""] for sha in _blob_order(manifest, blobs)]
    return b"".join(_pack(manifest, table, [], key, FLAG_DETACHED))


def _pack(manifest: dict, table: list, stored: list, key: Optional[bytes], flags: int) -> list:
    """The parts of a snapshot: its header (signed with `key`), preamble, manifest, blobs."""
    manifest = dict(manifest)
    counts = dict(manifest.pop("counts"), blobs=len(table))
    manifest["blobs"] = table
    preamble = json.dumps({"counts": counts}, separators=(",", ":")).encode("ascii")
    body = json.dumps(manifest, ensure_ascii=False, separators=(",", ":"),
                      allow_nan=False).encode("utf-8", "surrogatepass")
    flags |= (FLAG_SIGNED if key else 0) | (FLAG_PENDING if "pending" in manifest else 0)
    blob_bytes = sum(len(d) for d in stored)
    header = _HEADER.pack(MAGIC, VERSION, flags, len(preamble), len(body), blob_bytes, bytes(32))
    parts = [header, preamble, body, *stored]
    if key:
        mac = hmac.new(_key(key), digestmod=hashlib.sha256)
        mac.update(header[:24])
        for part in parts[1:]:
            mac.update(part)
        parts[0] = header[:24] + mac.digest()
    return parts


def _blob_order(manifest: dict, blobs: dict) -> list:
    """The blobs the manifest names, each once, in a stable order."""
    return sorted(blobs)


def _key(key) -> bytes:
    return key.encode("utf-8") if isinstance(key, str) else bytes(key)


def bound_key(key, *context) -> bytes:
    """A signing key for snapshots valid in one context only (say a session's id and version):
    the HMAC-SHA256 of the context under `key`. A snapshot signed with it is refused under
    `key` itself and under any other context, as one signed with another key is."""
    text = json.dumps(["scripted-snapshot-context", *context], separators=(",", ":"))
    return hmac.new(_key(key), text.encode("utf-8"), hashlib.sha256).digest()


@dataclass
class Loaded:
    manifest: dict
    blobs: dict                     # sha256 hex -> bytes
    counts: Optional[dict] = None   # the records the preamble declares


def decode(data: bytes, limits: SnapshotLimits, key: Optional[bytes] = None, fetch=None) -> Loaded:
    """Check and parse a snapshot; SnapshotError saying what is wrong with it. `fetch`: for a
    snapshot whose blobs are kept apart, {sha256: size} -> {sha256: bytes} of those it has,
    called once the signature and the blob table are checked."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise SnapshotError(f"a snapshot is bytes, not {type(data).__name__}")
    data = memoryview(data).cast("B") if not isinstance(data, bytes) else data
    if len(data) > limits.max_bytes:
        raise SnapshotError(f"snapshot too large: {len(data)} bytes, more than {limits.max_bytes} "
                            f"(from the limits max_fs_bytes and max_shell_state_bytes)")
    if len(data) < HEADER_BYTES or bytes(data[:6]) != MAGIC:
        raise SnapshotError("not a snapshot (no SKSNAP header)" if bytes(data[:6]) != MAGIC[:len(data[:6])]
                            or len(data) >= 6 else "truncated snapshot: shorter than its header")
    magic, version, flags, plen, mlen, blen, signature = _HEADER.unpack_from(data)
    if version != VERSION:
        raise SnapshotError(f"snapshot format version {version}: this library reads version {VERSION}")
    if flags & ~(FLAG_SIGNED | FLAG_COMPRESSED | FLAG_DETACHED | FLAG_PENDING):
        raise SnapshotError(f"unknown snapshot flags {flags:#x}")
    if plen > MAX_PREAMBLE:
        raise SnapshotError(f"snapshot preamble of {plen} bytes, more than {MAX_PREAMBLE}")
    if mlen > limits.max_manifest_bytes:
        raise SnapshotError(f"snapshot manifest of {mlen} bytes, more than {limits.max_manifest_bytes}")
    total = HEADER_BYTES + plen + mlen + blen
    if total != len(data):
        raise SnapshotError(f"truncated snapshot: its header declares {total} bytes, it has {len(data)}"
                            if total > len(data) else
                            f"snapshot has {len(data) - total} bytes after its end")
    if key:
        if not flags & FLAG_SIGNED:
            raise SnapshotError("unsigned snapshot refused: a signing key is set")
        mac = hmac.new(_key(key), digestmod=hashlib.sha256)
        mac.update(data[:24])
        mac.update(data[HEADER_BYTES:])
        if not hmac.compare_digest(mac.digest(), signature):
            raise SnapshotError("snapshot signature does not match: tampered with, or signed with "
                                "another key")
    counts = _preamble(bytes(data[HEADER_BYTES:HEADER_BYTES + plen]), limits)
    records = sum(counts.values())
    if mlen > 64 * 1024 + _RECORD_BOUND * records:
        raise SnapshotError(f"snapshot manifest of {mlen} bytes is larger than its {records} "
                            f"declared records can be")
    start = HEADER_BYTES + plen
    try:
        text = bytes(data[start:start + mlen]).decode("utf-8", "surrogatepass")
        manifest = json.loads(text, parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise SnapshotError(f"snapshot manifest is not valid JSON: {str(e)[:200]}") from None
    manifest = mapping(manifest, "manifest")
    if manifest.get("format") != "scripted-snapshot" or manifest.get("version") != VERSION:
        raise SnapshotError("snapshot manifest names another format or version")
    if bool(flags & FLAG_PENDING) != ("pending" in manifest) or type(manifest.get("pending", [])) is not list:
        raise SnapshotError("snapshot pending section: not a list, or not where its flag says")
    if flags & FLAG_DETACHED:
        if blen or fetch is None:
            raise SnapshotError("a snapshot whose blobs are kept apart has a blob section, or nowhere to get "
                                "them from")
        blobs = _fetched(_blob_table(manifest.get("blobs"), limits, counts), fetch)
    else:
        blobs = _blobs(manifest.get("blobs"), data, start + mlen, blen, limits, counts)
    _check_counts(manifest, counts)
    return Loaded(manifest, blobs, counts)


def _check_counts(manifest: dict, declared: dict):
    """The manifest holds no more records of a kind than its preamble declared (which the
    limits were checked against)."""
    try:
        held = dict.fromkeys(COUNTS, 0)
        fs = manifest.get("fs")
        if fs is not None:
            inodes = fs["inodes"]
            held["inodes"] = len(inodes)
            held["names"] = sum(len(r[4]) for r in inodes if type(r) is list and len(r) == 5
                                and type(r[4]) is list)
        shell = manifest.get("shell")
        if shell is not None:
            held["variables"] = len(shell["variables"])
            held["functions"] = len(shell["functions"])
            held["elements"] = sum(len(v[3][1]) if v[2] == "a" else len(v[3]) for v in shell["variables"]
                                   if type(v) is list and len(v) == 4 and v[2] in ("a", "A")
                                   and type(v[3]) is list and (v[2] == "A" or len(v[3]) == 2))
    except (KeyError, TypeError, IndexError):
        raise SnapshotError("snapshot manifest: a section is malformed") from None
    for name, n in held.items():
        if n > declared[name]:
            raise SnapshotError(f"snapshot declares {declared[name]} {name} and holds {n}")


def _no_constant(name):
    raise ValueError(f"{name} is not allowed")


def _preamble(raw: bytes, limits: SnapshotLimits) -> dict:
    try:
        preamble = json.loads(raw.decode("ascii"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise SnapshotError("snapshot preamble is not valid JSON") from None
    counts = mapping(mapping(preamble, "preamble").get("counts"), "counts")
    maxima = limits.max_records()
    out = {}
    for name in COUNTS:
        n = counts.get(name)
        if type(n) is not int or n < 0:
            raise SnapshotError(f"snapshot preamble: count of {name} missing or not a count")
        if n > maxima[name]:
            raise SnapshotError(f"snapshot declares {n} {name}, more than the limits allow ({maxima[name]})")
        out[name] = n
    if set(counts) - set(COUNTS):
        raise SnapshotError("snapshot preamble has unknown counts")
    return out


def _blob_table(table, limits: SnapshotLimits, counts: dict) -> list:
    """The checked entries (sha256, size, stored size, codec) of a snapshot's blob table."""
    table = listed(table, "blobs", counts["blobs"])
    if len(table) != counts["blobs"]:
        raise SnapshotError(f"snapshot declares {counts['blobs']} blobs, its table lists {len(table)}")
    declared = 0
    biggest = max(limits.max_file_bytes, 4 * limits.max_string_length)
    entries = []
    for entry in table:
        entry = listed(entry, "blob entry", 4)
        if len(entry) != 4:
            raise SnapshotError("a blob entry is not [sha256, size, stored size, codec]")
        sha, size, stored, codec = entry
        if type(sha) is not str or not _SHA.match(sha):
            raise SnapshotError("a blob's name is not a sha256 in hex")
        size = integer(size, "blob size", 0, biggest)
        stored = integer(stored, "blob stored size", 0, biggest)
        if codec not in ("", "zlib") or (codec == "" and stored != size):
            raise SnapshotError("a blob's codec or sizes are wrong")
        declared += size
        entries.append((sha, size, stored, codec))
    if declared > limits.max_fs_bytes + 2 * limits.max_state_bytes:
        raise SnapshotError(f"snapshot blobs declare {declared} bytes, more than the limits allow")
    return entries


def _blobs(table, data, offset: int, blen: int, limits: SnapshotLimits, counts: dict) -> dict:
    entries = _blob_table(table, limits, counts)
    if sum(e[2] for e in entries) != blen:
        raise SnapshotError(f"snapshot blob table declares {sum(e[2] for e in entries)} bytes, its section has "
                            f"{blen}")
    blobs: dict = {}
    for sha, size, stored, codec in entries:
        raw = data[offset:offset + stored]
        offset += stored
        if codec == "zlib":
            inflater = zlib.decompressobj()
            try:
                content = inflater.decompress(raw, size + 1)
            except zlib.error:
                raise SnapshotError("a compressed blob is damaged") from None
            if len(content) != size or not inflater.eof:
                raise SnapshotError("a compressed blob does not inflate to its declared size")
        else:
            content = bytes(raw)
        _add_checked(blobs, sha, content)
    return blobs


def _fetched(entries: list, fetch) -> dict:
    """The blobs of a snapshot that keeps them apart, from `fetch`, each checked."""
    if any(codec for _, _, _, codec in entries):
        raise SnapshotError("a blob kept apart is compressed")
    got = fetch({sha: size for sha, size, _, _ in entries})
    blobs: dict = {}
    for sha, size, _, _ in entries:
        content = got.get(sha)
        if content is None or len(content) != size:
            raise SnapshotError(f"a blob the snapshot names ({sha[:12]}) is missing, or not of its size")
        _add_checked(blobs, sha, content)
    return blobs


def _add_checked(blobs: dict, sha: str, content: bytes):
    if hashlib.sha256(content).hexdigest() != sha:
        raise SnapshotError("a blob's content does not match its sha256")
    if sha in blobs:
        raise SnapshotError("a blob is listed twice")
    blobs[sha] = content


# ---------------------------------------------------------------- a session, whole

def snapshot_session(fs, session: Optional[ShellSession], username: str, hostname: str, key=None,
                     compress: bool = False, message: Optional[str] = None) -> bytes:
    manifest, blobs = capture(fs, session, username, hostname, message)
    return encode(manifest, blobs, key, compress)


def load_session(data: bytes, limits: ExecutionLimits, key=None, mounts: Optional[dict] = None,
                 expect_user: Optional[str] = None) -> tuple:
    """(meta, fs or None, ShellSession) rebuilt from a snapshot's bytes."""
    loaded = decode(data, SnapshotLimits.of(limits), key)
    return rebuild(loaded.manifest, loaded.blobs, limits, mounts, expect_user)


def rebuild(manifest: dict, blobs: dict, limits: ExecutionLimits, mounts: Optional[dict] = None,
            expect_user: Optional[str] = None) -> tuple:
    """(meta, fs or None, ShellSession: empty when the snapshot kept no shell)."""
    meta = mapping(manifest.get("meta"), "meta")
    user = text(meta.get("username"), "username", 64)
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.-]{0,31}", user):
        raise SnapshotError(f"snapshot username {user!r} is not a valid user name")
    text(meta.get("hostname"), "hostname", 255)
    if expect_user is not None and user != expect_user:
        raise SnapshotError(f"snapshot of user {user!r}; this tool's user is {expect_user!r} "
                            f"(BashTool.builder().from_snapshot() takes the snapshot's)")
    fs = restore_tree(manifest.get("fs"), blobs, limits, user, mounts)
    session = ShellSession()
    session.restore(manifest.get("shell"), blobs, limits, fs)
    return meta, fs, session


def snapshot_of_session(session, key=None, compress: bool = False) -> bytes:
    """A `ScriptedTool.session()`'s snapshot: its shell and the files that shell works on."""
    shell = session.shell_session
    fs = shell.filesystem() or session.tool.filesystem
    user = getattr(fs, "user", "user")
    return snapshot_session(fs if isinstance(fs, MemoryFs) else None, shell, user, shell.hostname() or "sandbox",
                            key, compress)


def restore_session(session, data: bytes, key=None):
    """Bring a `ScriptedTool.session()` back to a snapshot: its shell, on the snapshot's files
    or, when it kept none, on the tool's own."""
    current = session.shell_session.filesystem() or session.tool.filesystem
    _, fs, restored = load_session(data, session.tool.limits, key, host_mounts(current))
    if fs is None and isinstance(session.tool.filesystem, MemoryFs):
        fs = session.tool.filesystem
    restored.move_to(fs)
    session.shell_session.take(restored)
