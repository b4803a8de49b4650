"""tee and base64."""
from __future__ import annotations

import base64 as b64
import binascii

from ..fs import FsError, access
from ._options import UsageError, integer, parse, read_input
from .registry import Usage, command



def _tee(ctx, argv):
    opts, ops = parse("tee", argv, short_flags="aip", long_flags={"append": "a", "ignore-interrupts": "i"})
    writers, status = [], 0
    for op in ops:
        try:
            writers.append(ctx.out if op == "-" else access.writer(ctx, op, append=opts.has("a")))
        except FsError as e:
            ctx.err(f"tee: {op}: {e.strerror}\n")
            status = 1
    text = ctx.stdin.read_all()
    ctx.out(text)
    for write in writers:
        write(text)
    return status


def _base64(ctx, argv):
    opts, ops = parse("base64", argv, short_flags="di", short_values="w",
                      long_flags={"decode": "d", "ignore-garbage": "i"}, long_values={"wrap": "w"})
    if len(ops) > 1:
        raise UsageError(f"base64: extra operand ‘{ops[1]}’\nTry 'base64 --help' for more information.")
    text, status = read_input(ctx, "base64", ops)
    if status:
        return status
    data = text.encode("utf-8", "surrogateescape")
    if opts.has("d"):
        packed = b"".join(data.split())
        try:
            ctx.out(b64.b64decode(packed, validate=not opts.has("i")).decode("utf-8", "surrogateescape"))
        except (binascii.Error, ValueError):
            raise UsageError("base64: invalid input") from None
        return 0
    encoded = b64.b64encode(data).decode()
    width = integer(opts.get("w", "76"), "base64: invalid wrap size: ‘{}’")
    if not width:                  # -w 0: one line, and GNU ends it without a newline
        ctx.out(encoded)
        return 0
    if encoded:
        encoded = "\n".join(encoded[i:i + width] for i in range(0, len(encoded), width))
    ctx.out(encoded + "\n" if encoded else "")
    return 0


USAGES = {
    "tee": Usage("[OPTION]... [FILE]...", "Copy standard input to each FILE, and also to standard output.", (
        "-a, --append             append to the given FILEs, do not overwrite",
        "-i, --ignore-interrupts  ignore interrupt signals",
        "-p                       (accepted)")),
    "base64": Usage("[OPTION]... [FILE]", "Base64 encode or decode FILE, or standard input, to standard output.", (
        "-d, --decode          decode data",
        "-i, --ignore-garbage  when decoding, ignore non-alphabet characters",
        "-w, --wrap=COLS       wrap encoded lines after COLS character (default 76)")),
}


@command("tee", "base64", usage=USAGES)
def run(ctx, argv):
    impl = _tee if argv[0] == "tee" else _base64
    return impl(ctx, argv)
