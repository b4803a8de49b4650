"""declare/typeset/local/export/readonly/unset."""
from __future__ import annotations

import re

from .registry import builtin
from ...base.errors import FatalError
from ..quoting import ansi_c_escape, needs_ansi_c, quote_for_reuse
from ..runtime import DeclarationArg
from ..variables import TempScope, attribute_letters
from ..state import (assoc_order, CAPITALIZE, EXPORT, INTEGER, LOWER, NAMEREF, READONLY, UPPER, IndexedArray,
                     Var)

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_ASSIGN = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(?:\[(.*)\])?(\+?=)(.*)\Z", re.S)
FLAG_BITS = {"i": INTEGER, "l": LOWER, "u": UPPER, "r": READONLY, "x": EXPORT, "n": NAMEREF,
             "c": CAPITALIZE}


def quote_value(value: str) -> str:
    """A value as `declare -p` prints it: double quotes with \\ " $ ` escaped, or $'...' when
    it holds control characters or bytes of invalid UTF-8."""
    if needs_ansi_c(value):
        return "$'" + ansi_c_escape(value) + "'"
    return '"' + re.sub(r'([\\"$`])', r"\\\1", value) + '"'


def set_listing(name: str, var) -> str:
    """A variable as `set` lists it: scalars quoted only when needed, arrays as declare does."""
    if type(var.value) is str:
        value = var.value
        if re.fullmatch(r"[A-Za-z0-9_./:,@%+=^-]*", value) and value:
            return f"{name}={value}"
        return f"{name}={quote_for_reuse(value)}"
    return describe(name, var).split(" ", 2)[2]


def visible_variables(sh) -> dict:
    """Every variable the shell sees now (an inner scope's hides an outer one's)."""
    seen = {}
    for scope in [sh.globals] + sh.scopes:
        seen.update(scope)
    return seen


def describe(name: str, var: Var) -> str:
    letters = attribute_letters(var)
    flags = "-" + letters if letters else "--"
    v = var.value
    if type(v) is IndexedArray:
        body = " ".join(f"[{k}]={quote_value(v.d[k])}" for k in v.keys())
        return f"declare {flags} {name}=({body})"
    if type(v) is dict:
        body = "".join(f"[{_assoc_key(k)}]={quote_value(v[k])} " for k in assoc_order(v))
        return f"declare {flags} {name}=({body})"
    if v is None:
        return f"declare {flags} {name}"
    return f"declare {flags} {name}={quote_value(v)}"


def _assoc_key(k: str) -> str:
    return k if re.fullmatch(r"[A-Za-z0-9_.-]+", k) else quote_value(k)


def _parse_flags(sh, argv, cmd: str, allowed: str):
    on: set[str] = set()
    off: set[str] = set()
    i = 1
    while i < len(argv):
        a = argv[i]
        if not isinstance(a, str) or len(a) < 2 or a[0] not in "-+" :
            break
        if a == "--":
            i += 1
            break
        target = on if a[0] == "-" else off
        for c in a[1:]:
            if c not in allowed:
                sh.error(f"{cmd}: {a[0]}{c}: invalid option")
                sh.err(f"{cmd}: usage: {cmd} [-aAfFgiIlnrtux] [name[=value] ...]\n")
                return None
            target.add(c)
        i += 1
    return on, off, argv[i:]


def _declare(sh, argv, cmd: str, local: bool, extra_on: str = "") -> int:
    parsed = _parse_flags(sh, argv, cmd, "aAfFgiIlnrtuxpc")
    if parsed is None:
        return 2
    on, off, args = parsed
    on |= set(extra_on)
    if "f" in on or "F" in on:
        return _declare_functions(sh, args, "F" in on)
    if cmd == "local" and (not args or "p" in on):   # this function's variables (named ones)
        scope = sh.scopes[-1] if sh.scopes else {}
        for name in (sorted(scope) if not args else [str(a) for a in args if str(a) in scope]):
            sh.out(describe(name, scope[name]) + "\n")
        return 0
    if not args and not on and not off:        # declare alone lists like set
        seen = visible_variables(sh)
        for name in sorted(seen):
            if seen[name].value is not None:
                sh.out(set_listing(name, seen[name]) + "\n")
        return 0
    if "p" in on or (not args and not (on - {"g"}) and not off):
        return _print_declarations(sh, args, on)
    if not args:
        return _print_declarations(sh, args, on) if on else 0
    in_function = bool(sh.funcnames) and "g" not in on
    return _declare_each(sh, args, on, off, local or in_function, cmd)


def _declare_each(sh, args, on: set, off: set, make_local: bool, cmd: str) -> int:
    """Declare every argument; one that fails is reported and the rest still run, as in bash."""
    status = 0
    for arg in args:
        try:
            if not _declare_one(sh, arg, on, off, make_local, cmd):
                status = 1
        except FatalError as e:
            prefix = f"{cmd}: "
            sh.error(e.message if e.message.startswith(prefix) else prefix + e.message)
            status = 1
    return status


def _declare_one(sh, arg, on: set, off: set, make_local: bool, cmd: str) -> bool:
    if isinstance(arg, DeclarationArg):
        name, index, append, value, apply_array = arg.name, arg.index, arg.append, arg.value, arg.apply_array
        has_value = True
    else:
        m = _ASSIGN.match(arg)
        if m:
            name, index, op, value = m.group(1), m.group(2), m.group(3), m.group(4)
            append = op == "+="
            has_value = True
            apply_array = None
            if index is None and value.startswith("(") and value.endswith(")") and ("a" in on or "A" in on):
                apply_array = _reparse_array(sh, name, value, append)
        else:
            name, index, append, value, apply_array, has_value = arg, None, False, None, None, False
    if not _NAME.match(name) or (index is not None and cmd in ("readonly", "export")):
        sh.error(f"{cmd}: `{arg}': not a valid identifier")
        return False
    if make_local:
        temporary = _temp_scope_above_locals(sh, name)
        if temporary is not None:
            temporary.made_local.add(name)
        scope = temporary or sh.local_scope()
        var = scope.get(name)
        if var is not None and var.owner is not sh.var_owner:    # shared with a parent shell
            var = sh.adopt(scope, name, var)
        outer = sh.lookup_raw(name) if var is None else None
        if outer is not None and outer.attrs & READONLY:
            sh.error(f"{cmd}: {name}: readonly variable")     # bash will not shadow it
            return False
        if var is None:
            inherited = _tempenv_value(sh, name)
            # bash: a new local starts from a temporary binding
            var = inherited.copy(sh.var_owner) if inherited is not None else Var(None, 0, sh.var_owner)
            scope[name] = var
    else:
        var = sh.lookup_own(name)
        if var is None:
            var = Var(None, 0, sh.var_owner)
            sh.own_globals()[name] = var
    if var.attrs & READONLY and (has_value or (on - {"r", "x", "p", "g"})) and "r" not in off:
        sh.error(f"{cmd}: {name}: readonly variable")
        return False
    if "r" in off and var.attrs & READONLY:
        sh.error(f"{cmd}: {name}: readonly variable")
        return False
    if "a" in on and type(var.value) is not IndexedArray:
        if type(var.value) is dict:
            sh.error(f"{cmd}: {name}: cannot convert associative to indexed array")
            return False
        var.value = IndexedArray([var.value] if type(var.value) is str else [])
    if "A" in on and type(var.value) is not dict:
        if type(var.value) is IndexedArray:
            sh.error(f"{cmd}: {name}: cannot convert indexed to associative array")
            return False
        var.value = {} if var.value is None else {"0": var.value}
    bits = 0
    for c in on:
        bits |= FLAG_BITS.get(c, 0)
    clear = 0
    for c in off:
        clear |= FLAG_BITS.get(c, 0)
    if bits & LOWER:
        clear |= UPPER
    if bits & UPPER:
        clear |= LOWER
    readonly_now = bits & READONLY
    if bits & NAMEREF and not has_value and type(var.value) is str and not _NAMEREF_VALUE.fullmatch(var.value):
        # `x=1; declare -n x`: the value it has cannot name a variable, so x stays as it was
        sh.error(f"{cmd}: `{var.value}': invalid variable name for name reference")
        return False
    var.attrs = (var.attrs | (bits & ~READONLY)) & ~clear
    if has_value:
        if apply_array is not None:
            apply_array(sh)
        elif index is not None:
            sh.set_element(name, index if isinstance(arg, DeclarationArg) else sh.subscript(index),
                           value, append)
        elif bits & NAMEREF:
            if not _NAMEREF_VALUE.fullmatch(value):
                sh.error(f"{cmd}: `{value}': invalid variable name for name reference")
                return False
            var.value = value
        else:
            sh.set_var(name, value, append)
    elif bits & (LOWER | UPPER) and type(var.value) is str:
        var.value = var.value.lower() if bits & LOWER else var.value.upper()
    if readonly_now:
        var.attrs |= READONLY
    return True


_NAMEREF_VALUE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[.*\])?", re.S)


def _tempenv_value(sh, name: str):
    """The variable `name` if the nearest scope below the function's own holding it is a
    temporary binding (`v=x f` where f says `local v`). bash moves the function call's own
    binding into the local: removing the local later reveals what was under both."""
    local = sh.local_scope()
    below = next((k for k, scope in enumerate(sh.scopes) if scope is local), 0)
    for k in range(below - 1, -1, -1):
        scope = sh.scopes[k]
        var = scope.get(name)
        if var is not None:
            if type(scope) is not TempScope:
                return None
            if scope.of_function and k == below - 1:
                del scope[name]
            return var
    return None


def _temp_scope_above_locals(sh, name: str):
    """The temporary binding of `name` made inside the running function (`v=x eval 'local
    v=...'`), which `local` turns into the function's variable in place; None if there is none."""
    for scope in reversed(sh.scopes):
        if type(scope) is not TempScope:
            return None
        if name in scope:
            return scope
    return None


def _reparse_array(sh, name: str, value: str, append: bool):
    """declare -a "a=(1 2)": bash parses the quoted compound value again."""
    return sh.compiler.assignment_text(f"{name}{'+=' if append else '='}{value}")


def _print_declarations(sh, names, on: set) -> int:
    status = 0
    if names:
        for name in names:
            name = str(name)
            var = sh.lookup_raw(name)
            if var is None:
                sh.error(f"declare: {name}: not found")
                status = 1
                continue
            sh.out(describe(name, var) + "\n")
        return status
    seen = visible_variables(sh)
    for name in sorted(seen):
        var = seen[name]
        if on - {"p", "g"}:
            wanted = 0
            for c in on:
                wanted |= FLAG_BITS.get(c, 0)
            if "a" in on and type(var.value) is not IndexedArray:
                continue
            if "A" in on and type(var.value) is not dict:
                continue
            if wanted and not var.attrs & wanted:
                continue
        sh.out(describe(name, var) + "\n")
    return status


def _declare_functions(sh, names, names_only: bool) -> int:
    status = 0
    targets = names if names else sorted(sh.functions)
    for name in targets:
        func = sh.functions.get(str(name))
        if func is None:
            status = 1
            continue
        if names_only:
            sh.out(f"declare -f {name}\n" if not names else f"{name}\n")
        else:
            from ..printer import function_source
            sh.out(function_source(func) + "\n")
    return status


@builtin("declare", "typeset")
def declare(sh, argv):
    return _declare(sh, argv, argv[0], local=False)


@builtin("local")
def local(sh, argv):
    if not sh.scopes or not sh.funcnames:
        sh.error("local: can only be used in a function")
        return 1
    if "-" in argv:                 # `local -`: the function's option changes are its own
        sh.save_local_options()
        argv = [a for a in argv if a != "-"]
        if len(argv) == 1:
            return 0
    return _declare(sh, argv, "local", local=True)


@builtin("export")
def export(sh, argv):
    parsed = _parse_flags(sh, argv, "export", "fnp")
    if parsed is None:
        return 2
    on, off, args = parsed
    if not args:                               # with names, -p changes nothing: they are exported
        for name in sorted(sh.exported_env()):
            var = sh.lookup(name)
            sh.out(describe(name, var) + "\n")
        return 0
    if "f" in on:
        status = 0
        for name in args:
            if name not in sh.functions:
                sh.error(f"export: {name}: not a function")
                status = 1
            elif "n" in on:
                sh.exported_functions.discard(name)
            else:
                sh.exported_functions.add(name)
        return status
    if "n" in on:
        return _declare_each(sh, args, set(), {"x"}, False, "export")
    return _declare_each(sh, args, {"x"}, set(), False, "export")


@builtin("readonly")
def readonly(sh, argv):
    parsed = _parse_flags(sh, argv, "readonly", "aAfp")
    if parsed is None:
        return 2
    on, off, args = parsed
    if not args:                               # with names, -p changes nothing: they become readonly
        for name in sorted(n for n in sh.globals if sh.globals[n].attrs & READONLY):
            sh.out(describe(name, sh.globals[name]) + "\n")
        return 0
    return _declare_each(sh, args, (on - {"p"}) | {"r"}, set(), False, "readonly")


@builtin("unset")
def unset(sh, argv):
    mode = None
    args = argv[1:]
    while args and args[0].startswith("-") and len(args[0]) > 1:
        if args[0] == "--":
            args = args[1:]
            break
        for c in args[0][1:]:
            if c not in "fvn":
                sh.error(f"unset: -{c}: invalid option")
                sh.err("unset: usage: unset [-f] [-v] [-n] [name ...]\n")
                return 2
            mode = c
        args = args[1:]
    status = 0
    for name in args:
        if mode == "f":
            sh.own_functions().pop(name, None)
            continue
        if name.endswith("]") and "[" in name:
            base, _, key = name[:-1].partition("[")
            if not _NAME.match(base):
                sh.error(f"unset: `{name}': not a valid identifier")
                status = 1
                continue
            var = sh.lookup(base)
            if var is None:
                continue
            try:
                if var.attrs & READONLY:
                    raise FatalError(f"{base}: cannot unset: readonly variable")
                var = sh.lookup_own(sh.resolve_name(base)) or var
                _unset_element(sh, var, base, sh.subscript(key))
            except FatalError as e:
                sh.error(f"unset: {e.message}")
                status = 1
            continue
        if not _NAME.match(name):
            if mode is None:         # not a variable name, but it can name a function
                sh.own_functions().pop(name, None)
                continue
            sh.error(f"unset: `{name}': not a valid identifier")
            status = 1
            continue
        try:
            if mode == "n":
                var = sh.lookup_own(name)
                if var is not None:
                    var.attrs &= ~NAMEREF
                    sh.unset_var(name)
                continue
            if mode is None and sh.lookup_raw(name) is None and name in sh.functions:
                del sh.own_functions()[name]
                continue
            sh.unset_var(name)
        except FatalError as e:
            sh.error(f"unset: {e.message}")
            status = 1
    return status


def _unset_element(sh, var: Var, name: str, key: str):
    v = var.value
    if key in ("@", "*"):
        if type(v) is dict:
            v.clear()
        else:
            sh.unset_var(name)
        return
    if type(v) is dict:
        v.pop(key, None)
        return
    index = sh.arith_eval(key)
    if type(v) is IndexedArray:
        if index < 0:
            real = index + v.top
            if real < 0:
                raise FatalError(f"[{index}]: bad array subscript")
            index = real
        v.unset(index)
    elif type(v) is str and index == 0:
        sh.unset_var(name)
