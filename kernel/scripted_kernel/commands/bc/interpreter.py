"""Running bc's trees: variables and arrays with bc's dynamic scoping (a function's parameters
and autos hide the caller's names until it returns), the special variables, output in any
base broken into lines of BC_LINE_LENGTH, and GNU bc's runtime errors and warnings.

Loops look at the clock (and every so often at memory), calls are bounded by
max_function_depth, numbers by their size (numbers.check_digits), and output goes out as it
grows: a script cannot make bc run or grow past the execution's budget."""
from __future__ import annotations

import re
from typing import Callable

from ...base.errors import LimitExceeded
from . import numbers as N
from .numbers import BcError, Num
from .parser import Function

ZERO = Num(0, 0)
ONE = Num(1, 0)
SCALE_MAX = 2147483647
FLUSH_EVERY = 1024        # output pieces gathered before they go out
MEMORY_EVERY = 256        # loop passes between two reads of the process's memory


class Break(Exception):
    pass


class Continue(Exception):
    pass


class Return(Exception):
    def __init__(self, value: Num):
        super().__init__()
        self.value = value


class Halt(Exception):
    pass


def _truth(x: int) -> Num:
    return ONE if x else ZERO


class Interpreter:
    def __init__(self, ctx, line_length: int = 70):
        self.ctx = ctx
        self.out_parts: list = []
        self.column = 0
        self.line_length = line_length
        self.check_stop = ctx.budget.check_stop
        self.passes = 0                  # loop passes, for the memory check every MEMORY_EVERY
        self.scale = 0
        self.ibase = 10
        self.obase = 10
        self.last = ZERO
        self.variables: dict = {}        # name -> stack of Num (the global at the bottom)
        self.arrays: dict = {}           # name -> stack of {index: Num}
        self.functions: dict = {}        # name -> Function or a Python callable (the -l library)
        self.frames: list = ["(main)"]
        self.steps = 0
        self.max_depth = ctx.limits.max_function_depth
        self.read_input: Callable = lambda: None

    # -------------------------------------------------------------- output
    def write(self, text: str):
        """Text as bc's out_char writes it: the character that would reach column line_length-1
        starts a new line after a backslash (so a broken line holds line_length-2 characters);
        a line already past that column (a string's) is not broken."""
        width = self.line_length
        if not width:
            self._add(text)
            return
        pieces = []
        for k, segment in enumerate(text.split("\n")):
            if k:
                pieces.append("\n")
                self.column = 0
            room = width - 2 - self.column
            if room < 0 or len(segment) <= room:
                pieces.append(segment)
                self.column += len(segment)
                continue
            rest = segment[room:]
            pieces.append(segment[:room] + "\\\n")
            lines = [rest[at:at + width - 2] for at in range(0, len(rest), width - 2)]
            pieces.append("\\\n".join(lines))
            self.column = len(lines[-1])
        self._add("".join(pieces))

    def write_string(self, text: str):
        """A string is written as it is; the column still counts its characters."""
        self._add(text)
        newline = text.rfind("\n")
        self.column = len(text) - newline - 1 if newline >= 0 else self.column + len(text)

    def _add(self, text: str):
        """Output of one item is gathered, and goes out once there is much of it (a loop that
        prints without end meets the output limit)."""
        self.out_parts.append(text)
        if len(self.out_parts) >= FLUSH_EVERY:
            self.flush()

    def flush(self):
        if self.out_parts:
            self.ctx.out("".join(self.out_parts))
            self.out_parts = []

    def print_number(self, x: Num):
        self.write(N.format_number(x, self.obase))

    # -------------------------------------------------------------- errors
    def where(self) -> str:
        return f"(func={self.frames[-1]}, adr={self.steps})"

    def warn(self, message: str):
        self.flush()
        self.ctx.err(f"Runtime warning {self.where()}: {message}\n")

    def runtime_error(self, e: BcError):
        self.flush()
        self.ctx.err(f"Runtime error {self.where()}: {e.message}\n")

    # -------------------------------------------------------------- items
    def define(self, function: Function):
        self.functions[function.name] = function

    def run_statements(self, statements: list) -> bool:
        """Run one input item; False when bc is to stop (halt)."""
        self.frames = ["(main)"]
        self.steps = 0
        try:
            for statement in statements:
                self.execute(statement)
        except BcError as e:
            self.runtime_error(e)
        except (Break, Continue):
            pass
        except Return:
            pass
        except Halt:
            self.flush()
            return False
        except RecursionError:
            raise LimitExceeded("max_function_depth",
                                "bc: function calls nested too deeply (max_function_depth)") from None
        self.flush()
        return True

    # -------------------------------------------------------------- statements
    def execute(self, s):
        kind = s[0]
        if kind == "expr":
            value = self.evaluate(s[1])
            if s[2]:
                self.print_number(value)
                self.write("\n")
                self.last = value
        elif kind == "str":
            self.write_string(s[1])
        elif kind == "block":
            for inner in s[1]:
                self.execute(inner)
        elif kind == "if":
            if self.evaluate(s[1]).n:
                self.execute(s[2])
            elif s[3] is not None:
                self.execute(s[3])
        elif kind == "while":
            self.loop(s[1], None, s[2])
        elif kind == "for":
            if s[1] is not None:
                self.evaluate(s[1])
            self.loop(s[2], s[3], s[4])
        elif kind == "print":
            self.print_items(s[1])
        elif kind == "return":
            raise Return(ZERO if s[1] is None else self.evaluate(s[1]))
        elif kind == "break":
            raise Break()
        elif kind == "continue":
            raise Continue()
        elif kind == "halt":
            raise Halt()
        elif kind == "limits":
            self.write_string(LIMITS)
        elif kind == "warranty":
            self.write_string(WARRANTY)

    def loop(self, condition, step, body):
        while condition is None or self.evaluate(condition).n:
            self.passes += 1
            if self.passes % MEMORY_EVERY:
                self.check_stop()          # cheap; a body may hold one long operation
            else:
                self.ctx.budget.check_clock()   # and memory: arrays and numbers grow in loops
            try:
                self.execute(body)
            except Break:
                return
            except Continue:
                pass
            if step is not None:
                self.evaluate(step)

    def print_items(self, items: list):
        for kind, value in items:
            if kind == "str":
                self.write_string(_print_escapes(value))
            else:
                number = self.evaluate(value)
                self.print_number(number)
                self.last = number

    # -------------------------------------------------------------- expressions
    def evaluate(self, e) -> Num:
        self.steps += 1
        kind = e[0]
        if kind == "num":
            return N.parse_number(e[1], self.ibase)
        if kind == "const":
            return e[1]
        if kind == "bin":
            return self.binary(e[1], self.evaluate(e[2]), self.evaluate(e[3]))
        if kind == "var":
            stack = self.variables.get(e[1])
            return stack[-1] if stack else ZERO
        if kind == "assign":
            return self.assign(e[1], e[2], e[3])
        if kind == "rel":
            c = self.evaluate(e[2]).compare(self.evaluate(e[3]))
            return _truth({"==": c == 0, "!=": c != 0, "<": c < 0, "<=": c <= 0,
                           ">": c > 0, ">=": c >= 0}[e[1]])
        if kind == "paren":
            return self.evaluate(e[1])
        if kind == "neg":
            value = self.evaluate(e[1])
            return Num(-value.n, value.scale)
        if kind == "elem":
            return self.element(e[1], self.evaluate(e[2]))
        if kind == "special":
            return self.special(e[1])
        if kind in ("pre", "post"):
            return self.increment(kind, e[1], e[2])
        if kind == "not":
            return _truth(not self.evaluate(e[1]).n)
        if kind == "and":
            return _truth(self.evaluate(e[1]).n and self.evaluate(e[2]).n)
        if kind == "or":
            return _truth(self.evaluate(e[1]).n or self.evaluate(e[2]).n)
        if kind == "call":
            return self.call(e[1], e[2])
        if kind == "builtin":
            return self.builtin(e[1], self.evaluate(e[2]))
        if kind == "read":
            return self.read()
        raise BcError(f"unknown expression {kind}")

    def binary(self, op: str, a: Num, b: Num) -> Num:
        if op == "+":
            return N.add(a, b)
        if op == "-":
            return N.sub(a, b)
        if op == "*":
            return N.mul(a, b, self.scale)
        if op == "/":
            return N.div(a, b, self.scale)
        if op == "%":
            return N.mod(a, b, self.scale)
        if b.scale:
            self.warn("non-zero scale in exponent")
        return N.power(a, b.integer(), self.scale)

    def builtin(self, name: str, x: Num) -> Num:
        if name == "length":
            return Num(x.length(), 0)
        if name == "scale":
            return Num(x.scale, 0)
        return N.sqrt(x, self.scale)

    def read(self) -> Num:
        value = self.read_input()
        if value is None:
            raise BcError("read() has no input")
        return value

    # -------------------------------------------------------------- names
    def special(self, name: str) -> Num:
        return {"scale": lambda: Num(self.scale, 0), "ibase": lambda: Num(self.ibase, 0),
                "obase": lambda: Num(self.obase, 0), "last": lambda: self.last}[name]()

    def element(self, name: str, index: Num) -> Num:
        return self._array(name).get(self._index(name, index), ZERO)

    def _array(self, name: str) -> dict:
        stack = self.arrays.setdefault(name, [{}])
        if not stack:
            stack.append({})
        return stack[-1]

    def _index(self, name: str, index: Num) -> int:
        i = index.integer()
        if not 0 <= i <= 16777215:
            raise BcError(f"Array {name} subscript out of bounds.")
        return i

    def store(self, target, value: Num):
        kind = target[0]
        if kind == "var":
            stack = self.variables.setdefault(target[1], [ZERO])
            stack[-1] = value
        elif kind == "elem":
            self._array(target[1])[self._index(target[1], self.evaluate(target[2]))] = value
        elif kind == "special":
            self.set_special(target[1], value)

    def set_special(self, name: str, value: Num):
        if name == "last":
            self.last = value
            return
        number = value.integer()
        if name == "scale":
            if number < 0:
                self.warn("negative scale, set to 0")
                number = 0
            elif number > SCALE_MAX:
                self.warn(f"scale too large, set to {SCALE_MAX}")
                number = SCALE_MAX
            self.scale = number
            return
        low, high = (2, 16) if name == "ibase" else (2, SCALE_MAX)
        if number < low:
            self.warn(f"{name} too small, set to {low}")
            number = low
        elif number > high:
            self.warn(f"{name} too large, set to {high}")
            number = high
        setattr(self, name, number)

    def assign(self, op: str, target, expression) -> Num:
        if target[0] == "elem":            # the index is evaluated once, before the value
            target = ("elem", target[1], ("const", self.evaluate(target[2])))
        value = self.evaluate(expression)
        if op != "=":
            value = self.binary(op[0], self.evaluate_target(target), value)
        self.store_target(target, value)
        return value

    def evaluate_target(self, target) -> Num:
        if target[0] == "elem" and target[2][0] == "const":
            return self.element(target[1], target[2][1])
        return self.evaluate(target)

    def store_target(self, target, value: Num):
        if target[0] == "elem" and target[2][0] == "const":
            self._array(target[1])[self._index(target[1], target[2][1])] = value
        else:
            self.store(target, value)

    def increment(self, kind: str, op: str, target) -> Num:
        if target[0] == "elem":
            target = ("elem", target[1], ("const", self.evaluate(target[2])))
        old = self.evaluate_target(target)
        new = N.add(old, ONE) if op == "++" else N.sub(old, ONE)
        self.store_target(target, new)
        return new if kind == "pre" else old

    # -------------------------------------------------------------- functions
    def call(self, name: str, args: list) -> Num:
        function = self.functions.get(name)
        if function is None:
            raise BcError(f"Function {name} not defined.")
        if callable(function):
            if len(args) != 1 + (name == "j"):
                raise BcError("Parameter number mismatch")
            return function(self, *[self.evaluate(a) for a in args])
        if len(args) != len(function.params):
            raise BcError("Parameter number mismatch")
        values = [self._argument(arg, param) for arg, param in zip(args, function.params)]
        if len(self.frames) > self.max_depth:
            raise LimitExceeded("max_function_depth",
                                f"bc: function calls nested deeper than {self.max_depth} "
                                f"(max_function_depth)")
        pushed = self._push(function, values)
        self.frames.append(name)
        saved_steps, self.steps = self.steps, 0
        try:
            for statement in function.body:
                self.execute(statement)
            result = ZERO
        except Return as r:
            result = r.value
        finally:
            self.frames.pop()
            self.steps = saved_steps
            self._pop(pushed)
        return ZERO if function.void else result

    def _argument(self, arg, param):
        is_array = arg[0] == "array"
        if is_array != param[1]:
            raise BcError("Parameter type mismatch")
        if not is_array:
            return self.evaluate(arg)
        source = self._array(arg[1])
        return source if param[2] else dict(source)

    def _push(self, function: Function, values: list) -> list:
        pushed = []
        for (name, is_array, _), value in zip(function.params, values):
            (self.arrays if is_array else self.variables).setdefault(name, [] if is_array else [ZERO]).append(value)
            pushed.append((name, is_array))
        for name, is_array in function.autos:
            if is_array:
                self.arrays.setdefault(name, [{}]).append({})
            else:
                self.variables.setdefault(name, [ZERO]).append(ZERO)
            pushed.append((name, is_array))
        return pushed

    def _pop(self, pushed: list):
        for name, is_array in reversed(pushed):
            (self.arrays if is_array else self.variables)[name].pop()


def _print_escapes(text: str) -> str:
    """The escapes of strings in a print statement (plain string statements have none)."""
    return _ESCAPE.sub(lambda m: _ESCAPES.get(m.group(1), m.group(1)), text)


_ESCAPE = re.compile(r"\\(.)", re.S)
_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "q": '"', "r": "\r", "t": "\t", "\\": "\\"}


LIMITS = """\
BC_BASE_MAX     = 2147483647
BC_DIM_MAX      = 16777215
BC_SCALE_MAX    = 2147483647
BC_STRING_MAX   = 2147483647
MAX Exponent    = 9223372036854775807
Number of vars  = 32767
"""
WARRANTY = """\
This program is free software; you can redistribute it and/or modify
it under the terms of the GNU General Public License as published by
the Free Software Foundation; either version 3 of the License , or
(at your option) any later version.
"""
