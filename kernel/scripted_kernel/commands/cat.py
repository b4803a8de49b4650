"""cat: copies standard input (logic mode has no files; `-` is standard input)."""
from __future__ import annotations

from ._options import read_input, parse
from .registry import Usage, command



def _visible(line: str, ends: bool, tabs: bool) -> str:
    """cat -v (with -E: $ at line ends, -T: ^I for tabs)."""
    out = []
    for ch in line:
        o = ord(ch)
        if ch == "\n":
            out.append("$\n" if ends else "\n")
        elif ch == "\t":
            out.append("^I" if tabs else "\t")
        elif o < 32:
            out.append("^" + chr(o + 64))
        elif o == 127:
            out.append("^?")
        elif o > 127:
            for b in ch.encode("utf-8", "surrogateescape"):
                out.append("M-" + (chr(b - 128) if b - 128 >= 32 else "^" + chr(b - 128 + 64)) if b > 127 else chr(b))
        else:
            out.append(ch)
    return "".join(out)


USAGE = Usage("[OPTION]... [FILE]...", "Concatenate FILE(s) to standard output.", (
    "-A, --show-all           equivalent to -vET",
    "-b, --number-nonblank    number nonempty output lines",
    "-e                       equivalent to -vE",
    "-E, --show-ends          display $ at end of each line",
    "-n, --number             number all output lines",
    "-s, --squeeze-blank      suppress repeated empty output lines",
    "-t                       equivalent to -vT",
    "-T, --show-tabs          display TAB characters as ^I",
    "-u                       (ignored)",
    "-v, --show-nonprinting   use ^ and M- notation, except for LFD and TAB"))


@command("cat", usage=USAGE)
def run(ctx, argv):
    opts, ops = parse("cat", argv, short_flags="nbsAvETeut",
                      long_flags={"number": "n", "number-nonblank": "b", "squeeze-blank": "s",
                                  "show-all": "A", "show-nonprinting": "v", "show-ends": "E",
                                  "show-tabs": "T"})
    text, status = read_input(ctx, "cat", ops)
    lines = text.splitlines(keepends=True)
    if opts.has("s"):
        squeezed: list[str] = []
        for line in lines:
            if line == "\n" and squeezed and squeezed[-1] == "\n":
                continue
            squeezed.append(line)
        lines = squeezed
    show_all = opts.has("A")
    ends = show_all or opts.has("E") or opts.has("e")
    tabs = show_all or opts.has("T") or opts.has("t")
    visible = show_all or opts.has("v") or opts.has("e") or opts.has("t")
    if visible or ends or tabs:
        lines = [_visible(ln, ends, tabs) if visible else
                 ln.replace("\t", "^I" if tabs else "\t").replace("\n", "$\n" if ends else "\n")
                 for ln in lines]
    if opts.has("b") or opts.has("n"):
        out, k = [], 0
        for ln in lines:
            if opts.has("b") and ln.strip("\n$") == "":
                out.append(ln)
                continue
            k += 1
            out.append(f"{k:6d}\t{ln}")
        lines = out
    ctx.out("".join(lines))
    return status
