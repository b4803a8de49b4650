"""The limits of a notebook session: what `%scripted limits` shows and sets.

The library's defaults (`ExecutionLimits()`) are sized for a model calling a tool: a 30 s wall
clock, a million commands, 10 MiB of output. A person at a notebook interrupts a cell that runs
too long, as in the Python kernel, so the notebook starts with no wall clock and larger bounds.
Every bound keeps its flag name here: `max_output_bytes` is `--max-output`, `timeout_seconds`
is `--timeout`; sizes take K, M and G (powers of 1024).
"""
from __future__ import annotations

import dataclasses
import re
from typing import Optional

from scripted_kernel.base.limits import ExecutionLimits

from .markup import html, join

MiB = 1024 * 1024

# What differs from the library's defaults in a notebook; every other bound is the library's.
NOTEBOOK_DEFAULTS = {
    "timeout_seconds": 0.0,                 # none: interrupt the kernel instead
    "max_commands": 100_000_000,
    "max_loop_iterations": 100_000_000,
    "max_output_bytes": 64 * MiB,
    "max_string_length": 64 * MiB,
    "max_array_length": 10_000_000,
    "max_memory_bytes": 2048 * MiB,
}

_SIZE_FIELDS = {"max_output_bytes", "max_string_length", "max_script_bytes", "max_memory_bytes",
                "max_fs_bytes", "max_file_bytes"}
_UNITS = {"": 1, "K": 1024, "M": MiB, "G": 1024 * MiB}


def notebook_limits() -> ExecutionLimits:
    # (mypy types every keyword by the dict's value type, float; each is its field's own type)
    return ExecutionLimits(**NOTEBOOK_DEFAULTS)  # type: ignore[arg-type]


def flag_of(field: str) -> str:
    """`timeout_seconds` → `--timeout`, `max_output_bytes` → `--max-output`."""
    if field == "timeout_seconds":
        return "--timeout"
    return "--" + re.sub(r"_bytes$", "", field).replace("_", "-")


FIELDS = [f.name for f in dataclasses.fields(ExecutionLimits)]
FLAGS = {flag_of(name): name for name in FIELDS}


def describe(field: str, value) -> str:
    if field == "timeout_seconds":
        return "none" if not value else f"{value:g} s"
    if field in _SIZE_FIELDS:
        for unit in ("G", "M", "K"):
            if value and value % _UNITS[unit] == 0:
                return f"{value // _UNITS[unit]:,} {unit}iB" if unit else str(value)
        return f"{value:,} bytes"
    return f"{value:,}"


def parse_value(field: str, text: str):
    """A flag's value: seconds for --timeout (0 or none: no timeout), a size with K/M/G for
    byte bounds, a count otherwise. ValueError with a message naming the flag."""
    flag = flag_of(field)
    if field == "timeout_seconds":
        if text.lower() in ("none", "off", "0"):
            return 0.0
        try:
            seconds = float(text.rstrip("s"))
        except ValueError:
            raise ValueError(f"{flag} expects seconds (or none), got {text!r}") from None
        if seconds < 0:
            raise ValueError(f"{flag} expects seconds (or none), got {text!r}")
        return seconds
    m = re.fullmatch(r"([0-9][0-9_,]*)\s*([KMG]?)(?:i?B)?", text.strip(), re.I)
    if not m or (m.group(2) and field not in _SIZE_FIELDS):
        kind = "a size such as 50M" if field in _SIZE_FIELDS else "a whole number"
        raise ValueError(f"{flag} expects {kind}, got {text!r}")
    value = int(m.group(1).replace("_", "").replace(",", "")) * _UNITS[m.group(2).upper()]
    if value <= 0:
        raise ValueError(f"{flag} must be above 0")
    return value


def apply(limits: ExecutionLimits, words: list) -> list:
    """Set the limits named by `--flag VALUE` / `--flag=VALUE` words; the fields changed."""
    changed, i = [], 0
    while i < len(words):
        word = words[i]
        flag, eq, value = word.partition("=")
        if flag not in FLAGS:
            raise ValueError(f"unknown limit {flag!r}; the limits are: {' '.join(FLAGS)}")
        if not eq:
            if i + 1 >= len(words):
                raise ValueError(f"{flag} needs a value")
            i += 1
            value = words[i]
        field = FLAGS[flag]
        parsed = parse_value(field, value)
        setattr(limits, field, parsed)
        changed.append(field)
        i += 1
    return changed


def table(limits: ExecutionLimits) -> dict:
    """The limits as a display bundle: flag, this session's value, the library's default."""
    library = ExecutionLimits()
    rows = [(flag_of(f), describe(f, getattr(limits, f)), describe(f, getattr(library, f))) for f in FIELDS]
    width = max(len(r[0]) for r in rows)
    vwidth = max(len(r[1]) for r in rows)
    text = [f"{'limit'.ljust(width)}  {'this session'.ljust(vwidth)}  library default"]
    text += [f"{a.ljust(width)}  {b.ljust(vwidth)}  {c}" for a, b, c in rows]
    cells = join(html("<tr><td><code>{}</code></td><td>{}</td><td>{}</td></tr>", a, b, c) for a, b, c in rows)
    return {"text/plain": "\n".join(text) + "\n\nset with: %scripted limits --timeout 300 --max-output 50M ...;"
                          " --reset: the notebook's defaults\n",
            "text/html": html("<table class='scripted-limits'><thead><tr><th>limit</th><th>this session</th>"
                              "<th>library default</th></tr></thead><tbody>{}</tbody></table>"
                              "<p>set with <code>%scripted limits --timeout 300 --max-output 50M ...</code>; "
                              "<code>--reset</code>: the notebook's defaults</p>", cells)}


def hint(error: Optional[str], limits: ExecutionLimits) -> str:
    """For a run stopped by a limit (`response.error`): which one, and the magic that raises it."""
    if not error:
        return ""
    if error == "timeout":
        field = "timeout_seconds"
    elif error.startswith("limit:") and error[6:] in FIELDS:
        field = error[6:]
    else:
        return ""
    value = describe(field, getattr(limits, field))
    example = "SECONDS" if field == "timeout_seconds" else ("SIZE" if field in _SIZE_FIELDS else "N")
    return (f"the limit {field} ({value}) stopped the script; "
            f"%scripted limits {flag_of(field)} {example} raises it for this session")
