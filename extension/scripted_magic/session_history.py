"""The notebook session's history: every cell that changes the files (or, with `%scripted
session on`, the shell state) is committed, so `%scripted undo` goes back one cell,
`%scripted history` lists them with what each changed, `%scripted checkout N` goes to any of
them, and `%scripted save FILE` / `%scripted load FILE` keep a session, and the runs that wait
for a decision (pending_io.py), across kernel restarts (a snapshot file:
scripted_kernel/tools/snapshot.py).

Commits share unchanged files (tools/history.py); the history's bytes count against its budget
(by default as much as the session's files and shell state may hold), and when a commit would
pass it the oldest commits are dropped to make room."""
from __future__ import annotations

import os
import time
from typing import Optional

from scripted_kernel.tools import snapshot
from scripted_kernel.tools.history import Commit, History, HistoryFull, diff

from .markup import html, join
from .pending_io import capture_runs, restore_runs


class NotebookHistory:
    def __init__(self, state):
        self.state = state
        self.history: Optional[History] = None

    def _history(self) -> History:
        if self.history is None:
            limits = self.state.tools.tool.limits
            self.history = History(limits.max_fs_bytes + limits.max_shell_state_bytes)
        return self.history

    def _shell(self):
        """The notebook session's shell (a ShellSession), or None when the session is off."""
        session = self.state.session
        return session.shell_session if session is not None else None

    def capture(self) -> tuple:
        """(manifest, blobs) of the session's files and shell as they are now."""
        fs = self.state.fs
        return snapshot.capture(fs, self._shell(), getattr(fs, "user", "user"), "sandbox",
                                known=self._history().blobs)

    def before_cell(self):
        """The session as it was before the first cell: what undoing that cell goes back to."""
        history = self._history()
        if not history.commits:
            manifest, blobs = self.capture()
            history.add(manifest, blobs, "start")

    def after_cell(self, label: str) -> Optional[str]:
        """Commit the session if the cell changed its files or shell state; the commit's id."""
        history = self._history()
        manifest, blobs = self.capture()
        head = history.find(None).manifest if history.commits else None
        if head is not None and not _changed(diff(head, manifest)):
            return None
        while True:
            try:
                return history.add(manifest, blobs, label).id
            except HistoryFull:
                if len(history.commits) <= 1:
                    return None            # the session alone is larger than the budget
                history.prune(len(history.commits) - 1)

    def changed_since(self, manifest: dict) -> bool:
        """Whether the session's files or shell state differ from what `manifest` captured."""
        return _changed(diff(manifest, self.capture()[0]))

    def checkout(self, ref) -> str:
        history = self._history()
        commit = history.find(ref)
        self.install(commit.manifest, history.blobs_of(commit))
        history.head = commit.id
        return commit.id

    def undo(self) -> Optional[str]:
        """Back to the commit before the head (the session before the last changing cell)."""
        history = self._history()
        if not history.commits:
            return None
        head = history.find(None)
        if head.parent is None:
            return None
        return self.checkout(head.parent)

    def install(self, manifest: dict, blobs: dict):
        """Put the session's files and shell back as a capture holds them."""
        state = self.state
        limits = state.tools.tool.limits
        _, fs, shell = snapshot.rebuild(manifest, blobs, limits, snapshot.host_mounts(state.fs))
        if fs is None:
            from scripted_kernel import MemoryFs
            fs = MemoryFs(limits=limits)
        state.fs = fs
        state.tools.tool.filesystem = fs
        state._parameters = None          # its shell holds the old files
        if state.session is not None:
            state.session = state.tools.tool.session()
            shell.move_to(fs)
            state.session.shell_session.take(shell)

    def save(self, path: str) -> int:
        """Write the session, and the runs that wait for a decision (pending_io.py), to `path`."""
        fs = self.state.fs
        manifest, blobs = snapshot.capture(fs, self._shell(), getattr(fs, "user", "user"), "sandbox")
        runs = list(self.state.pending.runs.values())
        if runs:
            manifest["pending"] = capture_runs(runs, blobs)
        data = snapshot.encode(manifest, blobs, compress=True)
        if runs:
            self._loadable(data, len(runs))
        with open(path, "wb") as f:
            f.write(data)
        return len(data)

    def _loadable(self, data: bytes, runs: int):
        """Refuse a snapshot its own load would refuse: a session alone fits its bounds by the
        limits that made it, but the waiting runs' sessions and continuations count against
        the same bounds."""
        try:
            snapshot.decode(data, snapshot.SnapshotLimits.of(self.state.tools.tool.limits))
        except snapshot.SnapshotError as e:
            raise snapshot.SnapshotError(f"the session with its {runs} waiting runs is more than a snapshot "
                                         f"may hold ({e})") from None

    def load(self, path: str) -> int:
        """Put the session `path` holds in place of this one, and keep the runs it holds waiting
        (with approve on: their later calls are asked, as they were); how many runs. Everything
        is checked before anything changes."""
        state = self.state
        limits = state.tools.tool.limits
        bound = snapshot.SnapshotLimits.of(limits).max_bytes
        size = os.path.getsize(path)
        if size > bound:
            raise snapshot.SnapshotError(f"{path}: {size} bytes, more than a snapshot may be ({bound})")
        with open(path, "rb") as f:
            data = f.read(bound + 1)
        loaded = snapshot.decode(data, snapshot.SnapshotLimits.of(limits))
        runs = restore_runs(loaded, state.tools.tool, state.pending.room(), snapshot.host_mounts(state.fs))
        if loaded.manifest.get("shell") is not None and state.session is None:
            state.set_session(True)
        self.before_cell()
        self.install(loaded.manifest, loaded.blobs)
        for paused in runs:
            state.pending.add(paused)
        if runs and not state.approval.on:
            state.approval.on = True
            state.approval.allowed_all.clear()
        return len(runs)

    def rows(self) -> list:
        """(number, id, label, time, what changed, head) for each commit, oldest first."""
        history = self._history()
        by_id: dict[Optional[str], Commit] = {c.id: c for c in history.commits}   # (a root's parent: None)
        out = []
        for number, commit in enumerate(history.commits):
            parent = by_id.get(commit.parent)
            change = diff(parent.manifest, commit.manifest) if parent is not None else None
            out.append((number, commit.id[:8], commit.message, commit.time, _summary(change),
                        commit.id == history.head))
        return out

    def bundle(self) -> dict:
        """`%scripted history` as text, and as an HTML table in a notebook."""
        rows = self.rows()
        if not rows:
            text = "no history yet: cells that change files are committed\n"
            return {"text/plain": text, "text/html": html("<p>{}</p>", text)}
        lines = []
        cells = []
        for number, short, label, when, summary, head in rows:
            stamp = time.strftime("%H:%M:%S", time.localtime(when))
            mark = "*" if head else " "
            lines.append(f"{mark}{number:>3}  {short}  {stamp}  {label:<10}  {summary}")
            row = html("<td>{}</td><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td>",
                       number, short, stamp, label, summary)
            cells.append(html("<tr style='font-weight:bold'>{}</tr>" if head else "<tr>{}</tr>", row))
        text = "\n".join(lines) + ("\n(* the session now; %scripted checkout N goes to commit N, "
                                   "%scripted undo one back)\n")
        table = html("<table><thead><tr><th>#</th><th>commit</th><th>time</th><th>cell</th><th>changed</th>"
                     "</tr></thead><tbody>{}</tbody></table>", join(cells))
        return {"text/plain": text, "text/html": table}


def _changed(change: dict) -> bool:
    return any(change[part][kind] for part in change for kind in ("added", "removed", "changed"))


def _summary(change: Optional[dict]) -> str:
    if change is None:
        return "the session as it started"
    parts = []
    files = change["files"]
    for sign, kind in (("+", "added"), ("-", "removed"), ("~", "changed")):
        parts += [sign + path for path in files[kind][:5]]
        if len(files[kind]) > 5:
            parts.append(f"{sign}{len(files[kind]) - 5} more")
    names = sum(len(change[p][k]) for p in ("variables", "functions") for k in ("added", "removed", "changed"))
    if names:
        parts.append(f"{names} variables/functions")
    return " ".join(parts) or "no change"
