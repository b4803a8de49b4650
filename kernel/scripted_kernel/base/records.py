"""Records read from an untrusted source (a snapshot from a store, a continuation from a
client): the checks every field passes before it is used, the bounds derived from the
limits of the tool that reads them, and the content-addressed blobs a capture collects.
tools/snapshot.py owns the container; fs/tree_io.py and shell/state_io.py the sections."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

from .limits import ENTRY_BYTES, FUNCTION_WEIGHT, ExecutionLimits

INLINE_MAX = 1024                      # characters of a text kept in the manifest itself
COUNTS = ("inodes", "names", "variables", "elements", "functions", "texts", "blobs")
HEADER_BYTES = 56                      # a snapshot's fixed header (tools/snapshot.py)
MAX_PREAMBLE = 4096


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
        self.counts = dict.fromkeys(COUNTS, 0)

    def blob(self, data) -> str:
        import hashlib          # (here: see tools/journal.py's _signature)
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


# ---------------------------------------------------------------- validation

def mapping(x, what: str) -> dict:
    if type(x) is not dict:
        raise SnapshotError(f"snapshot {what}: not an object")
    return x


def listed(x, what: str, most: int) -> list:
    if type(x) is not list:
        raise SnapshotError(f"snapshot {what}: not a list")
    if len(x) > most:
        raise SnapshotError(f"snapshot {what}: {len(x)} items, more than {most}")
    return x


def integer(x, what: str, lo: int, hi: int) -> int:
    if type(x) is not int or not lo <= x <= hi:
        raise SnapshotError(f"snapshot {what}: not an integer from {lo} to {hi}")
    return x


def time_value(x, what: str) -> float:
    if type(x) not in (int, float) or not math.isfinite(x) or not -1e11 < x < 1e11:
        raise SnapshotError(f"snapshot {what}: not a time")
    return float(x)


def text(x, what: str, most: int) -> str:
    if type(x) is not str or len(x) > most:
        raise SnapshotError(f"snapshot {what}: not a text of at most {most} characters")
    return x


class Texts:
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
        x = text(x, what, self.limits.max_string_length)
        self.total += len(x)
        if self.total > self.limits.max_state_bytes + self.limits.max_fs_bytes:
            raise SnapshotError("snapshot shell texts exceed max_shell_state_bytes")
        return x
