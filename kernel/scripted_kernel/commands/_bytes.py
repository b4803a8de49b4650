"""What the byte-oriented commands share (od, hexdump, xxd, strings, split, dd, comm, join ...):
file operands read as bytes through the filesystem layer, lines split as the C tools split them,
GNU's size suffixes, and the two quoting styles of GNU's messages."""
from __future__ import annotations

import re
import unicodedata
from typing import Callable, Iterator, Optional

from ..fs import FsError, access
from ._options import UsageError, shown

_DEVICE = "/dev/"


def read_bytes(ctx, name: str) -> bytes:
    """The bytes of one operand: `-` is standard input; /dev/stdin, /dev/fd/N and /dev/null
    through the access layer, other files straight from the filesystem. Raises FsError."""
    if name == "-":
        return ctx.read_stdin_bytes()
    if name.startswith(_DEVICE):
        return access.read_text(ctx, name).encode("utf-8", "surrogateescape")
    return ctx.fs.read_bytes(ctx.path(name))


class ByteInputs:
    """The file operands of a byte-oriented command (`-` or none: standard input), read one at
    a time: the bytes twin of _options.Inputs. An operand that cannot be read is reported in
    the command's words (`message`, with {cmd}, {name} as `quote` quotes it, and {reason}) and
    `status` becomes 1."""

    def __init__(self, ctx, cmd: str, operands: list, message: str = "{cmd}: {name}: {reason}",
                 quote: Callable[[str], str] | None = None):
        self.ctx, self.cmd, self.message = ctx, cmd, message
        self.operands = operands or ["-"]
        self.quote = quote or shell_quote
        self.status = 0

    def __iter__(self) -> Iterator[tuple[str, bytes]]:
        """(name, bytes) of each operand that could be read, in order."""
        for name in self.operands:
            try:
                data = read_bytes(self.ctx, name)
            except FsError as e:
                self.status = 1
                self.ctx.err(self.message.format(cmd=self.cmd, name=self.quote(name),
                                                 reason=e.strerror) + "\n")
                continue
            yield name, data


def read_all_bytes(ctx, cmd: str, operands: list) -> tuple[list[tuple[str, bytes]], int]:
    """[(name, bytes)] of the operands that could be read (none: standard input), and 1 if one
    could not (reported as `cmd: name: reason`, as GNU reports it), else 0."""
    inputs = ByteInputs(ctx, cmd, operands)
    return list(inputs), inputs.status


def lines_of(data: bytes, delim: bytes = b"\n") -> list:
    """Lines without their delimiter; a missing final delimiter still ends a line."""
    if not data:
        return []
    lines = data.split(delim)
    if lines[-1] == b"":
        lines.pop()
    return lines


def text(data: bytes) -> str:
    """Bytes as stream text (bytes that are not UTF-8 as lone surrogates)."""
    return data.decode("utf-8", "surrogateescape")


def locale_quote(value: str) -> str:
    """GNU quote(): an argument in a message, ‘like this’ in a UTF-8 locale; at most
    QUOTED_CHARS characters of it (a number of a million digits is an operand too)."""
    return f"‘{shown(value)}’"


# gnulib quotearg's shell-escape styles, as coreutils prints file names in its messages
_SHELL_SPECIAL = frozenset(" !\"$&'()*;<=>?[\\^`|")       # any of these: the name is quoted
_C_ESCAPES = {"\a": "a", "\b": "b", "\f": "f", "\n": "n", "\r": "r", "\t": "t", "\v": "v"}
_PLAIN = frozenset("%+,-./0123456789:ABCDEFGHIJKLMNOPQRSTUVWXYZ]_abcdefghijklmnopqrstuvwxyz")


def _printable(c: str) -> bool:
    """iswprint in a UTF-8 locale (a byte that is not UTF-8 is a lone surrogate here)."""
    return unicodedata.category(c) not in ("Cc", "Cs", "Cn", "Zl", "Zp")


def _bare(name: str) -> bool:
    """Whether quotef leaves the name as it is: no shell special character, no `#` or `~`
    at the start, no lone brace, no colon, nothing unprintable."""
    if not name or name in ("{", "}") or name[0] in "#~":
        return False
    return not any(c in _SHELL_SPECIAL or c == ":" or not _printable(c) for c in name)


def _double_quotable(name: str) -> bool:
    """quotearg's `c_and_shell_quote_compat` for every character: the name reads the same
    between double quotes, which quote_always prefers for a name with a single quote."""
    for i, c in enumerate(name):
        if c in _PLAIN or c in " '" or (c in "#~" and i == 0) or (c in "{}" and len(name) == 1):
            continue
        if c in _SHELL_SPECIAL or c in "#~{}\\" or not _printable(c):
            return False
    return True


def quote_always(name: str) -> str:
    """GNU quoteaf() (shell-escape-always): a file name always quoted, `'a b'`, "it's",
    unprintable characters as $'\\t' or octal bytes: 'a'$'\\t''b'. At most the first
    QUOTED_CHARS characters of the name, then `...` (as a diagnostic quotes any operand)."""
    name = shown(name)
    if "'" in name and _double_quotable(name):
        return f'"{name}"'
    out, escaping = ["'"], False
    for c in name:
        if _printable(c) and c not in _C_ESCAPES:
            if escaping:
                out.append("''" if c != "'" else "")
                escaping = False
            out.append("'\\''" if c == "'" else c)
            continue
        if not escaping:
            out.append("'$'")
            escaping = True
        if c in _C_ESCAPES:
            out.append("\\" + _C_ESCAPES[c])
        else:
            out.extend(f"\\{byte:03o}" for byte in c.encode("utf-8", "surrogateescape"))
    out.append("'")
    return "".join(out)


def shell_quote(name: str) -> str:
    """GNU quotef(): a file name as the shell would need it, bare when nothing needs quoting
    (quoted as quote_always quotes it otherwise); at most QUOTED_CHARS characters of it."""
    name = shown(name)
    return name if _bare(name) else quote_always(name)


_SUFFIXES = "KMGTPEZYRQ"
UINTMAX = 2 ** 64 - 1
INTMAX = 2 ** 63 - 1
INT_MAX = 2 ** 31 - 1
TOO_LARGE = ": Value too large for defined data type"        # strerror(EOVERFLOW)
OUT_OF_RANGE = ": Numerical result out of range"              # strerror(ERANGE)


def bounded_decimal(digits: str) -> int:
    """int() of a string of decimal digits, one past UINTMAX when it is longer than any 64-bit
    number (int() refuses more than 4,300 digits, and no bound here needs their value)."""
    return int(digits) if len(digits) <= 40 else UINTMAX + 1


def gnu_number(value: str, minimum: int, maximum: int, problem: str, units: Optional[bool] = None,
               unsigned: bool = False) -> int:
    """gnulib's xdectoimax (xdectoumax when `unsigned`: no minus sign): a decimal number from
    `minimum` to `maximum`, with the usual multipliers unless `units` is None (b=512 among them
    when it is True), else `problem` with the text quoted and errno's words: none for no
    number, EOVERFLOW past the int range, ERANGE otherwise."""
    sign = "[+]?" if unsigned else "[-+]?"
    m = re.fullmatch(rf"\s*({sign})(\d+[A-Za-z]*)" if units is not None else rf"\s*({sign})(\d+)", value)
    number = parse_size(m.group(2), allow_b=bool(units)) if m else None
    if number is None:
        raise UsageError(f"{problem}: {locale_quote(value)}")
    if m and m.group(1) == "-":
        number = -number
    if not minimum <= number <= maximum:
        reason = TOO_LARGE if not -INT_MAX - 1 <= number <= INT_MAX else OUT_OF_RANGE
        raise UsageError(f"{problem}: {locale_quote(value)}{reason}")
    return number


def parse_size(text_value: str, allow_b: bool = True, extra: dict | None = None):
    """GNU xstrtoumax with the usual multipliers: K=1024, KB=1000, KiB=1024 ... and b=512
    (`allow_b`), plus `extra` suffixes (dd's c and w). None when the text is not a size."""
    m = re.fullmatch(r"(\d+)([A-Za-z]*)", text_value)
    if not m:
        return None
    number, suffix = bounded_decimal(m.group(1)), m.group(2)
    if not suffix:
        return number
    if extra and suffix in extra:
        return number * extra[suffix]
    if suffix == "b" and allow_b:
        return number * 512
    letter, rest = suffix[0], suffix[1:]
    if letter not in "k" + _SUFFIXES:
        return None
    power = _SUFFIXES.index(letter.upper()) + 1
    if rest == "":
        base = 1024
    elif rest == "B":
        base = 1000
    elif rest == "iB":
        base = 1024
    else:
        return None
    return number * base ** power


__all__ = ["read_bytes", "ByteInputs", "read_all_bytes", "lines_of", "text", "locale_quote", "shell_quote",
           "quote_always", "parse_size", "bounded_decimal", "gnu_number", "FsError", "UINTMAX", "INTMAX", "INT_MAX",
           "TOO_LARGE", "OUT_OF_RANGE"]
