"""dd: copy a file with block sizes, skips, seeks and conversions (GNU coreutils), and its
"records in/out ... bytes copied" summary on standard error.

Blocks are counted, not looped over: every read of a file here returns a full block but the
last, so the records and the output follow from the sizes. /dev/zero and /dev/urandom are
endless sources (the filesystem's devices read as empty); what they would produce is bounded
before it is built: by `count`, else by the output's limit (the filesystem's file size, or
the output limit on standard output), which then fails the write as a full disk would.
"""
from __future__ import annotations

import re
import time
from typing import Optional

from ..fs import FsError, access
from ._bytes import INTMAX, TOO_LARGE, bounded_decimal, locale_quote, quote_always, read_bytes, shell_quote
from ._options import UsageError
from .registry import Usage, command

USAGE = Usage("[OPERAND]...", "Copy a file, converting and formatting according to the operands.", (
    "bs=BYTES        read and write up to BYTES bytes at a time (default: 512)",
    "count=N         copy only N input blocks",
    "ibs=BYTES       read up to BYTES bytes at a time (default: 512)",
    "if=FILE         read from FILE instead of stdin",
    "iflag=FLAGS     read as per the comma separated symbol list",
    "obs=BYTES       write BYTES bytes at a time (default: 512)",
    "of=FILE         write to FILE instead of stdout",
    "oflag=FLAGS     write as per the comma separated symbol list",
    "seek=N          skip N obs-sized output blocks",
    "skip=N          skip N ibs-sized input blocks",
    "status LEVEL    the summary: none, noxfer or progress",
    "conv=CONVS      lcase, ucase, swab, sync, notrunc, excl, nocreat, noerror, fsync, fdatasync"))

_OPERANDS = {"if", "of", "bs", "ibs", "obs", "cbs", "count", "skip", "iseek", "seek", "oseek",
             "conv", "iflag", "oflag", "status"}
_CONVS = {"ascii", "ebcdic", "ibm", "block", "unblock", "lcase", "ucase", "sparse", "swab",
          "sync", "excl", "nocreat", "notrunc", "noerror", "fdatasync", "fsync"}
_FLAGS = {"append", "direct", "directory", "dsync", "sync", "fullblock", "nonblock", "noatime",
          "nocache", "noctty", "nofollow", "count_bytes", "skip_bytes", "seek_bytes"}
_MULTIPLIERS = {"c": 1, "w": 2, "b": 512, "B": 1}
_ENDLESS = ("/dev/zero", "/dev/urandom", "/dev/random")
_UPPER = bytes.maketrans(b"abcdefghijklmnopqrstuvwxyz", b"ABCDEFGHIJKLMNOPQRSTUVWXYZ")
_LOWER = bytes.maketrans(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ", b"abcdefghijklmnopqrstuvwxyz")


class Job:
    """The operands of one dd."""

    def __init__(self):
        self.input: Optional[str] = None
        self.output: Optional[str] = None
        self.ibs = self.obs = 512
        self.bs_given = False
        self.count: Optional[int] = None
        self.skip = self.seek = 0
        self.conv: set[str] = set()
        self.iflag: set[str] = set()
        self.oflag: set[str] = set()
        self.status = "default"
        self.warnings: list[str] = []
        self.old = b""                  # of='s contents when it was opened


_MAX_BLOCK = INTMAX - 1           # the largest block size GNU dd reads (it cannot allocate it)


def number(text: str, maximum: int = INTMAX) -> int:
    """GNU dd's numbers: products like 2x512, suffixes c w b and K M G ... (KB = 1000); past
    `maximum`, GNU's 'Value too large'."""
    value = 1
    for factor in text.split("x"):
        m = re.fullmatch(r"(\d+)([A-Za-z]*)", factor)
        if not m:
            raise UsageError(f"dd: invalid number: {locale_quote(text)}")
        n, suffix = bounded_decimal(m.group(1)), m.group(2)
        if suffix in _MULTIPLIERS:
            n *= _MULTIPLIERS[suffix]
        elif suffix:
            from ._bytes import parse_size
            scaled = parse_size("1" + suffix, allow_b=False)
            if scaled is None:
                raise UsageError(f"dd: invalid number: {locale_quote(text)}")
            n *= scaled
        value *= n
    if value > maximum:
        raise UsageError(f"dd: invalid number: {locale_quote(text)}{TOO_LARGE}")
    return value


def _parse(argv: list) -> Job:
    job = Job()
    args = argv[1:]
    if args[:1] == ["--"]:
        args = args[1:]
    for arg in args:
        key, eq, value = arg.partition("=")
        if not eq or key not in _OPERANDS:
            raise UsageError(f"dd: unrecognized operand {locale_quote(arg)}\n"
                             f"Try 'dd --help' for more information.")
        if key == "if":
            job.input = value
        elif key == "of":
            job.output = value
        elif key in ("bs", "ibs", "obs", "cbs"):
            size = number(value, INTMAX if key == "cbs" else _MAX_BLOCK)
            if size == 0:
                raise UsageError(f"dd: invalid number: {locale_quote(value)}")
            if key == "bs":
                job.ibs = job.obs = size
                job.bs_given = True
            elif key != "cbs":
                setattr(job, key, size)
        elif key == "count":
            job.count = number(value)
        elif key in ("skip", "iseek"):
            job.skip = number(value)
        elif key in ("seek", "oseek"):
            job.seek = number(value)
        elif key == "status":
            if value not in ("none", "noxfer", "progress"):
                raise UsageError(f"dd: invalid status level: {locale_quote(value)}\n"
                                 f"Try 'dd --help' for more information.")
            job.status = value
        else:
            symbols = set(value.split(","))
            allowed = _CONVS if key == "conv" else _FLAGS
            bad = sorted(symbols - allowed)
            if bad:
                what = "conversion" if key == "conv" else "input flag" if key == "iflag" else "output flag"
                raise UsageError(f"dd: invalid {what}: {locale_quote(bad[0])}\n"
                                 f"Try 'dd --help' for more information.")
            getattr(job, key).update(symbols)
    if {"excl", "nocreat"} <= job.conv:
        raise UsageError("dd: cannot combine excl and nocreat")
    if {"lcase", "ucase"} <= job.conv:
        raise UsageError("dd: cannot combine lcase and ucase")
    if "append" in job.oflag and "notrunc" not in job.conv:
        job.warnings.append("dd: you probably want conv=notrunc with oflag=append")
    return job


@command("dd", usage=USAGE, needs_files=True)
def dd(ctx, argv):
    job = _parse(argv)
    for warning in job.warnings:
        ctx.err(warning + "\n")
    if job.output is not None and not _open_output(ctx, job):
        return 1
    started = time.monotonic()
    skip_bytes = job.skip if "skip_bytes" in job.iflag else job.skip * job.ibs
    limit = _output_limit(ctx, job)
    data = _input(ctx, job, skip_bytes, limit)
    if data is None:
        return 1
    blocks_in = _records(len(data), job.ibs)
    data = _convert(data, job, limit)
    out_records = blocks_in if job.bs_given and "sync" not in job.conv else _records(len(data), job.obs)
    if job.bs_given and "sync" in job.conv:
        out_records = (blocks_in[0] + blocks_in[1], 0)
    status = _write(ctx, job, data)
    if status is not None:
        _summary(ctx, job, blocks_in, (0, 0), 0, started)
        return status
    _summary(ctx, job, blocks_in, out_records, len(data), started)
    return 0


def _records(size: int, block: int) -> tuple:
    return size // block, 1 if size % block else 0


def _output_limit(ctx, job: Job) -> int:
    """The most bytes the output can take: past it the write fails (an endless source is
    never built beyond it)."""
    if job.output is None:
        return ctx.limits.max_output_bytes + 1
    return ctx.limits.max_file_bytes + 1


def _input(ctx, job: Job, skip: int, limit: int) -> Optional[bytes]:
    """The input bytes after skip, up to count; None when it cannot be had (reported)."""
    wanted = None
    if job.count is not None:
        wanted = job.count if "count_bytes" in job.iflag else job.count * job.ibs
    if job.input in _ENDLESS:
        size = limit if wanted is None else wanted
        if size > limit:
            ctx.err(f"dd: memory exhausted by input buffer of size {job.ibs} bytes "
                    f"({_human(job.ibs, 1024, 'iB')})\n" if job.ibs > limit else
                    f"dd: {size} bytes is more than the output can hold ({limit - 1})\n")
            return None
        if job.input == "/dev/zero":
            return bytes(size)
        return ctx.random.randbytes(size)
    if job.input is None:
        data = ctx.read_stdin_bytes()
    else:
        try:
            data = read_bytes(ctx, job.input)
        except FsError as e:
            ctx.err(f"dd: failed to open {quote_always(job.input)}: {e.strerror}\n")
            return None
    if skip > len(data):
        if job.input is not None:
            ctx.err(f"dd: {shell_quote(job.input)}: cannot skip to specified offset\n")
        data = b""
    else:
        data = data[skip:]
    return data if wanted is None else data[:wanted]


def _convert(data: bytes, job: Job, limit: int) -> bytes:
    """The conversions; conv=sync's padding stops at what the output can take (bs=1G was a
    gigabyte of padding built before the write failed)."""
    if "sync" in job.conv and len(data) % job.ibs:
        pad = b" " if job.conv & {"block", "unblock"} else b"\0"
        data += pad * min(job.ibs - len(data) % job.ibs, max(0, limit - len(data)))
    if "swab" in job.conv:
        swapped = bytearray(data)
        swapped[0:len(data) - 1:2], swapped[1::2] = data[1::2], data[0:len(data) - 1:2]
        data = bytes(swapped)
    if "ucase" in job.conv:
        data = data.translate(_UPPER)
    elif "lcase" in job.conv:
        data = data.translate(_LOWER)
    return data


def _open_output(ctx, job: Job) -> bool:
    """Open of= as GNU does before copying (created if absent); False when it cannot be
    (reported, no summary)."""
    assert job.output is not None           # called for of= only
    exists = ctx.fs.exists(ctx.path(job.output))
    problem = ("File exists" if "excl" in job.conv and exists else
               "No such file or directory" if "nocreat" in job.conv and not exists else None)
    if problem is None:
        try:
            old = read_bytes(ctx, job.output) if exists else b""
            access.writer(ctx, job.output, append=True)
            job.old = old
        except FsError as e:
            problem = e.strerror
    if problem is not None:
        ctx.err(f"dd: failed to open {quote_always(job.output)}: {problem}\n")
        return False
    return True


def _write(ctx, job: Job, data: bytes):
    """Write the output; a status when it failed (reported), else None."""
    if job.output is None:
        ctx.write_bytes(data)
        return None
    seek = job.seek if "seek_bytes" in job.oflag else job.seek * job.obs
    keep = seek or "notrunc" in job.conv
    old = job.old if keep else b""
    if seek + len(data) > ctx.limits.max_file_bytes:
        ctx.err(f"dd: error writing {quote_always(job.output)}: File too large\n")
        return 1
    if "append" in job.oflag:
        content = (job.old if "notrunc" in job.conv else b"") + data
    else:
        content = old[:seek].ljust(seek, b"\0") + data
        if "notrunc" in job.conv:
            content += old[len(content):]
    try:
        writer = access.writer(ctx, job.output)
        writer(content.decode("utf-8", "surrogateescape"))
    except FsError as e:
        ctx.err(f"dd: error writing {quote_always(job.output)}: {e.strerror}\n")
        return 1
    return None


def _summary(ctx, job: Job, records_in: tuple, records_out: tuple, copied: int, started: float):
    if job.status == "none":
        return
    lines = f"{records_in[0]}+{records_in[1]} records in\n{records_out[0]}+{records_out[1]} records out\n"
    if job.status != "noxfer":
        lines += _transfer(copied, time.monotonic() - started) + "\n"
    ctx.err(lines)


def _transfer(copied: int, seconds: float) -> str:
    """GNU's last line: bytes (SI, IEC) copied, seconds, rate."""
    si, iec = _human(copied, 1000, "B"), _human(copied, 1024, "iB")
    if copied < 1000:
        head = f"{copied} byte{'s' if copied != 1 else ''} copied"
    elif copied < 1024:
        head = f"{copied} bytes ({si}) copied"
    else:
        head = f"{copied} bytes ({si}, {iec}) copied"
    rate = f"{_human(int(copied / seconds), 1000, 'B', rate=True)}/s" if seconds > 0 else "Infinity B/s"
    return f"{head}, {seconds:g} s, {rate}"


def _human(value: int, base: int, unit: str, rate: bool = False) -> str:
    """human_readable with autoscale, round to nearest, a space before the unit: 1.0 kB,
    66 kB, 64 KiB (a rate keeps three digits: 86.6 MB)."""
    prefixes = "kMGTPEZYRQ" if base == 1000 else "KMGTPEZYRQ"
    if value < base:
        return f"{value} B"
    amount, power = float(value), -1
    while amount >= base and power < len(prefixes) - 1:
        amount /= base
        power += 1
    if amount < (100 if rate else 10):
        text = f"{amount:.1f}"
        if text == "10.0":
            text = "10"
    else:
        text = f"{amount:.0f}"
    suffix = prefixes[power] + ("B" if base == 1000 else unit)
    return f"{text} {suffix}"
