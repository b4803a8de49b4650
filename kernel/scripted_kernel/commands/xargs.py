"""xargs: build command lines from standard input and run them (builtins, commands, tools)."""
from __future__ import annotations

import shlex

from ..fs import FsError, access
from ._options import UsageError, integer, parse, shown
from .registry import Usage, command



def _items(text: str, delimiter, null: bool) -> list[str]:
    """Arguments from the input: with -0 or -d every separated item counts, empty ones too
    (and a newline is an ordinary character); otherwise blanks separate and quotes group."""
    if null or delimiter is not None:
        items = text.split("\0" if null else delimiter)
        if items and items[-1] == "":
            items.pop()
        return items
    return _unquote(text)


def _unquote(text: str, blanks_separate: bool = True) -> list[str]:
    lexer = shlex.shlex(text, posix=True)
    lexer.whitespace_split = True
    lexer.commenters = ""
    if not blanks_separate:
        lexer.whitespace = ""
    try:
        return list(lexer)
    except ValueError as e:
        raise UsageError(f"xargs: unmatched quote: {e}") from None


def _line_groups(text: str, lines_per_call: int) -> list[list[str]]:
    """-L: the arguments of each run of that many non-blank lines."""
    lines = [ln for ln in text.split("\n") if ln.strip()]
    return [[arg for ln in lines[i:i + lines_per_call] for arg in _unquote(ln)]
            for i in range(0, len(lines), lines_per_call)]


USAGE = Usage("[OPTION]... COMMAND [INITIAL-ARGS]...",
              "Run COMMAND with arguments INITIAL-ARGS and more arguments read from input.", (
    "-0, --null                   items are separated by a null, not whitespace",
    "-a, --arg-file=FILE          read arguments from FILE, not standard input",
    "-d, --delimiter=CHARACTER    items in input stream are separated by CHARACTER",
    "-E END                       set logical EOF string",
    "-I R, --replace=R            replace R in INITIAL-ARGS with names read from input",
    "-L, --max-lines=MAX-LINES    use at most MAX-LINES non-blank input lines per command line",
    "-n, --max-args=MAX-ARGS      use at most MAX-ARGS arguments per command line",
    "-P, --max-procs=MAX-PROCS    (accepted; commands run one at a time)",
    "-r, --no-run-if-empty        if there are no arguments, then do not run COMMAND",
    "-s SIZE                      limit length of command line to SIZE",
    "-t, --verbose                print commands before executing them",
    "-x                           exit if the size (see -s) is exceeded"))


@command("xargs", usage=USAGE)
def run(ctx, argv):
    opts, ops = parse("xargs", [argv[0]] + _split_at_command(argv[1:]),
                      short_flags="0rtx", short_values="nIdLsPEa",
                      long_flags={"null": "0", "no-run-if-empty": "r", "verbose": "t"},
                      long_values={"max-args": "n", "replace": "I", "delimiter": "d",
                                   "max-lines": "L", "max-procs": "P", "arg-file": "a"})
    command = ops or ["echo"]
    delimiter = opts.get("d")
    if delimiter is not None:
        delimiter = {"\\n": "\n", "\\t": "\t", "\\0": "\0"}.get(delimiter, delimiter)
    if opts.has("a"):
        try:
            text = access.read_text(ctx, opts.get("a"))
        except FsError as e:
            raise UsageError(f"xargs: {opts.get('a')}: {e.strerror}") from None
    else:
        text = ctx.stdin.read_all()
    replace = opts.get("I")
    plain_lines = delimiter is None and not opts.has("0")
    if replace is not None and plain_lines:
        # -I: a whole line is one argument (leading blanks dropped, quotes still removed)
        items = [arg for ln in text.split("\n") if ln.strip() for arg in _unquote(ln.lstrip(), False)]
    else:
        items = _items(text, delimiter, opts.has("0"))
    if not items and (opts.has("r") or replace is not None):
        return 0
    if opts.has("L") and replace is None and plain_lines:
        groups = _line_groups(text, _count(opts, "L")) or [[]]
    else:
        per_call = (_count(opts, "n") if opts.get("n") else _count(opts, "L") if opts.get("L") else
                    (1 if replace is not None else 0)) or len(items) or 1
        groups = [items[i:i + per_call] for i in range(0, len(items), per_call)] or [[]]
    if not any(groups) and opts.has("r"):
        return 0
    status = 0
    for group in groups:
        if replace is not None:
            args = [a.replace(replace, group[0]) for a in command]
        else:
            args = command + group
        if opts.has("t"):
            ctx.err(" ".join(args) + "\n")
        code = _run_program(ctx, args)
        if code == 255:
            ctx.err(f"xargs: {shown(args[0])}: exited with status 255; aborting\n")
            return 124
        if code:
            status = 127 if code == 127 else (126 if code == 126 else 123)
    return status


def _run_program(ctx, args: list) -> int:
    """As xargs execs programs, shell functions are not found; commands and tools are. The
    program's standard input is empty (xargs has consumed its own)."""
    status = ctx.run(args, stdin="")
    if status is None:
        ctx.err(f"xargs: {shown(args[0])}: No such file or directory\n")
        return 127
    return status


def _split_at_command(args: list) -> list:
    """Options stop at the command: `xargs -n1 grep -v x` leaves `-v` to grep."""
    out: list[str] = []
    i = 0
    takes_value = set("nIdLsPEa")
    while i < len(args):
        a = args[i]
        if a == "--" or not a.startswith("-") or a == "-":
            return out + ["--"] + args[i + (1 if a == "--" else 0):]
        out.append(a)
        if len(a) == 2 and a[1] in takes_value and i + 1 < len(args):
            out.append(args[i + 1])
            i += 1
        i += 1
    return out


def _count(opts, letter: str) -> int:
    return integer(opts.get(letter), f'xargs: invalid number "{{}}" for -{letter} option\n'
                                      f"Try 'xargs --help' for more information.")
