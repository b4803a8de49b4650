"""Tool errors for the people who write the tools.

A model sees one sanitised line when a tool raises (`lookup: zzz`). The author at the notebook
sees that line unsanitised and, after it, the tool's own Python traceback: the frames of the
user's code (not the interpreter's, not the thread plumbing), in IPython's colours.
`%scripted sanitize on` turns both off, to show what a model would see.
"""
from __future__ import annotations

import os
import re
import threading
import types
from typing import Optional

import scripted_kernel

import scripted_magic

_OURS = tuple(os.path.dirname(os.path.abspath(m.__file__)) + os.sep for m in (scripted_kernel, scripted_magic)
              if m.__file__ is not None)
_PLUMBING = tuple(os.sep + p for p in (os.path.join("concurrent", "futures", ""), os.path.join("asyncio", ""),
                                        "threading.py", "contextvars.py"))
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _ours(filename: str) -> bool:
    path = os.path.abspath(filename)
    return path.startswith(_OURS) or any(p in path for p in _PLUMBING)


def user_traceback(tb):
    """The traceback `tb` without the frames of this package and of the thread plumbing."""
    kept = []
    while tb is not None:
        if not _ours(tb.tb_frame.f_code.co_filename):
            kept.append((tb.tb_frame, tb.tb_lasti, tb.tb_lineno))
        tb = tb.tb_next
    new = None
    for frame, lasti, lineno in reversed(kept):
        new = types.TracebackType(new, frame, lasti, lineno)
    return new


def format_exception(shell, error: BaseException, colours: bool) -> str:
    """`error` as IPython shows an exception, the user's frames only."""
    seen: set[int] = set()
    chained: Optional[BaseException] = error
    while chained is not None and id(chained) not in seen:      # the whole chain, cause and context
        seen.add(id(chained))
        chained.__traceback__ = user_traceback(chained.__traceback__)
        chained = chained.__cause__ or chained.__context__
    formatter = getattr(shell, "InteractiveTB", None)
    if formatter is not None:
        try:
            lines = formatter.structured_traceback(type(error), error, error.__traceback__, tb_offset=0)
            text = "\n".join(lines)
        except Exception:          # a formatter that fails must not hide the error itself
            formatter = None
    if formatter is None:
        import traceback
        text = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    text = text.rstrip("\n") + "\n"
    return text if colours else _ANSI.sub("", text)


MAX_TRACEBACKS = 20      # a cell's tool tracebacks shown; past them, only how many more failed


class FailureRecorder:
    """Installed on a ScriptedTool for one cell: remembers each exception a tool raised, with
    the message the script's stderr shows for it, until that line has been shown. The first
    MAX_TRACEBACKS are shown: a loop calling a failing tool a million times would otherwise
    write a million tracebacks, past max_output_bytes (they are not the script's output), and
    keep every exception, its frames and what they hold until the cell ends."""

    def __init__(self, tool, show):
        self.tool = tool
        self.show = show                  # show(exception): write its traceback to the notebook
        self.pending: list = []
        self.shown = 0
        self.untold = 0                   # failures past MAX_TRACEBACKS
        self._lock = threading.Lock()
        self._had = "_failure_text" in vars(tool)

    def __enter__(self):
        original = type(self.tool)._failure_text

        def failure_text(error):
            message = original(self.tool, error)
            with self._lock:
                if self.shown + len(self.pending) < MAX_TRACEBACKS:
                    self.pending.append((message, error))
                else:
                    self.untold += 1
            return message
        self.tool._failure_text = failure_text
        return self

    def __exit__(self, *exc):
        if not self._had:
            self.tool.__dict__.pop("_failure_text", None)
        return False

    def after_stderr(self, text: str):
        """A chunk of the script's stderr was shown: the tracebacks of the failures it reports."""
        with self._lock:
            due = [p for p in self.pending if p[0].split("\n", 1)[0] in text]
            self.pending = [p for p in self.pending if p not in due]
            self.shown += len(due)
        for _, error in due:
            self.show(error)

    def finish(self) -> int:
        """The cell ended: tracebacks whose line went elsewhere (2>/dev/null, a pipe). The
        number of failures whose traceback was not kept."""
        with self._lock:
            due, self.pending = self.pending, []
            self.shown += len(due)
        for _, error in due:
            self.show(error)
        return self.untold
