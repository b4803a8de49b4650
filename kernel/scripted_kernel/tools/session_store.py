"""Where the MCP service keeps BashTool sessions so that any worker serves any session.

A store holds, per session id, a record: the session's latest snapshot (tools/snapshot.py)
with its blobs kept apart (the manifest, a few KB, and each file content once, by its sha256),
a version number, the bytes of the manifest and its blobs, and the bytes the session holds
once loaded (its files and shell state, which can be many times its snapshot: a snapshot keeps
a content once however many files hold it), so that a reader knows what loading it will take
before it does. A request loads the record, runs, and saves the new manifest only if the
version is still the one it loaded (compare and set), with the blobs the store does not hold
yet, and removes the blobs the new manifest no longer names: a call's cost is what it changed,
not the session's size. Of two requests of one session at once, one wins, the other sees a
conflict and writes nothing. A session's blobs are its own (removed with it); a blob written by
a save that stopped before its commit is named by no manifest, and goes with its session. A new
session is stored at version 0 with the snapshot of an empty session, so that every record
holds a snapshot. Sessions unused for `idle_seconds` expire; a store keeps at most
`max_sessions` of them.

    memory://            this process only (what the service uses without a store: SessionPool)
    file:///var/lib/s    a directory: two files and a directory of blobs per session, lock files
                         for the compare and set
    redis://host:6379/0  Redis (PyPI `redis`, the `sessions` extra): two hashes per session (its
                         record, its blobs) and a sorted set of them all, each change one Lua
                         script, expiry by Redis's TTL

The store only keeps bytes: what makes a record trustworthy (its manifest signed for its
session, version and size, each blob checked against the sha256 the manifest gives) is the
business of its user (mcp_server.StoredSessions). Every failure of
the backend (an OSError, any of redis-py's errors) reaches the caller as StoreError, its cause
chained.

Session ids are minted here (32 hex digits from `secrets`) and checked on every use, so an id
from a client is never a path or a key pattern.
"""
from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import tempfile
import threading
import time
from contextlib import contextmanager
from typing import NamedTuple, Optional
from urllib.parse import urlparse

_ID = re.compile(r"[0-9a-f]{32}\Z")
_SHA = re.compile(r"[0-9a-f]{64}\Z")
UNAVAILABLE = "the session store is unavailable"


class StoreError(Exception):
    """The store cannot be used (unreachable, misconfigured). `not_applied`: the failed
    operation certainly changed nothing (it never reached the store, or a local write failed
    before its commit); False when it may have been applied and only its answer was lost."""

    not_applied = True


class SessionTooLarge(StoreError):
    """A session's snapshot is over the store's per-session limit, or over what its reader
    asked for."""


class TooManySessions(StoreError):
    """The store keeps `max_sessions` sessions already."""


class MalformedRecord(StoreError):
    """A session's record is not one this module writes: damaged, or written by another."""


def new_session_id() -> str:
    return secrets.token_hex(16)


def valid_id(sid) -> bool:
    return isinstance(sid, str) and bool(_ID.match(sid))


class Record(NamedTuple):
    version: int
    data: bytes                     # the snapshot's manifest (its blobs kept apart)
    kept: int                       # the bytes the session holds once loaded


class Sizes(NamedTuple):
    stored: int                     # the bytes of the manifest and its blobs
    kept: int                       # the bytes the session holds once loaded
    version: int


def _stored(data: bytes, blobs: Optional[dict]) -> int:
    return len(data) + sum(len(b) for b in (blobs or {}).values())


def _number(raw, what: str) -> int:
    """A record's version or kept bytes: a number of at most 18 digits (bytes or text), or
    an int."""
    if type(raw) is int and raw >= 0:
        return raw
    if isinstance(raw, (bytes, str)) and 0 < len(raw) <= 18 and raw.isdigit():
        return int(raw)
    raise MalformedRecord(f"the session's record has no valid {what}")


class SessionStore:
    """The interface: create, exists, sizes, load, blobs, save (compare and set), delete. Each is
    implemented by a subclass's `_name` method; here the ids are checked and the backend's
    errors become StoreError."""

    backend_errors: tuple = (OSError,)

    def __init__(self, idle_seconds: float = 900.0, max_bytes: int = 0, max_sessions: int = 0):
        self.idle_seconds = idle_seconds
        self.max_bytes = max_bytes          # 0: no limit of the store's own
        self.max_sessions = max_sessions    # 0: no cap

    def create(self, sid: str, data: bytes, kept: int, blobs: Optional[dict] = None) -> None:
        """A new session at version 0 holding `data` (an empty session's manifest, `kept`
        bytes once loaded) and the blobs it names (sha256 -> bytes); TooManySessions if the
        store keeps max_sessions already."""
        self._check_id(sid)
        stored = _stored(data, blobs)
        self._check_size(stored)
        with self._boundary():
            self._create(sid, data, kept, stored, dict(blobs or {}))

    def exists(self, sid: str) -> bool:
        if not valid_id(sid):
            return False
        with self._boundary():
            return self._exists(sid)

    def sizes(self, sid: str) -> Optional[Sizes]:
        """The bytes of the session's manifest and blobs, the bytes it holds once loaded, and
        its version; or None: no such session."""
        if not valid_id(sid):
            return None
        with self._boundary():
            return self._sizes(sid)

    def load(self, sid: str, max_bytes: Optional[int] = None) -> Optional[Record]:
        """The session's record (its manifest, not its blobs), or None: no such session; its
        idle time starts again. SessionTooLarge, with nothing read, for a session (manifest and
        blobs) over the store's limit or over `max_bytes`."""
        if not valid_id(sid):
            return None
        limits = [n for n in (self.max_bytes or None, max_bytes) if n is not None]
        with self._boundary():
            return self._load(sid, min(limits) if limits else None)

    def blobs(self, sid: str, wanted: dict) -> dict:
        """{sha256: bytes} of the session's blobs named in `wanted` ({sha256: size}) that the
        store holds at that size (one of another size is not read). The caller checks each
        against its digest."""
        if not valid_id(sid) or not wanted:
            return {}
        with self._boundary():
            return self._blobs(sid, wanted)

    def save(self, sid: str, version: int, data: bytes, kept: int, writer: str = "",
             outcome: Optional[tuple] = None, blobs: Optional[dict] = None, dropped=(),
             stored: Optional[int] = None) -> bool:
        """Store the manifest `data` (`kept` bytes once loaded) as version+1 if the session is
        still at `version`; False otherwise (another request saved first, or the session
        expired), and nothing written. `blobs`: {sha256: bytes-like} the new manifest names and
        version `version` did not (written unless held already); `dropped`: the sha256 of
        blobs version `version` named and the new one does not (removed once it is saved);
        `stored`: the bytes of the manifest and all its blobs (by default, of those given).
        `writer`: a token of this save, which `last_writer` reads back (to learn whether a save
        whose answer was lost took place); `outcome`: (idempotency key, the call's outcome as
        JSON text), recorded with version+1 by the same compare and set."""
        self._check_id(sid)
        stored = _stored(data, blobs) if stored is None else stored
        self._check_size(stored)
        with self._boundary():
            return self._save(sid, version, data, kept, writer, outcome,
                              Change(dict(blobs or {}), tuple(dropped), stored))

    def outcome(self, sid: str, key: str) -> Optional[str]:
        """The outcome recorded for an idempotency key in this session (a save that took
        place), or None."""
        if not valid_id(sid):
            return None
        with self._boundary():
            return self._outcome(sid, key)

    def last_writer(self, sid: str) -> Optional[tuple]:
        """(version, writer) of the session's last save, or None: no such session."""
        if not valid_id(sid):
            return None
        with self._boundary():
            return self._last_writer(sid)

    def delete(self, sid: str) -> None:
        if valid_id(sid):
            with self._boundary():
                self._delete(sid)

    def ping(self) -> None:
        """Nothing when the store answers; StoreError when it does not."""
        with self._boundary():
            self._ping()

    OUTCOMES = 16                       # idempotency keys remembered per session, the newest
    MAX_OUTCOME = 256 * 1024            # bytes of one recorded outcome at most (its streams are cut)

    @contextmanager
    def _boundary(self):
        try:
            yield
        except StoreError:
            raise
        except self.backend_errors as e:
            failure = StoreError(UNAVAILABLE)
            failure.not_applied = self._not_applied(e)
            raise failure from e

    @staticmethod
    def _not_applied(e: BaseException) -> bool:
        """Whether a backend's failure certainly changed nothing: a local file operation
        (committed by its last rename, or not at all), or a connection that was refused."""
        return True

    @staticmethod
    def _check_id(sid):
        if not valid_id(sid):
            raise StoreError("not a session id")

    def _check_size(self, stored: int):
        if self.max_bytes and stored > self.max_bytes:
            raise SessionTooLarge(f"session snapshot of {stored} bytes, more than the store's "
                                  f"per-session limit of {self.max_bytes} (session_max_bytes)")

    @staticmethod
    def _check_stored(size: int, limit: Optional[int]):
        if limit is not None and size > limit:
            raise SessionTooLarge(f"stored session of {size} bytes, over the limit of {limit}")

    def _refuse_another(self, sessions: int):
        """TooManySessions unless a session may be added to `sessions`."""
        if self.max_sessions and sessions >= self.max_sessions:
            raise TooManySessions(f"too many sessions: {sessions} are kept in the session store (max_sessions "
                                  f"{self.max_sessions}); try again when one ends or idles out")

    def _create(self, sid: str, data: bytes, kept: int, stored: int, blobs: dict) -> None:
        raise NotImplementedError

    def _exists(self, sid: str) -> bool:
        raise NotImplementedError

    def _sizes(self, sid: str) -> Optional[Sizes]:
        raise NotImplementedError

    def _load(self, sid: str, limit: Optional[int]) -> Optional[Record]:
        raise NotImplementedError

    def _blobs(self, sid: str, wanted: dict) -> dict:
        raise NotImplementedError

    def _save(self, sid: str, version: int, data: bytes, kept: int, writer: str, outcome,
              change: "Change") -> bool:
        raise NotImplementedError

    def _outcome(self, sid: str, key: str) -> Optional[str]:
        raise NotImplementedError

    def _last_writer(self, sid: str) -> Optional[tuple]:
        raise NotImplementedError

    def _delete(self, sid: str) -> None:
        raise NotImplementedError

    def _ping(self) -> None:
        """The memory of this process always answers."""


class Change(NamedTuple):
    """What a save changes besides the manifest."""
    blobs: dict                     # sha256 -> bytes-like: named now, not before
    dropped: tuple                  # sha256: named before, not now
    stored: int                     # the bytes of the new manifest and all its blobs


class MemoryStore(SessionStore):
    backend_errors = ()

    def __init__(self, idle_seconds: float = 900.0, max_bytes: int = 0, max_sessions: int = 0):
        super().__init__(idle_seconds, max_bytes, max_sessions)
        self._lock = threading.Lock()
        self._sessions: dict = {}            # sid -> [Record, last_used, stored bytes]
        self._blob_store: dict = {}          # sid -> {sha256: bytes}
        self._writers: dict = {}             # sid -> (version, writer)
        self._outcomes: dict = {}            # sid -> {key: (version, outcome)}, oldest first

    def _expire(self):
        if self.idle_seconds:
            cutoff = time.time() - self.idle_seconds
            for sid in [s for s, held in self._sessions.items() if held[1] < cutoff]:
                self._forget(sid)

    def _create(self, sid, data, kept, stored, blobs):
        with self._lock:
            self._expire()
            self._refuse_another(len(self._sessions))
            self._sessions[sid] = [Record(0, data, kept), time.time(), stored]
            self._blob_store[sid] = {sha: bytes(b) for sha, b in blobs.items()}

    def _exists(self, sid):
        with self._lock:
            self._expire()
            return sid in self._sessions

    def _sizes(self, sid):
        with self._lock:
            self._expire()
            held = self._sessions.get(sid)
            return None if held is None else Sizes(held[2], held[0].kept, held[0].version)

    def _load(self, sid, limit):
        with self._lock:
            self._expire()
            held = self._sessions.get(sid)
            if held is None:
                return None
            self._check_stored(held[2], limit)
            held[1] = time.time()
            return held[0]

    def _blobs(self, sid, wanted):
        with self._lock:
            held = self._blob_store.get(sid, {})
            return {sha: held[sha] for sha, size in wanted.items() if sha in held and len(held[sha]) == size}

    def _save(self, sid, version, data, kept, writer, outcome, change):
        with self._lock:
            held = self._sessions.get(sid)
            if held is None or held[0].version != version:
                return False
            blobs = self._blob_store.setdefault(sid, {})
            for sha, content in change.blobs.items():
                blobs.setdefault(sha, bytes(content))
            self._sessions[sid] = [Record(version + 1, data, kept), time.time(), change.stored]
            for sha in change.dropped:
                blobs.pop(sha, None)
            self._writers[sid] = (version + 1, writer)
            if outcome is not None:
                outcomes = self._outcomes.setdefault(sid, {})
                outcomes[outcome[0]] = (version + 1, outcome[1])
                while len(outcomes) > self.OUTCOMES:
                    del outcomes[next(iter(outcomes))]
            return True

    def _outcome(self, sid, key):
        with self._lock:
            held = self._sessions.get(sid)
            recorded = self._outcomes.get(sid, {}).get(key)
            return recorded[1] if held is not None and recorded and recorded[0] <= held[0].version else None

    def _last_writer(self, sid):
        with self._lock:
            held = self._sessions.get(sid)
            return None if held is None else self._writers.get(sid, (held[0].version, ""))

    def _delete(self, sid):
        with self._lock:
            self._forget(sid)

    def _forget(self, sid):
        for table in (self._sessions, self._blob_store, self._writers, self._outcomes):
            table.pop(sid, None)


class DirectoryStore(SessionStore):
    """`<sid>.json` (version, kept and stored bytes, last use, the last save's writer, and the
    idempotency keys whose outcomes are committed: key -> version), `<sid>.snap` (the manifest)
    and `<sid>.blobs/<sha256>` (the blobs) per session, and `<sid>.outcomes` (key -> [version,
    outcome]) once a call with a key is saved;
    a session's compare and set holds an exclusive lock on `<sid>.lock` (fcntl), and a creation
    holds one on `.store.lock` while it counts the sessions, so processes sharing the directory
    (on one host, or a filesystem with working locks) take turns. A save is committed by the
    rename of its `.json`: an outcome written by a save that stopped before it is not listed
    there, and does not count."""

    def __init__(self, path: str, idle_seconds: float = 900.0, max_bytes: int = 0, max_sessions: int = 0):
        super().__init__(idle_seconds, max_bytes, max_sessions)
        self.path = path
        try:
            os.makedirs(path, mode=0o700, exist_ok=True)
        except OSError as e:
            raise StoreError(f"session store directory {path}: {e.strerror}") from None

    def _file(self, sid: str, ext: str) -> str:
        if not valid_id(sid):
            raise StoreError("not a session id")
        return os.path.join(self.path, f"{sid}.{ext}")

    def _blob_file(self, sid: str, sha: str) -> str:
        if not _SHA.match(sha):
            raise MalformedRecord("a blob's name is not a sha256")
        return os.path.join(self._file(sid, "blobs"), sha)

    @staticmethod
    @contextmanager
    def _locked(path: str):
        import fcntl
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)                       # closing the descriptor releases the lock

    def _meta(self, sid: str) -> Optional[dict]:
        """The session's version, kept bytes and last use; None: no such session (or it idled
        out, and is removed now)."""
        try:
            with open(self._file(sid, "json"), "rb") as f:
                meta = json.load(f)
        except FileNotFoundError:
            return None
        except ValueError:
            raise MalformedRecord("the session's record is not JSON") from None
        if not isinstance(meta, dict) or type(meta.get("last_used")) not in (int, float):
            raise MalformedRecord("the session's record has no time of last use")
        if self.idle_seconds and meta["last_used"] < time.time() - self.idle_seconds:
            self._remove(sid)
            return None
        meta["version"] = _number(meta.get("version"), "version")
        meta["kept"] = _number(meta.get("kept"), "size in memory")
        meta["stored"] = _number(meta.get("stored"), "stored size")
        outcomes = meta.setdefault("outcomes", {})
        if not (isinstance(outcomes, dict) and all(type(v) is int for v in outcomes.values())):
            raise MalformedRecord("the session's record lists its outcomes wrongly")
        return meta

    def _write(self, sid: str, ext: str, data: bytes):
        fd, tmp = tempfile.mkstemp(dir=self.path, prefix=f".{sid}.")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, self._file(sid, ext))
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise

    def _write_meta(self, sid: str, version: int, kept: int, stored: int, writer: str = "",
                    outcomes: Optional[dict] = None):
        self._write(sid, "json", json.dumps({"version": version, "kept": kept, "stored": stored,
                                             "last_used": time.time(), "writer": writer,
                                             "outcomes": outcomes or {}}).encode())

    def _write_blobs(self, sid: str, blobs: dict):
        """Each blob the session's directory of blobs does not hold yet (a file is written whole
        and renamed into place: a blob file is complete or absent)."""
        directory = self._file(sid, "blobs")
        os.makedirs(directory, mode=0o700, exist_ok=True)
        for sha, content in blobs.items():
            target = self._blob_file(sid, sha)
            if os.path.exists(target):
                continue
            fd, tmp = tempfile.mkstemp(dir=directory, prefix=".")
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(content)
                os.replace(tmp, target)
            except BaseException:
                if os.path.exists(tmp):
                    os.unlink(tmp)
                raise

    def _outcomes_of(self, sid: str) -> dict:
        """{key: [version, outcome]} written for the session (committed or not: its record
        says which)."""
        try:
            with open(self._file(sid, "outcomes"), "rb") as f:
                outcomes = json.load(f)
        except FileNotFoundError:
            return {}
        except ValueError:
            raise MalformedRecord("the session's outcomes are not JSON") from None
        if not isinstance(outcomes, dict):
            raise MalformedRecord("the session's outcomes are not a mapping")
        return outcomes

    def _remove(self, sid: str):
        for ext in ("json", "snap", "outcomes", "lock"):
            try:
                os.unlink(self._file(sid, ext))
            except FileNotFoundError:
                pass
        shutil.rmtree(self._file(sid, "blobs"), ignore_errors=True)

    def _create(self, sid, data, kept, stored, blobs):
        with self._locked(os.path.join(self.path, ".store.lock")):
            self._refuse_another(self.sweep())
            with self._locked(self._file(sid, "lock")):
                self._write_blobs(sid, blobs)
                self._write(sid, "snap", data)
                self._write_meta(sid, 0, kept, stored)

    def _exists(self, sid):
        try:
            return self._meta(sid) is not None
        except MalformedRecord:
            return True                        # there is a record; its reader refuses it

    def _sizes(self, sid):
        meta = self._meta(sid)
        return None if meta is None else Sizes(meta["stored"], meta["kept"], meta["version"])

    def _load(self, sid, limit):
        with self._locked(self._file(sid, "lock")):
            meta = self._meta(sid)
            if meta is None:
                return None
            self._check_stored(meta["stored"], limit)
            try:
                with open(self._file(sid, "snap"), "rb") as f:
                    self._check_stored(os.fstat(f.fileno()).st_size, limit)
                    data = f.read()
            except FileNotFoundError:
                raise MalformedRecord("the session's snapshot is missing") from None
            self._write_meta(sid, meta["version"], meta["kept"], meta["stored"], meta.get("writer", ""),
                             meta["outcomes"])
            return Record(meta["version"], data, meta["kept"])

    def _blobs(self, sid, wanted):
        found = {}
        for sha, size in wanted.items():
            try:
                with open(self._blob_file(sid, sha), "rb") as f:
                    if os.fstat(f.fileno()).st_size == size:
                        found[sha] = f.read(size)
            except FileNotFoundError:
                pass
        return found

    def _save(self, sid, version, data, kept, writer, outcome, change):
        with self._locked(self._file(sid, "lock")):
            meta = self._meta(sid)
            if meta is None or meta["version"] != version:
                return False
            self._write_blobs(sid, change.blobs)
            self._write(sid, "snap", data)
            committed = meta["outcomes"]
            if outcome is not None:
                key, text = outcome
                committed.pop(key, None)
                committed[key] = version + 1
                for old in list(committed)[:-self.OUTCOMES]:
                    del committed[old]
                written = {k: v for k, v in self._outcomes_of(sid).items() if k in committed}
                written[key] = [version + 1, text]
                self._write(sid, "outcomes", json.dumps(written).encode())
            self._write_meta(sid, version + 1, kept, change.stored, writer, committed)   # the commit
            for sha in change.dropped:
                try:
                    os.unlink(self._blob_file(sid, sha))
                except FileNotFoundError:
                    pass
            return True

    def _outcome(self, sid, key):
        with self._locked(self._file(sid, "lock")):
            meta = self._meta(sid)
            if meta is None or key not in meta["outcomes"]:
                return None
            recorded = self._outcomes_of(sid).get(key)
        # what a committed save wrote: no later save writes this key's outcome (its call is a retry)
        if not (isinstance(recorded, list) and recorded[:1] == [meta["outcomes"][key]] and len(recorded) == 2
                and isinstance(recorded[1], str)):
            raise MalformedRecord("the session's recorded outcome is missing")
        return recorded[1]

    def _last_writer(self, sid):
        meta = self._meta(sid)
        return None if meta is None else (meta["version"], str(meta.get("writer", "")))

    def _delete(self, sid):
        with self._locked(self._file(sid, "lock")):
            self._remove(sid)

    def _ping(self):
        if not os.access(self.path, os.W_OK | os.X_OK):
            raise OSError(f"session store directory {self.path} is not writable")

    def sweep(self) -> int:
        """Remove the sessions idle past idle_seconds; the number of sessions kept."""
        kept = 0
        for name in os.listdir(self.path):
            if name.endswith(".json") and valid_id(name[:-5]):
                try:
                    kept += self._meta(name[:-5]) is not None
                except MalformedRecord:
                    kept += 1
        return kept


# The Redis scripts. KEYS[1] the session's hash (version, data: the manifest, kept, stored,
# writer), KEYS[2] the sorted set of all the sessions (id -> when it expires, by Redis's clock),
# which the cap counts, KEYS[3] the session's recorded outcomes (idempotency key ->
# "version:outcome"), KEYS[4] their keys, oldest first, KEYS[5] the session's blobs (sha256 ->
# bytes); ARGV[1] the session's id, ARGV[2] the idle expiry in seconds (0: none), then each
# script's own.
_RENEW = """
local ttl = tonumber(ARGV[2])
local expires = '+inf'
if ttl > 0 then
  redis.call('EXPIRE', KEYS[1], ttl)
  for i = 3, #KEYS do
    redis.call('EXPIRE', KEYS[i], ttl)
  end
  expires = tonumber(redis.call('TIME')[1]) + ttl
end
redis.call('ZADD', KEYS[2], expires, ARGV[1])
"""
# ARGV[3] the manifest, ARGV[4] its kept bytes, ARGV[5] the cap (0: none), ARGV[6] its stored
# bytes, then (sha256, blob) pairs: {1} created, or {0, the number of sessions}
_CREATE = """
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', tonumber(redis.call('TIME')[1]))
local sessions = redis.call('ZCARD', KEYS[2])
if tonumber(ARGV[5]) > 0 and sessions >= tonumber(ARGV[5]) then return {0, sessions} end
redis.call('HSET', KEYS[1], 'version', 0, 'data', ARGV[3], 'kept', ARGV[4], 'stored', ARGV[6])
for i = 7, #ARGV, 2 do
  redis.call('HSET', KEYS[5], ARGV[i], ARGV[i + 1])
end
""" + _RENEW + """
return {1}
"""
# ARGV[3] the size limit (-1: none): nil (no such session), {version, kept, stored} (over the
# limit, nothing read) or {version, kept, stored, data}
_LOAD = """
local v = redis.call('HGET', KEYS[1], 'version')
if not v then return false end
local kept = redis.call('HGET', KEYS[1], 'kept') or ''
local stored = redis.call('HGET', KEYS[1], 'stored') or ''
if tonumber(ARGV[3]) >= 0 and (tonumber(stored) or 0) > tonumber(ARGV[3]) then return {v, kept, stored} end
""" + _RENEW + """
return {v, kept, stored, redis.call('HGET', KEYS[1], 'data')}
"""
# KEYS[1] the session's blobs; ARGV (sha256, size) pairs: each blob held at that size, or false
_BLOBS = """
local found = {}
for i = 1, #ARGV, 2 do
  if redis.call('HSTRLEN', KEYS[1], ARGV[i]) == tonumber(ARGV[i + 1]) then
    found[#found + 1] = redis.call('HGET', KEYS[1], ARGV[i])
  else
    found[#found + 1] = false
  end
end
return found
"""
# ARGV[3] the expected version, ARGV[4] the manifest, ARGV[5] its kept bytes, ARGV[6] the
# writer, ARGV[7] an idempotency key ("": none), ARGV[8] its outcome, ARGV[9] the outcomes kept,
# ARGV[10] the stored bytes, ARGV[11] the number N of new blobs, then N (sha256, blob) pairs,
# then the sha256 of the blobs dropped: -1 no such session, 0 another version, 1 saved
_SAVE = """
local v = redis.call('HGET', KEYS[1], 'version')
if not v then return -1 end
if tonumber(v) ~= tonumber(ARGV[3]) then return 0 end
local saved = tonumber(v) + 1
local added = 12 + 2 * tonumber(ARGV[11])
for i = 12, added - 1, 2 do
  redis.call('HSET', KEYS[5], ARGV[i], ARGV[i + 1])
end
for i = added, #ARGV do
  redis.call('HDEL', KEYS[5], ARGV[i])
end
redis.call('HSET', KEYS[1], 'version', saved, 'data', ARGV[4], 'kept', ARGV[5], 'writer', ARGV[6],
           'stored', ARGV[10])
if ARGV[7] ~= '' then
  redis.call('HSET', KEYS[3], ARGV[7], saved .. ':' .. ARGV[8])
  redis.call('LREM', KEYS[4], 0, ARGV[7])
  redis.call('RPUSH', KEYS[4], ARGV[7])
  while redis.call('LLEN', KEYS[4]) > tonumber(ARGV[9]) do
    redis.call('HDEL', KEYS[3], redis.call('LPOP', KEYS[4]))
  end
end
""" + _RENEW + """
return 1
"""
# ARGV[1] an idempotency key: false, or {the session's version, "version:outcome"}
_OUTCOME = """
local v = redis.call('HGET', KEYS[1], 'version')
local recorded = redis.call('HGET', KEYS[2], ARGV[1])
if not v or not recorded then return false end
return {v, recorded}
"""


class RedisStore(SessionStore):
    """A hash `scripted:session:<sid>` (version, data: the manifest, kept, stored, writer) per
    session, expiring after idle_seconds without use (Redis's TTL, renewed by every load and
    save), the sorted set `scripted:sessions` of them all, by expiry, which max_sessions counts,
    and per session its blobs (`scripted:blobs:<sid>`, sha256 -> bytes) and the outcomes
    recorded for idempotency keys (`scripted:outcomes:<sid>`, its keys in order in
    `scripted:outcome-keys:<sid>`), expiring with it."""

    PREFIX = "scripted:session:"
    INDEX = "scripted:sessions"
    OUTCOMES_PREFIX = "scripted:outcomes:"
    OUTCOME_KEYS_PREFIX = "scripted:outcome-keys:"
    BLOBS_PREFIX = "scripted:blobs:"

    def __init__(self, url: str, idle_seconds: float = 900.0, max_bytes: int = 0, max_sessions: int = 0):
        super().__init__(idle_seconds, max_bytes, max_sessions)
        try:
            import redis
        except ImportError:
            raise StoreError("a redis:// session store needs the PyPI package `redis` "
                             "(pip install 'scripted-kernel[sessions]')") from None
        self.backend_errors = (redis.exceptions.RedisError, OSError)
        from redis.backoff import NoBackoff
        from redis.retry import Retry
        try:
            self.client = redis.Redis.from_url(url, socket_timeout=10, socket_connect_timeout=5)
            # saves go through connections of their own that never send a command twice: after
            # a failure, whether the save reached Redis is then the one attempt's to tell
            # (_not_applied), where redis-py's retries would leave only the last attempt's error
            self.saver = redis.Redis.from_url(url, socket_timeout=10, socket_connect_timeout=5,
                                              retry=Retry(NoBackoff(), 0))
        except ValueError:
            raise StoreError("the redis:// session store's URL is not valid") from None
        self._create_script = self.client.register_script(_CREATE)
        self._load_script = self.client.register_script(_LOAD)
        self._blobs_script = self.client.register_script(_BLOBS)
        self._save_script = self.saver.register_script(_SAVE)
        self._outcome_script = self.client.register_script(_OUTCOME)
        self.ttl = int(idle_seconds) if idle_seconds else 0
        if idle_seconds and self.ttl < 1:
            self.ttl = 1

    def _keys(self, sid: str) -> list:
        return [self.PREFIX + sid, self.INDEX, self.OUTCOMES_PREFIX + sid, self.OUTCOME_KEYS_PREFIX + sid,
                self.BLOBS_PREFIX + sid]

    @staticmethod
    def _not_applied(e: BaseException) -> bool:
        """A refused connection sent nothing (redis-py makes or checks a pooled connection
        before it sends, and a save is not retried); any other failure (a timeout waiting for
        the answer, a connection lost) may have come after Redis ran the command."""
        seen: Optional[BaseException] = e
        while seen is not None:
            if isinstance(seen, ConnectionRefusedError):
                return True
            seen = seen.__cause__ or seen.__context__
        return False

    def _create(self, sid, data, kept, stored, blobs):
        answer = self._create_script(keys=self._keys(sid), args=[sid, self.ttl, data, kept, self.max_sessions,
                                                                 stored, *_pairs(blobs)])
        if not answer[0]:
            self._refuse_another(int(answer[1]))

    def _exists(self, sid):
        return bool(self.client.exists(self.PREFIX + sid))

    def _sizes(self, sid):
        version, stored, kept = self.client.hmget(self.PREFIX + sid, "version", "stored", "kept")
        if version is None:
            return None
        return Sizes(_number(stored, "stored size"), _number(kept, "size in memory"), _number(version, "version"))

    def _load(self, sid, limit):
        answer = self._load_script(keys=self._keys(sid), args=[sid, self.ttl, -1 if limit is None else limit])
        if answer is None:
            return None
        self._check_stored(_number(answer[2], "stored size"), limit)
        return Record(_number(answer[0], "version"), answer[3], _number(answer[1], "size in memory"))

    def _blobs(self, sid, wanted):
        shas = list(wanted)
        found = self._blobs_script(keys=[self.BLOBS_PREFIX + sid],
                                   args=[x for sha in shas for x in (sha, wanted[sha])])
        return {sha: content for sha, content in zip(shas, found) if content is not None}

    def _save(self, sid, version, data, kept, writer, outcome, change):
        key, text = outcome if outcome is not None else ("", "")
        return self._save_script(keys=self._keys(sid), args=[
            sid, self.ttl, version, data, kept, writer, key, text, self.OUTCOMES, change.stored,
            len(change.blobs), *_pairs(change.blobs), *change.dropped]) == 1

    def _outcome(self, sid, key):
        answer = self._outcome_script(keys=[self.PREFIX + sid, self.OUTCOMES_PREFIX + sid], args=[key])
        if not answer:
            return None
        raw = answer[1] if isinstance(answer[1], bytes) else str(answer[1]).encode()
        version, _, text = raw.partition(b":")
        return text.decode() if _number(version, "outcome version") <= _number(answer[0], "version") else None

    def _last_writer(self, sid):
        version, writer = self.client.hmget(self.PREFIX + sid, "version", "writer")
        if version is None:
            return None
        return _number(version, "version"), writer.decode() if isinstance(writer, bytes) else str(writer or "")

    def _ping(self):
        self.client.ping()

    def _delete(self, sid):
        pipe = self.client.pipeline()
        pipe.delete(self.PREFIX + sid, self.OUTCOMES_PREFIX + sid, self.OUTCOME_KEYS_PREFIX + sid,
                    self.BLOBS_PREFIX + sid)
        pipe.zrem(self.INDEX, sid)
        pipe.execute()


def _pairs(blobs: dict) -> list:
    """sha256, bytes, sha256, bytes, ...: blobs as a script's arguments (redis-py sends bytes,
    not a bytearray)."""
    return [x for sha, content in blobs.items() for x in (sha, bytes(content))]


def open_store(url: str, idle_seconds: float = 900.0, max_bytes: int = 0, max_sessions: int = 0) -> SessionStore:
    """The store a URL names: memory://, file:///path, redis://host:port/db (rediss:// too)."""
    parsed = urlparse(url)
    if parsed.scheme == "memory":
        return MemoryStore(idle_seconds, max_bytes, max_sessions)
    if parsed.scheme == "file":
        if parsed.netloc not in ("", "localhost") or not parsed.path:
            raise StoreError(f"a file session store is file:///absolute/path, not {url!r}")
        return DirectoryStore(parsed.path, idle_seconds, max_bytes, max_sessions)
    if parsed.scheme in ("redis", "rediss", "unix"):
        return RedisStore(url, idle_seconds, max_bytes, max_sessions)
    raise StoreError(f"unknown session store {url!r}: memory://, file:///path or redis://host:port/db")
