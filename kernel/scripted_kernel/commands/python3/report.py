"""A failed program's report on stderr, as CPython prints it: the traceback of an uncaught
exception ("Traceback (most recent call last):", a File line per frame with the program's own
line quoted, runs of one repeated frame shortened, then `Type: message`), or a syntax error's
place and a caret. Frames of the prelude (source.PRELUDE) are left out: they are ours."""
from __future__ import annotations

import pydantic_monty

# The names Monty gives a session's feeds in tracebacks: the prelude is the first, the program
# the second.
PRELUDE_FEED = "<python-input-0>"
PROGRAM_FEED = "<python-input-1>"
_REPEATS_SHOWN = 3                    # identical frames in a row before CPython sums up the rest


def traceback_text(error, filename: str, lines: list) -> str:
    """`error` (MontyRuntimeError) for the program called `filename`, whose text is `lines`."""
    entries = [_frame_text(frame, filename, lines) for frame in error.traceback()
               if frame.filename != PRELUDE_FEED]
    out = ["Traceback (most recent call last):\n"]
    for entry, run in _runs(entries):
        out.extend([entry] * min(run, _REPEATS_SHOWN))
        more = run - _REPEATS_SHOWN
        if more > 0:
            out.append(f"  [Previous line repeated {more} more time{'s' if more > 1 else ''}]\n")
    out.append(error.display("type-msg") + "\n")
    return "".join(out)


def _runs(entries: list) -> list:
    """[entry, how many times in a row] for each run of one entry, in order."""
    runs: list = []
    for entry in entries:
        if runs and runs[-1][0] == entry:
            runs[-1][1] += 1
        else:
            runs.append([entry, 1])
    return runs


def syntax_error_text(error, filename: str, lines: list) -> str:
    """A MontySyntaxError: where, the line, a caret under the column, `SyntaxError: message`."""
    frames = [frame for frame in error.traceback() if frame.filename != PRELUDE_FEED]
    out = []
    if frames:
        frame = frames[-1]
        out.append(f'  File "{filename}", line {frame.line}\n')
        text = _line(frame, lines)
        if text is not None:
            stripped = text.lstrip()
            caret = max(0, frame.column - 1 - (len(text) - len(stripped)))
            out.append(f"    {stripped}\n    {' ' * min(caret, len(stripped))}^\n")
    out.append(error.display("type-msg") + "\n")
    return "".join(out)


def _frame_text(frame: "pydantic_monty.Frame", filename: str, lines: list) -> str:
    name = filename if frame.filename == PROGRAM_FEED else frame.filename
    text = f'  File "{name}", line {frame.line}, in {frame.function_name or "<module>"}\n'
    quoted = _line(frame, lines)
    return text + (f"    {quoted.strip()}\n" if quoted and quoted.strip() else "")


def _line(frame, lines: list):
    """The program's own line (not the edited one Monty ran), or Monty's quote elsewhere."""
    if frame.filename != PROGRAM_FEED:
        return frame.source_line
    return lines[frame.line - 1] if 0 < frame.line <= len(lines) else None
