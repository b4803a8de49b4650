"""seq: print a sequence of numbers (GNU coreutils)."""
from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

from ._options import UsageError, bad_usage, parse
from ..base.errors import LimitExceeded
from .registry import Usage, command

# seq -f takes one floating-point directive (GNU: %a %e %f %g and their capitals), with
# flags, width and precision; %% is a literal percent sign
_DIRECTIVE = re.compile(r"%[-+ #0']*\d*(?:\.\d*)?[aAeEfFgG]")



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


USAGE = Usage("[OPTION]... [FIRST [INCREMENT]] LAST", "Print numbers from FIRST to LAST, in steps of INCREMENT.", (
    "-f, --format=FORMAT      use printf style floating-point FORMAT",
    "-s, --separator=STRING   use STRING to separate numbers (default: \\n)",
    "-w, --equal-width        equalize width by padding with leading zeroes"))


@command("seq", usage=USAGE)
def run(ctx, argv):
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
    if fmt is not None:
        _check_format(fmt)
    places = max(_decimals(first_t), _decimals(step_t))
    count = int((last - first) / step) + 1 if (last - first) * step >= 0 else 0
    budget = ctx.limits.max_string_length // 2
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
                ctx.out(sep.join(map(str, block)) + (sep if k + _BLOCK < count else "\n"))
            return 0
        items = list(map(str, numbers))
    else:
        values = [first + step * k for k in range(count)]
        if fmt:
            items = [_format(fmt, v) for v in values]
        else:
            items = [f"{v:.{places}f}" for v in values]
    if opts.has("w") and items:
        width = max(len(x) for x in items)
        items = [("-" + x[1:].rjust(width - 1, "0")) if x.startswith("-") else x.rjust(width, "0")
                 for x in items]
    if items:
        ctx.out(sep.join(items) + "\n")
    return 0


def _check_format(fmt: str):
    """GNU's complaints about a -f format that is not one floating-point directive."""
    plain = fmt.replace("%%", "")
    found = _DIRECTIVE.findall(plain)
    if plain.endswith("%") and not plain.endswith("%%"):
        problem = "ends in %"
    elif len(found) > 1 or plain.count("%") > 1:
        problem = "has too many % directives"
    elif found:
        return
    elif "%" in plain:
        unknown = re.match(r"%[^a-zA-Z]*[a-zA-Z]?", plain[plain.index("%"):])
        assert unknown is not None      # the text starts with the %
        problem = f"has unknown {unknown.group(0)} directive"
    else:
        problem = "has no % directive"
    raise UsageError(f"seq: format \u2018{fmt}\u2019 {problem}")


def _format(fmt: str, value) -> str:
    plain = fmt.replace("%%", "\0")
    directive = _DIRECTIVE.search(plain)
    assert directive is not None        # the format was checked to have exactly one
    text = directive.group(0).replace("'", "") % float(value)
    return (plain[:directive.start()] + text + plain[directive.end():]).replace("\0", "%")
