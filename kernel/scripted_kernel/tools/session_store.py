"""Where the MCP service keeps BashTool sessions so that any worker serves any session.

A store holds, per session id, the session's latest snapshot (tools/snapshot.py) and a version
number. A request loads the snapshot and its version, runs, and saves the new snapshot only if
the version is still the one it loaded (compare and set): of two requests of one session at
once, one wins, the other sees a conflict. Sessions unused for `idle_seconds` expire.

    memory://            this process only (what the service uses without a store: SessionPool)
    file:///var/lib/s    a directory: one file per session, a lock file for the compare and set
    redis://host:6379/0  Redis (PyPI `redis`, the `sessions` extra): a hash per session, the
                         compare and set in one Lua script, expiry by Redis's own TTL

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
from typing import Optional
from urllib.parse import urlparse

_ID = re.compile(r"[0-9a-f]{32}\Z")


class StoreError(Exception):
    """The store cannot be used (unreachable, misconfigured)."""


class SessionTooLarge(StoreError):
    """A session's snapshot is over the store's per-session limit."""


def new_session_id() -> str:
    return secrets.token_hex(16)


def valid_id(sid) -> bool:
    return isinstance(sid, str) and bool(_ID.match(sid))


class SessionStore:
    """The interface: create, exists, load, save (compare and set), delete."""

    def __init__(self, idle_seconds: float = 900.0, max_bytes: int = 0):
        self.idle_seconds = idle_seconds
        self.max_bytes = max_bytes          # 0: no limit of the store's own

    def create(self, sid: str) -> None:
        raise NotImplementedError

    def exists(self, sid: str) -> bool:
        raise NotImplementedError

    def load(self, sid: str) -> Optional[tuple]:
        """(version, snapshot bytes or None for a new session), or None: no such session."""
        raise NotImplementedError

    def save(self, sid: str, version: int, data: bytes) -> bool:
        """Store `data` as version+1 if the session is still at `version`; False otherwise
        (another request saved first, or the session expired)."""
        raise NotImplementedError

    def delete(self, sid: str) -> None:
        raise NotImplementedError

    def _check_size(self, data: bytes):
        if self.max_bytes and len(data) > self.max_bytes:
            raise SessionTooLarge(f"session snapshot of {len(data)} bytes, more than the store's "
                                  f"per-session limit of {self.max_bytes} (session_max_bytes)")


class MemoryStore(SessionStore):
    def __init__(self, idle_seconds: float = 900.0, max_bytes: int = 0):
        super().__init__(idle_seconds, max_bytes)
        self._lock = threading.Lock()
        self._sessions: dict = {}            # sid -> [version, data, last_used]

    def _expire(self):
        if self.idle_seconds:
            cutoff = time.time() - self.idle_seconds
            for sid in [s for s, rec in self._sessions.items() if rec[2] < cutoff]:
                del self._sessions[sid]

    def create(self, sid):
        with self._lock:
            self._expire()
            self._sessions[sid] = [0, None, time.time()]

    def exists(self, sid):
        with self._lock:
            self._expire()
            return sid in self._sessions

    def load(self, sid):
        with self._lock:
            self._expire()
            rec = self._sessions.get(sid)
            if rec is None:
                return None
            rec[2] = time.time()
            return rec[0], rec[1]

    def save(self, sid, version, data):
        self._check_size(data)
        with self._lock:
            rec = self._sessions.get(sid)
            if rec is None or rec[0] != version:
                return False
            self._sessions[sid] = [version + 1, data, time.time()]
            return True

    def delete(self, sid):
        with self._lock:
            self._sessions.pop(sid, None)


class DirectoryStore(SessionStore):
    """`<sid>.json` (version, last use) and `<sid>.snap` (the snapshot) per session; a session's
    compare and set holds an exclusive lock on `<sid>.lock` (fcntl), so processes sharing the
    directory (on one host, or a filesystem with working locks) take turns."""

    def __init__(self, path: str, idle_seconds: float = 900.0, max_bytes: int = 0):
        super().__init__(idle_seconds, max_bytes)
        self.path = path
        try:
            os.makedirs(path, mode=0o700, exist_ok=True)
        except OSError as e:
            raise StoreError(f"session store directory {path}: {e.strerror}") from None

    def _file(self, sid: str, ext: str) -> str:
        if not valid_id(sid):
            raise StoreError("not a session id")
        return os.path.join(self.path, f"{sid}.{ext}")

    def _locked(self, sid: str):
        import fcntl

        store = self

        class Lock:
            def __enter__(self):
                self.fd = os.open(store._file(sid, "lock"), os.O_RDWR | os.O_CREAT, 0o600)
                fcntl.flock(self.fd, fcntl.LOCK_EX)
                return self

            def __exit__(self, *exc):
                fcntl.flock(self.fd, fcntl.LOCK_UN)
                os.close(self.fd)
        return Lock()

    def _meta(self, sid: str) -> Optional[dict]:
        try:
            with open(self._file(sid, "json")) as f:
                meta = json.load(f)
        except (OSError, ValueError):
            return None
        if self.idle_seconds and meta.get("last_used", 0) < time.time() - self.idle_seconds:
            self._remove(sid)
            return None
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

    def _remove(self, sid: str):
        for ext in ("json", "snap", "lock"):
            try:
                os.unlink(self._file(sid, ext))
            except OSError:
                pass

    def create(self, sid):
        self.sweep()
        with self._locked(sid):
            self._write(sid, "json", json.dumps({"version": 0, "last_used": time.time()}).encode())

    def exists(self, sid):
        return valid_id(sid) and self._meta(sid) is not None

    def load(self, sid):
        if not valid_id(sid):
            return None
        with self._locked(sid):
            meta = self._meta(sid)
            if meta is None:
                return None
            data = None
            if meta["version"] > 0:
                path = self._file(sid, "snap")
                size = os.path.getsize(path)
                if self.max_bytes and size > self.max_bytes:
                    raise SessionTooLarge(f"stored session of {size} bytes, over the store's limit")
                with open(path, "rb") as f:
                    data = f.read()
            meta["last_used"] = time.time()
            self._write(sid, "json", json.dumps(meta).encode())
            return meta["version"], data

    def save(self, sid, version, data):
        self._check_size(data)
        with self._locked(sid):
            meta = self._meta(sid)
            if meta is None or meta["version"] != version:
                return False
            self._write(sid, "snap", data)
            self._write(sid, "json", json.dumps({"version": version + 1, "last_used": time.time()}).encode())
            return True

    def delete(self, sid):
        if valid_id(sid):
            with self._locked(sid):
                self._remove(sid)

    def sweep(self):
        """Remove the sessions idle past idle_seconds."""
        if not self.idle_seconds:
            return
        for name in os.listdir(self.path):
            if name.endswith(".json") and valid_id(name[:-5]):
                self._meta(name[:-5])


# KEYS[1] the session's hash; ARGV: expected version, data, ttl seconds (0: none).
_SAVE = """
local v = redis.call('HGET', KEYS[1], 'version')
if not v then return -1 end
if tonumber(v) ~= tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'version', tonumber(v) + 1, 'data', ARGV[2])
if tonumber(ARGV[3]) > 0 then redis.call('EXPIRE', KEYS[1], ARGV[3]) end
return 1
"""


class RedisStore(SessionStore):
    """A hash `scripted:session:<sid>` (version, data) per session, expiring after idle_seconds
    without use (Redis's TTL, renewed by every load and save)."""

    PREFIX = "scripted:session:"

    def __init__(self, url: str, idle_seconds: float = 900.0, max_bytes: int = 0):
        super().__init__(idle_seconds, max_bytes)
        try:
            import redis
        except ImportError:
            raise StoreError("a redis:// session store needs the PyPI package `redis` "
                             "(pip install 'scripted-kernel[sessions]')") from None
        self.client = redis.Redis.from_url(url, socket_timeout=10, socket_connect_timeout=5)
        self._save = self.client.register_script(_SAVE)
        self.ttl = int(idle_seconds) if idle_seconds else 0
        if idle_seconds and self.ttl < 1:
            self.ttl = 1

    def _key(self, sid: str) -> str:
        if not valid_id(sid):
            raise StoreError("not a session id")
        return self.PREFIX + sid

    def create(self, sid):
        key = self._key(sid)
        pipe = self.client.pipeline()
        pipe.hset(key, mapping={"version": 0, "data": b""})
        if self.ttl:
            pipe.expire(key, self.ttl)
        pipe.execute()

    def exists(self, sid):
        return valid_id(sid) and bool(self.client.exists(self._key(sid)))

    def load(self, sid):
        if not valid_id(sid):
            return None
        key = self._key(sid)
        size = self.client.hstrlen(key, "data")
        if self.max_bytes and size > self.max_bytes:
            raise SessionTooLarge(f"stored session of {size} bytes, over the store's limit")
        pipe = self.client.pipeline()
        pipe.hmget(key, "version", "data")
        if self.ttl:
            pipe.expire(key, self.ttl)
        (version, data), *_ = pipe.execute()
        if version is None:
            return None
        return int(version), (data or None)

    def save(self, sid, version, data):
        self._check_size(data)
        return self._save(keys=[self._key(sid)], args=[version, data, self.ttl]) == 1

    def delete(self, sid):
        if valid_id(sid):
            self.client.delete(self._key(sid))


def open_store(url: str, idle_seconds: float = 900.0, max_bytes: int = 0) -> SessionStore:
    """The store a URL names: memory://, file:///path, redis://host:port/db (rediss:// too)."""
    parsed = urlparse(url)
    if parsed.scheme == "memory":
        return MemoryStore(idle_seconds, max_bytes)
    if parsed.scheme == "file":
        if parsed.netloc not in ("", "localhost") or not parsed.path:
            raise StoreError(f"a file session store is file:///absolute/path, not {url!r}")
        return DirectoryStore(parsed.path, idle_seconds, max_bytes)
    if parsed.scheme in ("redis", "rediss", "unix"):
        return RedisStore(url, idle_seconds, max_bytes)
    raise StoreError(f"unknown session store {url!r}: memory://, file:///path or redis://host:port/db")
