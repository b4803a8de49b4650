"""Decide later: a cell whose tool call was left for a decision ends paused, and Allow or Deny
in its output resumes it there.

`%scripted approve on` offers Decide later where the run can wait: the before_tool hook returns
Pause, the engine stops the run before that call (nothing after it runs) and hands back a
continuation (scripted_kernel/tools/journal.py). The cell shows the output so far, a line that
says which call waits and why, and a PausedView: the call, Allow, Deny, and an output area. A
decision resumes the run by replay (earlier calls answered from the continuation, not called
again) on the session as the cell found it, and the rest of the script's output appears in that
output area; what the replay prints again is not shown twice. The resumed output, status and
files equal those of a run approved at once.

The continuation stays in the kernel: the widget knows only the run's random id. A decision
reaches the kernel as a click, or as a custom message `{"decide": "allow"|"deny", "run": ID}` on
the view; a run is decided once, and a message naming another run, an unknown one or one decided
already is refused with one line. `%scripted pending` shows a view of each run that waits.

Pending runs live in the kernel's memory, and `%scripted save FILE` keeps them across a
restart: it writes each run (its continuation, the session as its cell began, the session's
manifest at the pause) into the session's snapshot, and `%scripted load FILE` checks them all,
then keeps them waiting under new ids, with approve on (pending_io.py). `%scripted pending`
shows their views, and a decision resumes each as it would have before the restart. At most
MAX_PENDING runs wait at once.
"""
from __future__ import annotations

import secrets
import sys
from dataclasses import dataclass, field
from typing import Callable, Optional

from .approval import ALLOW, DENY, describe, params_html
from .markup import html


class DecisionRefused(Exception):
    """A decision the kernel cannot carry out: its one line says why. `final`: the run can no
    longer be decided (it was already); else it still waits."""

    def __init__(self, message: str, final: bool = False):
        super().__init__(message)
        self.final = final


@dataclass
class PausedCell:
    """A cell's run that waits for a decision, and what resuming it needs."""
    label: str                    # "In [3]": the cell, as the history names it
    call: object                  # the ToolCall that waits
    reason: str
    continuation: bytes = field(repr=False)
    start: tuple = field(repr=False)       # (manifest, blobs): the session as the cell began
    at_pause: dict = field(repr=False)     # the session's manifest once the cell paused
    in_session: bool              # the cell ran in the `%scripted session on` shell
    shown: tuple                  # (stdout, stderr) characters the cell showed before pausing
    run_id: str = field(default_factory=lambda: secrets.token_hex(16))


def pause_line_start(stderr: str) -> int:
    """Where the engine's last line (`bash: paused before TOOL: REASON`) starts in a paused
    run's stderr: what comes before it is what a replay prints again."""
    body = stderr[:-1] if stderr.endswith("\n") else stderr
    return body.rfind("\n") + 1


class AfterReplay:
    """The output relay of a resumed run: drops the characters the replay prints again (the
    cell showed them before it paused) and passes the rest to `write`."""

    def __init__(self, write: Callable[[str, str], None], shown: tuple):
        self.write = write
        self.left = {"stdout": shown[0], "stderr": shown[1]}

    def __call__(self, name: str, text: str):
        skip = min(self.left.get(name, 0), len(text))
        if skip:
            self.left[name] -= skip
            text = text[skip:]
        if text:
            self.write(name, text)


class PausedView:
    """The paused call, Allow and Deny, and the output area the rest of the run goes to.
    `decide(run_id, answer)` carries a decision out (DecisionRefused if it cannot)."""

    def __init__(self, paused: PausedCell, decide: Callable[[str, str], None]):
        import ipywidgets as widgets
        self.paused = paused
        self.decide = decide
        self.text = widgets.HTML(html("<b>scripted</b>: {} waits before <code>{}</code>{}: {}", paused.label,
                                      describe(paused.call), params_html(paused.call), paused.reason))
        self.buttons = {ALLOW: widgets.Button(description="Allow", button_style="success"),
                        DENY: widgets.Button(description="Deny", button_style="danger")}
        for answer, button in self.buttons.items():
            button.on_click(lambda _, answer=answer: self._decide(paused.run_id, answer))
        self.output = widgets.Output()
        self.box = widgets.VBox([self.text, widgets.HBox(list(self.buttons.values())), self.output],
                                _dom_classes=("scripted-paused",))
        self.box.on_msg(self._message)

    def _message(self, _widget, content, _buffers):
        """A decision sent as a custom message: {"decide": "allow"|"deny", "run": ID}."""
        if not isinstance(content, dict):
            return
        answer, run_id = content.get("decide"), content.get("run")
        if answer not in (ALLOW, DENY) or not isinstance(run_id, str):
            with self.output:
                self._refuse('a decision is {"decide": "allow" or "deny", "run": ID}')
            return
        self._decide(run_id, answer)

    def _decide(self, run_id: str, answer: str):
        with self.output:
            if run_id != self.paused.run_id:
                self._refuse(f"no paused run {run_id[:40]!r} in this view")
                return
            self._set_enabled(False)
            waiting, self.text.value = self.text.value, html(
                "<b>scripted</b>: {} {} <code>{}</code>; the rest of its output is below", self.paused.label,
                "allowed" if answer == ALLOW else "denied", describe(self.paused.call))
            try:
                self.decide(run_id, answer)
            except DecisionRefused as e:
                self._refuse(str(e))
                self._set_enabled(not e.final)
                self.text.value = waiting          # what the view said before this click

    @staticmethod
    def _refuse(why: str):
        print(f"scripted: decision refused: {why}", file=sys.stderr)

    def _set_enabled(self, enabled: bool):
        for button in self.buttons.values():
            button.disabled = not enabled


# runs that may wait for a decision at once: each keeps its continuation and the session as its
# cell began (files shared with the history, but a file the history dropped stays alive for it)
MAX_PENDING = 16


class PendingRuns:
    """The session's paused cells by run id, each taken once; at most MAX_PENDING."""

    def __init__(self):
        self.runs: dict = {}

    def room(self) -> int:
        """How many more runs may wait."""
        return max(0, MAX_PENDING - len(self.runs))

    def add(self, paused: PausedCell):
        self.runs[paused.run_id] = paused

    def take(self, run_id: str) -> Optional[PausedCell]:
        return self.runs.pop(run_id, None)

    def put_back(self, paused: PausedCell):
        self.runs[paused.run_id] = paused
