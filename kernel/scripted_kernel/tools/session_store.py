"""Where the MCP service keeps BashTool sessions so that any worker serves any session.

A store holds, per session id, a record: the session's latest snapshot (tools/snapshot.py), a
version number, and the bytes the session holds once loaded (its files and shell state, which
can be many times its snapshot: a snapshot keeps a content once however many files hold it),
so that a reader knows what loading it will take before it does. A request loads the record,
runs, and saves the new snapshot only if the version is still the one it loaded (compare and
set): of two requests of one session at once, one wins, the other sees a conflict. A new
session is stored at version 0 with the snapshot of an empty session, so that every record
holds a snapshot. Sessions unused for `idle_seconds` expire; a store keeps at most
`max_sessions` of them.

    memory://            this process only (what the service uses without a store: SessionPool)
    file:///var/lib/s    a directory: two files per session, lock files for the compare and set
    redis://host:6379/0  Redis (PyPI `redis`, the `sessions` extra): a hash per session and a
                         sorted set of them all, each change one Lua script, expiry by Redis's TTL

The store only keeps bytes: what makes a record trustworthy (its snapshot signed for its
session, version and size) is the business of its user (mcp_server.StoredSessions). Every failure of
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
import tempfile
import threading
import time
from contextlib import contextmanager
from typing import NamedTuple, Optional
from urllib.parse import urlparse

_ID = re.compile(r"[0-9a-f]{32}\Z")
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
    data: bytes                     # the snapshot
    kept: int                       # the bytes the session holds once loaded


def _number(raw, what: str) -> int:
    """A record's version or kept bytes: a number of at most 18 digits (bytes or text), or
    an int."""
    if type(raw) is int and raw >= 0:
        return raw
    if isinstance(raw, (bytes, str)) and 0 < len(raw) <= 18 and raw.isdigit():
        return int(raw)
    raise MalformedRecord(f"the session's record has no valid {what}")


class SessionStore:
    """The interface: create, exists, sizes, load, save (compare and set), delete. Each is
    implemented by a subclass's `_name` method; here the ids are checked and the backend's
    errors become StoreError."""

    backend_errors: tuple = (OSError,)

    def __init__(self, idle_seconds: float = 900.0, max_bytes: int = 0, max_sessions: int = 0):
        self.idle_seconds = idle_seconds
        self.max_bytes = max_bytes          # 0: no limit of the store's own
        self.max_sessions = max_sessions    # 0: no cap

    def create(self, sid: str, data: bytes, kept: int) -> None:
        """A new session at version 0 holding `data` (an empty session's snapshot, `kept`
        bytes once loaded); TooManySessions if the store keeps max_sessions already."""
        self._check_id(sid)
        self._check_size(data)
        with self._boundary():
            self._create(sid, data, kept)

    def exists(self, sid: str) -> bool:
        if not valid_id(sid):
            return False
        with self._boundary():
            return self._exists(sid)

    def sizes(self, sid: str) -> Optional[tuple]:
        """(the bytes of the session's snapshot, the bytes it holds once loaded), or None: no
        such session."""
        if not valid_id(sid):
            return None
        with self._boundary():
            return self._sizes(sid)

    def load(self, sid: str, max_bytes: Optional[int] = None) -> Optional[Record]:
        """The session's record, or None: no such session. SessionTooLarge, with nothing read,
        for a snapshot over the store's limit or over `max_bytes`."""
        if not valid_id(sid):
            return None
        limits = [n for n in (self.max_bytes or None, max_bytes) if n is not None]
        with self._boundary():
            return self._load(sid, min(limits) if limits else None)

    def save(self, sid: str, version: int, data: bytes, kept: int, writer: str = "",
             outcome: Optional[tuple] = None) -> bool:
        """Store `data` (`kept` bytes once loaded) as version+1 if the session is still at
        `version`; False otherwise (another request saved first, or the session expired).
        `writer`: a token of this save, which `last_writer` reads back (to learn whether a save
        whose answer was lost took place); `outcome`: (idempotency key, the call's outcome as
        JSON text), recorded with version+1 by the same compare and set."""
        self._check_id(sid)
        self._check_size(data)
        with self._boundary():
            return self._save(sid, version, data, kept, writer, outcome)

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

    def _check_size(self, data: bytes):
        if self.max_bytes and len(data) > self.max_bytes:
            raise SessionTooLarge(f"session snapshot of {len(data)} bytes, more than the store's "
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

    def _create(self, sid: str, data: bytes, kept: int) -> None:
        raise NotImplementedError

    def _exists(self, sid: str) -> bool:
        raise NotImplementedError

    def _sizes(self, sid: str) -> Optional[tuple]:
        raise NotImplementedError

    def _load(self, sid: str, limit: Optional[int]) -> Optional[Record]:
        raise NotImplementedError

    def _save(self, sid: str, version: int, data: bytes, kept: int, writer: str, outcome) -> bool:
        raise NotImplementedError

    def _outcome(self, sid: str, key: str) -> Optional[str]:
        raise NotImplementedError

    def _last_writer(self, sid: str) -> Optional[tuple]:
        raise NotImplementedError

    def _delete(self, sid: str) -> None:
        raise NotImplementedError

    def _ping(self) -> None:
        """The memory of this process always answers."""


class MemoryStore(SessionStore):
    backend_errors = ()

    def __init__(self, idle_seconds: float = 900.0, max_bytes: int = 0, max_sessions: int = 0):
        super().__init__(idle_seconds, max_bytes, max_sessions)
        self._lock = threading.Lock()
        self._sessions: dict = {}            # sid -> [Record, last_used]
        self._writers: dict = {}             # sid -> (version, writer)
        self._outcomes: dict = {}            # sid -> {key: (version, outcome)}, oldest first

    def _expire(self):
        if self.idle_seconds:
            cutoff = time.time() - self.idle_seconds
            for sid in [s for s, held in self._sessions.items() if held[1] < cutoff]:
                del self._sessions[sid]

    def _create(self, sid, data, kept):
        with self._lock:
            self._expire()
            self._refuse_another(len(self._sessions))
            self._sessions[sid] = [Record(0, data, kept), time.time()]

    def _exists(self, sid):
        with self._lock:
            self._expire()
            return sid in self._sessions

    def _sizes(self, sid):
        with self._lock:
            self._expire()
            held = self._sessions.get(sid)
            return None if held is None else (len(held[0].data), held[0].kept)

    def _load(self, sid, limit):
        with self._lock:
            self._expire()
            held = self._sessions.get(sid)
            if held is None:
                return None
            self._check_stored(len(held[0].data), limit)
            held[1] = time.time()
            return held[0]

    def _save(self, sid, version, data, kept, writer, outcome):
        with self._lock:
            held = self._sessions.get(sid)
            if held is None or held[0].version != version:
                return False
            self._sessions[sid] = [Record(version + 1, data, kept), time.time()]
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
            self._sessions.pop(sid, None)
            self._writers.pop(sid, None)
            self._outcomes.pop(sid, None)


class DirectoryStore(SessionStore):
    """`<sid>.json` (version, kept bytes, last use, the last save's writer, and the idempotency
    keys whose outcomes are committed: key -> version) and `<sid>.snap` (the snapshot) per
    session, and `<sid>.outcomes` (key -> [version, outcome]) once a call with a key is saved;
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

    def _write_meta(self, sid: str, version: int, kept: int, writer: str = "", outcomes: Optional[dict] = None):
        self._write(sid, "json", json.dumps({"version": version, "kept": kept, "last_used": time.time(),
                                             "writer": writer, "outcomes": outcomes or {}}).encode())

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

    def _create(self, sid, data, kept):
        with self._locked(os.path.join(self.path, ".store.lock")):
            self._refuse_another(self.sweep())
            with self._locked(self._file(sid, "lock")):
                self._write(sid, "snap", data)
                self._write_meta(sid, 0, kept)

    def _exists(self, sid):
        try:
            return self._meta(sid) is not None
        except MalformedRecord:
            return True                        # there is a record; its reader refuses it

    def _sizes(self, sid):
        try:
            meta = self._meta(sid)
            if meta is None:
                return None
            return os.path.getsize(self._file(sid, "snap")), meta["kept"]
        except FileNotFoundError:
            raise MalformedRecord("the session's snapshot is missing") from None

    def _load(self, sid, limit):
        with self._locked(self._file(sid, "lock")):
            meta = self._meta(sid)
            if meta is None:
                return None
            try:
                with open(self._file(sid, "snap"), "rb") as f:
                    self._check_stored(os.fstat(f.fileno()).st_size, limit)
                    data = f.read()
            except FileNotFoundError:
                raise MalformedRecord("the session's snapshot is missing") from None
            self._write_meta(sid, meta["version"], meta["kept"], meta.get("writer", ""), meta["outcomes"])
            return Record(meta["version"], data, meta["kept"])

    def _save(self, sid, version, data, kept, writer, outcome):
        with self._locked(self._file(sid, "lock")):
            meta = self._meta(sid)
            if meta is None or meta["version"] != version:
                return False
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
            self._write_meta(sid, version + 1, kept, writer, committed)     # the commit: the new version
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


# The Redis scripts. KEYS[1] the session's hash (version, data, kept, writer), KEYS[2] the sorted
# set of all the sessions (id -> when it expires, by Redis's clock), which the cap counts, KEYS[3]
# the session's recorded outcomes (idempotency key -> "version:outcome"), KEYS[4] their keys,
# oldest first; ARGV[1] the session's id, ARGV[2] the idle expiry in seconds (0: none), then each
# script's own.
_RENEW = """
local ttl = tonumber(ARGV[2])
local expires = '+inf'
if ttl > 0 then
  redis.call('EXPIRE', KEYS[1], ttl)
  if KEYS[3] then
    redis.call('EXPIRE', KEYS[3], ttl)
    redis.call('EXPIRE', KEYS[4], ttl)
  end
  expires = tonumber(redis.call('TIME')[1]) + ttl
end
redis.call('ZADD', KEYS[2], expires, ARGV[1])
"""
# ARGV[3] the snapshot, ARGV[4] its kept bytes, ARGV[5] the cap (0: none): {1} created, or
# {0, the number of sessions}
_CREATE = """
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', tonumber(redis.call('TIME')[1]))
local sessions = redis.call('ZCARD', KEYS[2])
if tonumber(ARGV[5]) > 0 and sessions >= tonumber(ARGV[5]) then return {0, sessions} end
redis.call('HSET', KEYS[1], 'version', 0, 'data', ARGV[3], 'kept', ARGV[4])
""" + _RENEW + """
return {1}
"""
# ARGV[3] the size limit (-1: none): nil (no such session), {version, kept, size} (over the
# limit, nothing read) or {version, kept, size, data}
_LOAD = """
local v = redis.call('HGET', KEYS[1], 'version')
if not v then return false end
local kept = redis.call('HGET', KEYS[1], 'kept') or ''
local size = redis.call('HSTRLEN', KEYS[1], 'data')
if tonumber(ARGV[3]) >= 0 and size > tonumber(ARGV[3]) then return {v, kept, size} end
""" + _RENEW + """
return {v, kept, size, redis.call('HGET', KEYS[1], 'data')}
"""
# ARGV[3] the expected version, ARGV[4] the snapshot, ARGV[5] its kept bytes, ARGV[6] the
# writer, ARGV[7] an idempotency key ("": none), ARGV[8] its outcome, ARGV[9] the outcomes kept:
# -1 no such session, 0 another version, 1 saved
_SAVE = """
local v = redis.call('HGET', KEYS[1], 'version')
if not v then return -1 end
if tonumber(v) ~= tonumber(ARGV[3]) then return 0 end
local saved = tonumber(v) + 1
redis.call('HSET', KEYS[1], 'version', saved, 'data', ARGV[4], 'kept', ARGV[5], 'writer', ARGV[6])
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
    """A hash `scripted:session:<sid>` (version, data, kept, writer) per session, expiring after
    idle_seconds without use (Redis's TTL, renewed by every load and save), the sorted set
    `scripted:sessions` of them all, by expiry, which max_sessions counts, and per session the
    outcomes recorded for idempotency keys (`scripted:outcomes:<sid>`, its keys in order in
    `scripted:outcome-keys:<sid>`), expiring with it."""

    PREFIX = "scripted:session:"
    INDEX = "scripted:sessions"
    OUTCOMES_PREFIX = "scripted:outcomes:"
    OUTCOME_KEYS_PREFIX = "scripted:outcome-keys:"

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
        self._save_script = self.saver.register_script(_SAVE)
        self._outcome_script = self.client.register_script(_OUTCOME)
        self.ttl = int(idle_seconds) if idle_seconds else 0
        if idle_seconds and self.ttl < 1:
            self.ttl = 1

    def _keys(self, sid: str) -> list:
        return [self.PREFIX + sid, self.INDEX, self.OUTCOMES_PREFIX + sid, self.OUTCOME_KEYS_PREFIX + sid]

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

    def _create(self, sid, data, kept):
        answer = self._create_script(keys=self._keys(sid)[:2], args=[sid, self.ttl, data, kept, self.max_sessions])
        if not answer[0]:
            self._refuse_another(int(answer[1]))

    def _exists(self, sid):
        return bool(self.client.exists(self.PREFIX + sid))

    def _sizes(self, sid):
        pipe = self.client.pipeline()
        pipe.hexists(self.PREFIX + sid, "version")
        pipe.hstrlen(self.PREFIX + sid, "data")
        pipe.hget(self.PREFIX + sid, "kept")
        present, size, kept = pipe.execute()
        return (int(size), _number(kept, "size in memory")) if present else None

    def _load(self, sid, limit):
        answer = self._load_script(keys=self._keys(sid), args=[sid, self.ttl, -1 if limit is None else limit])
        if answer is None:
            return None
        self._check_stored(int(answer[2]), limit)
        return Record(_number(answer[0], "version"), answer[3], _number(answer[1], "size in memory"))

    def _save(self, sid, version, data, kept, writer, outcome):
        key, text = outcome if outcome is not None else ("", "")
        return self._save_script(keys=self._keys(sid), args=[sid, self.ttl, version, data, kept, writer, key,
                                                             text, self.OUTCOMES]) == 1

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
        pipe.delete(self.PREFIX + sid, self.OUTCOMES_PREFIX + sid, self.OUTCOME_KEYS_PREFIX + sid)
        pipe.zrem(self.INDEX, sid)
        pipe.execute()


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
