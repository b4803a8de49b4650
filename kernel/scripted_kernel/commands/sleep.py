"""sleep: wait, within the script's wall-clock limit and cancellation."""
from __future__ import annotations

import re
import time

from ._options import bad_usage
from .registry import Usage, command

_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}


USAGE = Usage("NUMBER[SUFFIX]...", "Pause for NUMBER seconds (SUFFIX s, m, h or d); the sum of all arguments.")


@command("sleep", usage=USAGE)
def run(ctx, argv):
    if len(argv) < 2:
        raise bad_usage("sleep", "missing operand")
    total = 0.0
    for arg in argv[1:]:
        m = re.fullmatch(r"(\d+(?:\.\d*)?|\.\d+)([smhd]?)", arg)
        if not m:
            raise bad_usage("sleep", f"invalid time interval '{arg}'")
        total += float(m.group(1)) * _UNITS[m.group(2)]
    end = time.monotonic() + total
    while True:                      # in slices, so a cancel or the deadline stops it
        ctx.budget.check_clock()
        left = end - time.monotonic()
        if left <= 0:
            return 0
        time.sleep(min(left, 0.05))
