"""cut: select fields, characters or bytes of each line."""
from __future__ import annotations

import re

from ._options import bad_usage, no_files, parse, run_guarded, split_lines

NAMES = ("cut",)


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


def run(sh, argv):
    def body():
        opts, ops = parse("cut", argv, short_flags="snz", short_values="bcfd",
                          long_flags={"only-delimited": "s", "complement": "complement",
                                      "zero-terminated": "z"},
                          long_values={"bytes": "b", "characters": "c", "fields": "f",
                                       "delimiter": "d", "output-delimiter": "output-delimiter"})
        no_files("cut", ops)
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
        out = []
        for line in split_lines(sh.stdin.read_all(), sep):
            if mode == "f":
                if delim not in line:
                    if not opts.has("s"):
                        out.append(line)
                    continue
                fields = line.split(delim)
                out.append(out_delim.join(fields[i - 1] for i in _selected(len(fields), ranges, complement)))
            else:
                units = list(line) if mode == "c" else list(line.encode("utf-8", "surrogateescape"))
                picks = _selected(len(units), ranges, complement)
                if mode == "c":
                    out.append("".join(units[i - 1] for i in picks))
                else:
                    out.append(bytes(units[i - 1] for i in picks).decode("utf-8", "surrogateescape"))
        if out:
            sh.out(sep.join(out) + sep)
        return 0
    return run_guarded("cut", sh, body)
