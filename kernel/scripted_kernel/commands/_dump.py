"""What the dumps of binary data share (od.py, hexdump.py, xxd.py): the operands read as bytes
through the filesystem layer and concatenated, the output written a chunk of lines at a time
with the budget checked between chunks (a dump is several times larger than its input), the
counts of their options, and what a byte looks like.
"""
from __future__ import annotations

import re
from typing import Optional

from ._bytes import ByteInputs, parse_size

CHUNK_LINES = 2048
CHUNK_CHARS = 1 << 20
UINTMAX = 2 ** 64 - 1
# how od -c and hexdump's %_c show a control character
C_ESCAPES = {0: "\\0", 7: "\\a", 8: "\\b", 12: "\\f", 10: "\\n", 13: "\\r", 9: "\\t", 11: "\\v"}


class Sink:
    """Output gathered and written a chunk at a time (2,048 pieces or a MiB, whichever comes
    first: a piece may be a wide field), checking the budget between chunks."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.parts: list[str] = []
        self.size = 0

    def add(self, piece: str):
        self.parts.append(piece)
        self.size += len(piece)
        if len(self.parts) >= CHUNK_LINES or self.size >= CHUNK_CHARS:
            self.flush()
            self.ctx.budget.check_clock()

    def flush(self):
        if self.parts:
            self.ctx.out("".join(self.parts))
            self.parts = []
            self.size = 0

    def close(self) -> int:
        self.flush()
        return 0


def concatenated(ctx, cmd: str, operands: list) -> tuple[bytes, Optional[bool]]:
    """The operands' bytes one after the other (none: standard input), and whether one failed
    (None when none could be read)."""
    inputs = ByteInputs(ctx, cmd, operands)
    pieces = [data for _, data in inputs]
    if inputs.status and not pieces:
        return b"", None
    return b"".join(pieces), bool(inputs.status)


def printable(byte: int) -> bool:
    return 32 <= byte < 127


_SCALED = re.compile(r"(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)([A-Za-z]*)")


def scaled_number(text: str, allow_b: bool = True) -> Optional[int]:
    """A byte count as od (-j -N -S) and hexdump (-n -s) read it: decimal, 0x hex or 0 octal,
    times a size suffix (parse_size's; `allow_b`: `b` for 512); None when it is not one, and
    UINTMAX + 1 for any past UINTMAX (its digits may be thousands)."""
    m = _SCALED.fullmatch(text)
    if m is None:
        return None
    digits = m.group(1)
    if len(digits) > 30:
        return UINTMAX + 1
    value = (int(digits, 16) if digits[:2].lower() == "0x" else int(digits, 8) if digits.startswith("0")
             else int(digits))
    scale = parse_size("1" + m.group(2), allow_b=allow_b) if m.group(2) else 1
    if scale is None:
        return None
    return min(value * scale, UINTMAX + 1)
