"""shuf: random permutations of lines, arguments or a range of numbers (GNU coreutils).

The generator is seeded from the shell's $RANDOM generator (`ctx.random`), so a script is as
reproducible as $RANDOM is: seeding that generator makes shuf's choices repeat. With
--random-source=FILE the file's bytes are the seed (reproducible, though not GNU's sequence).

A range is never built: `shuf -i 1-1000000000 -n 1` draws from it with a sparse Fisher-Yates
shuffle whose memory grows only with what is printed, and every unbounded output (a whole
large range, -r without -n) is written a chunk at a time until the output limit ends it.
"""
from __future__ import annotations

import random
from typing import Union

from ..fs import FsError, access
from ._bytes import TOO_LARGE, UINTMAX, bounded_decimal, lines_of, locale_quote, read_bytes, shell_quote, text
from ._options import UsageError, bad_usage, parse
from .registry import Usage, command
from ..base.limits import Budget

USAGE = Usage("[OPTION]... [FILE]", "Write a random permutation of the input lines to standard output.", (
    "-e, --echo                treat each ARG as an input line",
    "-i, --input-range=LO-HI   treat each number LO through HI as an input line",
    "-n, --head-count=COUNT    output at most COUNT lines",
    "-o, --output=FILE         write result to FILE instead of standard output",
    "--random-source=FILE  get random bytes from FILE",
    "-r, --repeat              output lines can be repeated",
    "-z, --zero-terminated     line delimiter is NUL, not newline"))

_CHUNK = 4096


@command("shuf", usage=USAGE)
def run(ctx, argv):
    opts, ops = parse("shuf", argv, short_flags="erz", short_values="ino", long_flags={
        "echo": "e", "repeat": "r", "zero-terminated": "z"}, long_values={
        "input-range": "i", "head-count": "n", "output": "o", "random-source": "random-source"})
    if opts.has("e") and opts.has("i"):
        raise bad_usage("shuf", "cannot combine -e and -i options")
    if len(opts.all("i")) > 1:
        raise UsageError("shuf: multiple -i options specified")
    count = None
    for value in opts.all("n"):
        if not (value.isascii() and value.isdigit()):
            raise UsageError(f"shuf: invalid line count: {locale_quote(value)}")
        lines = bounded_decimal(value)              # (past UINTMAX: all of them, as GNU's)
        count = lines if count is None else min(count, lines)
    end = "\0" if opts.has("z") else "\n"
    rng = _generator(ctx, opts.get("random-source"))
    if opts.has("i"):
        if ops:
            raise bad_usage("shuf", f"extra operand {locale_quote(ops[0])}")
        lo, hi = _range(opts.get("i"))
        items: Union[_RangeItems, list[str]] = _RangeItems(lo, hi)
    elif opts.has("e"):
        items = list(ops)
    else:
        if len(ops) > 1:
            raise bad_usage("shuf", f"extra operand {locale_quote(ops[1])}")
        try:
            data = read_bytes(ctx, ops[0] if ops else "-")
        except FsError as e:
            raise UsageError(f"shuf: {shell_quote(ops[0])}: {e.strerror}") from None
        items = [text(line) for line in lines_of(data, b"\0" if opts.has("z") else b"\n")]
    write = _output(ctx, opts.get("o"))
    if opts.has("r"):
        _repeat(ctx.budget, write, items, count, rng, end)
    else:
        _permute(ctx.budget, write, items, count, rng, end)
    return 0


def _generator(ctx, source):
    if source is None:
        return random.Random(ctx.random.getrandbits(64))
    try:
        return random.Random(read_bytes(ctx, source))
    except FsError as e:
        raise UsageError(f"shuf: {shell_quote(source)}: {e.strerror}") from None


def _range(spec: str) -> tuple:
    """LO-HI as GNU reads it: each a number up to UINTMAX, and at most UINTMAX of them."""
    lo_text, dash, hi_text = spec.partition("-")
    if not dash:
        raise UsageError(f"shuf: invalid input range: {locale_quote(spec)}")
    for bound in (lo_text, hi_text):
        if not (bound.isascii() and bound.isdigit()):
            raise UsageError(f"shuf: invalid input range: {locale_quote(bound)}")
        if bounded_decimal(bound) > UINTMAX:
            raise UsageError(f"shuf: invalid input range: {locale_quote(bound)}{TOO_LARGE}")
    lo, hi = int(lo_text), int(hi_text)
    if lo > hi + 1 or hi - lo + 1 > UINTMAX:
        raise UsageError(f"shuf: invalid input range: {locale_quote(spec)}")
    return lo, hi


class _RangeItems:
    """LO..HI as a sequence that is never built (its size may pass what len() can return)."""

    def __init__(self, lo: int, hi: int):
        self.lo, self.size = lo, hi - lo + 1

    def __getitem__(self, k: int) -> str:
        return str(self.lo + k)


def _size(items) -> int:
    return items.size if isinstance(items, _RangeItems) else len(items)


def _output(ctx, name):
    """Standard output, or -o FILE (opened once the input has been read, as GNU does)."""
    if name is None:
        return ctx.out
    try:
        return access.writer(ctx, name)
    except FsError as e:
        raise UsageError(f"shuf: {shell_quote(name)}: {e.strerror}") from None


def _emit(budget: Budget, write, picks, end: str):
    """Write the picked lines a chunk at a time, checking the budget between chunks."""
    chunk = []
    for item in picks:
        chunk.append(item + end)
        if len(chunk) >= _CHUNK:
            write("".join(chunk))
            chunk = []
            budget.check_clock()
    if chunk:
        write("".join(chunk))


def _permute(budget: Budget, write, items, count, rng: random.Random, end: str):
    size = _size(items)
    wanted = size if count is None else min(count, size)
    if isinstance(items, list):
        rng.shuffle(items)
        _emit(budget, write, items[:wanted], end)
        return
    _emit(budget, write, (items[k] for k in _sparse_shuffle(size, wanted, rng)), end)


def _sparse_shuffle(size: int, wanted: int, rng: random.Random):
    """The first `wanted` indices of a random permutation of range(size), by Fisher-Yates
    over a dictionary of the positions swapped so far."""
    moved: dict = {}
    for i in range(wanted):
        j = rng.randrange(i, size)
        yield moved.get(j, j)
        moved[j] = moved.pop(i, i)


def _repeat(budget: Budget, write, items, count, rng: random.Random, end: str):
    """-r: draws with replacement; endless without -n (until the output limit)."""
    size = _size(items)
    if not size:
        if count == 0:
            return
        raise UsageError("shuf: no lines to repeat")

    def draws():
        n = 0
        while count is None or n < count:
            yield items[rng.randrange(size)]
            n += 1
    _emit(budget, write, draws(), end)
