"""grep, egrep, fgrep: print lines of standard input that match patterns (GNU grep)."""
from __future__ import annotations

from fnmatch import fnmatchcase

import regex

from ..fs import FsError, access
from ._options import UsageError, parse, shown as shown_operand, split_lines
from ..base.regexes import DEFAULT_TIMEOUT, RegexError, RegexTimeout, finditer, matcher, translate
from .registry import Usage, command

STDIN_LABEL = "(standard input)"


def _matcher(patterns: list, mode: str, ignore_case: bool, word: bool, line: bool, longest: bool):
    """A compiled regex for all patterns (one alternation)."""
    parts = []
    for p in patterns:
        if mode == "F":
            rx = regex.escape(p)
        elif mode == "P":
            rx = p
        else:
            rx = translate(p, extended=mode == "E")
        if word:
            rx = r"(?<![\w])(?:" + rx + r")(?![\w])"
        if line:
            rx = r"^(?:" + rx + r")$"
        parts.append("(?:" + rx + ")")
    flags = regex.V0 | (regex.IGNORECASE if ignore_case else 0) | (regex.POSIX if longest and mode != "P" else 0)
    try:
        return regex.compile("|".join(parts), flags)
    except regex.error as e:
        raise RegexError(str(e)) from None


# constructs that can match a newline (or anchor at the buffer's ends), after translation
_CROSSES_LINES = ("[^", "\\s", "\\W", "\\D", "\\P", "\\n", "\\x", "\\X", "\\R", "\\N",
                  "\\Z", "\\A", "\\0", "\\u", "\\U", "(?s", "\n")


def _line_local(rx) -> bool:
    """Whether no match of rx can contain a newline (nor depend on the text's ends). A control
    character could be the end of a range around the newline (`[<tab>-<CR>]`): not taken."""
    pattern = rx.pattern
    return not any(piece in pattern for piece in _CROSSES_LINES) and \
        not any(c < " " for c in pattern)


def _matching_lines(search, text: str, count: int):
    """Indices of the lines (of `count`) holding a match: one search from each line after a
    match, so text without matches is skipped inside the regex engine."""
    pos = line = counted_to = 0
    while True:
        m = search(text, pos)
        if m is None:
            return
        line += text.count("\n", counted_to, m.start())
        if line >= count:          # an empty match after the final newline is no line
            return
        yield line
        end = text.find("\n", m.start())
        if end < 0:
            return
        pos = counted_to = end + 1
        line += 1


USAGE = Usage("[OPTION]... PATTERNS [FILE]...", "Search for PATTERNS in each FILE (standard input by default).", (
    "-E, --extended-regexp     PATTERNS are extended regular expressions",
    "-F, --fixed-strings       PATTERNS are strings",
    "-G, --basic-regexp        PATTERNS are basic regular expressions",
    "-P, --perl-regexp         PATTERNS are Perl regular expressions",
    "-e, --regexp=PATTERNS     use PATTERNS for matching",
    "-f, --file=FILE           take PATTERNS from FILE",
    "-i, --ignore-case         ignore case distinctions in patterns and data",
    "    --no-ignore-case      do not ignore case distinctions (default)",
    "-w, --word-regexp         match only whole words",
    "-x, --line-regexp         match only whole lines",
    "-z, --null-data           a data line ends in 0 byte, not newline",
    "-s, --no-messages         suppress error messages",
    "-v, --invert-match        select non-matching lines",
    "-m, --max-count=NUM       stop after NUM selected lines",
    "-b, --byte-offset         print the byte offset with output lines",
    "-n, --line-number         print line number with output lines",
    "    --line-buffered       flush output on every line",
    "-H, --with-filename       print file name with output lines",
    "-h, --no-filename         suppress the file name prefix on output",
    "    --label=LABEL         use LABEL as the standard input file name prefix",
    "-o, --only-matching       show only nonempty parts of lines that match",
    "-q, --quiet, --silent     suppress all normal output",
    "    --binary-files=TYPE   assume that binary files are TYPE",
    "-a, --text                equivalent to --binary-files=text",
    "-d, --devices=ACTION      how to handle devices",
    "-r, --recursive           search directories recursively",
    "-L, --files-without-match  print only names of FILEs with no selected lines",
    "-l, --files-with-matches  print only names of FILEs with selected lines",
    "-c, --count               print only a count of selected lines per FILE",
    "-B, --before-context=NUM  print NUM lines of leading context",
    "-A, --after-context=NUM   print NUM lines of trailing context",
    "-C, --context=NUM         print NUM lines of output context",
    "    --color[=WHEN]        use markers to highlight the matching strings"))


@command("grep", "egrep", "fgrep", usage=USAGE)
def run(ctx, argv):
    cmd = argv[0]

    opts, ops = parse(cmd, argv, short_flags="EFGPiyvcnoqswxhHzlLbUaIrRZ", short_values="eABCmfd",
                      long_flags={"extended-regexp": "E", "fixed-strings": "F", "basic-regexp": "G",
                                  "perl-regexp": "P", "ignore-case": "i", "invert-match": "v",
                                  "count": "c", "line-number": "n", "only-matching": "o",
                                  "quiet": "q", "silent": "q", "no-messages": "s",
                                  "word-regexp": "w", "line-regexp": "x", "no-filename": "h",
                                  "with-filename": "H", "null-data": "z",
                                  "files-with-matches": "l", "files-without-match": "L",
                                  "byte-offset": "b", "text": "a", "recursive": "r",
                                  "dereference-recursive": "R", "null": "Z",
                                  "no-ignore-case": "no-ignore-case", "line-buffered": "line-buffered"},
                      long_values={"regexp": "e", "after-context": "A", "before-context": "B",
                                   "context": "C", "max-count": "m", "file": "f", "color": "color",
                                   "colour": "color", "label": "label", "devices": "d",
                                   "binary-files": "binary-files", "include": "include",
                                   "exclude": "exclude", "exclude-dir": "exclude-dir"},
                      status=2, numeric_short="C")
    mode = "E" if cmd == "egrep" else "F" if cmd == "fgrep" else "G"
    for f in opts.flags:
        if f in "EFGP":
            mode = f
    patterns = []
    for pattern_file in opts.all("f"):
        try:
            patterns.extend(split_lines(access.read_text(ctx, pattern_file)))
        except FsError as e:
            raise UsageError(f"{cmd}: {pattern_file}: {e.strerror}", 2) from None
    for p in opts.all("e"):
        patterns.extend(p.split("\n"))
    if not opts.has("e") and not opts.has("f"):
        if not ops:
            raise UsageError(f"Usage: {cmd} [OPTION]... PATTERNS [FILE]...\n"
                             f"Try '{cmd} --help' for more information.", 2)
        patterns.extend(ops[0].split("\n"))
        ops = ops[1:]
    recursive = opts.has("r") or opts.has("R")
    implicit_dot = recursive and not ops        # names then shown without "./", as GNU does
    if implicit_dot:
        ops = ["."]
    chooser = _Chooser(opts.all("include"), opts.all("exclude"), opts.all("exclude-dir"),
                       opts.has("R"))
    name_end = "\0" if opts.has("Z") else None
    try:
        context_after = int(opts.get("A", opts.get("C", "0")))
        context_before = int(opts.get("B", opts.get("C", "0")))
        max_count = int(opts.get("m")) if opts.get("m") is not None else None
    except ValueError:
        raise UsageError(f"{cmd}: invalid context length argument", 2) from None
    ignore_case = False
    for f in opts.flags:          # the last of -i / --no-ignore-case wins
        if f in ("i", "y", "no-ignore-case"):
            ignore_case = f != "no-ignore-case"
    try:
        rx = _matcher(patterns, mode, ignore_case, opts.has("w"), opts.has("x"), opts.has("o"))
    except RegexError as e:
        raise UsageError(f"{cmd}: {e}", 2) from None
    sep = "\0" if opts.has("z") else "\n"
    color = opts.get("color") == "always"      # auto and never: output is never a terminal
    invert = opts.has("v")
    timeout = DEFAULT_TIMEOUT           # the regex helpers' bound on one search of a risky pattern
    find = matcher(rx, timeout)
    # the whole input searched at once (C speed between matches) where no match can run
    # past the end of a line; else one search per line
    whole = _line_local(rx) and sep == "\n" and mode != "P"
    find_in_text = matcher(regex.compile(rx.pattern, rx.flags | regex.MULTILINE), timeout) \
        if whole else None

    if opts.get("binary-files") not in (None, "binary", "text", "without-match"):
        raise UsageError(f"{cmd}: unknown binary-files type", 2)
    # -a and -I: the last given wins; --binary-files=TYPE names either, or the default
    binary_files = opts.get("binary-files") or next(
        ({"a": "text", "I": "without-match"}[f] for f in reversed(opts.flags) if f in "aI"), "binary")

    def search(text: str, label: str, with_name: bool) -> int:
        """Print what one input gives; the number of selected lines."""
        binary = "\0" in text and sep != "\0"
        lines = split_lines(text, sep)
        try:
            if whole:
                selected = [invert] * len(lines)
                for k in _matching_lines(find_in_text, text, len(lines)):
                    selected[k] = not invert
            elif invert:
                selected = [find(ln) is None for ln in lines]
            else:
                selected = [find(ln) is not None for ln in lines]
        except RegexTimeout:
            raise UsageError(f"{cmd}: regular expression too complex", 2) from None
        if binary and binary_files == "without-match":
            selected = [False] * len(lines)      # -I: binary input matches nothing
        if max_count is not None:
            seen = 0
            for k, sel in enumerate(selected):
                if sel:
                    seen += 1
                    if seen > max_count:
                        selected[k] = False
            last_allowed = max((k for k, s in enumerate(selected) if s), default=-1)
        else:
            last_allowed = len(lines)
        count = sum(selected)
        if opts.has("q"):
            return count
        if opts.has("l") or opts.has("L"):
            if (count > 0) == opts.has("l"):
                ctx.out(label + (name_end or "\n"))
            return count
        if opts.has("c"):
            ctx.out((label + (name_end or ":") if with_name else "") + str(count) + "\n")
            return count
        if count and binary and binary_files == "binary":
            ctx.err(f"{cmd}: {shown_operand(label)}: binary file matches\n")     # GNU grep 3.5+
            return count
        out = []
        offsets = _byte_offsets(lines) if opts.has("b") else None

        def pre(k: int, mark: str, column: int = 0) -> str:
            """file, line number and byte offset before a line, as GNU grep prints them."""
            return _prefix(label if with_name else None, k, opts.has("n"), mark,
                           None if offsets is None else offsets[k] + column, color, name_end)

        def shown(line: str) -> str:
            if not color or invert:
                return line
            return _highlight(rx, line, timeout)
        if opts.has("o"):
            if not invert:
                for k, ln in enumerate(lines):
                    if not selected[k]:
                        continue
                    for m in finditer(rx, ln, timeout=timeout):
                        if m.end() > m.start():
                            column = len(ln[:m.start()].encode("utf-8", "surrogateescape")) if offsets else 0
                            out.append(pre(k, ":", column) + shown(m.group()) + sep)
            ctx.out("".join(out))
            return count
        if not (context_before or context_after or with_name or opts.has("n") or opts.has("b") or color):
            out = [ln for ln, sel in zip(lines, selected) if sel]
            if out:
                ctx.out(sep.join(out) + sep)
            return count
        printed = -1
        pending_after = 0
        for k, ln in enumerate(lines):
            if selected[k]:
                start = max(k - context_before, printed + 1)
                if (context_before or context_after) and printed >= 0 and start > printed + 1:
                    out.append(_paint("se", "--") + "\n" if color else "--\n")
                for j in range(start, k):
                    out.append(pre(j, "-") + lines[j] + sep)
                out.append(pre(k, ":") + shown(ln) + sep)
                printed = k
                pending_after = context_after
            elif pending_after and k <= last_allowed + context_after:
                out.append(pre(k, "-") + ln + sep)
                printed = k
                pending_after -= 1
        ctx.out("".join(out))
        return count

    with_name = (opts.has("H") or len(ops) > 1 or recursive) and not opts.has("h")
    total, failed = 0, False
    for name, text in _inputs(ctx, cmd, ops, recursive, opts.has("s"), chooser):
        if text is None:
            failed = True
            continue
        if implicit_dot and name.startswith("./"):
            name = name[2:]
        total += search(text, opts.get("label", STDIN_LABEL) if name == "-" else name, with_name)
        if total and opts.has("q"):
            return 0
    return 2 if failed else (0 if total else 1)


_COLORS = {"mt": "01;31", "fn": "35", "ln": "32", "bn": "32", "se": "36"}   # GNU's GREP_COLORS


def _paint(kind: str, text: str) -> str:
    return f"\x1b[{_COLORS[kind]}m\x1b[K{text}\x1b[m\x1b[K"


def _highlight(rx, line: str, timeout) -> str:
    """The line with each non-empty match painted as --color=always does."""
    out, pos = [], 0
    for m in finditer(rx, line, timeout=timeout):
        if m.end() > m.start():
            out.append(line[pos:m.start()])
            out.append(_paint("mt", m.group()))
            pos = m.end()
    out.append(line[pos:])
    return "".join(out)


def _prefix(name, index: int, numbered: bool, mark: str, offset=None, color: bool = False,
            name_end=None) -> str:
    paint = _paint if color else (lambda kind, text: text)
    text = ""
    if name is not None:
        text += paint("fn", name) + (name_end or paint("se", mark))
    if numbered:
        text += paint("ln", str(index + 1)) + paint("se", mark)
    if offset is not None:
        text += paint("bn", str(offset)) + paint("se", mark)
    return text


def _byte_offsets(lines: list) -> list:
    """The byte offset where each line starts (-b)."""
    offsets, position = [], 0
    for line in lines:
        offsets.append(position)
        position += len(line.encode("utf-8", "surrogateescape")) + 1
    return offsets


class _Chooser:
    """Which files and directories a search takes: --include, --exclude (base names, or the
    operand as given), --exclude-dir; `follow`: -R follows symbolic links met in the walk (-r
    follows only those named on the command line)."""

    def __init__(self, include: list, exclude: list, exclude_dir: list, follow: bool):
        self.include, self.exclude, self.exclude_dir = include, exclude, exclude_dir
        self.follow = follow

    def takes_file(self, path: str, command_line: bool = False) -> bool:
        names = (path, path.rsplit("/", 1)[-1]) if command_line else (path.rsplit("/", 1)[-1],)
        if any(fnmatchcase(n, g) for g in self.exclude for n in names):
            return False
        if self.include and not any(fnmatchcase(n, g) for g in self.include for n in names):
            return False
        return True

    def takes_dir(self, path: str) -> bool:
        base = path.rstrip("/").rsplit("/", 1)[-1] or path
        return not any(fnmatchcase(base, g) or fnmatchcase(path, g) for g in self.exclude_dir)


def _inputs(ctx, cmd: str, operands: list, recursive: bool, quiet_errors: bool, chooser: _Chooser):
    """(name, text) of each input; text None for one that could not be read (reported unless
    -s). With -r, directories are searched through, their entries in name order (GNU grep
    takes them in the order the directory lists them, which depends on the filesystem)."""
    def report(name, reason):
        if not quiet_errors:
            ctx.err(f"{cmd}: {shown_operand(name)}: {reason}\n")
    for name in operands or ["-"]:
        if name != "-" and _is_dir(ctx, name):
            if not recursive:
                report(name, "Is a directory")
                yield name, None
            elif name == "." or chooser.takes_dir(name):
                yield from _walk(ctx, cmd, name, report, chooser)
            continue
        if name != "-" and not chooser.takes_file(name, True):
            continue
        yield from access.read_operands(ctx, [name], report)


def _is_dir(ctx, name: str) -> bool:
    try:
        return ctx.fs.stat(ctx.path(name)).is_dir
    except FsError:
        return False


def _walk(ctx, cmd: str, top: str, report, chooser: _Chooser, depth: int = 0):
    try:
        names = sorted(ctx.fs.listdir(ctx.path(top)))
    except FsError as e:
        report(top, e.strerror)
        yield top, None
        return
    for entry in names:
        path = (top.rstrip("/") + "/" if top != "/" else "/") + entry
        try:
            st = ctx.fs.stat(ctx.path(path), follow=False)
            if st.is_link:
                if not chooser.follow:
                    continue                    # -r: links met in the walk are skipped
                st = ctx.fs.stat(ctx.path(path))
        except FsError:
            continue
        if st.is_dir:
            if chooser.takes_dir(path) and depth < 64:     # (a looping link stops somewhere)
                yield from _walk(ctx, cmd, path, report, chooser, depth + 1)
        elif st.is_file and chooser.takes_file(path):
            yield from access.read_operands(ctx, [path], report)
