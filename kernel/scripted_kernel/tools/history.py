"""A session's history: commits of its files and shell state, sharing what did not change.

Each commit is a snapshot's manifest (tools/snapshot.py) kept in memory, and the blobs it
names (file contents, long texts) go to one content-addressed store shared by all the commits:
a file that did not change between two commits is kept once, so a hundred commits of a session
holding a 10 MB file cost about 10 MB. What the history holds (its blobs once each, and its
manifests) counts against `max_bytes` (SECURITY.md, "What a snapshot costs"); a commit past it
is refused with HistoryFull, and `prune(keep)` drops the oldest commits and the blobs only they
used.

A commit's id is the sha256 of its manifest (hex); any unambiguous prefix of it names it, and
so does its number in the history (0 the first, -1 the latest).
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Optional, Union

from ..base.records import SnapshotError


class HistoryFull(SnapshotError):
    """The history cannot take another commit without passing its byte budget."""


@dataclass
class Commit:
    id: str
    parent: Optional[str]
    message: str
    time: float
    manifest: dict = field(repr=False)
    blobs: frozenset = field(repr=False)
    manifest_bytes: int = 0

    def to_dict(self) -> dict:
        return {"id": self.id, "parent": self.parent, "message": self.message, "time": self.time,
                "files": len(_files(self.manifest)), "variables": len(_variables(self.manifest))}


class History:
    """The commits of one session and their blob store."""

    def __init__(self, max_bytes: int):
        self.max_bytes = max_bytes
        self.blobs: dict = {}                 # sha256 hex -> bytes, each once
        self.commits: list[Commit] = []
        self.head: Optional[str] = None
        self.manifest_bytes = 0

    @property
    def used_bytes(self) -> int:
        """What the history keeps: each blob once, and every commit's manifest."""
        return sum(len(b) for b in self.blobs.values()) + self.manifest_bytes

    def add(self, manifest: dict, blobs: dict, message: Optional[str] = None) -> Commit:
        """Record a captured state as a commit on top of the head; its id."""
        meta = dict(manifest.get("meta") or {})
        meta.pop("created", None)
        meta.pop("message", None)
        body = {k: v for k, v in manifest.items() if k != "counts"}
        body["meta"] = meta
        if body.get("shell"):        # SECONDS moves on by itself: not a change to commit
            body["shell"] = dict(body["shell"], seconds=0)
        text = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        raw = text.encode("utf-8", "surrogatepass")
        import hashlib          # (here: see tools/journal.py's _signature)
        cid = hashlib.sha256(raw + (self.head or "").encode()).hexdigest()
        new = {sha: data for sha, data in blobs.items() if sha not in self.blobs}
        added = sum(len(d) for d in new.values()) + len(raw)
        if self.used_bytes + added > self.max_bytes:
            raise HistoryFull(f"history full: it keeps {self.used_bytes} bytes and this commit adds "
                              f"{added}, past its budget of {self.max_bytes} (max_history_bytes); "
                              f"drop old commits with prune(keep=N)")
        for sha, data in new.items():
            self.blobs[sha] = bytes(data)
        commit = Commit(cid, self.head, message or "", time.time(), manifest, frozenset(blobs), len(raw))
        self.commits.append(commit)
        self.manifest_bytes += len(raw)
        self.head = cid
        return commit

    def find(self, ref: Union[str, int, None]) -> Commit:
        """A commit by id, id prefix (4 hex digits at least) or number (negative from the end)."""
        if not self.commits:
            raise KeyError("no commits yet")
        if ref is None:
            ref = self.head
        if isinstance(ref, int) and not isinstance(ref, bool):
            try:
                return self.commits[ref]
            except IndexError:
                raise KeyError(f"no commit number {ref} (there are {len(self.commits)})") from None
        if isinstance(ref, str) and ref.lstrip("-").isdigit() and len(ref) < 4:
            return self.find(int(ref))
        found = [c for c in self.commits if isinstance(ref, str) and len(ref) >= 4 and c.id.startswith(ref)]
        if len(found) != 1:
            raise KeyError(f"no commit {ref!r}" if not found else f"commit {ref!r} is ambiguous")
        return found[0]

    def blobs_of(self, commit: Commit) -> dict:
        return {sha: self.blobs[sha] for sha in commit.blobs}

    def log(self) -> list:
        """The commits, newest first, as dicts (id, parent, message, time, files, variables, head)."""
        return [dict(c.to_dict(), head=c.id == self.head) for c in reversed(self.commits)]

    def prune(self, keep: int) -> int:
        """Keep the newest `keep` commits (and the head); drop the rest and the blobs only they
        used. Returns the bytes freed."""
        before = self.used_bytes
        kept = self.commits[-keep:] if keep > 0 else []
        head = next((c for c in self.commits if c.id == self.head), None)
        if head is not None and head not in kept:
            kept.insert(0, head)
        self.commits = kept
        used = set().union(*(c.blobs for c in kept)) if kept else set()
        self.blobs = {sha: data for sha, data in self.blobs.items() if sha in used}
        self.manifest_bytes = sum(c.manifest_bytes for c in kept)
        if head is None:
            self.head = kept[-1].id if kept else None
        return before - self.used_bytes


def diff(a: dict, b: dict) -> dict:
    """What changed from manifest `a` to manifest `b`: files (by path: kind, mode, content or
    target), variables (attributes and value) and functions, each added, removed, changed."""
    return {"files": _compare(_files(a), _files(b)),
            "variables": _compare(_variables(a), _variables(b)),
            "functions": _compare(_functions(a), _functions(b))}


def _compare(old: dict, new: dict) -> dict:
    return {"added": sorted(new.keys() - old.keys()), "removed": sorted(old.keys() - new.keys()),
            "changed": sorted(k for k in old.keys() & new.keys() if old[k] != new[k])}


def _files(manifest: dict) -> dict:
    """{path: (kind, mode, content sha or target)} of a manifest's files (not the mtimes: a
    file touched but not changed is not a change)."""
    fs = manifest.get("fs")
    if not fs:
        return {}
    inodes = fs["inodes"]
    out = {}
    stack = [(0, "")]
    seen = set()
    while stack:
        index, path = stack.pop()
        if index in seen:
            continue
        seen.add(index)
        payload = inodes[index][4]
        if payload == "mount":
            continue
        for name, child in payload:
            kind, mode, _mtime, _ino, body = inodes[child]
            child_path = f"{path}/{name}"
            out[child_path] = (kind, mode, None if kind == "d" else body)
            if kind == "d":
                stack.append((child, child_path))
    return out


def _variables(manifest: dict) -> dict:
    shell = manifest.get("shell") or {}
    return {entry[0]: json.dumps(entry[1:], sort_keys=True) for entry in shell.get("variables", [])}


def _functions(manifest: dict) -> dict:
    shell = manifest.get("shell") or {}
    return {entry[0]: json.dumps(entry[2]) for entry in shell.get("functions", [])}
