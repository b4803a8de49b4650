"""`%scripted approve on`: ask before each tool call a cell's script makes.

The question is a before_tool hook (scripted_kernel.tools.hooks), so it sees each call as
dispatched (through eval, functions, xargs, pipelines), and a denied call fails its command with
status 126 (`TOOL: denied: ...`) while the script goes on as bash would. Where a widget
front-end listens, the question is three buttons (Allow / Allow all of this tool / Deny);
elsewhere (terminal IPython, a front-end without widgets) it is a line read with `input()`:
`y` allows, `a` allows every later call of that tool in the session, anything else denies.

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

from scripted_kernel import Deny

from .markup import html

ALLOW, ALLOW_ALL, DENY = "allow", "allow_all", "deny"


def describe(call) -> str:
    """The call as a command line (its words as expanded, quoted where needed)."""
    return shlex.join(str(word) for word in call.argv)


class Approval:
    """The session's approval state and its before_tool hook."""

    def __init__(self, shell, ask: Optional[Callable] = None):
        self.shell = shell
        self.on = False
        self.allowed_all: set = set()
        self.ask = ask                # fn(call) -> ALLOW | ALLOW_ALL | DENY; None: widget or input()
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
        return Deny("not approved in the notebook")

    def _default_ask(self, call) -> str:
        from . import frontend
        kernel = getattr(self.shell, "kernel", None)
        if kernel is not None and frontend.widgets_live(self.shell):
            router = _subshell_router(kernel)
            if router is not None:
                return WidgetQuestion(call, router).wait()
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


class WidgetQuestion:
    """Three buttons and the call; wait() returns the answer once one is clicked."""

    def __init__(self, call, route: Optional[Callable] = None):
        import ipywidgets as widgets
        from IPython.display import display
        self.answer: Optional[str] = None
        self.done = threading.Event()
        params = json.dumps(call.params, default=str) if call.params is not None else ""
        text = widgets.HTML(html("<b>scripted</b>: run <code>{}</code>?{}", describe(call),
                                 html(" <small>(parameters <code>{}</code>)</small>", params) if params else ""))
        self.buttons = {ALLOW: widgets.Button(description="Allow", button_style="success"),
                        ALLOW_ALL: widgets.Button(description=f"Allow all {call.name}"),
                        DENY: widgets.Button(description="Deny", button_style="danger")}
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
