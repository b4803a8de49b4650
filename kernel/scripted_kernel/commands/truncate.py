"""truncate: shrink or extend files to a size (GNU coreutils). A size past the filesystem's
largest file is refused before anything is built, with the error the kernel gives (EFBIG)."""
from __future__ import annotations

from typing import Optional

from ..fs import FsError, access
from ._bytes import INTMAX, gnu_number, quote_always, read_bytes
from ._options import UsageError, bad_usage, parse
from .registry import Usage, command

USAGE = Usage("OPTION... FILE...", "Shrink or extend the size of each FILE to the specified size", (
    "-c, --no-create        do not create any files",
    "-o, --io-blocks        treat SIZE as number of IO blocks instead of bytes",
    "-r, --reference=RFILE  base size on RFILE",
    "-s, --size=SIZE        set or adjust the file size by SIZE bytes"))

_IO_BLOCK = 4096


def _size(text: str) -> tuple[str, int]:
    """(operator, bytes) of a --size value: [<>/%][+-]N[suffix], the number read as GNU's
    xdectoimax reads it into an off_t (its sign part of it, the operator before it not)."""
    rest = text.lstrip()
    operator = rest[:1] if rest[:1] in ("<", ">", "/", "%") else ""
    rest = rest[len(operator):].lstrip()
    if rest[:1] in ("+", "-") and operator:
        raise bad_usage("truncate", "multiple relative modifiers specified")
    value = gnu_number(rest, -INTMAX - 1, INTMAX, "truncate: Invalid number", units=False)
    if rest[:1] in ("+", "-"):
        return rest[0], abs(value)
    return operator, value


def _new_size(operator: str, amount: int, current: int) -> int:
    if operator == "+":
        return current + amount
    if operator == "-":
        return max(0, current - amount)
    if operator == "<":
        return min(current, amount)
    if operator == ">":
        return max(current, amount)
    if operator in ("/", "%"):
        if amount == 0:
            raise UsageError("truncate: division by zero")
        down = current // amount * amount
        if operator == "/":
            return down
        return current if current % amount == 0 else down + amount
    return amount


@command("truncate", usage=USAGE, needs_files=True)
def run(ctx, argv):
    opts, ops = parse("truncate", argv, short_flags="co", short_values="rs", long_flags={
        "no-create": "c", "io-blocks": "o"}, long_values={"reference": "r", "size": "s"})
    if not opts.has("s") and not opts.has("r"):
        raise bad_usage("truncate", "you must specify either ‘--size’ or ‘--reference’")
    if not ops:
        raise bad_usage("truncate", "missing file operand")
    amount: Optional[int] = None
    operator = ""
    if opts.has("s"):
        operator, amount = _size(opts.get("s"))
    if opts.has("o") and amount is not None:
        amount *= _IO_BLOCK
    if opts.has("r"):
        try:
            reference = ctx.fs.stat(ctx.path(opts.get("r"))).size
        except FsError as e:
            raise UsageError(f"truncate: cannot stat {quote_always(opts.get('r'))}: {e.strerror}") from None
        if amount is None:
            operator, amount = "", reference
        elif operator:
            amount = _new_size(operator, amount, reference)
            operator = ""
    assert amount is not None               # --size or --reference, checked above
    status = 0
    for name in ops:
        status |= _truncate(ctx, name, operator, amount, opts.has("c"))
    return status


def _truncate(ctx, name: str, operator: str, amount: int, no_create: bool) -> int:
    path = ctx.path(name)
    exists = ctx.fs.exists(path)
    if not exists and no_create:
        return 0
    try:
        old = read_bytes(ctx, name) if exists else b""
    except FsError as e:
        ctx.err(f"truncate: cannot open {quote_always(name)} for writing: {e.strerror}\n")
        return 1
    size = _new_size(operator, amount, len(old))
    if size > ctx.limits.max_file_bytes:
        if not exists:
            _create(ctx, name)
        ctx.err(f"truncate: failed to truncate {quote_always(name)} at {size} bytes: File too large\n")
        return 1
    if size == len(old) and exists:
        return 0
    try:
        access.writer(ctx, name)((old[:size] + bytes(max(0, size - len(old))))
                                 .decode("utf-8", "surrogateescape"))
    except FsError as e:
        ctx.err(f"truncate: cannot open {quote_always(name)} for writing: {e.strerror}\n")
        return 1
    return 0


def _create(ctx, name: str):
    try:
        access.writer(ctx, name)("")
    except FsError:
        pass
