"""timeout N COMMAND: run a command (a tool, usually) with a time limit; 124 when it is hit.

Sync tool callbacks normally run inline (fast); under `timeout` a callback runs on a helper
thread so that a slow one can be abandoned at the limit.
"""
from __future__ import annotations

import re
import time

from .registry import builtin
from ..dispatch import dispatch
from ...base.errors import Cancelled
from ...base.limits import WATCHDOG

_DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)([smhd]?)\Z")
_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}


@builtin("timeout")
def timeout(sh, argv):
    args = argv[1:]
    while args and args[0].startswith("-") and args[0] != "--":
        opt = args.pop(0)
        if opt in ("-s", "-k", "--signal", "--kill-after") and args:
            args.pop(0)
    if args and args[0] == "--":
        args.pop(0)
    if len(args) < 2:
        sh.err("timeout: missing operand\nTry 'timeout --help' for more information.\n")
        return 125
    m = _DURATION.match(args[0])
    if not m:
        sh.err(f"timeout: invalid time interval '{args[0]}'\nTry 'timeout --help' for more information.\n")
        return 125
    seconds = float(m.group(1)) * _UNITS[m.group(2)]
    budget = sh.budget
    saved = budget.deadline
    mine = time.monotonic() + seconds
    if saved is None or mine < saved:
        budget.deadline = mine
        WATCHDOG.deadline_moved(budget)
    saved_isolate = sh.isolate_tools
    sh.isolate_tools = True
    try:
        return dispatch(sh, args[1], args[1:])
    except Cancelled as e:
        if e.status == 124 and (saved is None or time.monotonic() < saved):
            return 124            # our limit, not the script's: the script goes on
        raise
    finally:
        budget.deadline = saved
        sh.isolate_tools = saved_isolate
