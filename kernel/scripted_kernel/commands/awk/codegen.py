"""awk syntax tree → Python source → functions run against a Runtime.

Walking the tree for every record costs a Python call per node; the generated code evaluates
a whole rule as Python expressions instead, and knows at compile time which names are arrays,
which are function locals, and which expressions are surely numbers or strings, so most
conversions and dispatch disappear.

Naming in the generated code: awk function `f` is `f_f`, its parameter `p` the Python local
`v_p`, the global array `a` is `A_a`; global scalars live in `G` (the runtime's dict), and
temporaries are `_t<n>`. Values are awk's: float, str or StrNum.
"""
from __future__ import annotations

import math

from .mawk_order import MawkArray, loop_order, touch
from .runtime import CACHED_STRINGS, Exit, Next
from .values import EMPTY, AwkError, StrNum, strnum, to_num
from ...base.regexes import matcher

_ARRAY_ARGS = {"split": 1, "match": 2}       # builtins taking an array name, by argument index
_INLINE_ARITH = {"+", "-", "*"}
# Integer arithmetic on fields that hold plain digits gives the same numbers as awk's floats
# while every operand is below 10**15 and at most nine are added up: all sums stay below 2**53,
# where a float holds every integer exactly.
_EXACT_INT = 10 ** 15
_EXACT_TERMS = 9


class Program:
    """The compiled functions: BEGIN actions, the per-record rules, END actions."""
    __slots__ = ("begin", "main", "end", "reads_input", "uses_rs", "counts_records", "reads_fields")

    def __init__(self, begin, main, end, reads_input, uses_rs, counts_records, reads_fields):
        self.begin, self.main, self.end, self.reads_input = begin, main, end, reads_input
        self.uses_rs = uses_rs
        self.counts_records = counts_records   # NR/FNR kept: something reads them
        self.reads_fields = reads_fields       # the rules read fields of every record


def compile_program(parsed, rt) -> Program:
    gen = _CodeGen(parsed, rt)
    source = gen.module()
    env = gen.environment()
    try:
        code = compile(source, "<awk program>", "exec")
    except (SyntaxError, RecursionError, MemoryError):
        raise AwkError("awk: program nesting too deep") from None
    exec(code, env)
    names = gen.names
    return Program(env["__begin"], env["__main"] if parsed.rules else None, env["__end"],
                   bool(parsed.rules or parsed.end), "RS" in names.global_scalars,
                   names.uses_getline or not names.global_scalars.isdisjoint(("NR", "FNR")),
                   gen.uses_fields_local)


# ---------------------------------------------------------------- helpers the generated code calls

def _helpers(rt) -> dict:
    to_str, to_output = rt.to_str, rt.to_output

    def truth(v) -> bool:
        t = type(v)
        if t is float:
            return v != 0.0
        if t is StrNum:
            return v.num != 0.0
        return v != ""

    def element(arr: dict, key):
        v = arr.get(key)
        if v is None:
            arr[key] = v = EMPTY
        return v

    def store(value, container, key):
        container[key] = value
        return value

    def divide(a: float, b: float) -> float:
        if b == 0:
            raise AwkError("awk: division by zero")
        return a / b

    def modulo(a: float, b: float) -> float:
        if b == 0:
            raise AwkError("awk: division by zero in %")
        return math.fmod(a, b)

    def power(a: float, b: float) -> float:
        try:
            return math.pow(a, b)
        except (OverflowError, ValueError):
            return math.inf if a > 0 else math.nan

    def first(pair, _):
        return pair[0]

    def touch_key(arr, value):
        return touch(arr, value, to_str)

    env = {"rt": rt, "G": rt.globals, "E": EMPTY, "N": to_num, "S": to_str, "O": to_output,
           "T": truth, "F": rt.field, "FN": rt.field_number, "FT": rt.field_text, "FD": rt.field_at, "IDX": element,
           "SPLIT": rt.split_record, "B63": float(2 ** 63),
           "SET": store, "DIV": divide, "MOD": modulo, "POW": power, "fmod": math.fmod,
           "atan2": math.atan2, "STRNUM": strnum, "W": rt.out.append, "TICK": rt.tick,
           "Next": Next, "Exit": Exit, "FIRST": first, "StrNum": StrNum,
           "TOUCH": touch_key, "LOOP_ORDER": loop_order, "MawkArray": MawkArray}
    for name, op in (("LT", "<"), ("LE", "<="), ("EQ", "=="), ("NE", "!="), ("GT", ">"), ("GE", ">=")):
        # numbers compare as numbers, anything else as strings (POSIX's strnum rules)
        exec(f"def {name}(a, b):\n"
             f"    ta, tb = type(a), type(b)\n"
             f"    if (ta is float or ta is StrNum) and (tb is float or tb is StrNum):\n"
             f"        return (a if ta is float else a.num) {op} (b if tb is float else b.num)\n"
             f"    return S(a) {op} S(b)\n", env)
    return env


_COMPARE = {"<": "LT", "<=": "LE", "==": "EQ", "!=": "NE", ">": "GT", ">=": "GE"}


# ---------------------------------------------------------------- names: arrays, scalars, locals

def _is_record_target(node) -> bool:
    return node[0] == "field" or node == ("var", "NF")


def _changes_record(node) -> bool:
    """Whether this node (not its children) may change $0, a field or NF."""
    kind = node[0]
    if kind in ("assign", "preinc", "postinc"):
        return _is_record_target(node[2])
    if kind == "getline":
        return node[1] is None or _is_record_target(node[1])
    if kind == "builtin" and node[1] in ("sub", "gsub"):
        return len(node[2]) < 3 or _is_record_target(node[2][2])
    return False


class _Names:
    """Which names are arrays, found before code is generated: a name subscripted, iterated,
    deleted, split into or passed to a function's array parameter is an array."""

    def __init__(self, parsed):
        self.functions = parsed.functions
        self.global_arrays: set = set()
        self.global_scalars: set = set()
        self.array_params: dict = {name: set() for name in self.functions}
        self.calls: list = []            # (caller function or None, callee, args)
        self.loops_over_arrays = False   # a `for (k in a)`: arrays keep mawk's order
        self.record_changes = False      # $0, a field or NF assigned, plain getline, sub($0)
        self.uses_getline = False
        for block in parsed.begin + parsed.end:
            self._walk(block, None)
        for pattern, pattern2, body in parsed.rules:
            for node in (pattern, pattern2, body):
                self._walk(node, None)
        for name, (_params, body) in self.functions.items():
            self._walk(body, name)
        self._settle_calls()
        for caller, callee, args in self.calls:
            params = self.functions[callee][0] if callee in self.functions else ()
            for k, arg in enumerate(args):
                if arg[0] == "var" and not (k < len(params) and params[k] in self.array_params[callee]):
                    self._scalar(caller, arg[1])

    def is_param(self, fn, name) -> bool:
        return fn is not None and name in self.functions[fn][0]

    def is_array(self, fn, name) -> bool:
        if self.is_param(fn, name):
            return name in self.array_params[fn]
        return name in self.global_arrays

    def _not_a_function(self, name):
        if name in self.functions:
            raise AwkError(f"awk: function name {name} used as a variable")

    def _mark_array(self, fn, name):
        self._not_a_function(name)
        if self.is_param(fn, name):
            self.array_params[fn].add(name)
        else:
            self.global_arrays.add(name)

    def _walk(self, node, fn):
        if not isinstance(node, tuple) or not node:
            return
        kind = node[0]
        if _changes_record(node):
            self.record_changes = True
        if kind == "getline":
            self.uses_getline = True
        if kind in ("index", "delete"):
            self._mark_array(fn, node[1])
        elif kind == "in":
            self._mark_array(fn, node[2])
        elif kind == "forin":
            self.loops_over_arrays = True
            self._mark_array(fn, node[2])
            self._scalar(fn, node[1])
        elif kind == "var":
            self._scalar(fn, node[1])
        elif kind == "builtin" and node[2]:
            slot = _ARRAY_ARGS.get(node[1])
            if slot is not None and len(node[2]) > slot and node[2][slot][0] == "var":
                self._mark_array(fn, node[2][slot][1])
                node = (kind, node[1], [a for k, a in enumerate(node[2]) if k != slot])
        elif kind == "call":
            # a bare name passed to a function is an array or a scalar as the parameter is
            self.calls.append((fn, node[1], node[2]))
            node = (kind, node[1], [a for a in node[2] if a[0] != "var"])
        elif kind == "builtin" and node[1] == "length" and node[2] and node[2][0][0] == "var":
            return                  # length(x) works on either
        for child in node[1:]:
            if isinstance(child, tuple):
                self._walk(child, fn)
            elif isinstance(child, list):
                for item in child:
                    self._walk(item, fn)

    def _scalar(self, fn, name):
        self._not_a_function(name)
        if not self.is_param(fn, name):
            self.global_scalars.add(name)

    def _settle_calls(self):
        """An argument and its parameter are arrays together; repeat until nothing changes."""
        changed = True
        while changed:
            changed = False
            for caller, callee, args in self.calls:
                if callee not in self.functions:
                    continue
                params = self.functions[callee][0]
                for param, arg in zip(params, args):
                    if arg[0] != "var":
                        continue
                    if param in self.array_params[callee] and not self.is_array(caller, arg[1]):
                        self._mark_array(caller, arg[1])
                        changed = True
                    elif self.is_array(caller, arg[1]) and param not in self.array_params[callee]:
                        self.array_params[callee].add(param)
                        changed = True


# ---------------------------------------------------------------- the generator

class _CodeGen:
    def __init__(self, parsed, rt):
        self.p = parsed
        self.rt = rt
        self.names = _Names(parsed)
        self.lines: list = []
        self.depth = 0
        self.temps = 0
        self.function = None          # the awk function being compiled, if any
        self.loops = 0
        self.in_main = False
        # where nothing changes the record, the rules read constant fields ($1, $3) straight
        # from the local P, the record split once (FS is read when the record is)
        self.fields_local = not self.names.record_changes
        self.uses_fields_local = False
        self.constants: dict = {}     # Python name → value bound in the environment
        # a name used both ways cannot be bound once: it goes through the runtime each time
        self.dynamic = self.names.global_arrays & self.names.global_scalars
        self.mawk_order = self.names.loops_over_arrays
        if self.mawk_order:
            rt.array_class = MawkArray

    # -- output
    def emit(self, line: str):
        self.lines.append("    " * self.depth + line)

    def temp(self) -> str:
        self.temps += 1
        return f"_t{self.temps}"

    def constant(self, value) -> str:
        name = f"_k{len(self.constants)}"
        self.constants[name] = value
        return name

    def environment(self) -> dict:
        env = _helpers(self.rt)
        env.update(self.constants)
        for name in self.names.global_scalars - self.dynamic:
            self.rt.globals.setdefault(name, EMPTY)
        for name in self.names.global_arrays - self.dynamic:
            env["A_" + name] = self.rt.array(name)
        for name in self.p.functions:
            env.setdefault("f_" + name, None)
        return env

    def module(self) -> str:
        for name, (params, body) in self.p.functions.items():
            self.function_def(name, params, body)
        self.block_function("__begin", self.p.begin)
        self.main_function()
        self.block_function("__end", self.p.end)
        return "\n".join(self.lines) + "\n"

    def suite(self, stmts):
        """An indented block of statements (never empty, as Python requires)."""
        self.depth += 1
        start = len(self.lines)
        for stmt in stmts:
            self.stmt(stmt)
        if len(self.lines) == start:
            self.emit("pass")
        self.depth -= 1

    def function_def(self, name, params, body):
        self.function = name
        arrays = self.names.array_params[name]
        signature = ", ".join(f"v_{p}=None" if p in arrays else f"v_{p}=E" for p in params)
        self.emit(f"def f_{name}({signature}):")
        self.depth += 1
        for p in params:
            if p in arrays:
                self.emit(f"if v_{p} is None: v_{p} = {'MawkArray()' if self.mawk_order else '{}'}")
        self.depth -= 1
        self.suite([body])
        self.depth += 1
        self.emit("return E")
        self.depth -= 1
        self.function = None

    def block_function(self, name, blocks):
        self.emit(f"def {name}():")
        self.suite(blocks)

    def main_function(self):
        """All pattern-action rules as one function run per record: `next` is `return`."""
        self.in_main = True
        ranges = sum(1 for r in self.p.rules if r[1] is not None)
        self.constants["RANGES"] = [False] * ranges
        self.emit("def __main():")
        self.depth += 1
        prologue = len(self.lines)
        range_index = 0
        for pattern, pattern2, body in self.p.rules:
            action = body[1] if body is not None else [("print", [], None)]
            if pattern2 is not None:
                on = self.temp()
                self.emit(f"{on} = RANGES[{range_index}]")
                self.emit(f"if not {on} and ({self.cond(pattern)}):")
                self.emit(f"    RANGES[{range_index}] = {on} = True")
                self.emit(f"if {on}:")
                self.depth += 1
                self.emit(f"if {self.cond(pattern2)}:")
                self.emit(f"    RANGES[{range_index}] = False")
                self.depth -= 1
                self.suite(action)
                range_index += 1
            elif pattern is not None:
                self.emit(f"if {self.cond(pattern)}:")
                self.suite(action)
            else:
                for stmt in action:
                    self.stmt(stmt)
        self.emit("pass")
        if self.uses_fields_local:
            self.lines.insert(prologue, "    P = rt.parts\n    if P is None:\n        P = SPLIT()")
        self.depth -= 1
        self.in_main = False

    # -- statements
    def stmt(self, node):
        getattr(self, "s_" + node[0])(node)

    def s_block(self, node):
        for stmt in node[1]:
            self.stmt(stmt)

    def s_expr(self, node):
        e = node[1]
        kind = e[0]
        if kind == "assign":
            self.assign_stmt(e[2], e[1], e[3])
        elif kind in ("preinc", "postinc"):
            self.assign_stmt(e[2], "+=", ("num", float(e[1])))
        else:
            self.emit(self.value(e)[0])

    def s_print(self, node):
        args = node[1]
        if not args:
            text = "rt.record + rt.ors"
        else:
            text = ("\"\".join((" + ", rt.ofs, ".join(self.output(a) for a in args) + ", rt.ors))"
                    if len(args) > 1 else self.output(args[0]) + " + rt.ors")
        self.write(text, node[2])

    def s_printf(self, node):
        if not node[1]:
            self.emit('rt.fail("awk: printf: no format")')
            return
        self.write("rt.sprintf(" + ", ".join(self.value(a)[0] for a in node[1]) + ")", node[2])

    def write(self, text: str, redirect):
        if redirect is None:
            self.emit(f"W({text})")
        else:
            self.emit(f"rt.write_to(({redirect[0]!r}, {self.string(redirect[1])}), {text})")

    def local_field(self, node):
        """The 0-based index of a constant field $k (k >= 1) main reads from P, or None."""
        if not (self.in_main and self.fields_local and self.function is None
                and node[0] == "field" and node[1][0] == "num"):
            return None
        k = int(node[1][1])
        if k < 1:
            return None
        self.uses_fields_local = True
        return k - 1

    def local_text(self, node):
        """The text of a constant field main reads from P (see local_field), or None."""
        k = self.local_field(node)
        return None if k is None else f'(P[{k}] if len(P) > {k} else "")'

    def output(self, node) -> str:
        local = self.local_text(node)
        if local is not None:
            return local
        if node[0] == "field" and node[1][0] == "num":
            return f"FT({int(node[1][1])}, True)"
        code, kind = self.value(node)
        if kind == "num":
            # an integral number prints as its digits: inline, without O's call
            t = self.temp()
            return self.integral_text(node, f"(str(int({t})) if ({t} := {code}).is_integer() "
                                            f"and -B63 < {t} < B63 else O({t}))")
        return code if kind == "str" else f"O({code})"

    def integral_text(self, node, float_text: str) -> str:
        """The text of a numeric expression: where it only adds, subtracts and takes a
        remainder of fields and integer constants, computed in Python ints when the fields it
        reads hold plain digits (checked per record; float_text otherwise). The integer path
        skips parsing, converting and formatting floats, and gives the same digits."""
        if node[0] not in ("arith", "neg", "paren"):
            return float_text
        fields: dict = {}
        found = self.integral(node, fields)
        if found is None or found[2] > _EXACT_TERMS or not fields:
            return float_text
        guard = " and ".join(f'({t} := (P[{k}] if len(P) > {k} else "")).isdigit() '
                             f"and {t}.isascii() and len({t}) < 16" for k, t in fields.items())
        return f"(str({found[0]}) if {guard} else {float_text})"

    def integral(self, node, fields: dict):
        """(Python int expression, whether it is surely >= 0, how many operands it adds up)
        for node, or None where ints might not give awk's result; fields: the local fields
        read (index → temporary holding its text)."""
        kind = node[0]
        if kind == "paren":
            return self.integral(node[1], fields)
        if kind == "num":
            value = node[1]
            if not (value.is_integer() and abs(value) < _EXACT_INT):
                return None
            return repr(int(value)), value >= 0, 1
        if kind == "field":
            k = self.local_field(node)
            if k is None:
                return None
            if k not in fields:
                fields[k] = self.temp()
            return f"int({fields[k]})", True, 1
        if kind == "neg":
            inner = self.integral(node[1], fields)
            return None if inner is None else (f"(-{inner[0]})", False, inner[2])
        if kind != "arith":
            return None
        op, divisor = node[1], node[3]
        if op == "%":      # fmod's sign is the dividend's: equal to Python's % where both are positive
            dividend = self.integral(node[2], fields)
            if (dividend is None or not dividend[1] or divisor[0] != "num"
                    or not (divisor[1].is_integer() and 0 < divisor[1] < _EXACT_INT)):
                return None
            return f"({dividend[0]} % {int(divisor[1])})", True, 1
        if op not in ("+", "-"):
            return None
        operands = []                # a chain a + b - c, walked flat (see arith_chain)
        while node[0] == "arith" and node[1] in "+-":
            operands.append((node[1], node[3]))
            node = node[2]
            if len(operands) >= _EXACT_TERMS:
                return None
        first = self.integral(node, fields)
        if first is None:
            return None
        code, non_negative, terms = first
        for op, operand in reversed(operands):
            found = self.integral(operand, fields)
            if found is None:
                return None
            code = f"({code} {op} {found[0]})"
            non_negative = non_negative and op == "+" and found[1]
            terms += found[2]
        return code, non_negative, terms

    def s_if(self, node):
        self.emit(f"if {self.cond(node[1])}:")
        self.suite([node[2]])
        if node[3] is not None:
            self.emit("else:")
            self.suite([node[3]])

    def loop_body(self, body):
        self.loops += 1
        self.suite([("tick",), body])
        self.loops -= 1

    def s_tick(self, node):
        self.emit("TICK()")

    def s_while(self, node):
        self.emit(f"while {self.cond(node[1])}:")
        self.loop_body(node[2])

    def s_do(self, node):
        # `continue` must still test the condition: the first pass skips the test instead
        first = self.temp()
        self.emit(f"{first} = True")
        self.emit(f"while {first} or ({self.cond(node[2])}):")
        self.emit(f"    {first} = False")
        self.loop_body(node[1])

    def s_for(self, node):
        init, cond, step, body = node[1:]
        if init is not None:
            self.stmt(init)
        # the step runs at the top of every pass but the first, so that `continue` runs it
        first = self.temp()
        self.emit(f"{first} = True")
        self.emit("while True:")
        self.depth += 1
        if step is not None:
            self.emit(f"if {first}:")
            self.emit(f"    {first} = False")
            self.emit("else:")
            self.suite([step])
        if cond is not None:
            self.emit(f"if not ({self.cond(cond)}):")
            self.emit("    break")
        self.depth -= 1
        self.loop_body(body)

    def s_forin(self, node):
        var, arr_name, body = node[1], node[2], node[3]
        key, arr = self.temp(), self.temp()
        self.emit(f"{arr} = {self.array(arr_name)}")
        self.emit(f"for {key} in {'LOOP_ORDER' if self.mawk_order else 'list'}({arr}):")
        self.depth += 1
        self.emit(f"if {key} not in {arr}: continue")
        self.store_stmt(("var", var), f"STRNUM({key})")
        self.depth -= 1
        self.loop_body(body)

    def s_delete(self, node):
        arr = self.array(node[1])
        if node[2] is None:
            self.emit(f"{arr}.clear()")
        else:
            self.emit(f"{arr}.pop({self.key(arr, node[2])}, None)")

    def s_next(self, node):
        self.emit("return" if self.in_main and self.function is None else "raise Next()")

    s_nextfile = s_next

    def s_exit(self, node):
        self.emit(f"raise Exit(int(N({self.value(node[1])[0]})))" if node[1] is not None else "raise Exit(None)")

    def s_return(self, node):
        if self.function is None:
            raise AwkError("awk: return outside a function")
        self.emit(f"return {self.value(node[1])[0]}" if node[1] is not None else "return E")

    def s_break(self, node):
        self.loop_keyword("break")

    def s_continue(self, node):
        self.loop_keyword("continue")

    def loop_keyword(self, word):
        if not self.loops:
            raise AwkError(f"awk: {word} outside a loop")
        self.emit(word)

    # -- assignment: targets are ("var", name), ("index", name, subs) or ("field", expr)
    def assign_stmt(self, target, op, value_node):
        value = self.value(value_node)[0]
        if op == "=":
            self.store_stmt(target, value)
            return
        operand = self.temp()
        self.emit(f"{operand} = N({value})")
        kind = target[0]
        if kind == "index":
            arr, key = self.temp(), self.temp()
            self.emit(f"{arr} = {self.array(target[1])}")
            self.emit(f"{key} = {self.key(arr, target[2])}")
            self.emit(f"{arr}[{key}] = {self.arith(op[0], f'N({arr}.get({key}, E))', operand)}")
        elif kind == "field":
            index = self.temp()
            self.emit(f"{index} = {self.value(target[1])[0]}")
            self.emit(f"rt.set_field({index}, {self.arith(op[0], f'N(FD({index}))', operand)})")
        else:
            self.store_stmt(target, self.arith(op[0], f"N({self.value(target)[0]})", operand))

    def store_stmt(self, target, value: str):
        kind, name = target[0], target[1]
        if kind == "index":
            arr = self.array(name)
            self.emit(f"{arr}[{self.key(arr, target[2])}] = {value}")
        elif kind == "field":
            self.emit(f"rt.set_field({self.value(name)[0]}, {value})")
        elif self.names.is_param(self.function, name) and not self.names.is_array(self.function, name):
            self.emit(f"v_{name} = {value}")
        elif not (name in CACHED_STRINGS or name == "NF" or name in self.names.global_arrays):
            self.emit(f"G[{name!r}] = {value}")
        else:
            self.emit(self.store(name, value))

    def store(self, name, value: str) -> str:
        """An expression storing value in the scalar `name` and giving it back."""
        if self.names.is_param(self.function, name):
            if self.names.is_array(self.function, name):
                return f'rt.fail("awk: can\'t assign to {name}; it\'s an array name.")'
            return f"(v_{name} := {value})"
        if name in CACHED_STRINGS or name == "NF" or name in self.names.global_arrays:
            return f"rt.set_var({name!r}, {value})"
        return f"SET({value}, G, {name!r})"

    def assign_expr(self, target, value: str) -> str:
        """An expression storing value (evaluated first) into target and giving it back."""
        kind = target[0]
        if kind == "index":
            arr = self.array(target[1])
            return f"SET({value}, {arr}, {self.key(arr, target[2])})"
        if kind == "field":
            held = self.temp()
            return f"(({held} := {value}), rt.set_field({self.value(target[1])[0]}, {held}))[1]"
        return self.store(target[1], value)

    def update_expr(self, target, compute) -> tuple[str, str]:
        """(old value, new value) expression parts for ++, -- and op=: target's place is
        evaluated once. compute(old) gives the new value's code."""
        kind = target[0]
        old = self.temp()
        if kind == "index":
            arr, key = self.temp(), self.temp()
            prep = f"({arr} := {self.array(target[1])}), ({key} := {self.key(arr, target[2])}), "
            read = f"({old} := N({arr}.get({key}, E)))"
            return prep + read, f"SET({compute(old)}, {arr}, {key})"
        if kind == "field":
            index = self.temp()
            prep = f"({index} := {self.value(target[1])[0]}), "
            return prep + f"({old} := N(FD({index})))", f"rt.set_field({index}, {compute(old)})"
        return f"({old} := N({self.value(target)[0]}))", self.store(target[1], compute(old))

    def arith(self, op, a: str, b: str) -> str:
        if op in _INLINE_ARITH:
            return f"({a} {op} {b})"
        return {"/": "DIV", "%": "MOD", "^": "POW"}[op] + f"({a}, {b})"

    # -- expressions: value() gives (python code, kind) with kind "num", "str" or "any"
    def value(self, node) -> tuple[str, str]:
        return getattr(self, "x_" + node[0])(node)

    def number(self, node) -> str:
        code, kind = self.value(node)
        if kind == "num":
            return code
        k = self.local_field(node)
        if k is not None:            # plain digits convert without to_num (NUM inline)
            t = self.temp()
            return (f"((float({t}) if ({t} := P[{k}]).isdigit() and {t}.isascii() else N({t})) "
                    f"if len(P) > {k} else 0.0)")
        if node[0] == "field" and node[1][0] == "num":
            return f"FN({int(node[1][1])})"
        return f"N({code})"

    def string(self, node) -> str:
        local = self.local_text(node)
        if local is not None:
            return local
        if node[0] == "field" and node[1][0] == "num":
            return f"FT({int(node[1][1])})"
        code, kind = self.value(node)
        if kind == "num":
            return self.integral_text(node, f"S({code})")
        return code if kind == "str" else f"S({code})"

    def cond(self, node) -> str:
        """A Python truth expression for node."""
        kind = node[0]
        if kind == "cmp":
            return self.compare(node)
        if kind in ("and", "or"):
            return f"({self.cond(node[1])} {kind} {self.cond(node[2])})"
        if kind == "not":
            return f"(not {self.cond(node[1])})"
        if kind == "regex":
            return f"({self.regex_search(node[1])}(S(F(0))) is not None)"
        if kind == "match":
            return self.match(node)
        if kind == "paren":
            return self.cond(node[1])
        if kind == "in":
            arr = self.array(node[2])
            return f"({self.key(arr, node[1])} in {arr})"
        code, vkind = self.value(node)
        if vkind == "num":
            return f"({code} != 0.0)"
        if vkind == "str":
            return f"({code} != '')"
        return f"T({code})"

    def as_number(self, cond: str) -> tuple[str, str]:
        return f"(1.0 if {cond} else 0.0)", "num"

    def x_num(self, node):
        v = node[1]
        return (repr(v) if math.isfinite(v) else self.constant(v)), "num"

    def x_str(self, node):
        return self.constant(node[1]), "str"

    def x_regex(self, node):
        return self.as_number(self.cond(node))

    def x_paren(self, node):
        return self.value(node[1])

    def x_group(self, node):
        raise AwkError("awk: syntax error: (a, b) outside of `in`")

    def x_var(self, node):
        name = node[1]
        if self.names.is_param(self.function, name):
            if self.names.is_array(self.function, name):
                return f'rt.fail("awk: can\'t use array {name} in scalar context")', "any"
            return f"v_{name}", "any"
        if name == "NF":
            return "rt.get_nf()", "num"
        if name in self.names.global_arrays:
            return f"rt.get_var({name!r})", "any"
        self.names.global_scalars.add(name)
        return f"G[{name!r}]", "any"

    def x_index(self, node):
        arr = self.array(node[1])
        return f"IDX({arr}, {self.key(arr, node[2])})", "any"

    def x_field(self, node):
        index = node[1]
        k = self.local_field(node)
        if k is not None:
            return f'(STRNUM(P[{k}]) if len(P) > {k} else "")', "any"
        if index[0] == "num":
            return f"F({int(index[1])})", "any"
        return f"FD({self.value(index)[0]})", "any"

    def x_concat(self, node):
        operands = []
        while node[0] == "concat":        # a b c d is one flat chain, not nested parentheses
            operands.append(node[2])
            node = node[1]
        operands.append(node)
        # rt.cat bounds the result: `s = s s` in a loop doubles it each time
        return "rt.cat(" + " + ".join(self.string(o) for o in reversed(operands)) + ")", "str"

    def x_arith(self, node):
        op = node[1]
        if op in _INLINE_ARITH:
            return self.arith_chain(node), "num"
        a, b = self.number(node[2]), self.number(node[3])
        if op == "%" and node[3][0] == "num" and node[3][1] != 0:
            return f"fmod({a}, {b})", "num"
        return self.arith(op, a, b), "num"

    def arith_chain(self, node) -> str:
        """a + b - c (or a * b * c) as one flat Python expression: Python's parser refuses
        about 200 nested parentheses, and these operators associate the same way in both."""
        group = "+-" if node[1] in "+-" else "*"
        terms = []
        while node[0] == "arith" and node[1] in group:
            terms.append(f" {node[1]} {self.number(node[3])}")
            node = node[2]
        return "(" + self.number(node) + "".join(reversed(terms)) + ")"

    def x_neg(self, node):
        return f"(-{self.number(node[1])})", "num"

    def x_plus(self, node):
        return self.number(node[1]), "num"

    def x_not(self, node):
        return self.as_number(self.cond(node))

    x_and = x_or = x_cmp = x_match = x_in = x_not

    def x_cond(self, node):
        a, ka = self.value(node[2])
        b, kb = self.value(node[3])
        return f"({a} if {self.cond(node[1])} else {b})", (ka if ka == kb else "any")

    def compare(self, node) -> str:
        op, left, right = node[1], node[2], node[3]
        a, ka = self.value(left)
        b, kb = self.value(right)
        if ka == "num" and kb == "num":
            return f"({a} {op} {b})"
        if ka == "str" or kb == "str":
            return f"({self.string(left)} {op} {self.string(right)})"
        return f"{_COMPARE[op]}({a}, {b})"

    def match(self, node) -> str:
        negate, text, pattern = node[1], self.string(node[2]), node[3]
        if pattern[0] == "regex":
            found = f"({self.regex_search(pattern[1])}({text}) is not None)"
        else:
            found = f"rt.dynamic_match({self.value(pattern)[0]}, {text})"
        return f"(not {found})" if negate else found

    def x_assign(self, node):
        op, target, value = node[1], node[2], node[3]
        if op == "=":
            return self.assign_expr(target, self.value(value)[0]), "any"
        operand = self.temp()
        prep, update = self.update_expr(target, lambda old: self.arith(op[0], old, operand))
        return f"(({operand} := {self.number(value)}), {prep}, {update})[-1]", "num"

    def x_preinc(self, node):
        prep, update = self.update_expr(node[2], lambda old: f"({old} + {float(node[1])!r})")
        return f"({prep}, {update})[-1]", "num"

    def x_postinc(self, node):
        old_holder = []

        def compute(old):
            old_holder.append(old)
            return f"({old} + {float(node[1])!r})"
        prep, update = self.update_expr(node[2], compute)
        return f"({prep}, {update}, {old_holder[0]})[-1]", "num"

    def x_getline(self, node):
        if len(node) > 2:             # getline [var] < file: NR and FNR stay
            line = self.temp()
            effect = f"rt.set_record({line})" if node[1] is None else \
                self.assign_expr(node[1], f"STRNUM({line})")
            return (f"(0.0 if ({line} := rt.getline_file({self.string(node[2])})) is None else "
                    f"-1.0 if {line} == -1.0 else ({effect}, 1.0)[-1])"), "num"
        if node[1] is None:
            return "rt.getline()", "num"
        line = self.temp()
        return (f"(0.0 if ({line} := rt.getline_value()) is None else "
                f"({self.assign_expr(node[1], line)}, 1.0)[1])"), "num"

    def x_call(self, node):
        name, args = node[1], node[2]
        fn = self.p.functions.get(name)
        if fn is None:
            return f'rt.fail("awk: calling undefined function {name}")', "any"
        params = fn[0]
        if len(args) > len(params):
            return (f'rt.fail("awk: function {name} called with {len(args)} args, '
                    f'accepts only {len(params)}")'), "any"
        arrays = self.names.array_params[name]
        codes = []
        for param, arg in zip(params, args):
            if param in arrays:
                if arg[0] != "var":
                    return f'rt.fail("awk: can\'t use scalar as array in call of {name}")', "any"
                codes.append(self.array(arg[1]))
            else:
                codes.append(self.value(arg)[0])
        return f"f_{name}({', '.join(codes)})", "any"

    # -- arrays, subscripts, regexes
    def array(self, name) -> str:
        if self.names.is_param(self.function, name):
            return f"v_{name}"
        if name in self.dynamic:
            return f"rt.array({name!r})"
        return "A_" + name

    def key(self, arr: str, subs) -> str:
        """The key of an element of `arr`; under mawk's order, using it counts as a use."""
        if not self.mawk_order:
            return self.subscript(subs)
        value = self.value(subs[0])[0] if len(subs) == 1 else self.subscript(subs)
        return f"TOUCH({arr}, {value})"

    def subscript(self, subs) -> str:
        if len(subs) == 1:
            return self.string(subs[0])
        return "rt.subscript(" + ", ".join(self.value(s)[0] for s in subs) + ")"

    def regex_search(self, pattern: str) -> str:
        return self.constant(matcher(self.rt.regex(pattern)))

    def regex_object(self, node) -> str:
        if node[0] == "regex":
            return self.constant(self.rt.regex(node[1], longest=True))
        return f"rt.dynamic_regex({self.value(node)[0]})"

    # -- builtin functions
    def x_builtin(self, node):
        name, args = node[1], node[2] or []
        fewest, most = _ARITY.get(name, (0, 255))
        if not fewest <= len(args) <= most:
            raise AwkError(f"awk: {len(args)} is invalid as number of arguments for {name}")
        method = getattr(self, "b_" + name, None)
        if method is None:
            return self.b_math(name, args)
        return method(args)

    def values(self, args) -> str:
        return ", ".join(self.value(a)[0] for a in args)

    def b_length(self, args):
        if not args:
            return "float(len(S(F(0))))", "num"
        a = args[0]
        if a[0] == "var" and self.names.is_array(self.function, a[1]):
            return f"float(len({self.array(a[1])}))", "num"
        return f"float(len({self.string(a)}))", "num"

    def b_substr(self, args):
        return f"rt.substr({self.values(args)})", "str"

    def b_index(self, args):
        return f"rt.index({self.values(args)})", "num"

    def b_split(self, args):
        if len(args) < 2 or args[1][0] != "var":
            return 'rt.fail("awk: split: the second argument must be an array name")', "num"
        text, arr = self.value(args[0])[0], self.array(args[1][1])
        if len(args) < 3:
            return f"rt.split_into({text}, {arr})", "num"
        if args[2][0] == "regex":
            return f"rt.split_into({text}, {arr}, None, {self.regex_object(args[2])})", "num"
        return f"rt.split_into({text}, {arr}, {self.value(args[2])[0]})", "num"

    def b_sub(self, args, global_=False):
        target = args[2] if len(args) > 2 else ("field", ("num", 0.0))
        result = self.temp()
        work = f"({result} := rt.substitute({self.regex_object(args[0])}, {self.value(args[1])[0]}, " \
               f"{self.value(target)[0]}, {global_}))"
        return f"FIRST({work}, {result}[0] and {self.assign_expr(target, result + '[1]')})", "num"

    def b_gsub(self, args):
        return self.b_sub(args, True)

    def b_match(self, args):
        arr = f", {self.array(args[2][1])}" if len(args) > 2 and args[2][0] == "var" else ""
        return f"rt.match({self.value(args[0])[0]}, {self.regex_object(args[1])}{arr})", "num"

    def b_sprintf(self, args):
        if not args:
            return 'rt.fail("awk: sprintf: no format")', "str"
        return f"rt.sprintf({self.values(args)})", "str"

    def b_math(self, name, args):
        operand = self.value(args[0])[0] if args else "F(0)"
        return f"rt.math({name!r}, {operand})", "num"

    def b_atan2(self, args):
        return f"atan2({self.number(args[0])}, {self.number(args[1])})", "num"

    def b_rand(self, args):
        return "rt.random.random()", "num"

    def b_srand(self, args):
        return f"rt.srand({self.values(args[:1])})", "num"

    def b_tolower(self, args):
        return f"{self.string(args[0])}.lower()", "str"

    def b_toupper(self, args):
        return f"{self.string(args[0])}.upper()", "str"

    def b_system(self, args):
        return 'rt.fail("awk: system(): running commands is disabled in logic mode")', "num"

    def b_close(self, args):
        return f"rt.close({self.string(args[0])})", "num"

    def b_fflush(self, args):
        return "0.0", "num"

    def b_gensub(self, args):
        rest = ", ".join(self.value(a)[0] for a in args[1:])
        return f"rt.gensub({self.regex_object(args[0])}, {rest})", "str"


# (fewest, most) arguments of the builtin functions
_ARITY = {"length": (0, 1), "substr": (2, 3), "index": (2, 2), "split": (2, 3), "sub": (2, 3),
          "gsub": (2, 3), "match": (2, 3), "sprintf": (1, 255), "atan2": (2, 2), "rand": (0, 0),
          "srand": (0, 1), "tolower": (1, 1), "toupper": (1, 1), "system": (1, 1), "close": (1, 2),
          "gensub": (3, 4), "sin": (1, 1), "cos": (1, 1), "exp": (1, 1), "log": (1, 1),
          "sqrt": (1, 1), "int": (1, 1)}
