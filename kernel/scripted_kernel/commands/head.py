"""head and tail: the first or last lines (or bytes) of standard input."""
from __future__ import annotations

import re

from ._options import Inputs, UsageError, parse
from .registry import Usage, command

_SUFFIX = {"": 1, "b": 512, "K": 1024, "k": 1024, "KB": 1000, "M": 1 << 20, "MB": 10 ** 6,
           "G": 1 << 30, "GB": 10 ** 9}


def _count(cmd: str, text: str, what: str) -> tuple[int, str]:
    """(count, sign) where sign is '+', '-' or ''."""
    m = re.fullmatch(r"([-+]?)(\d+)([A-Za-z]*)", text.strip())
    if not m or m.group(3) not in _SUFFIX:
        raise UsageError(f"{cmd}: invalid number of {what}: '{text}'")
    return int(m.group(2)) * _SUFFIX[m.group(3)], m.group(1)


_HEAD_TAIL = ("-c, --bytes=[-]NUM       the first (head) or last (tail) NUM bytes",
              "-n, --lines=[-]NUM       the first (head) or last (tail) NUM lines (default 10)",
              "-q, --quiet, --silent    never print headers giving file names",
              "-v, --verbose            always print headers giving file names",
              "-z, --zero-terminated    line delimiter is NUL, not newline")
USAGES = {
    "head": Usage("[OPTION]... [FILE]...", "Print the first 10 lines of each FILE to standard output.",
                  _HEAD_TAIL),
    "tail": Usage("[OPTION]... [FILE]...", "Print the last 10 lines of each FILE to standard output.", (
        *_HEAD_TAIL,
        "-f, --follow             (accepted; there is nothing to follow)")),
}


@command("head", "tail", usage=USAGES)
def run(ctx, argv):
    cmd = argv[0]

    args = list(argv)
    if cmd == "tail" and len(args) > 1 and re.fullmatch(r"\+\d+", args[1]):
        args[1:2] = ["-n", args[1]]
    opts, ops = parse(cmd, args, short_flags="qvzf", short_values="nc",
                      long_flags={"quiet": "q", "silent": "q", "verbose": "v",
                                  "zero-terminated": "z", "follow": "f"},
                      long_values={"lines": "n", "bytes": "c"}, numeric_short="n")
    sep = "\0" if opts.has("z") else "\n"
    if opts.has("c"):
        count = _count(cmd, opts.get("c"), "bytes")
        pick = lambda text: _bytes(cmd, text, *count)
    else:
        count = _count(cmd, opts.get("n", "10"), "lines")
        pick = lambda text: _lines(cmd, text, sep, *count)
    inputs = Inputs(ctx, cmd, ops, message=cmd + ": cannot open '{name}' for reading: {reason}")
    headers = (len(ops) > 1 or opts.has("v")) and not opts.has("q")
    for k, (name, text) in enumerate(inputs):
        if headers:
            shown = "standard input" if name == "-" else name
            ctx.out(("\n" if k else "") + f"==> {shown} <==\n")
        ctx.out(pick(text))
    return inputs.status


def _bytes(cmd: str, text: str, n: int, sign: str) -> str:
    data = text.encode("utf-8", "surrogateescape")
    if cmd == "head":
        chunk = data[:-n] if sign == "-" else data[:n]
    else:
        chunk = data[n - 1:] if sign == "+" else (data[-n:] if n else b"")
    return chunk.decode("utf-8", "surrogateescape")


def _lines(cmd: str, text: str, sep: str, n: int, sign: str) -> str:
    if not sign and n <= 100_000:
        return _first_lines(text, sep, n) if cmd == "head" else _last_lines(text, sep, n)
    lines = text.split(sep)
    ends_with_sep = lines[-1] == ""
    if ends_with_sep:
        lines.pop()
    if cmd == "head":
        chosen = lines[:-n] if sign == "-" else lines[:n]
        last_is_end = len(chosen) == len(lines)
    else:
        chosen = lines[n - 1 if n else 0:] if sign == "+" else (lines[-n:] if n else [])
        last_is_end = True
    if not chosen:
        return ""
    out = sep.join(chosen)
    if not last_is_end or ends_with_sep:
        out += sep
    return out


# head -n N and tail -n N find the cut with a few searches instead of splitting the whole
# input into lines (a million lines were a million strings)
def _first_lines(text: str, sep: str, n: int) -> str:
    end = 0
    for _ in range(n):
        found = text.find(sep, end)
        if found < 0:
            return text
        end = found + len(sep)
    return text[:end]


def _last_lines(text: str, sep: str, n: int) -> str:
    if n == 0:
        return ""
    body_end = len(text) - len(sep) if text.endswith(sep) else len(text)
    start = body_end
    for _ in range(n):
        found = text.rfind(sep, 0, start)
        if found < 0:
            return text
        start = found
    return text[start + len(sep):]
