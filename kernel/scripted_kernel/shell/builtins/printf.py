"""printf and echo, byte-for-byte like bash's builtins."""
from __future__ import annotations

import re
from typing import Optional

from .registry import builtin
from ..escapes import StopOutput, decode
from ..quoting import printf_q
from ...base.limits import MAX_FIELD_WIDTH, wall_clock

_SPEC = re.compile(r"%([-+ #0']*)(\*|[0-9]+)?(?:\.(\*|[0-9]*))?(?:hh|h|ll|l|L|q|j|z|t)?"
                   r"([diouxXfFeEgGaAcsbq%]|\([^)]*\)T)")
_INT = re.compile(r"\s*([-+]?)(0[xX][0-9A-Fa-f]+|0[0-7]*|[1-9][0-9]*)")
_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[.+\])?", re.S)     # printf -v's name
INT_MAX = (1 << 63) - 1
INT_MIN = -(1 << 63)



def parse_int(sh, arg: str, errors: list, unsigned: bool = False) -> int:
    """strtoimax (or strtoumax) as bash's printf uses it: clamps on overflow, reports
    trailing garbage (trailing blanks included) but keeps the number read so far."""
    if not arg:
        return 0
    if arg[0] in "'\"":
        return ord(arg[1]) if len(arg) > 1 else 0
    m = _INT.match(arg)
    if not m:
        errors.append(f"{arg}: invalid number")
        return 0
    digits = m.group(2)
    value = int(digits, 16) if digits[:2] in ("0x", "0X") else (int(digits, 8) if digits[0] == "0" else int(digits))
    if m.end() != len(arg):
        errors.append(f"{arg}: invalid number")
    if unsigned:
        if value > (1 << 64) - 1:       # strtoumax: out of range is the maximum, sign ignored
            return (1 << 64) - 1
        return ((1 << 64) - value) % (1 << 64) if m.group(1) == "-" else value
    if m.group(1) == "-":
        value = -value
    return max(INT_MIN, min(INT_MAX, value))


def parse_float(arg: str, errors: list) -> float:
    if not arg:
        return 0.0
    if arg[0] in "'\"":
        return float(ord(arg[1])) if len(arg) > 1 else 0.0
    if _HEX_FLOAT.fullmatch(arg):            # strtold reads C99 hex floats: 0x1f, 0x1p3
        return float.fromhex(arg.strip())
    if _DECIMAL_FLOAT.fullmatch(arg):        # (Python's float() would also take 1_0 and "5 ")
        return float(arg)
    m = re.match(r"\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?", arg)
    errors.append(f"{arg}: invalid number")
    return float(m.group()) if m else 0.0


_HEX_FLOAT = re.compile(r"\s*[-+]?0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][-+]?[0-9]+)?")
_DECIMAL_FLOAT = re.compile(r"\s*[-+]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?|inf(?:inity)?|nan)",
                            re.IGNORECASE)


def _next_arg(args: list, pos: int) -> tuple:
    """The argument at pos (None past the last) and the position after it."""
    return (args[pos], pos + 1) if pos < len(args) else (None, pos)


def _plain_pieces(fmt: str) -> Optional[list]:
    """For a format whose only conversions are plain `%s` (`%s=%s`, `%s\\n`, most formats),
    the text around them, its escapes decoded; None for any other format. Filling these is
    what format_once does for such a format, without reading it a character at a time."""
    pieces = fmt.split("%s")
    for k, piece in enumerate(pieces):
        if "%" in piece:
            return None
        first = piece.find("\\")
        if first >= 0:                  # (as format_once reads them: from the first escape)
            pieces[k] = piece[:first] + decode(piece[first:], "format")
    return pieces


def _fill_plain(pieces: list, args: list, pos: int) -> tuple[str, int, bool]:
    """format_once for a format of _plain_pieces: each `%s` takes the next argument (nothing
    once they run out)."""
    out = [pieces[0]]
    for piece in pieces[1:]:
        if pos < len(args):
            out.append(args[pos])
            pos += 1
        out.append(piece)
    return "".join(out), pos, False


def format_once(sh, fmt: str, args: list, pos: int, errors: list) -> tuple[str, int, bool]:
    """Apply the format once from args[pos:]. (text, new pos, stop) — stop after \\c."""
    out = []
    i, n = 0, len(fmt)
    while i < n:
        c = fmt[i]
        if c == "\\":
            j = fmt.find("%", i)
            chunk = fmt[i:j if j >= 0 else n]
            # decode up to the next conversion; escapes never contain '%'
            out.append(decode(chunk, "format"))
            i = j if j >= 0 else n
            continue
        if c != "%":
            j = i
            while j < n and fmt[j] not in "%\\":
                j += 1
            out.append(fmt[i:j])
            i = j
            continue
        m = _SPEC.match(fmt, i)
        if not m:
            bad = re.match(r"%[-+ #0']*[0-9*]*(?:\.[0-9*]*)?(.?)", fmt[i:])
            assert bad is not None          # fmt[i] is "%", all the rest is optional
            rest = bad.group(1)
            sh.error(f"printf: `{rest}': invalid format character" if rest else
                     "printf: `%': missing format character")
            errors.append(None)
            return "".join(out), pos, True
        i = m.end()
        flags, width, precision, conv = m.groups()
        if conv == "s" and not flags and width is None and precision is None:
            arg, pos = _next_arg(args, pos)     # a plain %s, most formats' only conversion
            if arg is not None:
                out.append(arg)
            continue
        if conv == "%":
            out.append("%")
            continue
        flags = flags.replace("'", "")
        if width == "*":
            arg, pos = _next_arg(args, pos)
            width = str(parse_int(sh, arg or "", errors))
        if precision == "*":
            arg, pos = _next_arg(args, pos)
            precision = str(parse_int(sh, arg or "", errors))
        if width and width.startswith("-"):
            flags += "-"
            width = width[1:]
        if (width and int(width) > MAX_FIELD_WIDTH) or (precision and int(precision) > MAX_FIELD_WIDTH):
            raise _too_wide(sh)
        arg, pos = _next_arg(args, pos)
        spec = "%" + flags + (width or "") + ("." + precision if precision is not None else "")
        if conv.endswith("T"):
            out.append(_pad(spec, _strftime(sh, conv[1:-2] or "%X", arg, errors)))
            continue
        if conv == "s":
            out.append((spec + "s") % (arg or "") if (flags or width or precision is not None) else (arg or ""))
        elif conv == "b":
            try:
                text = decode(arg or "", "b")
            except StopOutput as stop:
                out.append(_pad(spec, str(stop)))
                return "".join(out), pos, True
            out.append(_pad(spec, text))
        elif conv == "q":
            out.append(_pad(spec, printf_q(arg or "")))
        elif conv == "c":
            # bash prints the argument's first byte (of é, half a character); for an empty
            # argument, the terminating NUL
            first = (arg or "\0")[:1].encode("utf-8", "surrogateescape")[:1].decode("utf-8", "surrogateescape")
            out.append(_pad("%" + flags + (width or ""), first))
        elif conv in "diouxX":
            v = parse_int(sh, arg or "", errors, unsigned=conv not in "di")
            if precision is not None:          # C ignores the 0 flag when a precision is given
                spec = "%" + flags.replace("0", "") + (width or "") + "." + precision
            if v == 0 and precision is not None and (precision or "0").lstrip("0") == "":
                out.append(_zero_with_no_digits(flags, width, conv))
            elif conv in "di":
                out.append((spec + "d") % v)
            else:
                out.append(_format_unsigned(flags, width, precision, conv, v))
        else:
            x = parse_float(arg or "", errors)
            if conv in "aA":
                out.append(x.hex())
            else:
                out.append((spec + conv) % x)
    return "".join(out), pos, False


def _strftime(sh, fmt: str, arg, errors) -> str:
    """%(fmt)T in the script's TZ (UTC unless the script exports TZ; never the host's zone)."""
    import datetime
    stamp = parse_int(sh, arg, errors) if arg not in (None, "", "-1", "-2") else int(wall_clock())
    tz: datetime.tzinfo = datetime.timezone.utc
    name = sh.exported_env().get("TZ")
    if name:
        try:
            from zoneinfo import ZoneInfo
            tz = ZoneInfo(name)
        except Exception:
            pass
    return datetime.datetime.fromtimestamp(stamp, tz).strftime(fmt)


def _zero_with_no_digits(flags: str, width, conv: str) -> str:
    """C's rule: zero printed with precision 0 has no digits (only a sign flag's character,
    or the 0 that `#` demands of %o), padded to the width with blanks."""
    text = "0" if conv == "o" and "#" in flags else ""
    if conv in "di":
        text = "+" if "+" in flags else (" " if " " in flags else "")
    return _pad("%" + ("-" if "-" in flags else "") + (width or ""), text)


def _format_unsigned(flags: str, width, precision, conv: str, v: int) -> str:
    """%o %u %x %X as C formats them: no sign flags; the precision pads digits with zeros;
    # adds 0 (octal, unless the digits start with one) or 0x/0X to non-zero values; the 0
    flag pads after the prefix, and only without a precision."""
    digits = format(v, {"o": "o", "u": "d", "x": "x", "X": "X"}[conv])
    if precision is not None:
        digits = digits.rjust(int(precision or 0), "0")
    prefix = ""
    if "#" in flags and v:
        if conv == "o" and not digits.startswith("0"):
            digits = "0" + digits
        elif conv in "xX":
            prefix = "0" + conv
    size = int(width or 0)
    if "-" in flags:
        return (prefix + digits).ljust(size)
    if "0" in flags and precision is None:
        return prefix + digits.rjust(size - len(prefix), "0")
    return (prefix + digits).rjust(size)


def _pad(spec: str, text: str) -> str:
    m = re.match(r"%([-+ #0]*)([0-9]*)(?:\.([0-9]*))?", spec)
    assert m is not None                # spec starts with "%", all the rest is optional
    flags, width, precision = m.groups()
    if precision is not None:
        text = text[:int(precision or 0)]
    if width:
        text = text.ljust(int(width)) if "-" in flags else text.rjust(int(width))
    return text


def _too_wide(sh):
    from ...base.errors import LimitExceeded
    return LimitExceeded("max_string_length", "printf: field width or precision too large "
                                              "(max_string_length)")


@builtin("printf")
def printf(sh, argv):
    args = argv[1:]
    var = None
    while args and args[0].startswith("-") and args[0] != "-":
        if args[0] == "--":
            args = args[1:]
            break
        if args[0] == "-v" and len(args) > 1:
            var = args[1]
            args = args[2:]
            continue
        if args[0].startswith("-v") and len(args[0]) > 2:
            var = args[0][2:]
            args = args[1:]
            continue
        if args[0] == "-v":
            sh.error("printf: -v: option requires an argument")
        else:   # bash names the first letter it does not know (`--` for `--- title ---`)
            sh.error(f"printf: {args[0][:2]}: invalid option")
        sh.err("printf: usage: printf [-v var] format [arguments]\n")
        return 2
    if not args:
        sh.err("printf: usage: printf [-v var] format [arguments]\n")
        return 2
    fmt, rest = args[0], args[1:]
    errors: list = []
    chunks = []
    pos = size = 0
    pieces = _plain_pieces(fmt)
    while True:
        if pieces is not None:
            text, new_pos, stop = _fill_plain(pieces, rest, pos)
        else:
            text, new_pos, stop = format_once(sh, fmt, rest, pos, errors)
        chunks.append(text)
        size += len(text)
        if stop or new_pos >= len(rest) or new_pos == pos:
            break
        pos = new_pos
        if size > sh.limits.max_string_length:
            raise _too_wide(sh)
        if not len(chunks) & 1023:       # reusing the format over many arguments takes a while
            sh.budget.check_clock()
    output = "".join(chunks)
    if var is not None and not _VARIABLE.fullmatch(var):
        sh.error(f"printf: `{var}': not a valid identifier")
        return 2
    for e in errors:
        if e is not None:
            sh.error(f"printf: {e}")
    if var is not None:
        if var.endswith("]") and "[" in var:
            name, _, key = var[:-1].partition("[")
            sh.set_element(name, sh.subscript(key), output)
        else:
            sh.set_var(var, output)
    else:
        sh.out(output)
    return 1 if errors else 0


@builtin("echo")
def echo(sh, argv):
    if len(argv) < 2 or argv[1][:1] != "-":          # no option: the words, as they are
        sh.out(" ".join(argv[1:]) + "\n")
        return 0
    newline = True
    escapes = False
    i = 1
    while i < len(argv):
        a = argv[i]
        if len(a) > 1 and a[0] == "-" and all(c in "neE" for c in a[1:]):
            for c in a[1:]:
                if c == "n":
                    newline = False
                elif c == "e":
                    escapes = True
                else:
                    escapes = False
            i += 1
        else:
            break
    text = " ".join(argv[i:])
    if escapes:
        try:
            text = decode(text, "echo")
        except StopOutput as stop:
            sh.out(str(stop))
            return 0
    sh.out(text + "\n" if newline else text)
    return 0
