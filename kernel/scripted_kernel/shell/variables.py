"""A shell's variables: scopes, lookup (namerefs and dynamic variables such as $RANDOM and
$LINENO), assignment with attributes, arrays, and the variables arithmetic reads and writes.

`Variables` is a part of `Shell` (runtime.py), kept in its own module; it works on the
attributes Shell gives it, declared below.
"""
from __future__ import annotations

import random
import re
from typing import Any, Callable, Optional

from . import arith as arith_mod
from ..base.errors import unbound, ArithError, FatalError, LimitExceeded, ReadonlyVariable
from ..base.limits import Budget, ExecutionLimits, wall_clock
from .split import DEFAULT_IFS
from .state import (CAPITALIZE, EXPORT, INTEGER, LOWER, NAMEREF, READONLY, UPPER, IndexedArray, Var)


class TempScope(dict):
    """The variables of `NAME=value command`: visible to the command, gone after it.
    `made_local`: names a `local` inside the command (`v=x eval 'local v'`) turned into
    locals of the running function, as bash does: unset there leaves them declared.
    `of_function`: the bindings of a function call (`v=x f`), which a `local v` in f takes over."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.made_local: set = set()
        self.of_function = False

    def copy_scope(self) -> "TempScope":
        new = TempScope(self)
        new.made_local = set(self.made_local)
        new.of_function = self.of_function
        return new


# $BASH_COMMAND is kept as (script text, start, end) and cut from the script only when it is
# read, which few scripts do: a slice for every command compiled cost more
NO_COMMAND = ("", 0, 0)


def command_text(span: tuple) -> str:
    text, start, end = span
    return text[start:end]


class Variables:
    """The variable half of a Shell (runtime.py): what `lookup`, `set_var` and the
    arithmetic accessors read and change."""
    globals: dict
    globals_shared: bool
    scopes: list
    positional: list
    status: int
    script_name: str
    nounset: bool
    allexport: bool
    funcnames: list                 # the running functions, innermost last ($FUNCNAME)
    call_lines: list                # where each was called ($BASH_LINENO)
    random: random.Random           # $RANDOM's generator, and its bash-seeded state
    random_state: Optional[list]
    call_depth: int
    var_owner: object
    compiler: Any
    limits: ExecutionLimits
    budget: Budget

    def own_globals(self) -> dict:
        """The dict of global variables, to change it (a subshell copies its parent's first)."""
        if self.globals_shared:
            self.globals = dict(self.globals)
            self.globals_shared = False
        return self.globals

    # ------------------------------------------------------------ variables

    def lookup(self, name: str) -> Optional[Var]:
        if self.scopes:
            for scope in reversed(self.scopes):
                var = scope.get(name)
                if var is not None:
                    break
            else:
                var = self.globals.get(name)
        else:
            var = self.globals.get(name)
        if var is None:
            dyn = DYNAMIC_VARS.get(name)
            return dyn(self) if dyn is not None else None
        if var.attrs & NAMEREF and var.value:
            return self._follow_nameref(var)
        return var

    def subscript(self, text: str) -> str:
        """A subscript that arrives as text at run time (`unset 'a[$k]'`, `printf -v 'a["k"]'`,
        `${!ref}`, namerefs): expanded as a word, as bash does."""
        fn = _SUBSCRIPTS.get(text)
        if fn is None:
            fn = self.compiler.word_text(text)
            if len(_SUBSCRIPTS) > 1024:
                _SUBSCRIPTS.clear()
            _SUBSCRIPTS[text] = fn
        return fn(self)

    def _follow_nameref(self, var: Var) -> Optional[Var]:
        for _ in range(8):
            target = var.value
            if type(target) is not str or not _NAMEREF_TARGET.match(target):
                return var            # not a variable name: bash uses the value as it is
            if "[" in target:
                base, _, key = target.partition("[")
                if key in ("@]", "*]"):        # a[@]: the elements joined, as "$ref" reads
                    whole = self.lookup_raw(base)
                    return Var(" ".join(whole.values())) if whole is not None else None
                value = self.get_element(base, self.subscript(key[:-1]))
                return Var(value) if value is not None else None
            nxt = self.lookup_raw(target)
            if nxt is None:
                return None
            if not nxt.attrs & NAMEREF or not nxt.value:
                return nxt
            var = nxt
        return None

    def lookup_raw(self, name: str) -> Optional[Var]:
        return self._holder(name)[1]

    def lookup_own(self, name: str) -> Optional[Var]:
        """lookup_raw for a change in place: a Var this shell does not own (shared with the
        shell it was copied from) is copied into this shell's scope first."""
        scope, var = self._holder(name)
        if var is None or var.owner is self.var_owner:
            return var
        return self.adopt(scope, name, var)

    def _holder(self, name: str) -> tuple:
        """(the scope holding `name`, its Var): the innermost scope, else the globals."""
        for scope in reversed(self.scopes):
            var = scope.get(name)
            if var is not None:
                return scope, var
        return self.globals, self.globals.get(name)

    def adopt(self, scope: dict, name: str, var: Var) -> Var:
        """A copy of `var` (shared with another shell) that this shell owns, put in `scope`."""
        if scope is self.globals:
            scope = self.own_globals()
        var = scope[name] = var.copy(self.var_owner)
        return var

    def resolve_name(self, name: str) -> str:
        """The variable an assignment to `name` writes: namerefs followed."""
        start = name
        for _ in range(8):
            var = self.lookup_raw(name)
            if var is None or not var.attrs & NAMEREF or not var.value:
                return name
            name = var.value
        raise FatalError(f"{start}: circular name reference")

    def get_value(self, name: str) -> Optional[str]:
        # (a global without attributes is lookup's answer: this runs for every $name)
        var = None if self.scopes else self.globals.get(name)
        if var is None or var.attrs:
            var = self.lookup(name)
            if var is None:
                return None
        v = var.value
        if type(v) is str:
            return v
        return var.scalar()

    @property
    def ifs(self) -> str:
        var = None if self.scopes else self.globals.get("IFS")
        if var is None or var.attrs:
            var = self.lookup("IFS")
            if var is None:
                return DEFAULT_IFS
        v = var.value
        return v if type(v) is str else (var.scalar() or "")

    def all_var_names(self) -> list[str]:
        names = set(self.globals)
        for scope in self.scopes:
            names.update(scope)
        return [n for n in names if (var := self.lookup(n)) is not None and var.value is not None]

    def exported_env(self) -> dict[str, str]:
        env = {}
        for scope in [self.globals] + self.scopes:
            for name, var in scope.items():
                if var.attrs & EXPORT and type(var.value) is str:
                    env[name] = var.value
                elif name in env and not var.attrs & EXPORT:
                    del env[name]
        return env

    def get_element(self, name: str, key: str) -> Optional[str]:
        var = self.lookup(name)
        if var is None:
            return None
        v = var.value
        if type(v) is dict:
            return v.get(key)
        if not key:
            raise FatalError(f"{name}[]: bad array subscript")
        index = self.arith_eval(key)
        if type(v) is IndexedArray:
            return v.get(index)
        if v is None:
            return None
        return v if index == 0 or index == -1 else None

    def resolve_reference(self, target: str, quoted: bool):
        """${!x}: the value of the variable named by x's value (which may be `a[1]` or `@`)."""
        if target in ("@", "*"):
            return list(self.positional) if not (quoted and target == "*") else \
                self.ifs[:1].join(self.positional)
        if (target.isascii() and target.isdigit()):
            k = int(target)
            return self.script_name if k == 0 else (self.positional[k - 1] if k <= len(self.positional) else None)
        if target in ("#", "?"):
            return str(len(self.positional)) if target == "#" else str(self.status)
        if target.endswith("]") and "[" in target:
            name, _, key = target[:-1].partition("[")
            if key in ("@", "*"):
                var = self.lookup(name)
                vals = var.values() if var is not None else []
                return self.ifs[:1].join(vals) if (key == "*" and quoted) else vals
            if not _valid_name(name):
                raise FatalError(f"{target}: invalid variable name")
            return self.get_element(name, self.subscript(key))
        if not _valid_name(target):
            raise FatalError(f"{target}: invalid indirect expansion" if target else
                             "invalid indirect expansion")
        return self.get_value(target)

    def check_string(self, value: str):
        """A large value about to be stored: its length, and the memory it adds up to."""
        if len(value) > self.limits.max_string_length:
            raise LimitExceeded("max_string_length",
                                f"string longer than {self.limits.max_string_length} characters "
                                f"(max_string_length)")
        self.budget.note(len(value))

    def _writable(self, name: str) -> Var:
        """The variable `name=value` changes, owned by this shell (copied if shared)."""
        var = None
        if self.scopes:
            for scope in reversed(self.scopes):
                var = scope.get(name)
                if var is not None:
                    break
        if var is None:
            scope = self.globals
            var = scope.get(name)
            if var is None:
                var = Var(None, EXPORT if self.allexport else 0, self.var_owner)
                self.own_globals()[name] = var
                return var
        if var.attrs & NAMEREF and type(var.value) is str and _NAMEREF_TARGET.match(var.value):
            if "[" in var.value:
                raise _ElementTarget(var.value)
            target = self.resolve_name(name)
            if target != name:
                return self._writable(target)
        if var.attrs & READONLY:
            raise ReadonlyVariable(f"{name}: readonly variable")
        # (the scope search above is lookup's, written out: this runs for every assignment)
        return var if var.owner is self.var_owner else self.adopt(scope, name, var)

    def set_var(self, name: str, value: str, append: bool = False):
        """name=value (or name+=value) with the variable's attributes applied."""
        scopes = self.scopes
        var = None if scopes else self.globals.get(name)
        if var is not None:
            if not var.attrs and var.owner is self.var_owner and type(var.value) is str \
                    and not append and not self.allexport and len(value) <= 4096:
                var.value = value       # the common case: a plain global this shell owns
                return
        elif not scopes and not self.allexport and len(value) <= 4096:
            # a new global (the first assignment of most names a script sets): what _writable
            # would make for it, with its value (`+=` on nothing appends to nothing)
            self.own_globals()[name] = Var(value, 0, self.var_owner)
            return
        try:
            var = self._writable(name)
        except _ElementTarget as ref:
            base, _, key = ref.target.partition("[")
            self.set_element(base, self.subscript(key[:-1]), value, append)
            return
        if self.allexport:
            var.attrs |= EXPORT
        attrs = var.attrs
        if attrs:
            value = self._apply_attrs(var, value, append)
        elif append:
            old = var.value
            if type(old) is str:
                value = old + value
            elif old is not None:
                self._set_element_of(var, name, "0", value, True)
                return
        if len(value) > 4096:
            self.check_string(value)
        v = var.value
        if v is None or type(v) is str:
            var.value = value
        else:
            self._set_element_of(var, name, "0", value, False)

    def _apply_attrs(self, var: Var, value: str, append: bool) -> str:
        attrs = var.attrs
        old = var.scalar() if append else None
        if attrs & INTEGER:
            n = self.arith_eval(value) if value.strip() else 0
            if append:
                n = arith_mod.wrap(self.arith_eval(old or "0") + n)
            value = str(n)
        elif append:
            value = (old or "") + value
        if attrs & LOWER:
            value = value.lower()
        elif attrs & UPPER:
            value = value.upper()
        elif attrs & CAPITALIZE:
            value = value[:1].upper() + value[1:].lower()
        return value

    def set_element(self, name: str, key: str, value: str, append: bool = False):
        try:
            var = self._writable(name)
        except _ElementTarget as ref:
            raise _not_a_container(ref) from None
        self._set_element_of(var, name, key, value, append)

    def _container(self, name: str) -> Var:
        """The variable an element or array assignment writes: a nameref to an element
        (`typeset -n r='a[0]'`) cannot be one, as in bash."""
        try:
            return self._writable(name)
        except _ElementTarget as ref:
            raise _not_a_container(ref) from None

    def _set_element_of(self, var: Var, name: str, key: str, value: str, append: bool):
        v = var.value
        if v is None or type(v) is str:
            arr = IndexedArray()
            if type(v) is str:
                arr.set(0, v)
            var.value = v = arr
        if var.attrs & (INTEGER | LOWER | UPPER | CAPITALIZE):
            old = self.get_element_of(var, key)
            tmp = Var(old, var.attrs)
            value = self._apply_attrs(tmp, value, append)
            append = False
        if type(v) is dict:
            if append:
                value = v.get(key, "") + value
            v[key] = value
            return
        if not key:
            raise FatalError(f"{name}[]: bad array subscript")
        # bash exits on a bad subscript of an assignment
        index = self.arith_eval(key, exits=True) if key.strip() else 0
        if index < 0:
            real = index + v.top
            if real < 0:
                raise FatalError(f"{name}[{index}]: bad array subscript")
            index = real
        if append:
            value = (v.d.get(index) or "") + value
        if index not in v.d and len(v.d) >= self.limits.max_array_length:
            raise LimitExceeded("max_array_length",
                                f"array {name} longer than {self.limits.max_array_length} elements "
                                f"(max_array_length)")
        if len(value) > 4096:
            self.check_string(value)
        v.set(index, value)

    def get_element_of(self, var: Var, key: str) -> Optional[str]:
        v = var.value
        if type(v) is dict:
            return v.get(key)
        if type(v) is IndexedArray:
            return v.get(self.arith_eval(key) if key else 0)
        return v

    def set_array(self, name: str, items: list, assoc_pairs: Optional[list] = None, append: bool = False):
        """name=(items...) or name+=(...): items are (key or None, value, append) triples."""
        var = self._container(name)
        existing = var.value
        if type(existing) is dict or (existing is None and assoc_pairs is not None):
            target = existing if (append and type(existing) is dict) else {}
            # in name=(...) a [key]+=value appends to the value before the assignment
            before = existing if type(existing) is dict else {}
            var.value = target
            if items and items[0][0] is None:     # (k1 v1 k2 v2 ...): alternating keys and values
                flat = [v for _, v, _ in items]
                for k in range(0, len(flat), 2):
                    target[flat[k]] = flat[k + 1] if k + 1 < len(flat) else ""
                return
            for key, value, elem_append in items:
                if key is None:
                    continue           # bash ignores a value without [key]= here
                target[key] = ((target if append else before).get(key, "") + value) if elem_append else value
            return
        if append and type(existing) is IndexedArray:
            arr = existing
        else:
            arr = IndexedArray()
            if append and type(existing) is str:
                arr.set(0, existing)
        var.value = arr
        next_index = arr.top              # a value without [key]= goes after the previous one
        for key, value, elem_append in items:
            if key is None:
                if len(arr.d) >= self.limits.max_array_length:
                    raise LimitExceeded("max_array_length",
                                        f"array {name} longer than {self.limits.max_array_length} "
                                        f"elements (max_array_length)")
                if var.attrs & (INTEGER | LOWER | UPPER):
                    value = self._apply_attrs(Var(None, var.attrs), value, False)
                arr.set(next_index, value)
                next_index += 1
            else:
                index = self.arith_eval(key) if key.strip() else 0
                if index < 0:
                    index += arr.top
                self._set_element_of(var, name, str(index), value, elem_append)
                next_index = index + 1

    def unset_var(self, name: str) -> bool:
        current = len(self.scopes) - 1
        for k in range(current, -1, -1):
            scope = self.scopes[k]
            var = scope.get(name)
            if var is not None:
                if var.attrs & READONLY:
                    raise FatalError(f"{name}: cannot unset: readonly variable")
                if var.attrs & NAMEREF and var.value:
                    return self.unset_var(var.value)
                if (type(scope) is TempScope and name not in scope.made_local) or k != current:
                    # a temporary binding, or a local of a calling function: removing it
                    # reveals the variable beneath, as in bash
                    del scope[name]
                    return True
                # a local of the running function stays local, with no value
                scope[name] = Var(None, var.attrs & ~(INTEGER | LOWER | UPPER), self.var_owner)
                return True
        var = self.globals.get(name)
        if var is not None:
            if var.attrs & READONLY:
                raise FatalError(f"{name}: cannot unset: readonly variable")
            if var.attrs & NAMEREF and var.value:
                return self.unset_var(var.value)
            del self.own_globals()[name]
        return True

    def local_scope(self) -> dict:
        """The running function's scope (temporary bindings of `NAME=v cmd` are not it), or
        at the top level the globals, owned: callers change it."""
        for scope in reversed(self.scopes):
            if type(scope) is not TempScope:
                return scope
        return self.own_globals()

    def assign_from_expansion(self, p, value: str):
        """${x:=value} (and ${!x:=value}, which assigns the variable x names)"""
        if p.indirect:
            if p.index is not None and p.index.literal() in ("@", "*"):
                var = self.lookup(p.name)
                target = self.ifs[:1].join(var.values()) if var is not None else ""
            else:
                target = self.get_value(p.name) or ""
            if not _valid_name(target):
                raise FatalError(f"{target}: invalid variable name")
            self.set_var(target, value)
            return
        if p.name in ("@", "*", "#", "?", "-", "$", "!") or (p.name.isascii() and p.name.isdigit()):
            raise FatalError(f"${p.name}: cannot assign in this way")
        if p.index is not None:
            self.set_element(p.name, _expand_index(self, p.index), value)
        else:
            self.set_var(p.name, value)

    # ------------------------------------------------------------ arithmetic

    def arith_eval(self, text: str, exits: bool = False) -> int:
        """`text` evaluated; an error abandons the command (`exits`: the whole shell)."""
        try:
            # a subscript or a value is most often a plain decimal or a variable's name: both
            # taken as the parsed expression would take them, without its closures
            if text.isdigit() and text.isascii() and (text[0] != "0" or len(text) == 1) and len(text) < 19:
                return int(text)                    # (arith_get's test of a value)
            if text.isidentifier() and text.isascii():
                return self.arith_get(text, None)
            return arith_mod.compile_arith(text)(self)
        except ArithError as e:
            raise FatalError(e.render(), exits=exits) from None
        except RecursionError:
            raise FatalError(f"{text}: expression recursion level exceeded", exits=exits) from None

    def arith_get(self, name: str, index) -> int:
        if index is None:
            # (a global without attributes is lookup's answer: this runs for every operand)
            var = None if self.scopes else self.globals.get(name)
            if var is None or var.attrs:
                var = self.lookup(name)
            if var is None:
                if self.nounset:
                    raise unbound(name)
                return 0
            v = var.value
            if type(v) is not str:
                v = var.scalar()
                if v is None:
                    if self.nounset:
                        raise unbound(name)
                    return 0
            if v is var.number_text:        # (the text this shell's arithmetic last stored)
                return var.number
        else:
            var = self.lookup(name)
            if var is None:
                return 0
            val = var.value
            if type(val) is dict:
                v = val.get(str(index))
            elif type(val) is IndexedArray:
                v = val.get(index)
            else:
                v = val if index == 0 else None
            if v is None:
                return 0
        # A plain decimal is the common case; anything else (010 is octal, 0x1f, 2#101, -3,
        # an expression, Python-only forms like 1_000, 19 digits and more, which wrap) is
        # evaluated as bash does. (arith_eval makes the same test: written out in both, as a
        # call here cost 3 % of an array loop)
        if v.isdigit() and v.isascii() and (v[0] != "0" or len(v) == 1) and len(v) < 19:
            return int(v)
        v = v.strip()
        if not v:
            return 0
        self.call_depth += 1
        try:
            if self.call_depth > 1024:
                raise ArithError(v, "expression recursion level exceeded", v)
            return arith_mod.compile_arith(v)(self)
        finally:
            self.call_depth -= 1

    def is_assoc(self, name: str) -> bool:
        var = self.lookup(name)
        return var is not None and type(var.value) is dict

    def arith_key(self, name: str, subscript: str):
        """The element an arithmetic `name[subscript]` denotes: a string key for an
        associative array (quotes removed, no evaluation), else the evaluated index."""
        if self.is_assoc(name):
            return subscript.strip().replace("'", "").replace('"', "")
        return arith_mod.compile_arith(subscript)(self)

    def arith_set(self, name: str, index, value: int):
        text = str(value)
        if index is None:
            # (set_var's common case written out, as this runs for every i++: a call less)
            var = None if self.scopes else self.globals.get(name)
            if var is not None and not var.attrs and var.owner is self.var_owner and type(var.value) is str \
                    and not self.allexport:
                var.value = var.number_text = text
                var.number = value
            else:
                self.set_var(name, text)
        else:
            self.set_element(name, str(index), text)


_SUBSCRIPTS: dict = {}
_NAMEREF_TARGET = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[.*\])?\Z", re.S)


class _ElementTarget(Exception):
    """A nameref names an array element: the assignment goes to that element."""

    def __init__(self, target: str):
        self.target = target


def _not_a_container(ref: _ElementTarget) -> FatalError:
    return FatalError(f"`{ref.target}': not a valid identifier")


def _valid_name(name: str) -> bool:
    return bool(name) and (name[0].isalpha() or name[0] == "_") and \
        all(c.isalnum() or c == "_" for c in name)


def _expand_index(sh: Variables, index_word) -> str:
    return sh.compiler.string(index_word)(sh)


def attribute_letters(var: Var) -> str:
    letters = ""
    if var.is_array:
        letters += "a"
    if var.is_assoc:
        letters += "A"
    if var.attrs & INTEGER:
        letters += "i"
    if var.attrs & LOWER:
        letters += "l"
    if var.attrs & NAMEREF:
        letters += "n"
    if var.attrs & READONLY:
        letters += "r"
    if var.attrs & UPPER:
        letters += "u"
    if var.attrs & EXPORT:
        letters += "x"
    return letters


def _funcname(sh: Variables) -> Optional[Var]:
    if not sh.funcnames:
        return None
    return Var(IndexedArray(list(reversed(sh.funcnames))))


def _bash_lineno(sh: Variables) -> Optional[Var]:
    return Var(IndexedArray([str(n) for n in reversed(sh.call_lines)]))


# One generator for $RANDOM in every shell: seeding one per shell read 2.5 KB from os.urandom
# for every script, used or not.
SHARED_RANDOM = random.Random()



def seed_random(sh: Variables, value: str):
    """`RANDOM=N`: seed $RANDOM as bash does (RANDOM is an integer variable: the value is
    arithmetic), so that the numbers that follow are bash's for that seed. Subshells draw
    from the same sequence."""
    seed = int(value) if value.isascii() and value.isdigit() else sh.arith_eval(value or "0")
    sh.random_state = [seed & 0xFFFFFFFF, 0]


def next_random(sh: Variables) -> int:
    """The next $RANDOM: bash 5.2's generator (Park and Miller's minimal standard, its two
    halves folded) once seeded, else the process's own generator."""
    state = sh.random_state
    if state is None:
        return sh.random.randrange(32768)
    while True:
        last = state[0] or 123459876
        h, low = divmod(last, 127773)
        t = 16807 * low - 2836 * h
        state[0] = t + 0x7FFFFFFF if t < 0 else t
        value = ((state[0] >> 16) ^ (state[0] & 65535)) & 32767
        if value != state[1]:
            state[1] = value
            return value


DYNAMIC_VARS: dict[str, Callable[[Any], Optional[Var]]] = {      # each given the Shell
    "RANDOM": lambda sh: Var(str(next_random(sh))),
    "LINENO": lambda sh: Var(str(sh.lineno)),
    "BASH_COMMAND": lambda sh: Var(command_text(sh.bash_command)),
    "SECONDS": lambda sh: Var(str(int(wall_clock() - sh.started))),
    "EPOCHSECONDS": lambda sh: Var(str(int(wall_clock()))),
    "EPOCHREALTIME": lambda sh: Var(f"{wall_clock():.6f}"),
    "BASHPID": lambda sh: Var(str(sh.pid + sh.subshell_level)),
    "BASH_SUBSHELL": lambda sh: Var(str(sh.subshell_level)),
    "FUNCNAME": _funcname,
    "BASH_LINENO": _bash_lineno,
    "_": lambda sh: Var(sh.last_arg),
    "PIPESTATUS": lambda sh: Var(IndexedArray([str(s) for s in sh.pipestatus])),
    "SHELLOPTS": lambda sh: Var(":".join(n for n in ("braceexpand", "errexit", "hashall",
                                                       "interactive-comments", "nounset", "pipefail",
                                                       "xtrace")
                                         if n in ("braceexpand", "hashall", "interactive-comments")
                                         or getattr(sh, n, False))),
}
