"""Whether the front-end can show a live widget.

A widget's view in a saved notebook needs the widget state saved with it and JavaScript from a
CDN; where either is missing (nbclient, papermill and `jupyter nbconvert --execute` save the
state, then `nbconvert --to html` offline shows nothing; GitHub and VS Code without a kernel
show an error) the HTML table in the same bundle is what a reader should get. So the tool
browser is built only for a front-end that renders widgets: one whose widget manager opened
the `jupyter.widget.control` comm or asked for the `jupyter.widget` comms (JupyterLab, Notebook
7, VS Code and Voila do as they connect), or a kernel started by a Jupyter server (it sets
JPY_SESSION_NAME), which covers `%load_ext` after the manager connected. Everything else gets
the static HTML, which every viewer and exporter shows.
"""
from __future__ import annotations

import os

WIDGET_TARGETS = ("jupyter.widget", "jupyter.widget.control")


def _target(msg) -> str:
    try:
        return msg["content"].get("target_name") or ""
    except (KeyError, TypeError, AttributeError):
        return ""


def watch(kernel):
    """Note on the kernel when a widget manager makes itself known (once per kernel)."""
    if kernel is None or getattr(kernel, "_scripted_watching", False):
        return
    handlers = getattr(kernel, "shell_handlers", None)
    if not isinstance(handlers, dict):
        return
    kernel._scripted_watching = True
    kernel._scripted_widget_frontend = False
    for msg_type in ("comm_open", "comm_info_request"):
        original = handlers.get(msg_type)
        if original is None:
            continue

        def handler(stream, ident, msg, _original=original):
            if _target(msg) in WIDGET_TARGETS:
                kernel._scripted_widget_frontend = True
            return _original(stream, ident, msg)
        handlers[msg_type] = handler


def widgets_live(shell) -> bool:
    """Whether `help` may show the live tool browser rather than its static HTML."""
    kernel = getattr(shell, "kernel", None)
    if kernel is None:
        return False
    return bool(getattr(kernel, "_scripted_widget_frontend", False) or os.environ.get("JPY_SESSION_NAME"))
