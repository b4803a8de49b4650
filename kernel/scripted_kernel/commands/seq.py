"""seq: print a sequence of numbers (GNU coreutils)."""
from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

from ._options import bad_usage, parse, run_guarded
from ..shell.errors import LimitExceeded

NAMES = ("seq",)


def _number(text: str) -> Decimal:
    try:
        if not re.fullmatch(r"\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?|\s*[-+]?(inf|infinity|nan)", text, re.I):
            raise InvalidOperation
        return Decimal(text)
    except InvalidOperation:
        raise bad_usage("seq", f"invalid floating point argument: '{text}'") from None


_BLOCK = 1 << 16          # numbers written at once


def _decimals(text: str) -> int:
    if "e" in text.lower():
        return 0
    return len(text.split(".", 1)[1]) if "." in text else 0


def run(sh, argv):
    def body():
        # negative numbers are operands, not options: shield them from the option parser
        marked = [argv[0]] + ["\0" + a if re.fullmatch(r"-\.?\d.*", a) else a for a in argv[1:]]
        opts, ops = parse("seq", marked,
                          short_flags="w", short_values="sf",
                          long_flags={"equal-width": "w"},
                          long_values={"separator": "s", "format": "f"})
        ops = [o[1:] if o.startswith("\0") else o for o in ops]
        if not ops:
            raise bad_usage("seq", "missing operand")
        if len(ops) > 3:
            raise bad_usage("seq", f"extra operand '{ops[3]}'")
        first_t, step_t, last_t = ("1", "1", ops[0]) if len(ops) == 1 else \
            (ops[0], "1", ops[1]) if len(ops) == 2 else tuple(ops)
        first, step, last = _number(first_t), _number(step_t), _number(last_t)
        if step == 0:
            raise bad_usage("seq", f"invalid Zero increment value: '{step_t}'")
        sep = opts.get("s", "\n")
        fmt = opts.get("f")
        places = max(_decimals(first_t), _decimals(step_t))
        count = int((last - first) / step) + 1 if (last - first) * step >= 0 else 0
        budget = sh.limits.max_string_length // 2
        if count > budget:
            raise LimitExceeded("max_string_length",
                                f"seq: {count} numbers exceed the output budget (max_string_length)")
        integral = places == 0 and all(v == v.to_integral_value() for v in (first, step))
        if integral and not fmt:          # whole numbers: a range, without Decimal arithmetic
            start, stride = int(first), int(step)
            numbers = range(start, start + stride * count, stride)
            if not opts.has("w"):
                # written a block at a time: a million numbers never sit in memory as strings
                for k in range(0, count, _BLOCK):
                    block = numbers[k:k + _BLOCK]
                    sh.out(sep.join(map(str, block)) + (sep if k + _BLOCK < count else "\n"))
                return 0
            items = list(map(str, numbers))
        else:
            values = [first + step * k for k in range(count)]
            if fmt:
                from ..shell.builtins.printf import format_once
                items = [format_once(sh, fmt, [str(v)], 0, [])[0] for v in values]
            else:
                items = [f"{v:.{places}f}" for v in values]
        if opts.has("w") and items:
            width = max(len(x) for x in items)
            items = [("-" + x[1:].rjust(width - 1, "0")) if x.startswith("-") else x.rjust(width, "0")
                     for x in items]
        if items:
            sh.out(sep.join(items) + "\n")
        return 0
    return run_guarded("seq", sh, body)
