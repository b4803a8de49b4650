"""sort: sort lines of standard input (GNU coreutils, C locale byte order)."""
from __future__ import annotations

import re

from ..fs import FsError, access
from ._options import UsageError, parse, read_input, split_lines
from .registry import Usage, command

_NUM = re.compile(r"\s*(-?)(\d*)(?:\.(\d*))?")
_KEY_BLOCK = 1 << 16
# after each newline (a pattern that starts with a literal is searched for fast, where `^` with
# re.M is tried at every position): the number at the start of every line of "\n" + lines
_LEADING_NUMBERS = re.compile(r"\n[ \t\v\f\r]*(-?[0-9]*(?:\.[0-9]*)?)")
_HEX_FLOAT = re.compile(r"\s*[-+]?0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][-+]?[0-9]+)?")
_GENERAL = re.compile(r"\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?|\s*[-+]?(inf|nan)", re.I)
_HUMAN = {"": 0, "K": 1, "k": 1, "M": 2, "G": 3, "T": 4, "P": 5, "E": 6, "Z": 7, "Y": 8}
_MONTHS = {m: i for i, m in enumerate("JAN FEB MAR APR MAY JUN JUL AUG SEP OCT NOV DEC".split(), 1)}


class Key:
    """A -k field range with its ordering flags (its own, else the global ones)."""
    __slots__ = ("sf", "sc", "ef", "ec", "flags")

    def __init__(self, sf, sc, ef, ec, flags):
        self.sf, self.sc, self.ef, self.ec, self.flags = sf, sc, ef, ec, flags


class Reverse:
    """Inverts the order of one key (sort -k2r) inside a tuple of keys."""
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __lt__(self, other):
        return other.value < self.value

    def __eq__(self, other):
        return self.value == other.value


def _parse_key(text: str, global_flags: str) -> Key:
    m = re.fullmatch(r"(\d+)(?:\.(\d+))?([bdfgihMnRrV]*)(?:,(\d+)(?:\.(\d+))?([bdfgihMnRrV]*))?", text)
    if not m or int(m.group(1)) == 0:
        raise UsageError(f"sort: invalid number at field start: invalid count at start of '{text}'", 2)
    flags = (m.group(3) or "") + (m.group(6) or "")
    return Key(int(m.group(1)), int(m.group(2) or 1), int(m.group(4)) if m.group(4) else None,
               int(m.group(5) or 0), flags or global_flags)


def _fields(line: str, sep):
    """[(start, end)] of each field: with -t, split at sep; else a field is blanks + non-blanks."""
    if sep is not None:
        spans, start = [], 0
        while True:
            k = line.find(sep, start)
            if k < 0:
                spans.append((start, len(line)))
                return spans
            spans.append((start, k))
            start = k + 1
    return [(m.start(), m.end()) for m in re.finditer(r"[ \t]*[^ \t]+|[ \t]+$", line)]


def _key_text(line: str, key: Key, sep) -> str:
    spans = _fields(line, sep)
    if key.sf > len(spans):
        return ""
    fs, fe = spans[key.sf - 1]
    if "b" in key.flags:
        while fs < fe and line[fs] in " \t":
            fs += 1
    # like GNU, a character offset may run past its field (not past the line)
    start = min(fs + key.sc - 1, len(line))
    if key.ef is None:
        end = len(line)
    elif key.ef > len(spans):
        end = len(line)
    else:
        es, ee = spans[key.ef - 1]
        end = ee if key.ec == 0 else min(es + key.ec, len(line))
    return line[start:end] if end > start else ""


def _numeric(text: str):
    m = _NUM.match(text)
    assert m is not None                # every part of the pattern is optional
    whole, frac = m.group(2), m.group(3) or ""
    if not whole and not frac:
        return 0.0
    value = float((whole or "0") + "." + (frac or "0"))
    return -value if m.group(1) else value


def _key_texts(lines: list, key: Key, sep) -> list:
    """The text of one -k key in every line; a -t key of whole fields by str.split."""
    if sep is None or key.sc != 1 or key.ec != 0 or "b" in key.flags:
        return [_key_text(line, key, sep) for line in lines]
    lo = key.sf - 1
    if key.ef is None:
        return [sep.join(line.split(sep)[lo:]) for line in lines]
    hi = key.ef
    return [sep.join(line.split(sep, hi)[lo:hi]) for line in lines]


def _key_column(texts: list, key: Key, record_sep: str) -> list:
    """The sort values of one key for every line (negated or wrapped when the key is reversed)."""
    reversed_ = "r" in key.flags
    if _plain_numeric(key, record_sep):
        values = _numeric_keys(texts)
        return [-v for v in values] if reversed_ else values
    values = [_transform(text, key.flags) for text in texts]
    return [Reverse(v) for v in values] if reversed_ else values


def _plain_numeric(key: Key, record_sep: str) -> bool:
    """A key of -n alone (perhaps reversed) over lines: its values are floats, all made at once
    (_numeric_keys)."""
    return key.flags.replace("r", "") == "n" and record_sep == "\n"


def _numeric_keys(lines: list) -> list:
    """_numeric of every line at once: one regex pass over the joined text instead of one
    match per line (the common `sort -n` case)."""
    values: list = []
    for start in range(0, len(lines), _KEY_BLOCK):     # a block at a time: no list of every text
        texts = _LEADING_NUMBERS.findall("\n" + "\n".join(lines[start:start + _KEY_BLOCK]))
        distinct = dict.fromkeys(texts)
        if len(distinct) * 2 < len(texts):     # many repeated keys: convert each text once
            for text in distinct:
                distinct[text] = _float_or_zero(text)
            values.extend(map(distinct.__getitem__, texts))
            continue
        try:
            values.extend(map(float, texts))
        except ValueError:         # "", "-" or "." somewhere: those count as zero
            values.extend(map(_float_or_zero, texts[len(values) - start:]))
    return values


def _float_or_zero(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return 0.0


def _general(text: str):
    m = _HEX_FLOAT.match(text)     # strtold reads C99 hex floats: 0x10 is 16
    if m:
        return (1, float.fromhex(m.group().strip()))
    m = _GENERAL.match(text)
    if not m:
        return (0, float("-inf"))
    try:
        return (1, float(m.group().strip()))
    except ValueError:
        return (0, float("-inf"))


def _human(text: str):
    m = re.match(r"\s*(-?)(\d*\.?\d*)([KkMGTPEZY]?)", text)
    assert m is not None                # every part of the pattern is optional
    value = float(m.group(2)) if m.group(2) not in ("", ".") else 0.0
    sign = -1 if m.group(1) else 1
    return (sign * _HUMAN[m.group(3)], sign * value)


def _version(text: str) -> tuple:
    """A key ordering like gnulib's filevercmp (sort -V): empty first, then ".", "..", other
    names starting with ".", the rest; versions compare without their file suffixes first."""
    if not text:
        return (0,)
    dots = 0 if text == "." else 1 if text == ".." else 2 if text.startswith(".") else 3
    data = text.encode("utf-8", "surrogateescape")
    suffix = _FILE_SUFFIX.search(data, 1)
    assert suffix is not None           # it matches the empty string at the end
    return (1, dots, _verrev_key(data[:suffix.start()]), _verrev_key(data))


_FILE_SUFFIX = re.compile(rb"(?:\.[A-Za-z~][A-Za-z0-9~]*)*\Z")
_VERSION_RUNS = re.compile(rb"([^0-9]*)([0-9]*)")


def _verrev_key(data: bytes) -> tuple:
    """filevercmp's verrevcmp as a tuple: (non-digit run, number) pairs, where in a run '~'
    sorts before its end, the end before letters and letters before other bytes. Each run ends
    in 0 and the key ends in an empty pair, so a shorter string compares as verrevcmp says."""
    pairs = []
    for m in _VERSION_RUNS.finditer(data):
        run, digits = m.group(1), m.group(2)
        if not run and not digits:
            break
        pairs.append((tuple(_version_order(c) for c in run) + (0,), int(digits or b"0")))
    pairs.append(((0,), 0))
    return tuple(pairs)


def _version_order(byte: int) -> int:
    if 65 <= byte <= 90 or 97 <= byte <= 122:
        return byte
    return -1 if byte == 126 else byte + 256


def _transform(text: str, flags: str):
    if "b" in flags:
        text = text.lstrip(" \t")
    if "d" in flags:
        text = "".join(c for c in text if c.isalnum() or c in " \t")
    if "i" in flags:
        text = "".join(c for c in text if c.isprintable())
    if "f" in flags:
        text = text.upper()
    if "n" in flags:
        return _numeric(text)
    if "g" in flags:
        return _general(text)
    if "h" in flags:
        return _human(text)
    if "M" in flags:
        return _MONTHS.get(text.strip()[:3].upper(), 0)
    if "V" in flags:
        return _version(text)
    return text


USAGE = Usage("[OPTION]... [FILE]...", "Write the sorted concatenation of all FILE(s) to standard output.", (
    "-b, --ignore-leading-blanks  ignore leading blanks",
    "-d, --dictionary-order      consider only blanks and alphanumeric characters",
    "-f, --ignore-case           fold lower case to upper case characters",
    "-g, --general-numeric-sort  compare according to general numerical value",
    "-i, --ignore-nonprinting    consider only printable characters",
    "-M, --month-sort            compare (unknown) < 'JAN' < ... < 'DEC'",
    "-h, --human-numeric-sort    compare human readable numbers (e.g., 2K 1G)",
    "-n, --numeric-sort          compare according to string numerical value",
    "-R, --random-sort           shuffle, but group identical keys",
    "-r, --reverse               reverse the result of comparisons",
    "-V, --version-sort          natural sort of (version) numbers within text",
    "-c, --check                 check for sorted input; do not sort",
    "-k, --key=KEYDEF            sort via a key; KEYDEF gives location and type",
    "-o, --output=FILE           write result to FILE instead of standard output",
    "-s, --stable                stabilize sort by disabling last-resort comparison",
    "-t, --field-separator=SEP   use SEP instead of non-blank to blank transition",
    "-u, --unique                output only the first of an equal run",
    "-z, --zero-terminated       line delimiter is NUL, not newline"))


@command("sort", usage=USAGE)
def run(ctx, argv):
    # -m (merge already sorted inputs) sorts all their lines: for sorted inputs the same output
    opts, ops = parse("sort", argv, short_flags="bdfgihMmnrRsuVzcC", short_values="ktoST",
                      long_flags={"reverse": "r", "numeric-sort": "n", "unique": "u",
                                  "ignore-case": "f", "general-numeric-sort": "g",
                                  "human-numeric-sort": "h", "version-sort": "V", "stable": "s",
                                  "zero-terminated": "z", "ignore-leading-blanks": "b",
                                  "dictionary-order": "d", "month-sort": "M", "check": "c",
                                  "random-sort": "R", "ignore-nonprinting": "i", "merge": "m"},
                      long_values={"key": "k", "field-separator": "t", "output": "o",
                                   "buffer-size": "S", "temporary-directory": "T"}, status=2)
    out_file = opts.get("o")
    sep = opts.get("t")
    if sep is not None:
        if sep == "\\0":
            sep = "\0"
        if len(sep) != 1:
            raise UsageError(f"sort: multi-character tab '{sep}'", 2)
    global_flags = "".join(f for f in "bdfgiMhnRrV" if opts.has(f))
    keys = [_parse_key(k, global_flags) for k in opts.all("k")]
    reverse = opts.has("r")
    record_sep = "\0" if opts.has("z") else "\n"
    text, status = read_input(ctx, "sort", ops, 2)
    if status:
        return status
    lines = split_lines(text, record_sep)
    del text                   # the lines hold it now: a large input is not kept twice
    stable = opts.has("s")
    unique = opts.has("u")

    def key_values(line):
        if not keys:
            return [_transform(line, global_flags)]
        return [_transform(_key_text(line, k, sep), k.flags) for k in keys]

    specs = keys or [Key(1, 1, None, 0, global_flags)]

    def column(some_lines: list, spec: Key) -> list:
        return _key_column(_key_texts(some_lines, spec, sep) if keys else some_lines, spec,
                           record_sep)

    def compare(a, b):
        ka, kb = key_values(a), key_values(b)
        for x, y, spec in zip(ka, kb, specs):
            if x != y:
                result = -1 if x < y else 1
                return -result if "r" in spec.flags else result
        if stable or unique:
            return 0
        result = -1 if a < b else (1 if a > b else 0)
        return -result if reverse else result

    if opts.has("c") or opts.has("C"):
        for prev, cur in zip(lines, lines[1:]):
            c = compare(prev, cur)
            if c > 0 or (unique and c == 0):
                if opts.has("c"):
                    ctx.err(f"sort: -:{lines.index(cur) + 1}: disorder: {cur}\n")
                return 1
        return 0
    # Each line's keys are computed once. Without -s or -u, ties fall back to comparing whole
    # lines: sorting by line first and then (stably) by key gives that order without
    # carrying the line inside every key; where a numeric key repeats a lot, grouping the
    # lines by value and sorting each group by line gives it cheaper. A key is reversed by
    # its own flags (a key with flags of its own does not inherit -r); the whole-line
    # comparison by -r.
    if not (stable or unique):
        if len(specs) == 1 and _repeats_numeric_keys(lines, column, specs[0], record_sep):
            ordered = _grouped_by_value(lines, column(lines, specs[0]), reverse)
            return _write(ctx, ordered, record_sep, out_file)
        lines.sort(reverse=reverse)
    columns = [column(lines, spec) for spec in specs]
    values = columns[0] if len(columns) == 1 else list(zip(*columns))
    if unique:      # the first of each run of lines whose keys are equal
        order = sorted(range(len(lines)), key=values.__getitem__)
        order = [i for k, i in enumerate(order) if k == 0 or values[order[k - 1]] != values[i]]
        ordered = [lines[i] for i in order]
    else:           # sort asks for the keys once each, in order: no list of indices
        next_value = iter(values).__next__
        del values, columns
        lines.sort(key=lambda _line: next_value())
        ordered = lines
    return _write(ctx, ordered, record_sep, out_file)


def _repeats_numeric_keys(lines: list, column, spec: Key, record_sep: str) -> bool:
    """Whether a numeric key looks repeated often (judged on a sample of at most about 512
    lines): then grouping lines by value beats sorting them all by whole line first."""
    if not _plain_numeric(spec, record_sep) or len(lines) < 64:
        return False
    values = column(lines[::max(1, len(lines) // 512)], spec)
    return len(set(values)) * 2 < len(values)


def _grouped_by_value(lines: list, values: list, reverse: bool) -> list:
    """lines in order of their (float) key values; lines with equal values in whole-line
    order, reversed by -r: the order of the two sorts below, with each line compared only
    among the lines that share its value."""
    groups: dict = {}
    for value, line in zip(values, lines):
        group = groups.get(value)
        if group is None:
            groups[value] = [line]
        else:
            group.append(line)
    ordered: list = []
    for value in sorted(groups):
        group = groups[value]
        group.sort(reverse=reverse)
        ordered += group
    return ordered


def _write(ctx, ordered: list, record_sep: str, out_file) -> int:
    output = record_sep.join(ordered) + record_sep if ordered else ""
    if out_file is None:
        ctx.out(output)
        return 0
    try:
        access.writer(ctx, out_file)(output)
    except FsError as e:
        raise UsageError(f"sort: open failed: {out_file}: {e.strerror}", 2) from None
    return 0
