"""A shell's state as a snapshot's `shell` section, and back (tools/snapshot.py documents the
format). Nothing in it runs: a function is kept as the text of its definition, and restoring
one parses the text, checks it is exactly one definition of that name (`f() {...}; rm x` is
refused) and compiles only that definition; trap actions are text, run only when the trap
fires. Every field is validated, every size bounded, before anything is built."""
from __future__ import annotations

import base64
import random
import re
import struct
import time
from typing import Any, Optional

from ..base.errors import ShellSyntaxError
from ..base.limits import CancelToken, ExecutionLimits
from ..base.records import Capture, SnapshotError, SnapshotLimits, Texts, integer, listed, mapping, text, time_value
from ..fs.memory import NAME_MAX, PATH_MAX
from ..fs.tree_io import path
from . import nodes as A
from .compile import Compiler
from .interpreter import BUILTINS, COMPILER, SCRIPT_CACHE
from .lexer import Source
from .parser import Parser
from .printer import body_text
from .run import Run
from .runtime import SET_OPTIONS, SHOPT_DEFAULTS, Shell
from .variables import SHARED_RANDOM
from .session_state import measure
from .state import IndexedArray, Var

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_TRAP = re.compile(r"[A-Z][A-Z0-9+-]{0,31}\Z|[0-9]{1,2}\Z")


def capture_state(sh, cap: Capture) -> dict:
    if sh.scopes:
        raise SnapshotError("the shell is inside a function call: snapshot it between calls")
    if sh.random is SHARED_RANDOM:               # its own generator, so that a copy draws the same
        sh.random = random.Random(SHARED_RANDOM.getrandbits(64))
    variables = []
    for name, var in sh.globals.items():
        variables.append(_variable(name, var, cap))
    cap.counts["variables"] = len(variables)
    functions = []
    for name, func in sh.functions.items():
        line, text = function_definition(func)
        functions.append([name, line, cap.text(text)])
    cap.counts["functions"] = len(functions)
    state = sh.random.getstate()
    return {"cwd": sh.cwd, "dirstack": list(sh.dirstack), "umask": sh.umask, "status": sh.status,
            "last_arg": cap.text(str(sh.last_arg)), "script_name": sh.script_name,
            "seconds": max(0.0, time.time() - sh.started),
            "positional": [cap.text(p) for p in sh.positional], "pipestatus": list(sh.pipestatus),
            "options": {name: bool(getattr(sh, name)) for name in SET_OPTIONS},
            "shopts": dict(sh.shopts), "traps": {k: cap.text(v) for k, v in sh.traps.items()},
            "exported_functions": sorted(sh.exported_functions),
            "variables": variables, "functions": functions,
            "random": base64.b64encode(struct.pack(">625I", *state[1])).decode("ascii")
            if state[0] == 3 and len(state[1]) == 625 else None,
            "random_seeded": list(sh.random_state) if sh.random_state is not None else None}


def _variable(name: str, var: Var, cap: Capture) -> list:
    v = var.value
    if v is None:
        return [name, var.attrs, "u", None]
    if type(v) is str:
        return [name, var.attrs, "s", cap.text(v)]
    if type(v) is IndexedArray:
        cap.counts["elements"] += len(v.d)
        return [name, var.attrs, "a", [v.top, [[i, cap.text(v.d[i])] for i in sorted(v.d)]]]
    cap.counts["elements"] += len(v)
    return [name, var.attrs, "A", [[k, cap.text(x)] for k, x in v.items()]]


def function_definition(func) -> tuple:
    """(line, text): the function's definition as it was written, from its name to the end of
    its body (`f() {...}`, `function f {...}`), and the line it starts on; or, for a function
    whose text is not at hand, `name () body`."""
    node, script = func.node, func.script
    if script and node is not None:
        start, body_pos = node.pos, node.body.pos
        if 0 <= start <= body_pos < len(script):
            text = script[start:body_pos] + body_text(script, body_pos)
            redirects = list(getattr(node.body, "redirects", None) or []) + list(node.redirects or [])
            if redirects:
                text = _with_redirections(script, start, max(r.pos for r in redirects), func.name) or text
            return Source(script).line_of(start), text
    return 1, f"{func.name} () {func.source or '{ :; }'}"


def _with_redirections(script: str, start: int, last: int, name: str) -> Optional[str]:
    """The definition's text through its redirections (`f() {...} >&2`), which end on the line
    of the last one: the longest cut there that parses as the one definition."""
    end = script.find("\n", last)
    end = len(script) if end < 0 else end
    cuts = [end] + [k for k in range(min(end, last + 4096) - 1, last, -1) if script[k] in ";&|)"]
    for cut in cuts[:64]:
        text = script[start:cut]
        try:
            units = Parser(text).parse_program().items
        except (ShellSyntaxError, RecursionError):
            continue
        if len(units) == 1 and len(units[0].items) == 1 and type(units[0].items[0]) is A.FunctionDef \
                and units[0].items[0].name == name:
            return text
    return None


def restore_state(spec, blobs: dict, limits: ExecutionLimits, fs, env: Optional[dict] = None):
    """A new Shell holding what the snapshot's `shell` section records (None: none)."""
    if spec is None:
        return None
    spec = mapping(spec, "shell")
    slimits = SnapshotLimits.of(limits)
    maxima = slimits.max_records()
    texts = Texts(blobs, slimits)
    depth = limits.max_parser_depth
    sh = Shell(Run(limits, CancelToken(), fs=fs), {}, BUILTINS, env or {},
               compile_script=lambda text: SCRIPT_CACHE.get(text, depth), compiler=COMPILER)
    sh.cwd = path(spec.get("cwd"), "working directory")
    sh.dirstack = [path(p, "directory stack") for p in listed(spec.get("dirstack"), "dirstack", 4096)]
    sh.umask = integer(spec.get("umask"), "umask", 0, 0o777)
    sh.status = integer(spec.get("status"), "status", 0, 255)
    sh.last_arg = texts(spec.get("last_arg"), "$_")
    sh.script_name = text(spec.get("script_name"), "$0", PATH_MAX)
    sh.started = time.time() - time_value(spec.get("seconds"), "SECONDS")
    sh.positional = [texts(p, "positional parameter")
                     for p in listed(spec.get("positional"), "positional", maxima["texts"])]
    sh.pipestatus = [integer(s, "PIPESTATUS", 0, 255) for s in listed(spec.get("pipestatus"), "pipestatus", 4096)]
    options = mapping(spec.get("options"), "options")
    for name in SET_OPTIONS:
        value = options.get(name, False)
        if type(value) is not bool:
            raise SnapshotError(f"snapshot option {name}: not true or false")
        setattr(sh, name, value)
    shopts = mapping(spec.get("shopts"), "shopts")
    for name, value in shopts.items():
        if name not in SHOPT_DEFAULTS or type(value) is not bool:
            raise SnapshotError(f"snapshot shopt {str(name)[:40]!r}: unknown, or not true or false")
    sh.shopts = {**SHOPT_DEFAULTS, **shopts}
    traps = mapping(spec.get("traps"), "traps")
    if len(traps) > 128:
        raise SnapshotError("snapshot: more than 128 traps")
    for name, action in traps.items():
        if not _TRAP.match(name):
            raise SnapshotError(f"snapshot trap {name[:40]!r}: not a signal name")
        sh.traps[name] = texts(action, "trap")
    variables = listed(spec.get("variables"), "variables", maxima["variables"])
    sh.globals = {}
    elements = 0
    for entry in variables:
        name, var, n = _restore_variable(entry, texts, slimits)
        elements += n
        if elements > maxima["elements"]:
            raise SnapshotError("snapshot: more array elements than max_shell_state_bytes allows")
        sh.globals[name] = var
    functions = listed(spec.get("functions"), "functions", maxima["functions"])
    for entry in functions:
        if type(entry) is not list or len(entry) != 3:
            raise SnapshotError("snapshot function: not [name, line, text]")
        name = text(entry[0], "function name", NAME_MAX)
        line = integer(entry[1], "function line", 1, limits.max_script_bytes)
        define_function(sh, name, line, texts(entry[2], f"function {name[:40]}"))
    exported = listed(spec.get("exported_functions"), "exported functions", maxima["functions"])
    sh.exported_functions = {text(n, "function name", NAME_MAX) for n in exported} & set(sh.functions)
    rng = spec.get("random")
    if rng is not None:
        sh.random = random.Random()
        sh.random.setstate(_random_state(rng))
    seeded = spec.get("random_seeded")
    if seeded is not None:                   # RANDOM=N: bash's generator, [state, last value]
        seeded = listed(seeded, "random_seeded", 2)
        if len(seeded) != 2:
            raise SnapshotError("snapshot random_seeded: not [state, last value]")
        sh.random_state = [integer(seeded[0], "random_seeded", 0, 0xFFFFFFFF),
                           integer(seeded[1], "random_seeded", 0, 32767)]
    kept = measure(sh)
    if kept > limits.max_shell_state_bytes:
        raise SnapshotError(f"snapshot shell state takes {kept} bytes, more than max_shell_state_bytes "
                            f"({limits.max_shell_state_bytes})")
    sh.state_bytes = kept
    return sh


def _restore_variable(entry, texts: Texts, slimits: SnapshotLimits) -> tuple:
    if type(entry) is not list or len(entry) != 4:
        raise SnapshotError("snapshot variable: not [name, attributes, kind, value]")
    name, attrs, kind, value = entry
    if type(name) is not str or len(name) > NAME_MAX or not _NAME.match(name):
        raise SnapshotError(f"snapshot variable name {str(name)[:40]!r} is not a valid name")
    attrs = integer(attrs, f"attributes of {name}", 0, 127)
    if kind == "u":
        if value is not None:
            raise SnapshotError(f"snapshot variable {name}: an unset variable with a value")
        return name, Var(None, attrs), 0
    if kind == "s":
        return name, Var(texts(value, f"variable {name}"), attrs), 0
    if kind == "a":
        if type(value) is not list or len(value) != 2:
            raise SnapshotError(f"snapshot array {name}: not [top, elements]")
        top = integer(value[0], f"array {name} top", 0, 1 << 62)
        items = listed(value[1], f"array {name}", slimits.max_array_length)
        arr = IndexedArray()
        last = -1
        for item in items:
            if type(item) is not list or len(item) != 2:
                raise SnapshotError(f"snapshot array {name}: an element is not [index, text]")
            index = integer(item[0], f"array {name} index", 0, (1 << 62))
            if index <= last:
                raise SnapshotError(f"snapshot array {name}: indices out of order")
            last = index
            arr.d[index] = texts(item[1], f"array {name}")
        if top <= last:
            raise SnapshotError(f"snapshot array {name}: its top is below an index")
        arr.top = top
        return name, Var(arr, attrs), len(items)
    if kind == "A":
        items = listed(value, f"associative array {name}", slimits.max_array_length)
        d: dict = {}
        for item in items:
            if type(item) is not list or len(item) != 2:
                raise SnapshotError(f"snapshot associative array {name}: an element is not [key, text]")
            key = texts(item[0], f"associative array {name} key")
            if key in d:
                raise SnapshotError(f"snapshot associative array {name}: a key twice")
            d[key] = texts(item[1], f"associative array {name}")
        return name, Var(d, attrs), len(items)
    raise SnapshotError(f"snapshot variable {name}: unknown kind {str(kind)[:10]!r}")


def define_function(sh, name: str, line: int, text: str):
    """Compile a function from its definition's text, refusing any text that is not exactly
    one definition of `name` (nothing else in it ever runs)."""
    if not _NAME.match(name) and not _function_name_ok(name):
        raise SnapshotError(f"snapshot function name {name[:40]!r} is not valid")
    full = "\n" * (line - 1) + text
    source = Source(full)
    try:
        tree = Parser(full, max_depth=sh.limits.max_parser_depth, source=source).parse_program()
    except (ShellSyntaxError, RecursionError):
        raise SnapshotError(f"snapshot function {name[:40]}: its text does not parse") from None
    units = tree.items
    node: Any = None
    if len(units) == 1 and type(units[0]) is A.CommandList and len(units[0].items) == 1:
        node = units[0].items[0]
    if type(node) is not A.FunctionDef or node.name != name or not node.valid_name:
        raise SnapshotError(f"snapshot function {name[:40]}: its text is not one definition of it")
    Compiler(source).compile(node)(sh)


def _function_name_ok(name: str) -> bool:
    """bash accepts more than variable names for functions (`my-func`, `a.b`)."""
    return bool(name) and not any(c in name for c in " \t\n|&;()<>$`'\"\\=/") and name not in ("{", "}")


def _random_state(text) -> tuple:
    if type(text) is not str or len(text) > 4000:
        raise SnapshotError("snapshot $RANDOM state: not base64 text")
    try:
        raw = base64.b64decode(text, validate=True)
    except ValueError:
        raise SnapshotError("snapshot $RANDOM state: not base64") from None
    if len(raw) != 625 * 4:
        raise SnapshotError("snapshot $RANDOM state: the wrong size")
    words = struct.unpack(">625I", raw)
    if not 1 <= words[-1] <= 624 or not any(words[:624]):
        raise SnapshotError("snapshot $RANDOM state: out of range")
    return (3, words, None)
