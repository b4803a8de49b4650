"""set and shopt."""
from __future__ import annotations


from .registry import builtin
from ..runtime import LONG_ONLY_OPTIONS, OPTION_NAMES, SET_OPTIONS
from .variables import set_listing, visible_variables

SETTABLE = frozenset(SET_OPTIONS)
ALL_OPTIONS = sorted(set(OPTION_NAMES.values()) | set(LONG_ONLY_OPTIONS))


def option_value(sh, name: str):
    if name in SETTABLE:
        return getattr(sh, name)
    if name in ("hashall", "braceexpand", "interactive-comments"):
        return True
    if name in ALL_OPTIONS:
        return False
    return None


def _set_option(sh, name: str, value: bool) -> bool:
    if name in SETTABLE:
        setattr(sh, name, value)
        if value and name in ("emacs", "vi"):      # the two editing modes exclude each other
            setattr(sh, "vi" if name == "emacs" else "emacs", False)
        return True
    return name in ALL_OPTIONS


def _print_options(sh, plus_form: bool):
    for name in ALL_OPTIONS:
        value = option_value(sh, name)
        if plus_form:
            sh.out(f"set {'-' if value else '+'}o {name}\n")
        else:
            sh.out(f"{name:<15}\t{'on' if value else 'off'}\n")


@builtin("set")
def set_builtin(sh, argv):
    args = argv[1:]
    if not args:
        seen = visible_variables(sh)
        for name in sorted(seen):
            var = seen[name]
            if var.value is None:
                continue
            sh.out(set_listing(name, var) + "\n")
        return 0
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            sh.positional = list(args[i + 1:])
            return 0
        if a == "-":            # `set - args`: turns off -x and -v, sets the arguments
            sh.xtrace = sh.verbose = False
            if i + 1 < len(args):
                sh.positional = list(args[i + 1:])
            return 0
        if a == "+":
            i += 1
            continue
        if a[0] not in "-+" or len(a) < 2:
            sh.positional = list(args[i:])
            return 0
        on = a[0] == "-"
        for c in a[1:]:
            if c == "o":
                i += 1
                if i >= len(args):
                    _print_options(sh, not on)
                    return 0
                name = args[i]
                if not _set_option(sh, name, on):
                    sh.error(f"set: {name}: invalid option name")
                    return 1
            elif c in OPTION_NAMES:
                _set_option(sh, OPTION_NAMES[c], on)
            else:
                sh.error(f"set: {a[0]}{c}: invalid option")
                sh.err("set: usage: set [-abefhkmnptuvxBCEHPT] [-o option-name] [--] [-] [arg ...]\n")
                return 2
        i += 1
    return 0


@builtin("shopt")
def shopt(sh, argv):
    args = argv[1:]
    mode = None
    quiet = print_form = use_set_o = False
    while args and args[0].startswith("-") and len(args[0]) > 1:
        for c in args[0][1:]:
            if c in "su":
                mode = c
            elif c == "q":
                quiet = True
            elif c == "p":
                print_form = True
            elif c == "o":
                use_set_o = True
            else:
                sh.error(f"shopt: -{c}: invalid option")
                sh.err("shopt: usage: shopt [-pqsu] [-o] [optname ...]\n")
                return 2
        args = args[1:]
    table = {n: option_value(sh, n) for n in ALL_OPTIONS} if use_set_o else sh.shopts
    if not args:
        for name in sorted(table):
            value = table[name]
            if mode == "s" and not value or mode == "u" and value:
                continue
            if print_form or mode:
                sh.out(f"{'set' if use_set_o else 'shopt'} {'-' if value else '+'}"
                       f"{'o' if use_set_o else ('s' if value else 'u')} {name}\n"
                       if use_set_o else f"shopt -{'s' if value else 'u'} {name}\n")
            elif not quiet:
                sh.out(f"{name:<15}\t{'on' if value else 'off'}\n")
        return 0
    status = 0
    for name in args:
        if name not in table:
            sh.error(f"shopt: {name}: invalid shell option name")
            status = 1
            continue
        if mode is None:
            value = table[name]
            if not quiet:
                if print_form and use_set_o:
                    sh.out(f"set {'-' if value else '+'}o {name}\n")
                elif print_form:
                    sh.out(f"shopt -{'s' if value else 'u'} {name}\n")
                else:
                    sh.out(f"{name:<15}\t{'on' if value else 'off'}\n")
            if not value:
                status = 1
        elif use_set_o:
            _set_option(sh, name, mode == "s")
        else:
            # a new dict: subshells share their parent's until they change it
            sh.shopts = {**sh.shopts, name: mode == "s"}
    return status
