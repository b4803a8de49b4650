"""date: the current (or a given) time, formatted; UTC unless the script exports TZ."""
from __future__ import annotations

import datetime as dt
import re

from ..fs import FsError
from ._options import UsageError, parse
from .registry import Usage, command

ISO_FORMATS = {"date": "%Y-%m-%d", "hours": "%Y-%m-%dT%H%:z", "minutes": "%Y-%m-%dT%H:%M%:z",
               "seconds": "%Y-%m-%dT%H:%M:%S%:z", "ns": "%Y-%m-%dT%H:%M:%S,%N%:z"}


def _zone(ctx, utc: bool):
    if utc:
        return dt.timezone.utc
    name = ctx.env().get("TZ")
    if name:
        try:
            from zoneinfo import ZoneInfo
            return ZoneInfo(name)
        except Exception:
            return dt.timezone.utc
    return dt.timezone.utc


def _parse_when(text: str, tz, clock: float) -> dt.datetime:
    """-d's date; `clock` is the script's time now (Budget.now())."""
    try:
        return _when(text.strip(), tz, clock)
    except (ValueError, OverflowError, OSError):     # out of the calendar's range, or no date
        raise UsageError(f"date: invalid date '{text}'") from None


def _when(text: str, tz, clock: float) -> dt.datetime:
    if text.startswith("@"):
        return dt.datetime.fromtimestamp(float(text[1:]), tz)
    now = dt.datetime.fromtimestamp(clock, tz)
    simple = {"now": now, "today": now, "yesterday": now - dt.timedelta(days=1),
              "tomorrow": now + dt.timedelta(days=1)}
    if text in simple:
        return simple[text]
    m = re.fullmatch(r"([-+]?\d+) (second|minute|hour|day|week)s?( ago)?", text)
    if m:
        n = int(m.group(1)) * (-1 if m.group(3) else 1)
        unit = {"second": "seconds", "minute": "minutes", "hour": "hours", "day": "days",
                "week": "weeks"}[m.group(2)]
        return now + dt.timedelta(**{unit: n})
    for fmt in ("%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M", "%Y-%m-%d"):
        try:
            return dt.datetime.strptime(text.replace("Z", ""), fmt).replace(tzinfo=tz)
        except ValueError:
            continue
    parsed = dt.datetime.fromisoformat(text)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=tz)


def _format(when: dt.datetime, fmt: str) -> str:
    offset = when.strftime("%z")
    fmt = fmt.replace("%:z", offset[:3] + ":" + offset[3:] if offset else "+00:00")
    fmt = fmt.replace("%N", f"{when.microsecond * 1000:09d}").replace("%s", str(int(when.timestamp())))
    fmt = fmt.replace("%P", when.strftime("%p").lower())
    return when.strftime(fmt)


USAGE = Usage("[OPTION]... [+FORMAT]", "Display the current time in the given FORMAT.", (
    "-d, --date=STRING         display time described by STRING, not 'now'",
    "-I, --iso-8601[=FMT]      output date/time in ISO 8601 format",
    "-r, --reference=FILE      display the last modification time of FILE",
    "-R, --rfc-email           output date and time in RFC 5322 format",
    "-u, --utc, --universal    print Coordinated Universal Time (UTC)"))


@command("date", usage=USAGE)
def run(ctx, argv):
    opts, ops = parse("date", argv, short_flags="uR", short_values="dIr",
                      long_flags={"utc": "u", "universal": "u", "rfc-email": "R"},
                      long_values={"date": "d", "iso-8601": "I", "reference": "r"})
    tz = _zone(ctx, opts.has("u"))
    clock = ctx.budget.now()
    when = _parse_when(opts.get("d"), tz, clock) if opts.has("d") else dt.datetime.fromtimestamp(clock, tz)
    if opts.has("r"):
        try:
            when = dt.datetime.fromtimestamp(ctx.fs.stat(ctx.path(opts.get("r"))).mtime, tz)
        except FsError as e:
            raise UsageError(f"date: {opts.get('r')}: {e.strerror}") from None
    fmt = "%a %b %e %H:%M:%S %Z %Y"
    for op in ops:
        if op.startswith("+"):
            fmt = op[1:]
        else:
            raise UsageError(f"date: setting the time is not allowed: '{op}'")
    if opts.has("I"):
        fmt = ISO_FORMATS.get(opts.get("I") or "date", ISO_FORMATS["date"])
    if opts.has("R"):
        fmt = "%a, %d %b %Y %H:%M:%S %z"
    ctx.out(_format(when, fmt) + "\n")
    return 0
