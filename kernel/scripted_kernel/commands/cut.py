"""cut: select fields, characters or bytes of each line."""
from __future__ import annotations

import re

from ._options import read_input, bad_usage, parse, split_lines
from .registry import Usage, command



def _ranges(spec: str) -> list[tuple[int, int]]:
    out = []
    for part in spec.split(","):
        m = re.fullmatch(r"(\d*)(-?)(\d*)", part)
        if not m or (not m.group(1) and not m.group(3)) or part == "":
            raise bad_usage("cut", "invalid byte, character or field list")
        lo = int(m.group(1)) if m.group(1) else 1
        hi = int(m.group(3)) if m.group(3) else (lo if not m.group(2) else 1 << 62)
        if lo == 0:
            raise bad_usage("cut", "fields and positions are numbered from 1")
        if hi < lo:
            raise bad_usage("cut", "invalid decreasing range")
        out.append((lo, hi))
    return out


_selections: dict = {}


def _selected(n: int, ranges, complement: bool) -> list[int]:
    """The 1-based positions picked out of n (cached: lines usually have the same width)."""
    key = (n, tuple(ranges), complement)
    picks = _selections.get(key)
    if picks is None:
        picks = [i for i in range(1, n + 1) if any(lo <= i <= hi for lo, hi in ranges)]
        if complement:
            chosen = set(picks)
            picks = [i for i in range(1, n + 1) if i not in chosen]
        if len(_selections) > 4096:
            _selections.clear()
        _selections[key] = picks
    return picks


def _single_span(ranges) -> tuple[int, int] | None:
    """The ranges as one (lo, hi) run of fields, when they are one (`-f2`, `-f1-3`, `-f2-`)."""
    ordered = sorted(ranges)
    lo, hi = ordered[0]
    for start, end in ordered[1:]:
        if start > hi + 1:
            return None
        hi = max(hi, end)
    return lo, hi


def _cut_span(lines, delim: str, out_delim: str, span, only_delimited: bool) -> list:
    """Fields lo..hi of every line with str.split (the common `cut -d, -f2` case)."""
    lo, hi = span
    keep = slice(lo - 1, hi)
    maxsplit = hi if hi < 1 << 31 else -1
    if only_delimited:
        lines = [line for line in lines if delim in line]
    if span == (1, 1):            # `cut -d, -f1`: the text before the first delimiter
        return [line.partition(delim)[0] for line in lines]
    return [out_delim.join(line.split(delim, maxsplit)[keep]) if delim in line else line for line in lines]


USAGE = Usage("OPTION... [FILE]...", "Print selected parts of lines from each FILE to standard output.", (
    "-b, --bytes=LIST        select only these bytes",
    "-c, --characters=LIST   select only these characters",
    "-d, --delimiter=DELIM   use DELIM instead of TAB for field delimiter",
    "-f, --fields=LIST       select only these fields",
    "-n                      (ignored)",
    "    --complement        complement the set of selected bytes, characters or fields",
    "-s, --only-delimited    do not print lines not containing delimiters",
    "    --output-delimiter=STRING  use STRING as the output delimiter",
    "-z, --zero-terminated   line delimiter is NUL, not newline"))


@command("cut", usage=USAGE)
def run(ctx, argv):
    opts, ops = parse("cut", argv, short_flags="snz", short_values="bcfd",
                      long_flags={"only-delimited": "s", "complement": "complement",
                                  "zero-terminated": "z"},
                      long_values={"bytes": "b", "characters": "c", "fields": "f",
                                   "delimiter": "d", "output-delimiter": "output-delimiter"})
    modes = [m for m in "bcf" if opts.has(m)]
    if len(modes) != 1:
        raise bad_usage("cut", "you must specify a list of bytes, characters, or fields" if not modes
                        else "only one type of list may be specified")
    mode = modes[0]
    ranges = _ranges(opts.get(mode))
    complement = opts.has("complement")
    delim = opts.get("d", "\t")
    if len(delim) != 1:
        raise bad_usage("cut", "the delimiter must be a single character")
    if opts.has("d") and mode != "f":
        raise bad_usage("cut", "an input delimiter may be specified only when operating on fields")
    out_delim = opts.get("output-delimiter", delim if mode == "f" else "")
    sep = "\0" if opts.has("z") else "\n"
    text, status = read_input(ctx, "cut", ops)
    span = _single_span(ranges) if not complement else None
    if mode == "f" and span == (1, 1) and not opts.has("s") and delim != sep and text:
        # `cut -d' ' -f1`: each line up to its first delimiter, in one pass over the text
        out_text = re.sub(re.escape(delim) + f"[^{sep}]*", "", text)
        ctx.out(out_text if out_text.endswith(sep) else out_text + sep)
        return status
    lines = split_lines(text, sep)
    if span is not None:
        if mode == "f":
            out = _cut_span(lines, delim, out_delim, span, opts.has("s"))
        elif mode == "c":
            out = [line[span[0] - 1:span[1]] for line in lines]
        else:
            out = [line.encode("utf-8", "surrogateescape")[span[0] - 1:span[1]]
                   .decode("utf-8", "surrogateescape") for line in lines]
        lines = []
    else:
        out = []
    for line in lines:
        if mode == "f":
            if delim not in line:
                if not opts.has("s"):
                    out.append(line)
                continue
            fields = line.split(delim)
            out.append(out_delim.join(fields[i - 1] for i in _selected(len(fields), ranges, complement)))
        else:
            if mode == "c":
                chars = list(line)
                out.append("".join(chars[i - 1] for i in _selected(len(chars), ranges, complement)))
            else:
                data = line.encode("utf-8", "surrogateescape")
                picks = _selected(len(data), ranges, complement)
                out.append(bytes(data[i - 1] for i in picks).decode("utf-8", "surrogateescape"))
    if out:
        ctx.out(sep.join(out) + sep)
    return status
