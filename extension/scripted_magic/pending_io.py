"""The runs that wait for a decision, in a session's snapshot: `%scripted save FILE` writes them
with the session, `%scripted load FILE` brings them back (pending.py; the container is
scripted_kernel/tools/snapshot.py, whose flag bit 3 says the manifest has this section).

The section is a list of at most MAX_PENDING records, one a run:

    {"label": "In [3]", "continuation": sha256, "start": sha256, "at_pause": sha256,
     "in_session": bool, "shown": [stdout characters, stderr characters]}

Each sha256 names a blob of the snapshot: the continuation's bytes (tools/journal.py), the
session as the cell began as a snapshot whose blobs are kept apart (snapshot.encode_detached:
its files are blobs of the enclosing snapshot, shared with the session's where equal), and the
session's manifest once the cell paused (JSON). Their bytes count against the snapshot's own
bounds. The call a run waits before and the reason are not records of their own: they are what
the continuation says, so the view cannot show one call while a decision applies to another.

A file is read as untrusted: every record, and everything it names, is checked (the start is
rebuilt as a decision would install it, the continuation decoded as a resume would) before any
run is kept; the first fault is a SnapshotError of one line, and nothing is kept."""
from __future__ import annotations

import hashlib
import json

from scripted_kernel.tools import snapshot
from scripted_kernel.tools.history import diff
from scripted_kernel.tools.journal import ContinuationError
from scripted_kernel.base.records import SnapshotError, integer, listed, mapping, text

from . import pending
from .pending import PausedCell

_FIELDS = {"label", "continuation", "start", "at_pause", "in_session", "shown"}


def capture_runs(runs: list, blobs: dict) -> list:
    """The section's records of `runs`, their bytes added to `blobs` (sha256 -> bytes)."""
    records = []
    for paused in runs:
        start_manifest, start_blobs = paused.start
        for sha, data in start_blobs.items():
            blobs.setdefault(sha, data)
        at_pause = json.dumps(paused.at_pause, separators=(",", ":"), allow_nan=False).encode("ascii")
        records.append({"label": paused.label, "continuation": _blob(blobs, paused.continuation),
                        "start": _blob(blobs, snapshot.encode_detached(start_manifest, start_blobs)),
                        "at_pause": _blob(blobs, at_pause), "in_session": paused.in_session,
                        "shown": list(paused.shown)})
    return records


def _blob(blobs: dict, data: bytes) -> str:
    sha = hashlib.sha256(data).hexdigest()
    blobs.setdefault(sha, bytes(data))
    return sha


def restore_runs(loaded: snapshot.Loaded, tool, room: int, mounts: dict) -> list:
    """The PausedCells of a decoded snapshot's section (none without one), each checked; a new
    run id for each. `tool`: the notebook's tool, whose limits bound them and which decodes the
    continuations; `room`: how many more runs may wait; `mounts`: the host mounts a decision's
    install attaches."""
    records = loaded.manifest.get("pending", [])        # a list: the container checked it
    if len(records) > room:
        raise SnapshotError(f"{len(records)} waiting runs, and no more than {room} more may wait (at most "
                            f"{pending.MAX_PENDING} at once)")
    runs = []
    for number, record in enumerate(records, 1):
        try:
            runs.append(_run(record, loaded, tool, mounts))
        except SnapshotError as e:
            raise SnapshotError(f"waiting run {number}: {e}") from None
    return runs


def _run(record, loaded: snapshot.Loaded, tool, mounts: dict) -> PausedCell:
    record = mapping(record, "waiting run")
    if set(record) != _FIELDS:
        raise SnapshotError(f"a waiting run's fields are {', '.join(sorted(_FIELDS))}")
    limits = tool.limits
    bounds = snapshot.SnapshotLimits.of(limits)
    try:
        continuation = _named(record["continuation"], loaded.blobs, "continuation")
        call, reason = tool.paused_call(continuation)
    except ContinuationError as e:
        raise SnapshotError(str(e)) from None
    try:
        start = snapshot.decode(_named(record["start"], loaded.blobs, "start"), bounds, fetch=lambda wanted: {
            sha: loaded.blobs[sha] for sha in wanted if sha in loaded.blobs})
        snapshot.rebuild(start.manifest, start.blobs, limits, mounts)       # what a decision installs
    except SnapshotError as e:
        raise SnapshotError(f"the session as its cell began: {e}") from None
    at_pause = _manifest(_named(record["at_pause"], loaded.blobs, "at_pause"), bounds.max_manifest_bytes)
    if type(record["in_session"]) is not bool:
        raise SnapshotError("snapshot in_session: not true or false")
    shown = listed(record["shown"], "shown", 2)
    if len(shown) != 2:
        raise SnapshotError("snapshot shown: not [stdout characters, stderr characters]")
    most_shown = 2 * limits.max_output_bytes
    return PausedCell(text(record["label"], "label", 64), call, reason, bytes(continuation),
                      (start.manifest, start.blobs), at_pause, record["in_session"],
                      tuple(integer(n, "shown", 0, most_shown) for n in shown))


def _named(sha, blobs: dict, what: str) -> bytes:
    if type(sha) is not str or sha not in blobs:
        raise SnapshotError(f"snapshot {what}: names a blob the snapshot does not hold")
    return blobs[sha]


def _manifest(data: bytes, most: int) -> dict:
    """The session's manifest at the pause. A decision reads it only through history.diff,
    so reading it through diff here is its check."""
    if len(data) > most:
        raise SnapshotError(f"snapshot at_pause: more than {most} bytes")
    try:
        manifest = json.loads(data.decode("ascii"))
        diff(mapping(manifest, "at_pause"), manifest)
    except SnapshotError:
        raise
    except (UnicodeDecodeError, ValueError, RecursionError, KeyError, TypeError, IndexError, AttributeError):
        raise SnapshotError("snapshot at_pause: not a session's manifest") from None
    return manifest
