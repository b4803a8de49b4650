"""sed: the stream editor (POSIX plus the GNU extensions scripts use), on standard input or
its file operands. parser.py reads the script, runner.py runs it over each input stream.

The files of r, R, w, W and s///w go through the filesystem layer (none in logic mode); the
commands that run processes (e, s///e) are refused.
"""
from __future__ import annotations

from ...fs import FsError, access
from .._options import Inputs, UsageError, parse
from ..registry import Usage, command
from .parser import ScriptParser, SedError
from .runner import SedFiles, run_commands

USAGE = Usage("[OPTION]... {script-only-if-no-other-script} [input-file]...",
              "Stream editor: filter and transform text.", (
    "-n, --quiet, --silent      suppress automatic printing of pattern space",
    "-e script, --expression=script  add the script to the commands to be executed",
    "-f script-file, --file=script-file  add the contents of script-file",
    "-i, --in-place             edit files in place",
    "-l N, --line-length=N      the line-wrap length for the `l' command",
    "    --posix                disable all GNU extensions",
    "-E, -r, --regexp-extended  use extended regular expressions",
    "-s, --separate             consider files as separate",
    "    --sandbox              disable e/r/w commands",
    "-u, --unbuffered           flush the output buffers more often",
    "-z, --null-data            separate lines by NUL characters"))


@command("sed", usage=USAGE)
def run(ctx, argv):
    # -i[SUFFIX] / --in-place[=SUFFIX]: the backup suffix is accepted (no backup is kept)
    argv = [a if not (a.startswith("-i") and len(a) > 2 and a[2] not in "nrEsuz") and
            not a.startswith("--in-place=") else "-i" for a in argv]

    opts, ops = parse("sed", argv, short_flags="nrEsuzi", short_values="ef",
                      long_flags={"quiet": "n", "silent": "n", "regexp-extended": "E",
                                  "separate": "s", "unbuffered": "u", "null-data": "z",
                                  "in-place": "i", "posix": "posix", "debug": "debug",
                                  "sandbox": "sandbox"},
                      long_values={"expression": "e", "file": "f", "line-length": "l"})
    scripts = opts.all("e")
    if opts.has("f"):
        try:
            scripts.append(access.read_text(ctx, opts.get("f")).removesuffix("\n"))
        except FsError as e:
            raise UsageError(f"sed: couldn't open file {opts.get('f')}: {e.strerror}", 1) from None
    if not scripts:
        if not ops:
            raise UsageError("Usage: sed [OPTION]... {script-only-if-no-other-script} [input-file]...", 1)
        scripts, ops = [ops[0]], ops[1:]
    text = "\n".join(scripts)
    quiet = opts.has("n") or text.startswith("#n\n") or text == "#n"
    sep = "\0" if opts.has("z") else "\n"
    try:                     # a script error (a jump to a missing label too) before any input
        parser = ScriptParser(text, opts.has("E") or opts.has("r"))
        commands = parser.parse()
    except SedError as e:
        raise UsageError(str(e), 1) from None
    files = SedFiles(ctx, parser.files)
    run_on = lambda data: run_commands(ctx, commands, data, quiet, sep, files)
    inputs = Inputs(ctx, "sed", ops, 2, message="sed: can't read {name}: {reason}")
    if opts.has("i") and ops:
        for name, data in inputs:
            try:
                writer = access.writer(ctx, name)
            except FsError as e:
                raise UsageError(f"sed: couldn't open temporary file {name}: {e.strerror}", 4) from None
            writer(run_on(data))
        return inputs.status
    if opts.has("s"):
        for _, data in inputs:
            ctx.out(run_on(data))
    else:
        ctx.out(run_on(inputs.text()))
    return inputs.status
