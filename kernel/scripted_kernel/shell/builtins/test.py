"""test and [ (POSIX argument-count rules, then -a/-o/!/( ) precedence); shared with [[ ]]."""
from __future__ import annotations

import re

from ...fs import FsError
from .options import option_value
from .registry import builtin

FILE_TESTS = frozenset("-a -b -c -d -e -f -g -h -k -p -r -s -u -w -x -G -L -N -O -S".split())
UNARY = FILE_TESTS | {"-z", "-n", "-t", "-v", "-o", "-R"}
BINARY = frozenset("= == != < > -eq -ne -lt -le -gt -ge -nt -ot -ef =~".split())
_INT = re.compile(r"\s*[-+]?[0-9]+\s*\Z")


def _integer(sh, text: str, arith: bool) -> int:
    if arith:        # [[ ]] evaluates integer operands arithmetically
        return sh.arith_eval(text) if text.strip() else 0
    if _INT.match(text):
        return int(text)
    raise ValueError(f"{text}: integer expression expected")


def unary_test(sh, op: str, operand: str) -> bool:
    if op == "-z":
        return operand == ""
    if op == "-n":
        return operand != ""
    if op == "-v":
        if operand.endswith("]") and "[" in operand:
            name, _, key = operand[:-1].partition("[")
            if key in ("@", "*"):
                var = sh.lookup(name)
                return var is not None and bool(var.values())
            return sh.get_element(name, sh.subscript(key)) is not None
        var = sh.lookup(operand)
        return var is not None and var.value is not None and \
            (type(var.value) is str or var.scalar() is not None)
    if op == "-o":
        value = option_value(sh, operand)
        return bool(value)
    if op == "-R":
        var = sh.lookup_raw(operand)
        return var is not None and bool(var.attrs & 32)
    if op == "-t":
        return False
    return file_test(sh, op, operand)


def file_test(sh, op: str, operand: str) -> bool:
    """-e -f -d ... on the shell's filesystem (in logic mode no file exists) and its devices."""
    if operand in ("/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/zero", "/dev/urandom",
                   "/dev/random"):
        return op in ("-e", "-a", "-c", "-r", "-w")
    if operand.startswith("/dev/fd/"):
        number = operand[8:]
        if not (number.isascii() and number.isdigit()):
            return False
        if int(number) < 3:
            return op in ("-e", "-a", "-c", "-r", "-w")
        stream = sh.extra_fds.get(int(number))
        if stream is None:
            return False
        from ..jobs import ProcessInput, ProcessOutput
        if type(stream) in (ProcessInput, ProcessOutput):     # a process substitution: a pipe
            return op in ("-e", "-a", "-p", "-r", "-w")
        return op in ("-e", "-a", "-f", "-r", "-w")
    if not sh.fs.enabled or not operand:
        return False
    path = sh.path(operand)
    if op in ("-r", "-w", "-x"):
        return sh.fs.access(path, op[1])
    try:
        st = sh.fs.stat(path, follow=op not in ("-h", "-L"))
    except FsError:
        return False
    if op in ("-e", "-a"):
        return True
    if op == "-f":
        return st.is_file
    if op == "-d":
        return st.is_dir
    if op in ("-h", "-L"):
        return st.is_link
    if op == "-s":
        return st.size > 0
    if op == "-c":
        return st.kind == "c"
    if op in ("-O", "-G"):
        return True                 # the script owns every file
    if op == "-k":
        return bool(st.mode & 0o1000)
    if op == "-u":
        return bool(st.mode & 0o4000)
    if op == "-g":
        return bool(st.mode & 0o2000)
    return False                    # -b -p -S -N: no block devices, fifos or sockets


def _compare_files(sh, op: str, left: str, right: str) -> bool:
    def stat(name):
        if not sh.fs.enabled:
            return None
        try:
            return sh.fs.stat(sh.path(name))
        except FsError:
            return None
    a, b = stat(left), stat(right)
    if op == "-ef":
        return a is not None and b is not None and a.ino == b.ino
    if op == "-ot":
        a, b = b, a
    return a is not None and (b is None or a.mtime > b.mtime)


def binary_test(sh, op: str, left: str, right: str, arith: bool = False) -> bool:
    if op in ("=", "=="):
        return left == right
    if op == "!=":
        return left != right
    if op == "<":
        return left < right
    if op == ">":
        return left > right
    if op in ("-nt", "-ot", "-ef"):
        return _compare_files(sh, op, left, right)
    a = _integer(sh, left, arith)
    b = _integer(sh, right, arith)
    if op == "-eq":
        return a == b
    if op == "-ne":
        return a != b
    if op == "-lt":
        return a < b
    if op == "-le":
        return a <= b
    if op == "-gt":
        return a > b
    if op == "-ge":
        return a >= b
    raise ValueError(f"{op}: binary operator expected")


class _TestParser:
    def __init__(self, sh, args):
        self.sh = sh
        self.args = args
        self.i = 0

    def parse(self) -> bool:
        result = self.expr_or()
        if self.i < len(self.args):
            raise ValueError(f"{self.args[self.i]}: unexpected argument" if self.args[self.i] != ")"
                             else "too many arguments")
        return result

    def expr_or(self):
        left = self.expr_and()
        while self.i < len(self.args) and self.args[self.i] == "-o":
            self.i += 1
            right = self.expr_and()
            left = left or right
        return left

    def expr_and(self):
        left = self.expr_not()
        while self.i < len(self.args) and self.args[self.i] == "-a":
            self.i += 1
            right = self.expr_not()
            left = left and right
        return left

    def expr_not(self):
        if self.i < len(self.args) and self.args[self.i] == "!":
            self.i += 1              # bash: a ! (or a `(`) needs something after it
            return not self.expr_not()
        return self.primary()

    def primary(self):
        args, i = self.args, self.i
        n = len(args)
        if i >= n:
            raise ValueError("argument expected")
        a = args[i]
        if a == "(":
            if i + 1 >= n:
                raise ValueError("argument expected")
            self.i += 1
            value = self.expr_or()
            if self.i >= n or args[self.i] != ")":
                raise ValueError("`)' expected")
            self.i += 1
            return value
        if i + 2 < n and args[i + 1] in BINARY and args[i + 1] != "=~":
            self.i += 3
            return binary_test(self.sh, args[i + 1], a, args[i + 2])
        if a in UNARY and i + 1 < n:
            self.i += 2
            return unary_test(self.sh, a, args[i + 1])
        self.i += 1
        return a != ""


def evaluate(sh, args: list) -> bool:
    """POSIX test: decisions by the number of arguments first, as bash does."""
    n = len(args)
    if n == 0:
        return False
    if n == 1:
        return args[0] != ""
    if n == 2:
        if args[0] == "!":
            return args[1] == ""
        if args[0] in UNARY:
            return unary_test(sh, args[0], args[1])
        raise ValueError(f"{args[0]}: unary operator expected")
    if n == 3:
        if args[1] in BINARY and args[1] != "=~":
            return binary_test(sh, args[1], args[0], args[2])
        if args[0] == "!":
            return not evaluate(sh, args[1:])
        if args[0] == "(" and args[2] == ")":
            return args[1] != ""
        if args[1] in ("-a", "-o"):
            return (args[0] != "" and args[2] != "") if args[1] == "-a" else (args[0] != "" or args[2] != "")
        raise ValueError(f"{args[1]}: binary operator expected")
    if n == 4:
        if args[0] == "!":
            return not evaluate(sh, args[1:])
        if args[0] == "(" and args[3] == ")":
            return evaluate(sh, args[1:3])
    return _TestParser(sh, args).parse()


@builtin("test")
def test(sh, argv):
    try:
        return 0 if evaluate(sh, argv[1:]) else 1
    except ValueError as e:
        sh.error(f"test: {e}")
        return 2
    except Exception as e:            # arithmetic failures inside -v a[expr]
        sh.error(f"test: {getattr(e, 'message', e)}")
        return 2


@builtin("[")
def bracket(sh, argv):
    if argv[-1] != "]":
        sh.error("[: missing `]'")
        return 2
    try:
        return 0 if evaluate(sh, argv[1:-1]) else 1
    except ValueError as e:
        sh.error(f"[: {e}")
        return 2
