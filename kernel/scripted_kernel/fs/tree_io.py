"""A MemoryFs's tree as a snapshot's `fs` section, and back (tools/snapshot.py documents the
format): captured node by node, rebuilt name by name through the filesystem's own checks
(depth, path length, counts, bytes), every record validated first (names, modes, times, inode
numbers, link targets, a directory with two names). Host mounts are recorded by their mount
point only; the restoring tool attaches its own there."""
from __future__ import annotations

import re
from typing import Optional

from ..base.limits import ExecutionLimits
from ..base.records import Capture, SnapshotError, SnapshotLimits, integer, listed, mapping, text, time_value
from .base import FsError
from .inode import Inode
from .memory import NAME_MAX, PATH_MAX, MemoryFs

_SHA = re.compile(r"[0-9a-f]{64}\Z")


def capture_tree(fs: MemoryFs, cap: Capture) -> dict:
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


def path(x, what: str) -> str:
    """An absolute, normalised path: no empty, `.` or `..` component, under PATH_MAX."""
    x = text(x, what, PATH_MAX)
    if x != "/" and (not x.startswith("/") or x.endswith("/") or "\0" in x
                     or any(p in ("", ".", "..") for p in x[1:].split("/"))):
        raise SnapshotError(f"snapshot {what}: {x[:80]!r} is not an absolute normalised path")
    if len(x.encode("utf-8", "surrogatepass")) >= PATH_MAX:
        raise SnapshotError(f"snapshot {what}: a path of PATH_MAX bytes or more")
    return x


def file_name(x) -> str:
    x = text(x, "file name", NAME_MAX)
    if x in ("", ".", "..") or "/" in x or "\0" in x or len(x.encode("utf-8", "surrogatepass")) > NAME_MAX:
        raise SnapshotError(f"snapshot file name {x[:80]!r} is not a valid name")
    return x


def restore_tree(spec, blobs: dict, limits: ExecutionLimits, user: str, mounts: Optional[dict] = None):
    """A new MemoryFs holding what the snapshot's `fs` section records (None: no files).
    `mounts`: {mount point: HostMount} of the restoring tool, attached at their points."""
    if spec is None:
        return None
    spec = mapping(spec, "fs")
    slimits = SnapshotLimits.of(limits)
    inodes = listed(spec.get("inodes"), "inodes", slimits.max_records()["inodes"])
    if spec.get("root") != 0 or not inodes:
        raise SnapshotError("snapshot fs: the root must be inode 0")
    clock = time_value(spec.get("clock"), "fs clock")
    next_ino = integer(spec.get("next_ino"), "next inode number", 2, 1 << 62)
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
    r = listed(r, "inode", 5)
    if len(r) != 5:
        raise SnapshotError("snapshot fs: an inode is not [kind, mode, mtime, ino, payload]")
    kind, mode, mtime, ino, payload = r
    if kind not in ("d", "-", "l"):
        raise SnapshotError(f"snapshot fs: unknown kind of file {str(kind)[:10]!r}")
    mode = integer(mode, "file mode", 0, 0o7777)
    mtime = time_value(mtime, "mtime")
    ino = integer(ino, "inode number", 1, next_ino - 1)
    if kind == "d":
        if payload != "mount":
            payload = listed(payload, "directory", 1 << 24)
            checked = []
            for entry in payload:
                if type(entry) is not list or len(entry) != 2 or type(entry[1]) is not int:
                    raise SnapshotError("snapshot fs: a directory entry is not [name, inode]")
                checked.append((file_name(entry[0]), entry[1]))
            payload = checked
    elif kind == "-":
        if type(payload) is not str or not _SHA.match(payload):
            raise SnapshotError("snapshot fs: a file's content is not a sha256")
    else:
        target = text(payload, "link target", PATH_MAX)
        if not target or "\0" in target or len(target.encode("utf-8", "surrogatepass")) >= PATH_MAX:
            raise SnapshotError("snapshot fs: a link target is empty or PATH_MAX bytes or more")
    return kind, mode, mtime, ino, payload


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
