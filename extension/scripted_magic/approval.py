"""`%scripted approve on`: ask before each tool call a cell's script makes.

The question is a before_tool hook (scripted_kernel.tools.hooks), so it sees each call as
dispatched (through eval, functions, xargs, pipelines), and a denied call fails its command with
status 126 (`TOOL: denied: ...`) while the script goes on as bash would. Where a widget
front-end listens, the question is three buttons (Allow / Allow all of this tool / Deny);
elsewhere (terminal IPython, a front-end without widgets) it is a line read with `input()`:
`y` allows, `a` allows every later call of that tool in the session, anything else denies.

Where the cell's run can wait (the session's own tools, in a widget front-end), a fourth button,
Decide later, pauses the run before the call: the cell ends paused, and the decision is made in
its output afterwards (pending.py).

A cell blocks its kernel's main thread while it runs, so a button click cannot reach it there:
the widget's replies are routed to a kernel subshell of their own (ipykernel 7's subshells),
whose thread hands the answer to the waiting script. A kernel without subshells asks through
`input()`, which every Jupyter front-end shows as a text box.
"""
from __future__ import annotations

import json
import shlex
import threading
from typing import Callable, Optional

from scripted_kernel import Deny, Pause

from .markup import Html, html

ALLOW, ALLOW_ALL, DENY, LATER = "allow", "allow_all", "deny", "later"
DENIED_REASON = "not approved in the notebook"
LATER_REASON = "left for a decision in the notebook"


def describe(call) -> str:
    """The call as a command line (its words as expanded, quoted where needed)."""
    return shlex.join(str(word) for word in call.argv)


class Approval:
    """The session's approval state and its before_tool hook."""

    def __init__(self, shell, ask: Optional[Callable] = None):
        self.shell = shell
        self.on = False
        self.allowed_all: set = set()
        self.ask = ask                # fn(call) -> ALLOW | ALLOW_ALL | DENY | LATER; None: widget or input()
        self.can_wait = False         # the running cell can pause and be resumed (run_script sets it)
        self._lock = threading.Lock()  # one question at a time

    def hook(self, call):
        if not self.on or call.name in self.allowed_all:
            return None
        with self._lock:
            answer = (self.ask or self._default_ask)(call)
        if answer == ALLOW_ALL:
            self.allowed_all.add(call.name)
        if answer in (ALLOW, ALLOW_ALL):
            return None
        if answer == LATER and self.can_wait:
            return Pause(LATER_REASON)
        return Deny(DENIED_REASON)

    def _default_ask(self, call) -> str:
        from . import frontend
        kernel = getattr(self.shell, "kernel", None)
        if kernel is not None and frontend.widgets_live(self.shell):
            router = _subshell_router(kernel)
            if router is not None:
                return WidgetQuestion(call, router, later=self.can_wait).wait()
        return ask_with_input(call)


def ask_with_input(call, read: Optional[Callable] = None) -> str:
    """The text question: y allows, a allows every later call of the tool, anything else denies."""
    read = read or input             # looked up now: the kernel's or the terminal's
    try:
        reply = read(f"scripted: run {describe(call)} ? [y]es / [a]ll {call.name} calls / [N]o: ")
    except (EOFError, KeyboardInterrupt):
        return DENY
    reply = (reply or "").strip().lower()
    return ALLOW if reply in ("y", "yes") else ALLOW_ALL if reply in ("a", "all") else DENY


def _subshell_router(kernel) -> Optional[Callable]:
    """A function that routes a comm's replies to a subshell of the kernel (made once), or None
    where the kernel has no subshells."""
    router = getattr(kernel, "_scripted_approval_router", None)
    if router is not None:
        return router
    try:
        if not getattr(kernel, "_supports_kernel_subshells", False):
            return None
        channel = kernel.shell_channel_thread      # subshells are made on its thread
        made: dict = {}
        ready = threading.Event()

        def make():
            try:
                made["id"] = channel.manager._create_subshell()
            finally:
                ready.set()
        channel.io_loop.add_callback(make)
        if not ready.wait(5) or "id" not in made:
            return None
        subshell_id = made["id"]
    except Exception:                    # another ipykernel: no routing, ask with input()
        return None

    def route(comm):
        comm._reply_subshell_id = subshell_id
    kernel._scripted_approval_router = route
    return route


def params_html(call) -> Html:
    """The call's parameters as a widget shows them after its command line (JSON), or nothing."""
    params = json.dumps(call.params, default=str) if call.params is not None else ""
    return html(" <small>(parameters <code>{}</code>)</small>", params) if params else html("")


class WidgetQuestion:
    """Three buttons (four with `later`) and the call; wait() returns the answer once one is
    clicked."""

    def __init__(self, call, route: Optional[Callable] = None, later: bool = False):
        import ipywidgets as widgets
        from IPython.display import display
        self.answer: Optional[str] = None
        self.done = threading.Event()
        text = widgets.HTML(html("<b>scripted</b>: run <code>{}</code>?{}", describe(call), params_html(call)))
        self.buttons = {ALLOW: widgets.Button(description="Allow", button_style="success"),
                        ALLOW_ALL: widgets.Button(description=f"Allow all {call.name}"),
                        DENY: widgets.Button(description="Deny", button_style="danger")}
        if later:
            self.buttons[LATER] = widgets.Button(description="Decide later", button_style="warning")
        for answer, button in self.buttons.items():
            button.on_click(lambda _, answer=answer: self._answer(answer))
        if route is not None:         # before anyone can see a button: a click must never go to
            for button in self.buttons.values():      # the main thread, which the cell holds
                route(button.comm)
        self.box = widgets.VBox([text, widgets.HBox(list(self.buttons.values()))])
        display(self.box)

    def _answer(self, answer: str):
        if self.answer is None:
            self.answer = answer
            self.done.set()

    def click(self, answer: str):
        """What a click of that button does (tests stand in for the front-end with it)."""
        self.buttons[answer].click()

    def wait(self) -> str:
        from scripted_kernel.base.limits import check_stop
        while not self.done.wait(0.05):
            check_stop()                  # a cell interrupted meanwhile stops asking
        for button in self.buttons.values():
            button.disabled = True
        return self.answer or DENY
