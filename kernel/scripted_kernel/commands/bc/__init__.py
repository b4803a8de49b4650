"""bc: GNU bc's arbitrary precision calculator language (1.07): numbers with a scale,
`scale`/`ibase`/`obase`, variables, arrays, functions with autos, if/while/for, print, strings,
and with -l its math library. Programs come from the file operands, then standard input; each
input item runs as soon as it is read, as bc runs them.

parser (tokens and trees) <- numbers (arithmetic and printing) <- interpreter <- mathlib."""
from __future__ import annotations

from ...fs import FsError, access
from .._options import parse
from ..registry import Usage, command
from .interpreter import Interpreter
from .mathlib import LIBRARY
from .parser import BcSyntaxError, Parser, tokenize

USAGE = Usage("[options] [file ...]", "An arbitrary precision calculator language.",
              ("-l, --mathlib   use the predefined math routines (scale 20, s c a l e j)",
               "-q, --quiet     don't print initial banner",
               "-s, --standard  non-standard bc constructs are errors",
               "-w, --warn      warn about non-standard bc constructs"))


def _line_length(ctx) -> int:
    """BC_LINE_LENGTH: 0 turns line breaking off; below 3 (or not a number) is the default."""
    text = ctx.getenv("BC_LINE_LENGTH")
    try:
        value = int(text) if text is not None else 70
    except ValueError:
        return 70
    return value if value == 0 or value >= 3 else 70


def run_program(bc: Interpreter, text: str, source: str) -> bool:
    """Run one program text item by item; False when it ended bc (quit or halt)."""
    parser = Parser(tokenize(text, bc.ctx.budget))
    while True:
        try:
            item = _next_item(parser)
        except BcSyntaxError as e:
            bc.flush()
            bc.ctx.err(f"{source} {e.line}: {e.message}\n" if e.located else e.message + "\n")
            if e.fatal:
                return False
            parser.recover()
            continue
        if item is None:
            return True
        if item.quit:
            return False
        if item.function is not None:
            bc.define(item.function)
        elif not bc.run_statements(item.statements):
            return False


def _next_item(parser: Parser):
    """parser.item(); running out of Python's recursion (a host with a low limit) ends bc as
    the nesting limit does."""
    try:
        return parser.item()
    except RecursionError:
        raise BcSyntaxError("memory exhausted", parser.tok.line, fatal=True) from None


@command("bc", usage=USAGE)
def run(ctx, argv):
    opts, files = parse("bc", argv, short_flags="lqswi",
                        long_flags={"mathlib": "l", "quiet": "q", "standard": "s", "warn": "w",
                                    "interactive": "i"})
    bc = Interpreter(ctx, _line_length(ctx))
    if opts.has("l"):
        bc.functions.update(LIBRARY)
        bc.scale = 20
    for name in files:
        try:
            text = access.read_text(ctx, name)
        except FsError:
            ctx.err(f"File {name} is unavailable.\n")
            return 1
        if not run_program(bc, text, name):
            return 0
    run_program(bc, ctx.stdin.read_all(), "(standard_in)")
    return 0
