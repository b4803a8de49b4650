"""uniq: collapse adjacent repeated lines."""
from __future__ import annotations

import itertools

from ..fs import FsError, access
from ._options import UsageError, bad_usage, parse, read_input, split_lines
from .registry import Usage, command



USAGE = Usage("[OPTION]... [INPUT [OUTPUT]]", "Filter adjacent matching lines from INPUT (or standard input).", (
    "-c, --count            prefix lines by the number of occurrences",
    "-d, --repeated         only print duplicate lines, one for each group",
    "-D, --all-repeated     print all duplicate lines",
    "-f, --skip-fields=N    avoid comparing the first N fields",
    "-i, --ignore-case      ignore differences in case when comparing",
    "-s, --skip-chars=N     avoid comparing the first N characters",
    "-u, --unique           only print unique lines",
    "-z, --zero-terminated  line delimiter is NUL, not newline",
    "-w, --check-chars=N    compare no more than N characters in lines"))


@command("uniq", usage=USAGE)
def run(ctx, argv):
    opts, ops = parse("uniq", argv, short_flags="cdDuiz", short_values="fsw",
                      long_flags={"count": "c", "repeated": "d", "unique": "u",
                                  "ignore-case": "i", "zero-terminated": "z", "all-repeated": "D"},
                      long_values={"skip-fields": "f", "skip-chars": "s", "check-chars": "w"})
    if len(ops) > 2:
        raise bad_usage("uniq", f"extra operand '{ops[2]}'")
    try:
        skip_fields = int(opts.get("f", "0"))
        skip_chars = int(opts.get("s", "0"))
        width = int(opts.get("w")) if opts.get("w") is not None else None
    except ValueError:
        raise UsageError("uniq: invalid number of fields to skip") from None
    sep = "\0" if opts.has("z") else "\n"
    text, status = read_input(ctx, "uniq", ops[:1])
    if status:
        return status
    lines = split_lines(text, sep)

    def key(line):
        rest = line
        for _ in range(skip_fields):
            rest = rest.lstrip(" \t")
            k = 0
            while k < len(rest) and rest[k] not in " \t":
                k += 1
            rest = rest[k:]
        rest = rest[skip_chars:]
        if width is not None:
            rest = rest[:width]
        return rest.lower() if opts.has("i") else rest

    plain = not (skip_fields or skip_chars or width is not None or opts.has("i"))
    repeated, single, all_repeated, counts = (opts.has(f) for f in "duDc")

    def kept():
        """The output lines, one group at a time (no list of every group)."""
        for _, members in itertools.groupby(lines, None if plain else key):
            if all_repeated:
                group = list(members)
                if len(group) > 1:
                    yield from group
                continue
            first = next(members)
            n = 1 + len(list(members))  # noqa: B031 (the rest after next(); counted at C speed)
            if repeated and n < 2 or single and n > 1:
                continue
            yield f"{n:7d} {first}" if counts else first

    to_stdout = len(ops) < 2 or ops[1] == "-"
    pieces = []
    for block in _blocks(kept()):
        text = sep.join(block) + sep
        if to_stdout:
            ctx.out(text)
        else:
            pieces.append(text)
    if to_stdout:
        return 0
    try:
        access.writer(ctx, ops[1])("".join(pieces))
    except FsError as e:
        raise UsageError(f"uniq: {ops[1]}: {e.strerror}") from None
    return 0


def _blocks(items, size: int = 1 << 16):
    """Lists of up to `size` items: output written a block at a time."""
    block = []
    for item in items:
        block.append(item)
        if len(block) >= size:
            yield block
            block = []
    if block:
        yield block
