"""find: walk directories and evaluate an expression (GNU find's tests and actions)."""
from __future__ import annotations

from typing import Optional

from ..fs import FsError
from ..base import patterns
from ._options import UsageError, shown
from .registry import Usage, command

class _Parser:
    """The expression: `a b` and `a -a b` are and, `-o` or, `!`/-not, parentheses."""

    def __init__(self, args: list):
        self.args = args
        self.i = 0
        self.has_action = False
        self.maxdepth: Optional[int] = None
        self.mindepth = 0

    def parse(self):
        if not self.args:
            return lambda ctx: True
        node = self.or_expr()
        if self.i < len(self.args):
            raise UsageError(f"find: paths must precede expression: `{self.args[self.i]}'")
        return node

    def or_expr(self):
        left = self.and_expr()
        while self.i < len(self.args) and self.args[self.i] in ("-o", "-or"):
            self.i += 1
            right = self.and_expr()
            left = (lambda a, b: lambda ctx: a(ctx) or b(ctx))(left, right)
        return left

    def and_expr(self):
        left = self.not_expr()
        while self.i < len(self.args) and self.args[self.i] not in ("-o", "-or", ")"):
            if self.args[self.i] in ("-a", "-and"):
                self.i += 1
            right = self.not_expr()
            left = (lambda a, b: lambda ctx: a(ctx) and b(ctx))(left, right)
        return left

    def not_expr(self):
        if self.i < len(self.args) and self.args[self.i] in ("!", "-not"):
            self.i += 1
            inner = self.not_expr()
            return lambda ctx: not inner(ctx)
        if self.i < len(self.args) and self.args[self.i] == "(":
            self.i += 1
            inner = self.or_expr()
            if self.i >= len(self.args) or self.args[self.i] != ")":
                raise UsageError("find: invalid expression; I was expecting to find a ')' somewhere "
                                 "but did not see one.")
            self.i += 1
            return inner
        return self.primary()

    def take(self, name: str) -> str:
        if self.i >= len(self.args):
            raise UsageError(f"find: missing argument to `{name}'")
        value = self.args[self.i]
        self.i += 1
        return value

    def primary(self):
        name = self.args[self.i]
        self.i += 1
        if name in ("-name", "-iname"):
            pattern, nocase = self.take(name), name == "-iname"
            return lambda ctx: patterns.glob_match(pattern, ctx.basename, nocase)
        if name in ("-path", "-ipath", "-wholename"):
            pattern, nocase = self.take(name), name == "-ipath"
            return lambda ctx: patterns.glob_match(pattern, ctx.path, nocase)
        if name == "-type":
            kinds = self.take(name).replace(",", "")
            wanted = {"f": "-", "d": "d", "l": "l", "c": "c"}
            if any(k not in "fdlcbps" for k in kinds):
                raise UsageError(f"find: Unknown argument to -type: {kinds}")
            return lambda ctx: any(ctx.stat.kind == wanted.get(k) for k in kinds)
        if name in ("-maxdepth", "-mindepth"):
            value = self.take(name)
            if not value.isdigit():
                raise UsageError(f"find: Expected a positive decimal integer argument to {name}, but got `{value}'")
            if name == "-maxdepth":
                self.maxdepth = int(value)
            else:
                self.mindepth = int(value)
            return lambda ctx: True
        if name == "-empty":
            return lambda ctx: ctx.is_empty()
        if name == "-size":
            return _size_test(self.take(name))
        if name in ("-mtime", "-mmin"):
            return _time_test(self.take(name), 86400 if name == "-mtime" else 60)
        if name == "-newer":
            ref = self.take(name)
            return lambda ctx: ctx.stat.mtime > ctx.walker.reference(ref)
        if name == "-perm":
            return _perm_test(self.take(name))
        if name in ("-user", "-group"):
            self.take(name)
            return lambda ctx: True
        if name in ("-print", "-print0"):
            self.has_action = True
            end = "\n" if name == "-print" else "\0"
            return lambda ctx: ctx.walker.emit(ctx.path + end)
        if name == "-printf":
            self.has_action = True
            fmt = self.take(name)
            return lambda ctx: ctx.walker.emit(_printf(fmt, ctx))
        if name == "-delete":
            self.has_action = True
            self.depth_first = True
            return lambda ctx: ctx.walker.delete(ctx)
        if name in ("-exec", "-execdir", "-ok"):
            self.has_action = True
            command = []
            while self.i < len(self.args) and self.args[self.i] not in (";", "+"):
                command.append(self.args[self.i])
                self.i += 1
            if self.i >= len(self.args) or not command:
                raise UsageError(f"find: missing argument to `{name}'")
            batch = self.args[self.i] == "+"
            self.i += 1
            return lambda ctx: ctx.walker.execute(command, ctx, batch)
        if name in ("-prune",):
            return lambda ctx: ctx.prune()
        if name in ("-true", "-false"):
            return lambda ctx: name == "-true"
        if name in ("-quit",):
            return lambda ctx: ctx.walker.quit()
        if name in ("-depth", "-follow", "-xdev", "-mount", "-noleaf", "-daystart"):
            if name == "-depth":
                self.depth_first = True
            return lambda ctx: True
        raise UsageError(f"find: unknown predicate `{name}'")

    depth_first = False


def _size_test(text: str):
    sign = text[:1] if text[:1] in "+-" else ""
    body = text[len(sign):]
    unit = body[-1] if body and not body[-1].isdigit() else "b"
    digits = body[:-1] if unit != "b" or (body and not body[-1].isdigit()) else body
    if not digits.isdigit():
        raise UsageError(f"find: invalid argument `{text}' to `-size'")
    n = int(digits)
    size_of = {"c": 1, "w": 2, "b": 512, "k": 1024, "M": 1 << 20, "G": 1 << 30}.get(unit)
    if size_of is None:
        raise UsageError(f"find: invalid -size type `{unit}'")

    def test(ctx):
        units = -(-ctx.stat.size // size_of)       # rounded up, as GNU find does
        return units > n if sign == "+" else units < n if sign == "-" else units == n
    return test


def _time_test(text: str, unit: int):
    sign = text[:1] if text[:1] in "+-" else ""
    if not text[len(sign):].isdigit():
        raise UsageError(f"find: invalid argument `{text}'")
    n = int(text[len(sign):])

    def test(entry):
        age = int((entry.walker.ctx.budget.now() - entry.stat.mtime) // unit)
        return age > n if sign == "+" else age < n if sign == "-" else age == n
    return test


def _perm_test(text: str):
    sign = text[:1] if text[:1] in "-/" else ""
    mode = int(text[len(sign):], 8)

    def test(ctx):
        m = ctx.stat.mode & 0o7777
        return (m & mode) == mode if sign == "-" else bool(m & mode) if sign == "/" else m == mode
    return test


def _printf(fmt: str, ctx) -> str:
    out, i = [], 0
    escapes = {"n": "\n", "t": "\t", "0": "\0", "\\": "\\"}
    while i < len(fmt):
        c = fmt[i]
        if c == "\\" and i + 1 < len(fmt):
            out.append(escapes.get(fmt[i + 1], fmt[i + 1]))
            i += 2
            continue
        if c == "%" and i + 1 < len(fmt):
            d = fmt[i + 1]
            out.append({"p": ctx.path, "f": ctx.basename, "s": str(ctx.stat.size),
                        "d": str(ctx.depth), "m": f"{ctx.stat.mode & 0o7777:o}",
                        "y": {"-": "f"}.get(ctx.stat.kind, ctx.stat.kind),
                        "h": ctx.path.rsplit("/", 1)[0] if "/" in ctx.path else ".",
                        "P": ctx.path[len(ctx.start):].lstrip("/"), "%": "%",
                        "l": ctx.stat.target}.get(d, "%" + d))
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


class _Quit(Exception):
    pass


class _Entry:
    __slots__ = ("walker", "path", "stat", "depth", "start", "pruned")

    def __init__(self, walker, path, stat, depth, start):
        self.walker, self.path, self.stat, self.depth, self.start = walker, path, stat, depth, start
        self.pruned = False

    @property
    def basename(self) -> str:
        return self.path.rstrip("/").rsplit("/", 1)[-1] or "/"

    def is_empty(self) -> bool:
        if self.stat.kind == "d":
            try:
                return not self.walker.ctx.fs.listdir(self.walker.ctx.path(self.path))
            except FsError:
                return False
        return self.stat.kind == "-" and self.stat.size == 0

    def prune(self) -> bool:
        self.pruned = True
        return True


class _Walker:
    def __init__(self, ctx):
        self.ctx = ctx
        self.out: list[str] = []
        self.status = 0
        self.batches: dict = {}
        self._references: dict = {}

    def emit(self, text: str) -> bool:
        self.ctx.out(text)
        return True

    def quit(self):
        raise _Quit()

    def reference(self, name: str) -> float:
        if name not in self._references:
            try:
                self._references[name] = self.ctx.fs.stat(self.ctx.path(name)).mtime
            except FsError as e:
                raise UsageError(f"find: '{name}': {e.strerror}") from None
        return self._references[name]

    def delete(self, ctx) -> bool:
        try:
            if ctx.stat.kind == "d":
                self.ctx.fs.rmdir(self.ctx.path(ctx.path))
            else:
                self.ctx.fs.unlink(self.ctx.path(ctx.path))
            return True
        except FsError as e:
            self.ctx.err(f"find: cannot delete '{shown(ctx.path)}': {e.strerror}\n")
            self.status = 1
            return False

    def execute(self, command: list, ctx, batch: bool) -> bool:
        if batch:
            self.batches.setdefault(tuple(command), []).append(ctx.path)
            return True
        argv = [ctx.path if a == "{}" else a.replace("{}", ctx.path) for a in command]
        return self._run(argv) == 0

    def _run(self, argv: list) -> int:
        status = self.ctx.run(argv)
        if status is None:
            self.ctx.err(f"find: ‘{shown(argv[0])}’: No such file or directory\n")
            return 1
        return status

    def flush_batches(self):
        for argv, paths in self.batches.items():
            k = argv.index("{}") if "{}" in argv else len(argv)
            if self._run(list(argv[:k]) + paths + list(argv[k + 1:])) != 0:
                self.status = 1
        self.batches.clear()

    def walk(self, start: str, expr, parser: _Parser):
        try:
            stat = self.ctx.fs.stat(self.ctx.path(start), follow=False)
        except FsError as e:
            self.ctx.err(f"find: '{shown(start)}': {e.strerror}\n")
            self.status = 1
            return
        self._visit(start, stat, 0, start, expr, parser)

    def _visit(self, path, stat, depth, start, expr, parser):
        self.ctx.budget.check()
        ctx = _Entry(self, path, stat, depth, start)
        in_range = depth >= parser.mindepth and (parser.maxdepth is None or depth <= parser.maxdepth)
        matched = False
        if in_range and not parser.depth_first:
            matched = expr(ctx)
            if matched and not parser.has_action:
                self.emit(path + "\n")
        if stat.kind == "d" and not ctx.pruned and (parser.maxdepth is None or depth < parser.maxdepth):
            try:
                names = sorted(self.ctx.fs.listdir(self.ctx.path(path)))
            except FsError as e:
                self.ctx.err(f"find: '{shown(path)}': {e.strerror}\n")
                self.status = 1
                names = []
            for name in names:
                child = (path if path.endswith("/") else path + "/") + name
                try:
                    child_stat = self.ctx.fs.stat(self.ctx.path(child), follow=False)
                except FsError:
                    continue
                self._visit(child, child_stat, depth + 1, start, expr, parser)
        if in_range and parser.depth_first:
            ctx.stat = stat
            matched = expr(ctx)
            if matched and not parser.has_action:
                self.emit(path + "\n")


USAGE = Usage("[-H] [-L] [-P] [starting-point...] [expression]", "Search for files in a directory hierarchy.", (
    "tests: -name -iname -path -ipath -wholename -type -maxdepth -mindepth -size -mtime -mmin",
    "       -newer -perm -user -group -links -regex -empty -true -false",
    "actions: -print -print0 -printf -delete -exec -execdir -ok -prune",
    "operators: ! -not -a -and -o -or ( )"))


@command("find", needs_files=True, usage=USAGE)
def run(ctx, argv):
    args = argv[1:]
    while args and args[0] in ("-H", "-L", "-P"):
        args = args[1:]
    k = 0
    while k < len(args) and not (args[k].startswith("-") and len(args[k]) > 1 or args[k] in ("!", "(")):
        k += 1
    starts, expression = args[:k] or ["."], args[k:]
    parser = _Parser(expression)
    expr = parser.parse()
    walker = _Walker(ctx)
    try:
        for start in starts:
            walker.walk(start, expr, parser)
    except _Quit:
        pass
    walker.flush_batches()
    return walker.status
