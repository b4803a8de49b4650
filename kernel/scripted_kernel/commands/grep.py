"""grep, egrep, fgrep: print lines of standard input that match patterns (GNU grep)."""
from __future__ import annotations

import regex

from ._options import UsageError, parse, run_guarded, split_lines
from ..shell.regexes import RegexError, RegexTimeout, finditer, matcher, translate

NAMES = ("grep", "egrep", "fgrep")
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


def run(sh, argv):
    cmd = argv[0]

    def body():
        opts, ops = parse(cmd, argv, short_flags="EFGPiyvcnoqswxhHzlLbUaIr", short_values="eABCmfd",
                          long_flags={"extended-regexp": "E", "fixed-strings": "F", "basic-regexp": "G",
                                      "perl-regexp": "P", "ignore-case": "i", "invert-match": "v",
                                      "count": "c", "line-number": "n", "only-matching": "o",
                                      "quiet": "q", "silent": "q", "no-messages": "s",
                                      "word-regexp": "w", "line-regexp": "x", "no-filename": "h",
                                      "with-filename": "H", "null-data": "z",
                                      "files-with-matches": "l", "files-without-match": "L",
                                      "byte-offset": "b", "text": "a", "recursive": "r",
                                      "no-ignore-case": "no-ignore-case"},
                          long_values={"regexp": "e", "after-context": "A", "before-context": "B",
                                       "context": "C", "max-count": "m", "file": "f", "color": "color",
                                       "colour": "color", "label": "label", "devices": "d",
                                       "binary-files": "binary-files"},
                          status=2, numeric_short="C")
        mode = "E" if cmd == "egrep" else "F" if cmd == "fgrep" else "G"
        for f in opts.flags:
            if f in "EFGP":
                mode = f
        if opts.has("f"):
            raise UsageError(f"{cmd}: {opts.get('f')}: file access is disabled in logic mode", 2)
        if opts.has("r"):
            raise UsageError(f"{cmd}: recursive search needs files; file access is disabled in logic mode", 2)
        patterns = []
        for p in opts.all("e"):
            patterns.extend(p.split("\n"))
        if not opts.has("e"):
            if not ops:
                raise UsageError(f"Usage: {cmd} [OPTION]... PATTERNS [FILE]...\n"
                                 f"Try '{cmd} --help' for more information.", 2)
            patterns.extend(ops[0].split("\n"))
            ops = ops[1:]
        for op in ops:
            if op != "-":
                if opts.has("s"):
                    return 2
                raise UsageError(f"{cmd}: {op}: file access is disabled in logic mode", 2)
        label = opts.get("label", STDIN_LABEL)
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
        lines = split_lines(sh.stdin.read_all(), sep)
        invert = opts.has("v")
        with_name = opts.has("H") and not opts.has("h")
        timeout = getattr(sh.limits, "regex_timeout_seconds", 2.0)
        find = matcher(rx, timeout)
        try:
            if invert:
                selected = [find(ln) is None for ln in lines]
            else:
                selected = [find(ln) is not None for ln in lines]
        except RegexTimeout:
            raise UsageError(f"{cmd}: regular expression too complex", 2) from None
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
            return 0 if count else 1
        if opts.has("l") or opts.has("L"):
            if (count > 0) == opts.has("l"):
                sh.out(label + sep if not opts.has("z") else label + "\0")
            return 0 if count else 1
        if opts.has("c"):
            sh.out((label + ":" if with_name else "") + str(count) + "\n")
            return 0 if count else 1
        out = []
        prefix_name = label + ":" if with_name else ""
        if opts.has("o"):
            if not invert:
                for k, ln in enumerate(lines):
                    if not selected[k]:
                        continue
                    for m in finditer(rx, ln, timeout=timeout):
                        if m.end() > m.start():
                            out.append(prefix_name + (f"{k + 1}:" if opts.has("n") else "") + m.group() + sep)
            sh.out("".join(out))
            return 0 if count else 1
        if not (context_before or context_after or with_name or opts.has("n")):
            out = [ln for ln, sel in zip(lines, selected) if sel]
            if out:
                sh.out(sep.join(out) + sep)
            return 0 if count else 1
        printed = -1
        pending_after = 0
        for k, ln in enumerate(lines):
            if selected[k]:
                start = max(k - context_before, printed + 1)
                if (context_before or context_after) and printed >= 0 and start > printed + 1:
                    out.append("--\n")
                for j in range(start, k):
                    out.append(_prefix(label if with_name else None, j, opts.has("n"), "-") + lines[j] + sep)
                out.append(_prefix(label if with_name else None, k, opts.has("n"), ":") + ln + sep)
                printed = k
                pending_after = context_after
            elif pending_after and k <= last_allowed + context_after:
                out.append(_prefix(label if with_name else None, k, opts.has("n"), "-") + ln + sep)
                printed = k
                pending_after -= 1
        sh.out("".join(out))
        return 0 if count else 1
    return run_guarded(cmd, sh, body)


def _prefix(name, index: int, numbered: bool, mark: str) -> str:
    text = ""
    if name is not None:
        text += name + mark
    if numbered:
        text += f"{index + 1}{mark}"
    return text
