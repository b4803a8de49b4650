"""Control flow and introspection builtins: : true false return exit break continue eval let
shift getopts type command builtin trap wait cd pwd source exec."""
from __future__ import annotations

import re

from .registry import builtin
from ..dispatch import call_command, command_not_found, dispatch
from ...base.errors import (ArithError, BreakLoop, ContinueLoop, ExitSignal, FatalError, ReadonlyVariable,
                             ReturnSignal)
from ..parser import RESERVED
from ..state import EXPORT, Var

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


@builtin(":", "true")
def true(sh, argv):
    return 0


@builtin("false")
def false(sh, argv):
    return 1


def _status_arg(sh, argv, cmd: str):
    """The numeric argument of exit/return: None (absent), an int, or raises on a bad one."""
    if len(argv) < 2:
        return None
    text = argv[1]
    if text == "--" and len(argv) > 2:
        text = argv[2]
    if re.fullmatch(r"\s*[-+]?[0-9]+\s*", text):
        return int(text) & 0xFF
    sh.error(f"{cmd}: {text}: numeric argument required")
    return -1


@builtin("exit")
def exit_builtin(sh, argv):
    code = _status_arg(sh, argv, "exit")
    if code == -1:
        raise ExitSignal(2)
    if len(argv) > 2 and argv[1] != "--":
        sh.error("exit: too many arguments")
        return 1
    raise ExitSignal(sh.status if code is None else code)


@builtin("return")
def return_builtin(sh, argv):
    if not sh.funcnames:
        sh.error("return: can only `return' from a function or sourced script")
        return 1
    code = _status_arg(sh, argv, "return")
    if code == -1:
        raise ReturnSignal(2)
    raise ReturnSignal(sh.status if code is None else code)


def _loop_levels(sh, argv, cmd: str):
    if sh.loop_depth == 0:
        sh.error(f"{cmd}: only meaningful in a `for', `while', or `until' loop")
        return None
    if len(argv) < 2:
        return 1
    try:
        n = int(argv[1])
    except ValueError:
        sh.error(f"{cmd}: {argv[1]}: numeric argument required")
        raise ExitSignal(128) from None
    if len(argv) > 2:                # bash gives up on the whole (sub)shell here
        sh.error(f"{cmd}: too many arguments")
        raise ExitSignal(1)
    if n < 1:
        sh.error(f"{cmd}: {argv[1]}: loop count out of range")
        return -1
    return min(n, sh.loop_depth)


@builtin("break", "continue")
def break_or_continue(sh, argv):
    n = _loop_levels(sh, argv, argv[0])
    if n is None:
        return 0
    if n < 0:
        return 1
    raise (BreakLoop if argv[0] == "break" else ContinueLoop)(n)


@builtin("eval")
def eval_builtin(sh, argv):
    args = argv[1:]
    if args and args[0] == "--":
        args = args[1:]
    elif args and args[0].startswith("-") and len(args[0]) > 1:
        sh.error(f"eval: {args[0]}: invalid option")
        sh.err("eval: usage: eval [arg ...]\n")
        return 2
    text = " ".join(args)
    if not text.strip():
        return 0
    fn = sh.compile_script(text)
    saved_line = sh.lineno
    sh.xtrace_depth += 1
    try:
        return fn(sh)
    except FatalError as e:
        if e.exits:
            raise
        sh.error(e.message)        # eval contains the error: it fails, the caller goes on
        return 1
    finally:
        sh.lineno = saved_line
        sh.xtrace_depth -= 1


@builtin("let")
def let(sh, argv):
    if len(argv) < 2:
        sh.error("let: expression expected")
        return 1
    value = 0
    for expr in argv[1:]:
        try:
            from ..arith import compile_arith
            value = compile_arith(expr)(sh)
        except ArithError as e:
            sh.error(f"let: {e.render()}")
            return 1
        except ReadonlyVariable as e:
            sh.error(e.message)
            return 1
    return 0 if value else 1


@builtin("shift")
def shift(sh, argv):
    n = 1
    if len(argv) > 1:
        try:
            n = int(argv[1])
        except ValueError:
            sh.error(f"shift: {argv[1]}: numeric argument required")
            return 1
        if n < 0:
            sh.error(f"shift: {argv[1]}: shift count out of range")
            return 1
    if n > len(sh.positional):
        return 1
    sh.positional = sh.positional[n:]
    return 0


@builtin("getopts")
def getopts(sh, argv):
    if len(argv) < 3:
        sh.error("getopts: usage: getopts optstring name [arg ...]")
        return 2
    spec, name = argv[1], argv[2]
    args = argv[3:] if len(argv) > 3 else sh.positional
    silent = spec.startswith(":")
    if silent:
        spec = spec[1:]
    try:
        optind = int(sh.get_value("OPTIND") or "1")
    except ValueError:
        optind = 1
    state = getattr(sh, "_getopts_state", (0, 0))
    char_pos = state[1] if state[0] == optind else 0
    if optind < 1:
        optind, char_pos = 1, 0
    elif optind > len(args) + 1:    # past fewer arguments than before: finished, as bash does
        optind, char_pos = len(args) + 1, 0
    opt, optarg, optind, char_pos, message, finished = _next_option(spec, args, optind, char_pos, silent)
    sh._getopts_state = (optind, char_pos) if char_pos else (0, 0)
    sh.set_var("OPTIND", str(optind))
    if optarg is None:
        sh.unset_var("OPTARG")
    else:
        sh.set_var("OPTARG", optarg)
    if message and not silent:
        sh.err(f"{sh.script_name}: {message}\n")
    if not _NAME.match(name):
        sh.error(f"getopts: `{name}': not a valid identifier")
        return 1
    sh.set_var(name, opt)
    return 1 if finished else 0


def _next_option(spec: str, args: list, optind: int, char_pos: int, silent: bool):
    """One step of getopts: (name value, OPTARG or None, OPTIND, position inside the current
    argument, diagnostic or None, whether the options are finished)."""
    if char_pos == 0:
        current = args[optind - 1] if optind <= len(args) else None
        if current is None or current == "-" or not current.startswith("-"):
            return "?", None, optind, 0, None, True
        if current == "--":
            return "?", None, optind + 1, 0, None, True
        char_pos = 1
    current = args[optind - 1]
    opt = current[char_pos]
    char_pos += 1
    at_word_end = char_pos >= len(current)
    next_optind, next_pos = (optind + 1, 0) if at_word_end else (optind, char_pos)
    idx = spec.find(opt)
    if idx < 0 or opt == ":":
        return "?", opt if silent else None, next_optind, next_pos, f"illegal option -- {opt}", False
    if not spec.startswith(":", idx + 1):
        return opt, None, next_optind, next_pos, None, False
    if not at_word_end:
        return opt, current[char_pos:], optind + 1, 0, None, False
    if optind < len(args):
        return opt, args[optind], optind + 2, 0, None, False
    if silent:
        return ":", opt, optind + 1, 0, None, False
    return "?", None, optind + 1, 0, f"option requires an argument -- {opt}", False


def describe_command(sh, name: str):
    """(kind, text) for type/command -v: keyword, function, builtin, file, or None."""
    if name in RESERVED:
        return "keyword", name
    if name in sh.functions:
        return "function", name
    if name in sh.builtins:
        return "builtin", name
    return _program(sh, name)


def _program(sh, name: str):
    """("file", path) for a program: the first on $PATH (an executable file of the filesystem,
    or one of the engine's commands, installed in /usr/bin and /bin), else a file found by
    path; an engine's command with no $PATH to find it on is shown by name."""
    paths = _program_paths(sh, name, False)
    if paths:
        return "file", paths[0]
    from .files import find_program
    path = find_program(sh, name)
    if path is not None and ("/" not in name or sh.fs.access(sh.path(path), "x")):
        return "file", path
    if name in sh.commands and not sh.get_value("PATH"):
        return "file", name
    return None, None


def _program_paths(sh, name: str, every: bool) -> list:
    from .files import ALSO_PROGRAMS, program_locations
    if "/" in name:
        return []
    return program_locations(sh, name, every, sh.get_value("PATH") or "",
                             lambda n: n in sh.commands or n in ALSO_PROGRAMS)


@builtin("type")
def type_builtin(sh, argv):
    args = argv[1:]
    flags = set()
    while args and args[0].startswith("-") and len(args[0]) > 1:
        flags.update(args[0][1:])
        args = args[1:]
    status = 0
    for name in args:
        if "a" in flags:
            status |= _type_all(sh, name, flags)
            continue
        kind, text = _program(sh, name) if "P" in flags else describe_command(sh, name)
        if kind is None:
            if "t" not in flags and "p" not in flags and "P" not in flags:
                sh.error(f"type: {name}: not found")
            status = 1
            continue
        if "t" in flags:
            sh.out(kind + "\n")
        elif "p" in flags or "P" in flags:
            if kind == "file":
                sh.out(text + "\n")
        elif kind == "keyword":
            sh.out(f"{name} is a shell keyword\n")
        elif kind == "function":
            from ..printer import function_source
            sh.out(f"{name} is a function\n{function_source(sh.functions[name])}\n")
        elif kind == "builtin":
            sh.out(f"{name} is a shell builtin\n")
        else:
            sh.out(f"{name} is {text}\n")
    return status


def _type_all(sh, name: str, flags: set) -> int:
    """`type -a NAME`: every meaning, in bash's order: keyword, function, builtin, then each
    program on $PATH."""
    found = []
    if "P" not in flags:            # (-p: found, so status 0, but only files are shown)
        if name in RESERVED:
            found.append(("keyword", f"{name} is a shell keyword"))
        if name in sh.functions and "f" not in flags:
            from ..printer import function_source
            found.append(("function", f"{name} is a function\n{function_source(sh.functions[name])}"))
        if name in sh.builtins:
            found.append(("builtin", f"{name} is a shell builtin"))
    paths = _program_paths(sh, name, True)
    if not paths:
        kind, text = _program(sh, name)
        paths = [text] if kind == "file" else []
    for path in paths:
        found.append(("file", path if ("p" in flags or "P" in flags) else f"{name} is {path}"))
    if not found:
        if "t" not in flags and "p" not in flags and "P" not in flags:
            sh.error(f"type: {name}: not found")
        return 1
    for kind, text in found:
        if "p" in flags and kind != "file":
            continue
        sh.out((kind if "t" in flags else text) + "\n")
    return 0


@builtin("command")
def command_builtin(sh, argv):
    args = argv[1:]
    flags = set()
    while args and args[0].startswith("-") and len(args[0]) > 1:
        if args[0] == "--":
            args = args[1:]
            break
        flags.update(args[0][1:])
        args = args[1:]
    if "v" in flags or "V" in flags:
        found = False                 # bash fails only when no name was found
        for name in args:
            kind, path = describe_command(sh, name)
            if kind is None:
                if "V" in flags:
                    sh.error(f"command: {name}: not found")
                continue
            found = True
            if "V" in flags:
                text = {"keyword": "a shell keyword", "function": "a function",
                        "builtin": "a shell builtin", "file": path}[kind]
                sh.out(f"{name} is {text}\n")
                if kind == "function":
                    from ..printer import function_source
                    sh.out(function_source(sh.functions[name]) + "\n")
            else:
                sh.out((path if kind == "file" else name) + "\n")
        return 0 if found else 1
    if not args:
        return 0
    name = args[0]
    if name in sh.builtins:
        return sh.builtins[name](sh, args)
    own = sh.shadowed.get(name)
    if own is not None:                 # the shell's own, not the tool that took its name
        kind, fn = own
        return fn(sh, args) if kind == "builtin" else call_command(sh, name, fn, args)
    if "p" in flags:          # command -p: $PATH's default value for this lookup
        from ..variables import TempScope
        from .files import DEFAULT_PATH
        sh.scopes.append(TempScope(PATH=Var(DEFAULT_PATH, EXPORT)))
        try:
            return _dispatch_command(sh, name, args)
        finally:
            sh.scopes.pop()
    return _dispatch_command(sh, name, args)


def _dispatch_command(sh, name: str, args: list) -> int:
    """`command NAME`: NAME as a command or program, never a shell function."""
    command = sh.commands.get(name)
    if command is not None:
        return call_command(sh, name, command, args)
    return command_not_found(sh, name, args)


@builtin("builtin")
def builtin_builtin(sh, argv):
    if len(argv) > 1 and argv[1] == "--":
        argv = argv[:1] + argv[2:]
    if len(argv) < 2:
        return 0
    fn = sh.builtins.get(argv[1])
    if fn is None:
        kind, fn = sh.shadowed.get(argv[1], (None, None))
        if kind != "builtin":
            fn = None
    if fn is None:
        sh.error(f"builtin: {argv[1]}: not a shell builtin")
        return 1
    return fn(sh, argv[1:])


@builtin("trap")
def trap(sh, argv):
    args = argv[1:]
    if args and args[0] == "--":
        args = args[1:]
    if args and args[0] == "-l":
        sh.out("".join(f"{n:2d}) SIG{name}\n" for name, n in SIGNALS.items() if n))
        return 0
    if not args or args[0] == "-p":
        wanted = args[1:] if args else []
        status = 0
        for name in wanted:
            if _signal_name(name) is None:
                sh.error(f"trap: {name}: invalid signal specification")
                status = 1
        names = [_signal_name(n) for n in wanted if _signal_name(n)] if wanted else \
            sorted(sh.traps, key=_trap_order)
        for sig in names:
            if sig in sh.traps:
                shown = sig if sig in ("EXIT", "DEBUG", "ERR", "RETURN") else "SIG" + sig
                sh.out(f"trap -- {_quote(sh.traps[sig])} {shown}\n")
        return status
    if len(args) == 1:
        args = ["-", args[0]]
    action, signals = args[0], args[1:]
    status = 0
    for name in signals:
        sig = _signal_name(name)
        if sig is None:
            sh.error(f"trap: {name}: invalid signal specification")
            status = 1
        elif action == "-":
            sh.traps.pop(sig, None)
        else:
            sh.traps[sig] = action
            if sig == "RETURN":        # fires as the functions running now return
                sh.return_trap_depth = sh.call_depth
    return status


SIGNALS = {"EXIT": 0, "HUP": 1, "INT": 2, "QUIT": 3, "ILL": 4, "TRAP": 5, "ABRT": 6, "BUS": 7,
           "FPE": 8, "KILL": 9, "USR1": 10, "SEGV": 11, "USR2": 12, "PIPE": 13, "ALRM": 14,
           "TERM": 15, "CHLD": 17, "CONT": 18, "STOP": 19, "TSTP": 20, "TTIN": 21, "TTOU": 22,
           "DEBUG": 100, "ERR": 101, "RETURN": 102}


def _signal_name(name: str):
    """EXIT, INT, ... for a trap's signal given as a name, SIGNAME or number; None if unknown."""
    upper = name.upper()
    upper = upper[3:] if upper.startswith("SIG") else upper
    if upper.isdigit():
        return next((n for n, k in SIGNALS.items() if k == int(upper) and k < 100), None)
    return upper if upper in SIGNALS else None


def _trap_order(name: str) -> int:
    return SIGNALS.get(name, 200)


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


@builtin("caller")
def caller(sh, argv):
    """`caller [N]`: where the running function (or the Nth caller up) was called from."""
    frames = len(sh.funcnames)
    if frames == 0:
        return 1
    if len(argv) < 2:
        source = "environment" if frames > 1 else "NULL"
        sh.out(f"{sh.call_lines[-1]} {source}\n")
        return 0
    text = argv[1]
    if not (text.isascii() and text.isdigit()):
        sh.error(f"caller: {text}: invalid number")
        sh.err("caller: usage: caller [expr]\n")
        return 2
    n = int(text)
    if n + 1 >= frames:
        return 1
    sh.out(f"{sh.call_lines[-1 - n]} {sh.funcnames[-2 - n]} environment\n")
    return 0


@builtin("exec")
def exec_builtin(sh, argv):
    if len(argv) == 1:
        return 0
    raise ExitSignal(dispatch(sh, argv[1], argv[1:]))


@builtin("times")
def times(sh, argv):
    sh.out("0m0.000s 0m0.000s\n0m0.000s 0m0.000s\n")
    return 0


@builtin("hash", "ulimit", "enable", "alias", "unalias", "set_prompt",
         "suspend", "logout", "history", "fc", "compgen",
         "complete", "compopt", "bind", "help_bash")
def unsupported(sh, argv):
    sh.error(f"{argv[0]}: not available in logic mode")
    return 1


def raise_fatal(message: str):
    raise FatalError(message)


__all__ = ["describe_command"]
