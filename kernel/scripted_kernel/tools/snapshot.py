"""Snapshots of a session: its files and its shell's state as bytes, and back.

A snapshot is safe to load from an untrusted store: no pickle, nothing in it is run (a
function's text is parsed, checked to be exactly one function definition of its name, and
only that definition is compiled), every size is checked against the restoring tool's limits
before anything is allocated for it, every field is validated, and, when the host gives a key,
an HMAC-SHA256 signature is checked before anything else is read (`bound_key` derives a key
that binds a snapshot to a context, such as the session and version a store keeps it as).

The format, version 1 (all integers big-endian):

    offset  size  field
    0       6     magic b"SKSNAP"
    6       2     version (1)
    8       2     flags: bit 0 signed, bit 1 some blobs are zlib-compressed
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
         "random_seeded": bash's generator once `RANDOM=N` seeded it, [state, last value], or null}}

A text longer than INLINE_MAX characters (a variable's value, a function, a trap) is stored as a
blob and written in the manifest as {"blob": sha256}. Blobs are content-addressed: a file
content or a text held twice is stored once, which is also what makes history cheap
(tools/history.py keeps one blob store for all of a session's commits).

What is not kept: descriptors opened with `exec N>file` (closed on restore), the host
directories themselves (only their mount points: the restoring tool's own mounts are attached
there), a function's own redirections written after its body on another line.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import json
import math
import random
import re
import struct
import time
import zlib
from dataclasses import dataclass
from typing import Any, Optional

from ..fs import MemoryFs
from ..fs.base import FsError
from ..fs.inode import Inode
from ..fs.memory import NAME_MAX, PATH_MAX
from ..shell.limits import CancelToken, ExecutionLimits
from ..shell.run import Run
from ..shell.session_state import ENTRY_BYTES, FUNCTION_WEIGHT, measure
from ..shell.state import IndexedArray, Var

MAGIC = b"SKSNAP"
VERSION = 1
_HEADER = struct.Struct(">6sHHHIQ32s")
HEADER_BYTES = _HEADER.size            # 56
FLAG_SIGNED, FLAG_COMPRESSED = 1, 2
MAX_PREAMBLE = 4096
INLINE_MAX = 1024                      # characters of a text kept in the manifest itself
# the most manifest text one record may take: a link's target or a path (PATH_MAX bytes, six
# if every character were escaped), a name, the punctuation around them
_RECORD_BOUND = 6 * PATH_MAX + 6 * NAME_MAX + 64
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_TRAP = re.compile(r"[A-Z][A-Z0-9+-]{0,31}\Z|[0-9]{1,2}\Z")
_SHA = re.compile(r"[0-9a-f]{64}\Z")
_COUNTS = ("inodes", "names", "variables", "elements", "functions", "texts", "blobs")


class SnapshotError(ValueError):
    """A snapshot that cannot be loaded: damaged, forged, too large, or signed with another key."""


@dataclass
class SnapshotLimits:
    """What a snapshot may hold, derived from the restoring tool's ExecutionLimits."""
    max_bytes: int
    max_manifest_bytes: int
    max_fs_bytes: int
    max_file_bytes: int
    max_file_count: int
    max_state_bytes: int
    max_array_length: int
    max_string_length: int

    @classmethod
    def of(cls, limits: ExecutionLimits) -> "SnapshotLimits":
        state = limits.max_shell_state_bytes
        manifest = 2 * state + 640 * limits.max_file_count + (64 << 10)
        return cls(max_bytes=HEADER_BYTES + MAX_PREAMBLE + manifest + limits.max_fs_bytes + 2 * state,
                   max_manifest_bytes=manifest, max_fs_bytes=limits.max_fs_bytes,
                   max_file_bytes=limits.max_file_bytes, max_file_count=limits.max_file_count,
                   max_state_bytes=state, max_array_length=limits.max_array_length,
                   max_string_length=limits.max_string_length)

    def max_records(self) -> dict:
        state_entries = self.max_state_bytes // ENTRY_BYTES + 1
        files = self.max_file_count + 8
        return {"inodes": files, "names": files, "variables": state_entries, "elements": state_entries,
                "functions": self.max_state_bytes // FUNCTION_WEIGHT + 1, "texts": state_entries,
                "blobs": files + state_entries}


# ---------------------------------------------------------------- capture

class Capture:
    """A session's state as a manifest and the blobs it names (sha256 hex -> bytes-like)."""

    def __init__(self, known: Optional[dict] = None):
        self.blobs: dict = {}
        self.known = known if known is not None else {}     # blobs held already (a history's)
        self.counts = dict.fromkeys(_COUNTS, 0)

    def blob(self, data) -> str:
        sha = hashlib.sha256(data).hexdigest()
        if sha not in self.blobs:
            held = self.known.get(sha)
            self.blobs[sha] = held if held is not None else bytes(data)
        return sha

    def text(self, value: str):
        """A text of the shell: inline when short, else a blob."""
        if len(value) <= INLINE_MAX:
            return value
        self.counts["texts"] += 1
        return {"blob": self.blob(value.encode("utf-8", "surrogatepass"))}


def capture(fs, shell, username: str, hostname: str, message: Optional[str] = None,
            known: Optional[dict] = None) -> tuple:
    """(manifest, blobs) of a filesystem (a MemoryFs, or None) and a shell (or None). The caller
    holds the session so that nothing changes meanwhile; nothing here changes the session, but
    for giving a shell that draws $RANDOM from the shared generator one of its own. `known`:
    blobs held already (sha256 -> bytes), used rather than copied again."""
    cap = Capture(known)
    meta: dict = {"username": username, "hostname": hostname, "created": time.time()}
    if message is not None:
        meta["message"] = message
    manifest: dict = {"format": "scripted-snapshot", "version": VERSION,
                "meta": meta,
                "fs": _capture_fs(fs, cap) if isinstance(fs, MemoryFs) else None,
                "shell": _capture_shell(shell, cap) if shell is not None else None}
    cap.counts["blobs"] = len(cap.blobs)
    manifest["counts"] = cap.counts
    return manifest, cap.blobs


def _capture_fs(fs: MemoryFs, cap: Capture) -> dict:
    root, _system, dev, clock, next_ino = fs.snapshot_parts()
    ids: dict = {id(root): 0}
    inodes: list = [None]
    stack = [root]
    while stack:
        directory = stack.pop()
        entries = []
        for name, node in (directory.entries or {}).items():
            if node is dev:
                continue
            cap.counts["names"] += 1
            known = ids.get(id(node))
            if known is None:
                known = ids[id(node)] = len(inodes)
                inodes.append(None)
                if node.kind == "d":
                    stack.append(node)
                else:
                    inodes[known] = _record(node, cap)
            entries.append([name, known])
        payload = "mount" if directory.host is not None else entries
        inodes[ids[id(directory)]] = ["d", directory.mode, directory.mtime, directory.ino, payload]
    cap.counts["inodes"] = len(inodes)
    return {"clock": clock, "next_ino": next_ino, "inodes": inodes, "root": 0}


def _record(node: Inode, cap: Capture) -> list:
    if node.kind == "-":
        if node.host is not None:          # cannot happen (hard links into a mount are refused)
            raise SnapshotError("a host file has a name outside its mount")
        return ["-", node.mode, node.mtime, node.ino, cap.blob(node.data or b"")]
    if node.kind == "l":
        return ["l", node.mode, node.mtime, node.ino, node.target]
    raise SnapshotError(f"cannot record a file of kind {node.kind!r}")


def _capture_shell(sh, cap: Capture) -> dict:
    from ..shell.runtime import SET_OPTIONS, _RANDOM
    if sh.scopes:
        raise SnapshotError("the shell is inside a function call: snapshot it between calls")
    if sh.random is _RANDOM:               # its own generator, so that a copy draws the same
        sh.random = random.Random(_RANDOM.getrandbits(64))
    variables = []
    for name, var in sh.globals.items():
        variables.append(_variable(name, var, cap))
    cap.counts["variables"] = len(variables)
    functions = []
    for name, func in sh.functions.items():
        line, text = function_definition(func)
        functions.append([name, line, cap.text(text)])
    cap.counts["functions"] = len(functions)
    state = sh.random.getstate()
    return {"cwd": sh.cwd, "dirstack": list(sh.dirstack), "umask": sh.umask, "status": sh.status,
            "last_arg": cap.text(str(sh.last_arg)), "script_name": sh.script_name,
            "seconds": max(0.0, time.time() - sh.started),
            "positional": [cap.text(p) for p in sh.positional], "pipestatus": list(sh.pipestatus),
            "options": {name: bool(getattr(sh, name)) for name in SET_OPTIONS},
            "shopts": dict(sh.shopts), "traps": {k: cap.text(v) for k, v in sh.traps.items()},
            "exported_functions": sorted(sh.exported_functions),
            "variables": variables, "functions": functions,
            "random": base64.b64encode(struct.pack(">625I", *state[1])).decode("ascii")
            if state[0] == 3 and len(state[1]) == 625 else None,
            "random_seeded": list(sh.random_state) if sh.random_state is not None else None}


def _variable(name: str, var: Var, cap: Capture) -> list:
    v = var.value
    if v is None:
        return [name, var.attrs, "u", None]
    if type(v) is str:
        return [name, var.attrs, "s", cap.text(v)]
    if type(v) is IndexedArray:
        cap.counts["elements"] += len(v.d)
        return [name, var.attrs, "a", [v.top, [[i, cap.text(v.d[i])] for i in sorted(v.d)]]]
    cap.counts["elements"] += len(v)
    return [name, var.attrs, "A", [[k, cap.text(x)] for k, x in v.items()]]


def function_definition(func) -> tuple:
    """(line, text): the function's definition as it was written, from its name to the end of
    its body (`f() {...}`, `function f {...}`), and the line it starts on; or, for a function
    whose text is not at hand, `name () body`."""
    from ..shell.lexer import Source
    from ..shell.printer import body_text
    node, script = func.node, func.script
    if script and node is not None:
        start, body_pos = node.pos, node.body.pos
        if 0 <= start <= body_pos < len(script):
            text = script[start:body_pos] + body_text(script, body_pos)
            redirects = list(getattr(node.body, "redirects", None) or []) + list(node.redirects or [])
            if redirects:
                text = _with_redirections(script, start, max(r.pos for r in redirects), func.name) or text
            return Source(script).line_of(start), text
    return 1, f"{func.name} () {func.source or '{ :; }'}"


def _with_redirections(script: str, start: int, last: int, name: str) -> Optional[str]:
    """The definition's text through its redirections (`f() {...} >&2`), which end on the line
    of the last one: the longest cut there that parses as the one definition."""
    from ..shell.errors import ShellSyntaxError
    from ..shell.parser import Parser
    end = script.find("\n", last)
    end = len(script) if end < 0 else end
    cuts = [end] + [k for k in range(min(end, last + 4096) - 1, last, -1) if script[k] in ";&|)"]
    for cut in cuts[:64]:
        text = script[start:cut]
        try:
            units = Parser(text).parse_program().items
        except (ShellSyntaxError, RecursionError):
            continue
        if len(units) == 1 and len(units[0].items) == 1 and type(units[0].items[0]).__name__ == "FunctionDef" \
                and units[0].items[0].name == name:
            return text
    return None


# ---------------------------------------------------------------- encoding

def encode(manifest: dict, blobs: dict, key: Optional[bytes] = None, compress: bool = False) -> bytes:
    """The snapshot's bytes: header, preamble, manifest, then each blob the manifest needs."""
    manifest = dict(manifest)
    counts = manifest.pop("counts")
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
    manifest["blobs"] = table
    counts = dict(counts, blobs=len(table))
    preamble = json.dumps({"counts": counts}, separators=(",", ":")).encode("ascii")
    body = json.dumps(manifest, ensure_ascii=False, separators=(",", ":"),
                      allow_nan=False).encode("utf-8", "surrogatepass")
    flags = (FLAG_SIGNED if key else 0) | (FLAG_COMPRESSED if any(t[3] for t in table) else 0)
    blob_bytes = sum(len(d) for d in stored)
    header = _HEADER.pack(MAGIC, VERSION, flags, len(preamble), len(body), blob_bytes, bytes(32))
    parts = [header, preamble, body, *stored]
    if key:
        mac = hmac.new(_key(key), digestmod=hashlib.sha256)
        mac.update(header[:24])
        for part in parts[1:]:
            mac.update(part)
        parts[0] = header[:24] + mac.digest()
    return b"".join(parts)


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


def decode(data: bytes, limits: SnapshotLimits, key: Optional[bytes] = None) -> Loaded:
    """Check and parse a snapshot; SnapshotError saying what is wrong with it."""
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
    if flags & ~(FLAG_SIGNED | FLAG_COMPRESSED):
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
    manifest = _mapping(manifest, "manifest")
    if manifest.get("format") != "scripted-snapshot" or manifest.get("version") != VERSION:
        raise SnapshotError("snapshot manifest names another format or version")
    blobs = _blobs(manifest.get("blobs"), data, start + mlen, blen, limits, counts)
    _check_counts(manifest, counts)
    return Loaded(manifest, blobs, counts)


def _check_counts(manifest: dict, declared: dict):
    """The manifest holds no more records of a kind than its preamble declared (which the
    limits were checked against)."""
    try:
        held = dict.fromkeys(_COUNTS, 0)
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
    counts = _mapping(_mapping(preamble, "preamble").get("counts"), "counts")
    maxima = limits.max_records()
    out = {}
    for name in _COUNTS:
        n = counts.get(name)
        if type(n) is not int or n < 0:
            raise SnapshotError(f"snapshot preamble: count of {name} missing or not a count")
        if n > maxima[name]:
            raise SnapshotError(f"snapshot declares {n} {name}, more than the limits allow ({maxima[name]})")
        out[name] = n
    if set(counts) - set(_COUNTS):
        raise SnapshotError("snapshot preamble has unknown counts")
    return out


def _blobs(table, data, offset: int, blen: int, limits: SnapshotLimits, counts: dict) -> dict:
    table = _list(table, "blobs", counts["blobs"])
    if len(table) != counts["blobs"]:
        raise SnapshotError(f"snapshot declares {counts['blobs']} blobs, its table lists {len(table)}")
    declared = stored_total = 0
    biggest = max(limits.max_file_bytes, 4 * limits.max_string_length)
    entries = []
    for entry in table:
        entry = _list(entry, "blob entry", 4)
        if len(entry) != 4:
            raise SnapshotError("a blob entry is not [sha256, size, stored size, codec]")
        sha, size, stored, codec = entry
        if type(sha) is not str or not _SHA.match(sha):
            raise SnapshotError("a blob's name is not a sha256 in hex")
        size = _int(size, "blob size", 0, biggest)
        stored = _int(stored, "blob stored size", 0, biggest)
        if codec not in ("", "zlib") or (codec == "" and stored != size):
            raise SnapshotError("a blob's codec or sizes are wrong")
        declared += size
        stored_total += stored
        entries.append((sha, size, stored, codec))
    if declared > limits.max_fs_bytes + 2 * limits.max_state_bytes:
        raise SnapshotError(f"snapshot blobs declare {declared} bytes, more than the limits allow")
    if stored_total != blen:
        raise SnapshotError(f"snapshot blob table declares {stored_total} bytes, its section has {blen}")
    blobs = {}
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
        if hashlib.sha256(content).hexdigest() != sha:
            raise SnapshotError("a blob's content does not match its sha256")
        if sha in blobs:
            raise SnapshotError("a blob is listed twice")
        blobs[sha] = content
    return blobs


# ---------------------------------------------------------------- validation helpers

def _mapping(x, what: str) -> dict:
    if type(x) is not dict:
        raise SnapshotError(f"snapshot {what}: not an object")
    return x


def _list(x, what: str, most: int) -> list:
    if type(x) is not list:
        raise SnapshotError(f"snapshot {what}: not a list")
    if len(x) > most:
        raise SnapshotError(f"snapshot {what}: {len(x)} items, more than {most}")
    return x


def _int(x, what: str, lo: int, hi: int) -> int:
    if type(x) is not int or not lo <= x <= hi:
        raise SnapshotError(f"snapshot {what}: not an integer from {lo} to {hi}")
    return x


def _float(x, what: str) -> float:
    if type(x) not in (int, float) or not math.isfinite(x) or not -1e11 < x < 1e11:
        raise SnapshotError(f"snapshot {what}: not a time")
    return float(x)


def _str(x, what: str, most: int) -> str:
    if type(x) is not str or len(x) > most:
        raise SnapshotError(f"snapshot {what}: not a text of at most {most} characters")
    return x


def _path(x, what: str) -> str:
    """An absolute, normalised path: no empty, `.` or `..` component, under PATH_MAX."""
    x = _str(x, what, PATH_MAX)
    if x != "/" and (not x.startswith("/") or x.endswith("/") or "\0" in x
                     or any(p in ("", ".", "..") for p in x[1:].split("/"))):
        raise SnapshotError(f"snapshot {what}: {x[:80]!r} is not an absolute normalised path")
    if len(x.encode("utf-8", "surrogatepass")) >= PATH_MAX:
        raise SnapshotError(f"snapshot {what}: a path of PATH_MAX bytes or more")
    return x


def _file_name(x) -> str:
    x = _str(x, "file name", NAME_MAX)
    if x in ("", ".", "..") or "/" in x or "\0" in x or len(x.encode("utf-8", "surrogatepass")) > NAME_MAX:
        raise SnapshotError(f"snapshot file name {x[:80]!r} is not a valid name")
    return x


class _Texts:
    """Texts of the shell: inline, or a blob of the snapshot; their total bounded."""

    def __init__(self, blobs: dict, limits: SnapshotLimits):
        self.blobs = blobs
        self.limits = limits
        self.total = 0

    def __call__(self, x, what: str) -> str:
        if type(x) is dict:
            sha = x.get("blob")
            if len(x) != 1 or type(sha) is not str or sha not in self.blobs:
                raise SnapshotError(f"snapshot {what}: names a blob the snapshot does not hold")
            data = self.blobs[sha]
            if len(data) > 4 * self.limits.max_string_length:
                raise SnapshotError(f"snapshot {what}: longer than max_string_length")
            x = data.decode("utf-8", "surrogatepass")
        x = _str(x, what, self.limits.max_string_length)
        self.total += len(x)
        if self.total > self.limits.max_state_bytes + self.limits.max_fs_bytes:
            raise SnapshotError("snapshot shell texts exceed max_shell_state_bytes")
        return x


# ---------------------------------------------------------------- restore

def restore_fs(spec, blobs: dict, limits: ExecutionLimits, user: str, mounts: Optional[dict] = None):
    """A new MemoryFs holding what the snapshot's `fs` section records (None: no files).
    `mounts`: {mount point: HostMount} of the restoring tool, attached at their points."""
    if spec is None:
        return None
    spec = _mapping(spec, "fs")
    slimits = SnapshotLimits.of(limits)
    inodes = _list(spec.get("inodes"), "inodes", slimits.max_records()["inodes"])
    if spec.get("root") != 0 or not inodes:
        raise SnapshotError("snapshot fs: the root must be inode 0")
    clock = _float(spec.get("clock"), "fs clock")
    next_ino = _int(spec.get("next_ino"), "next inode number", 2, 1 << 62)
    fs = MemoryFs(user=user, limits=limits)
    root, system, dev, _, _ = fs.snapshot_parts()
    records = [_inode_record(r, next_ino) for r in inodes]
    if records[0][0] != "d" or records[0][4] == "mount":
        raise SnapshotError("snapshot fs: the root is not a directory")
    made: dict = {0: root}
    dirs_done = set()
    mount_points = []
    times = [(root, records[0][2], records[0][1])]
    stack = [(0, root, "")]
    names_seen = 0
    try:
        while stack:
            index, directory, path = stack.pop()
            if index in dirs_done:
                raise SnapshotError("snapshot fs: a directory has two names (a cycle)")
            dirs_done.add(index)
            payload = records[index][4]
            if payload == "mount":
                mount_points.append((path or "/", directory))
                continue
            for entry in payload:
                names_seen += 1
                if names_seen > slimits.max_file_count + 8:
                    raise SnapshotError("snapshot fs: more names than max_file_count")
                name, child = entry
                if not 0 < child < len(records):
                    raise SnapshotError("snapshot fs: a directory entry names no inode")
                child_path = f"{path}/{name}"
                existing = (directory.entries or {}).get(name)
                if existing is dev:
                    raise SnapshotError("snapshot fs: /dev is the filesystem's own")
                kind, mode, mtime, ino, body = records[child]
                if existing is not None and existing in system:
                    if kind != "d" or child in made:
                        raise SnapshotError(f"snapshot fs: {child_path} must be a directory")
                    made[child] = existing
                    existing.ino = ino
                    times.append((existing, mtime, mode))
                    stack.append((child, existing, child_path))
                    continue
                if existing is not None:
                    raise SnapshotError(f"snapshot fs: {child_path} is listed twice")
                node = made.get(child)
                if node is not None:
                    if node.kind == "d":
                        raise SnapshotError("snapshot fs: a directory has two names")
                    fs.restore_name(directory, name, node, first=False)
                    continue
                node = Inode(kind, mode, mtime, ino)
                data: bytes = b""
                if kind == "-":
                    if body not in blobs:
                        raise SnapshotError(f"snapshot fs: {child_path}: its content is missing")
                    data = blobs[body]
                elif kind == "l":
                    node.target = body
                made[child] = node
                fs.restore_name(directory, name, node, data=data)
                times.append((node, mtime, mode))
                if kind == "d":
                    stack.append((child, node, child_path))
    except FsError as e:
        raise SnapshotError(f"snapshot fs does not fit this tool's limits: {e.strerror}") from None
    except (TypeError, ValueError, IndexError) as e:
        raise SnapshotError(f"snapshot fs: a malformed entry ({str(e)[:100]})") from None
    for node, mtime, mode in times:
        node.mtime, node.mode = mtime, mode
    fs.restore_counters(clock, next_ino)
    root.ino = records[0][3]
    for point, node in mount_points:
        host = (mounts or {}).get(point)
        if host is not None and node is not root:
            node.host = (host, ())
            node.mode = host.root_mode()
    return fs


def _inode_record(r, next_ino: int) -> tuple:
    r = _list(r, "inode", 5)
    if len(r) != 5:
        raise SnapshotError("snapshot fs: an inode is not [kind, mode, mtime, ino, payload]")
    kind, mode, mtime, ino, payload = r
    if kind not in ("d", "-", "l"):
        raise SnapshotError(f"snapshot fs: unknown kind of file {str(kind)[:10]!r}")
    mode = _int(mode, "file mode", 0, 0o7777)
    mtime = _float(mtime, "mtime")
    ino = _int(ino, "inode number", 1, next_ino - 1)
    if kind == "d":
        if payload != "mount":
            payload = _list(payload, "directory", 1 << 24)
            checked = []
            for entry in payload:
                if type(entry) is not list or len(entry) != 2 or type(entry[1]) is not int:
                    raise SnapshotError("snapshot fs: a directory entry is not [name, inode]")
                checked.append((_file_name(entry[0]), entry[1]))
            payload = checked
    elif kind == "-":
        if type(payload) is not str or not _SHA.match(payload):
            raise SnapshotError("snapshot fs: a file's content is not a sha256")
    else:
        target = _str(payload, "link target", PATH_MAX)
        if not target or "\0" in target or len(target.encode("utf-8", "surrogatepass")) >= PATH_MAX:
            raise SnapshotError("snapshot fs: a link target is empty or PATH_MAX bytes or more")
    return kind, mode, mtime, ino, payload


def restore_shell(spec, blobs: dict, limits: ExecutionLimits, fs, env: Optional[dict] = None):
    """A new Shell holding what the snapshot's `shell` section records (None: none)."""
    if spec is None:
        return None
    from ..shell.interpreter import BUILTINS, COMPILER, SCRIPT_CACHE
    from ..shell.runtime import SET_OPTIONS, SHOPT_DEFAULTS, Shell
    spec = _mapping(spec, "shell")
    slimits = SnapshotLimits.of(limits)
    maxima = slimits.max_records()
    texts = _Texts(blobs, slimits)
    depth = limits.max_parser_depth
    sh = Shell(Run(limits, CancelToken(), fs=fs), {}, BUILTINS, env or {},
               compile_script=lambda text: SCRIPT_CACHE.get(text, depth), compiler=COMPILER)
    sh.cwd = _path(spec.get("cwd"), "working directory")
    sh.dirstack = [_path(p, "directory stack") for p in _list(spec.get("dirstack"), "dirstack", 4096)]
    sh.umask = _int(spec.get("umask"), "umask", 0, 0o777)
    sh.status = _int(spec.get("status"), "status", 0, 255)
    sh.last_arg = texts(spec.get("last_arg"), "$_")
    sh.script_name = _str(spec.get("script_name"), "$0", PATH_MAX)
    sh.started = time.time() - _float(spec.get("seconds"), "SECONDS")
    sh.positional = [texts(p, "positional parameter")
                     for p in _list(spec.get("positional"), "positional", maxima["texts"])]
    sh.pipestatus = [_int(s, "PIPESTATUS", 0, 255) for s in _list(spec.get("pipestatus"), "pipestatus", 4096)]
    options = _mapping(spec.get("options"), "options")
    for name in SET_OPTIONS:
        value = options.get(name, False)
        if type(value) is not bool:
            raise SnapshotError(f"snapshot option {name}: not true or false")
        setattr(sh, name, value)
    shopts = _mapping(spec.get("shopts"), "shopts")
    for name, value in shopts.items():
        if name not in SHOPT_DEFAULTS or type(value) is not bool:
            raise SnapshotError(f"snapshot shopt {str(name)[:40]!r}: unknown, or not true or false")
    sh.shopts = {**SHOPT_DEFAULTS, **shopts}
    traps = _mapping(spec.get("traps"), "traps")
    if len(traps) > 128:
        raise SnapshotError("snapshot: more than 128 traps")
    for name, action in traps.items():
        if not _TRAP.match(name):
            raise SnapshotError(f"snapshot trap {name[:40]!r}: not a signal name")
        sh.traps[name] = texts(action, "trap")
    variables = _list(spec.get("variables"), "variables", maxima["variables"])
    sh.globals = {}
    elements = 0
    for entry in variables:
        name, var, n = _restore_variable(entry, texts, slimits)
        elements += n
        if elements > maxima["elements"]:
            raise SnapshotError("snapshot: more array elements than max_shell_state_bytes allows")
        sh.globals[name] = var
    functions = _list(spec.get("functions"), "functions", maxima["functions"])
    for entry in functions:
        if type(entry) is not list or len(entry) != 3:
            raise SnapshotError("snapshot function: not [name, line, text]")
        name = _str(entry[0], "function name", NAME_MAX)
        line = _int(entry[1], "function line", 1, limits.max_script_bytes)
        define_function(sh, name, line, texts(entry[2], f"function {name[:40]}"))
    exported = _list(spec.get("exported_functions"), "exported functions", maxima["functions"])
    sh.exported_functions = {_str(n, "function name", NAME_MAX) for n in exported} & set(sh.functions)
    rng = spec.get("random")
    if rng is not None:
        sh.random = random.Random()
        sh.random.setstate(_random_state(rng))
    seeded = spec.get("random_seeded")
    if seeded is not None:                   # RANDOM=N: bash's generator, [state, last value]
        seeded = _list(seeded, "random_seeded", 2)
        if len(seeded) != 2:
            raise SnapshotError("snapshot random_seeded: not [state, last value]")
        sh.random_state = [_int(seeded[0], "random_seeded", 0, 0xFFFFFFFF), _int(seeded[1], "random_seeded", 0, 32767)]
    kept = measure(sh)
    if kept > limits.max_shell_state_bytes:
        raise SnapshotError(f"snapshot shell state takes {kept} bytes, more than max_shell_state_bytes "
                            f"({limits.max_shell_state_bytes})")
    sh.state_bytes = kept
    return sh


def _restore_variable(entry, texts: _Texts, slimits: SnapshotLimits) -> tuple:
    if type(entry) is not list or len(entry) != 4:
        raise SnapshotError("snapshot variable: not [name, attributes, kind, value]")
    name, attrs, kind, value = entry
    if type(name) is not str or len(name) > NAME_MAX or not _NAME.match(name):
        raise SnapshotError(f"snapshot variable name {str(name)[:40]!r} is not a valid name")
    attrs = _int(attrs, f"attributes of {name}", 0, 127)
    if kind == "u":
        if value is not None:
            raise SnapshotError(f"snapshot variable {name}: an unset variable with a value")
        return name, Var(None, attrs), 0
    if kind == "s":
        return name, Var(texts(value, f"variable {name}"), attrs), 0
    if kind == "a":
        if type(value) is not list or len(value) != 2:
            raise SnapshotError(f"snapshot array {name}: not [top, elements]")
        top = _int(value[0], f"array {name} top", 0, 1 << 62)
        items = _list(value[1], f"array {name}", slimits.max_array_length)
        arr = IndexedArray()
        last = -1
        for item in items:
            if type(item) is not list or len(item) != 2:
                raise SnapshotError(f"snapshot array {name}: an element is not [index, text]")
            index = _int(item[0], f"array {name} index", 0, (1 << 62))
            if index <= last:
                raise SnapshotError(f"snapshot array {name}: indices out of order")
            last = index
            arr.d[index] = texts(item[1], f"array {name}")
        if top <= last:
            raise SnapshotError(f"snapshot array {name}: its top is below an index")
        arr.top = top
        return name, Var(arr, attrs), len(items)
    if kind == "A":
        items = _list(value, f"associative array {name}", slimits.max_array_length)
        d: dict = {}
        for item in items:
            if type(item) is not list or len(item) != 2:
                raise SnapshotError(f"snapshot associative array {name}: an element is not [key, text]")
            key = texts(item[0], f"associative array {name} key")
            if key in d:
                raise SnapshotError(f"snapshot associative array {name}: a key twice")
            d[key] = texts(item[1], f"associative array {name}")
        return name, Var(d, attrs), len(items)
    raise SnapshotError(f"snapshot variable {name}: unknown kind {str(kind)[:10]!r}")


def define_function(sh, name: str, line: int, text: str):
    """Compile a function from its definition's text, refusing any text that is not exactly
    one definition of `name` (nothing else in it ever runs)."""
    from ..shell.errors import ShellSyntaxError
    from ..shell.interpreter import COMPILER
    from ..shell.lexer import Source
    from ..shell.parser import Parser
    if not _NAME.match(name) and not _function_name_ok(name):
        raise SnapshotError(f"snapshot function name {name[:40]!r} is not valid")
    full = "\n" * (line - 1) + text
    source = Source(full)
    try:
        tree = Parser(full, max_depth=sh.limits.max_parser_depth, source=source).parse_program()
    except (ShellSyntaxError, RecursionError):
        raise SnapshotError(f"snapshot function {name[:40]}: its text does not parse") from None
    units = tree.items
    node: Any = None
    if len(units) == 1 and type(units[0]).__name__ == "CommandList" and len(units[0].items) == 1:
        node = units[0].items[0]
    if type(node).__name__ != "FunctionDef" or node.name != name or not node.valid_name:
        raise SnapshotError(f"snapshot function {name[:40]}: its text is not one definition of it")
    saved = COMPILER.source
    COMPILER.source = source
    try:
        define = COMPILER.compile(node)
    finally:
        COMPILER.source = saved
    define(sh)


def _function_name_ok(name: str) -> bool:
    """bash accepts more than variable names for functions (`my-func`, `a.b`)."""
    return bool(name) and not any(c in name for c in " \t\n|&;()<>$`'\"\\=/") and name not in ("{", "}")


def _random_state(text) -> tuple:
    if type(text) is not str or len(text) > 4000:
        raise SnapshotError("snapshot $RANDOM state: not base64 text")
    try:
        raw = base64.b64decode(text, validate=True)
    except ValueError:
        raise SnapshotError("snapshot $RANDOM state: not base64") from None
    if len(raw) != 625 * 4:
        raise SnapshotError("snapshot $RANDOM state: the wrong size")
    words = struct.unpack(">625I", raw)
    if not 1 <= words[-1] <= 624 or not any(words[:624]):
        raise SnapshotError("snapshot $RANDOM state: out of range")
    return (3, words, None)


# ---------------------------------------------------------------- a session, whole

def snapshot_session(fs, shell, username: str, hostname: str, key=None, compress: bool = False,
                     message: Optional[str] = None) -> bytes:
    manifest, blobs = capture(fs, shell, username, hostname, message)
    return encode(manifest, blobs, key, compress)


def load_session(data: bytes, limits: ExecutionLimits, key=None, mounts: Optional[dict] = None,
                 expect_user: Optional[str] = None) -> tuple:
    """(meta, fs or None, shell or None) rebuilt from a snapshot's bytes."""
    loaded = decode(data, SnapshotLimits.of(limits), key)
    return rebuild(loaded.manifest, loaded.blobs, limits, mounts, expect_user)


def rebuild(manifest: dict, blobs: dict, limits: ExecutionLimits, mounts: Optional[dict] = None,
            expect_user: Optional[str] = None) -> tuple:
    meta = _mapping(manifest.get("meta"), "meta")
    user = _str(meta.get("username"), "username", 64)
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.-]{0,31}", user):
        raise SnapshotError(f"snapshot username {user!r} is not a valid user name")
    _str(meta.get("hostname"), "hostname", 255)
    if expect_user is not None and user != expect_user:
        raise SnapshotError(f"snapshot of user {user!r}; this tool's user is {expect_user!r} "
                            f"(BashTool.builder().from_snapshot() takes the snapshot's)")
    fs = restore_fs(manifest.get("fs"), blobs, limits, user, mounts)
    shell = restore_shell(manifest.get("shell"), blobs, limits, fs)
    return meta, fs, shell


def host_mounts(fs) -> dict:
    """{mount point: HostMount} of a MemoryFs (its directories shown from the host)."""
    if not isinstance(fs, MemoryFs):
        return {}
    out = {}
    root = fs.snapshot_parts()[0]
    stack = [("", root)]
    while stack:
        path, node = stack.pop()
        if node.host is not None:
            out[path or "/"] = node.host[0]
            continue
        for name, child in (node.entries or {}).items():
            if child.kind == "d":
                stack.append((f"{path}/{name}", child))
    return out


def snapshot_of_session(session, key=None, compress: bool = False) -> bytes:
    """A `ScriptedTool.session()`'s snapshot: its shell and the files that shell works on."""
    shell = session._shell.shell
    fs = shell.fs if shell is not None else session.tool.filesystem
    user = getattr(fs, "user", "user")
    hostname = shell.hostname if shell is not None else "sandbox"
    return snapshot_session(fs if isinstance(fs, MemoryFs) else None, shell, user, hostname, key, compress)


def restore_session(session, data: bytes, key=None):
    shell = session._shell.shell
    current = shell.fs if shell is not None else session.tool.filesystem
    _, fs, restored = load_session(data, session.tool.limits, key, host_mounts(current))
    if restored is None:
        session._shell.clear()
        return
    if fs is None and isinstance(session.tool.filesystem, MemoryFs):
        fs = session.tool.filesystem
    if fs is not None:
        restored.fs = fs
    session._shell.shell = restored
