"""diff (normal and unified formats) and cmp: compare files."""
from __future__ import annotations

import time
from typing import Optional

from ..fs import FsError, access
from ._options import UsageError, bad_usage, parse
from .registry import Usage, command



class Myers:
    """The shortest edit script by Myers' O(ND) algorithm, preferring deletions before
    insertions as GNU diff does, so hunks come out as GNU's. `get_opcodes` in difflib's form;
    very long or very different inputs fall back to difflib's matcher."""

    MAX_COST = 4_000_000          # (N + M) * D steps before falling back

    def __init__(self, a: list, b: list):
        self.a, self.b = a, b
        self._opcodes: Optional[list] = None

    def get_opcodes(self) -> list:
        if self._opcodes is None:
            edits = self._edits()
            if edits is None:
                import difflib
                self._opcodes = difflib.SequenceMatcher(None, self.a, self.b, autojunk=False).get_opcodes()
            else:
                self._opcodes = _opcodes(edits)
        return self._opcodes

    def get_grouped_opcodes(self, n: int = 3):
        import difflib
        # difflib's grouping, borrowed: it needs nothing of its matcher but get_opcodes()
        return difflib.SequenceMatcher.get_grouped_opcodes(self, n)  # type: ignore[arg-type]

    def _edits(self):
        a, b = self.a, self.b
        n, m = len(a), len(b)
        v = {1: 0}
        trace = []
        for d in range(n + m + 1):
            if d * (n + m) > self.MAX_COST:
                return None
            trace.append(dict(v))
            for k in range(-d, d + 1, 2):
                if k == -d or (k != d and v[k - 1] < v[k + 1]):
                    x = v[k + 1]
                else:
                    x = v[k - 1] + 1
                y = x - k
                while x < n and y < m and a[x] == b[y]:
                    x += 1
                    y += 1
                v[k] = x
                if x >= n and y >= m:
                    return self._backtrack(trace, n, m)
        return None

    @staticmethod
    def _backtrack(trace, x, y) -> list:
        edits = []
        for d in range(len(trace) - 1, -1, -1):
            v = trace[d]
            k = x - y
            prev_k = k + 1 if k == -d or (k != d and v[k - 1] < v[k + 1]) else k - 1
            prev_x = v[prev_k]
            prev_y = prev_x - prev_k
            while x > prev_x and y > prev_y:
                edits.append(("=", x - 1, y - 1))
                x, y = x - 1, y - 1
            if d > 0:
                edits.append(("-", prev_x, prev_y) if x > prev_x else ("+", prev_x, prev_y))
            x, y = prev_x, prev_y
        edits.reverse()
        return edits


def _opcodes(edits: list) -> list:
    """difflib-style opcodes from a list of ("=" | "-" | "+", i, j) edits."""
    out, i, j, k = [], 0, 0, 0
    while k < len(edits):
        kind = edits[k][0]
        i1, j1 = i, j
        if kind == "=":
            while k < len(edits) and edits[k][0] == "=":
                i, j, k = i + 1, j + 1, k + 1
            out.append(("equal", i1, i, j1, j))
            continue
        while k < len(edits) and edits[k][0] != "=":
            if edits[k][0] == "-":
                i += 1
            else:
                j += 1
            k += 1
        tag = "replace" if i > i1 and j > j1 else ("delete" if i > i1 else "insert")
        out.append((tag, i1, i, j1, j))
    return out


def _read(ctx, cmd: str, name: str) -> str:
    try:
        return ctx.stdin.read_all() if name == "-" else access.read_text(ctx, name)
    except FsError as e:
        raise UsageError(f"{cmd}: {name}: {e.strerror}", 2) from None


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def _span(lo: int, hi: int) -> str:
    """Lines lo+1..hi as diff numbers them (an empty range is the line before it)."""
    if hi - lo <= 1:
        return str(hi if hi > lo else lo)
    return f"{lo + 1},{hi}"


def _show(prefix: str, line: str) -> str:
    if line.endswith("\n"):
        return prefix + line
    return prefix + line + "\n\\ No newline at end of file\n"


def _normal(a: list, b: list, opcodes) -> str:
    out = []
    for tag, i1, i2, j1, j2 in opcodes:
        if tag == "equal":
            continue
        letter = {"replace": "c", "delete": "d", "insert": "a"}[tag]
        out.append(f"{_span(i1, i2)}{letter}{_span(j1, j2)}\n")
        out.extend(_show("< ", line) for line in a[i1:i2])
        if tag == "replace":
            out.append("---\n")
        out.extend(_show("> ", line) for line in b[j1:j2])
    return "".join(out)


def _stamp(ctx, name: str) -> str:
    try:
        mtime = ctx.fs.stat(ctx.path(name)).mtime if name != "-" else ctx.budget.now()
    except FsError:
        mtime = ctx.budget.now()
    local = time.localtime(mtime)
    return time.strftime("%Y-%m-%d %H:%M:%S", local) + f".{int(mtime % 1 * 1e9):09d} " + \
        time.strftime("%z", local)


def _unified(ctx, names: tuple, a: list, b: list, matcher, context: int, labels: list) -> str:
    out = [f"--- {labels[0] if labels else names[0] + chr(9) + _stamp(ctx, names[0])}\n",
           f"+++ {labels[1] if len(labels) > 1 else names[1] + chr(9) + _stamp(ctx, names[1])}\n"]
    for group in matcher.get_grouped_opcodes(context):
        i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        old = f"{i1 + 1 if i2 > i1 else i1}" + (f",{i2 - i1}" if i2 - i1 != 1 else "")
        new = f"{j1 + 1 if j2 > j1 else j1}" + (f",{j2 - j1}" if j2 - j1 != 1 else "")
        out.append(f"@@ -{old} +{new} @@\n")
        for tag, k1, k2, m1, m2 in group:
            if tag == "equal":
                out.extend(_show(" ", line) for line in a[k1:k2])
                continue
            out.extend(_show("-", line) for line in a[k1:k2])
            out.extend(_show("+", line) for line in b[m1:m2])
    return "".join(out)


def _diff(ctx, argv):
    opts, ops = parse("diff", argv, short_flags="uqsiwbBtNa", short_values="UL",
                      long_flags={"unified": "u", "brief": "q", "report-identical-files": "s",
                                  "ignore-case": "i", "ignore-all-space": "w",
                                  "ignore-space-change": "b", "ignore-blank-lines": "B", "text": "a"},
                      long_values={"label": "L"}, status=2)
    if len(ops) != 2:
        raise bad_usage("diff", "missing operand after '" + ops[0] + "'" if ops else "missing operand", 2)
    texts = [_read(ctx, "diff", name) for name in ops]
    a, b = _lines(texts[0]), _lines(texts[1])

    def key(line: str) -> str:
        if opts.has("w"):
            line = "".join(line.split())
        elif opts.has("b"):
            line = " ".join(line.split())
        return line.lower() if opts.has("i") else line
    ka, kb = [key(x) for x in a], [key(x) for x in b]
    if opts.has("B"):
        ka = [k if k.strip() else "" for k in ka]
        kb = [k if k.strip() else "" for k in kb]
    matcher = Myers(ka, kb)
    same = all(tag == "equal" for tag, *_ in matcher.get_opcodes())
    if same:
        if opts.has("s"):
            ctx.out(f"Files {ops[0]} and {ops[1]} are identical\n")
        return 0
    if opts.has("q"):
        ctx.out(f"Files {ops[0]} and {ops[1]} differ\n")
    elif opts.has("u") or opts.has("U"):
        context = int(opts.get("U", "3")) if opts.has("U") else 3
        ctx.out(_unified(ctx, tuple(ops), a, b, matcher, context, opts.all("L")))
    else:
        ctx.out(_normal(a, b, matcher.get_opcodes()))
    return 1


def _cmp(ctx, argv):
    opts, ops = parse("cmp", argv, short_flags="sbl", long_flags={"silent": "s", "quiet": "s"},
                      status=2)
    if not ops:
        raise bad_usage("cmp", "missing operand", 2)
    names = ops + ["-"] if len(ops) == 1 else ops[:2]
    data = [_read(ctx, "cmp", name).encode("utf-8", "surrogateescape") for name in names]
    line = 1
    for k, (x, y) in enumerate(zip(*data)):
        if x != y:
            if not opts.has("s"):
                ctx.out(f"{names[0]} {names[1]} differ: byte {k + 1}, line {line}\n")
            return 1
        if x == 10:
            line += 1
    if len(data[0]) != len(data[1]):
        if not opts.has("s"):
            shorter = 0 if len(data[0]) < len(data[1]) else 1
            n = len(data[shorter])
            lines = data[shorter].count(10) + (0 if data[shorter].endswith(b"\n") else 1)
            where = f"after byte {n}, line {lines}" if n else "which is empty"
            ctx.err(f"cmp: EOF on {names[shorter]} {where}\n")
        return 1
    return 0


USAGES = {
    "diff": Usage("[OPTION]... FILES", "Compare FILES line by line.", (
        "-q, --brief                  report only when files differ",
        "-s, --report-identical-files  report when two files are the same",
        "-u, -U NUM, --unified[=NUM]  output NUM (default 3) lines of unified context",
        "-i, --ignore-case            ignore case differences in file contents",
        "-b, --ignore-space-change    ignore changes in the amount of white space",
        "-w, --ignore-all-space       ignore all white space",
        "-B, --ignore-blank-lines     ignore changes where lines are all blank",
        "-a, --text                   treat all files as text",
        "    --label LABEL            use LABEL instead of file name and timestamp",
        "-N, -t                       (accepted)")),
    "cmp": Usage("[OPTION]... FILE1 [FILE2]", "Compare two files byte by byte.", (
        "-b                       print differing bytes",
        "-l                       output byte numbers and differing byte values",
        "-s, --quiet, --silent    suppress all normal output")),
}


@command("diff", "cmp", needs_files=True, usage=USAGES)
def run(ctx, argv):
    impl = _diff if argv[0] == "diff" else _cmp
    return impl(ctx, argv)
