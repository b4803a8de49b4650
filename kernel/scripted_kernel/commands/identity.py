"""whoami, hostname, env, printenv: the script's own identity and exported variables (never
the host's)."""
from __future__ import annotations

from ._options import run_guarded

NAMES = ("whoami", "hostname", "env", "printenv")


def _whoami(sh, argv):
    sh.out(getattr(sh.fs, "user", None) or sh.get_value("USER") or "user")
    sh.out("\n")
    return 0


def _hostname(sh, argv):
    sh.out((sh.hostname or "sandbox") + "\n")
    return 0


def _printenv(sh, argv):
    args = [a for a in argv[1:] if a not in ("-0", "--null")]
    end = "\0" if len(args) != len(argv) - 1 else "\n"
    env = sh.exported_env()
    if not args:
        sh.out("".join(f"{k}={v}{end}" for k, v in env.items()))
        return 0
    status = 0
    for name in args:
        if name in env:
            sh.out(env[name] + end)
        else:
            status = 1
    return status


def _env(sh, argv):
    """env [-i] [-u NAME] [NAME=VALUE]... [COMMAND [ARG]...]"""
    args = argv[1:]
    env = sh.exported_env()
    while args and args[0].startswith("-") and args[0] != "-":
        a = args.pop(0)
        if a in ("-i", "--ignore-environment"):
            env = {}
        elif a in ("-u", "--unset") and args:
            env.pop(args.pop(0), None)
        elif a == "--":
            break
        else:
            sh.err(f"env: invalid option -- '{a.lstrip('-')[:1]}'\nTry 'env --help' for more information.\n")
            return 125
    if args and args[0] == "-":
        env = {}
        args.pop(0)
    while args and "=" in args[0] and not args[0].startswith("="):
        name, _, value = args.pop(0).partition("=")
        env[name] = value
    if not args:
        sh.out("".join(f"{k}={v}\n" for k, v in env.items()))
        return 0
    return _run_with(sh, env, args)


def _run_with(sh, env: dict, argv: list) -> int:
    """COMMAND run with exactly `env` exported (a temporary scope over the shell's)."""
    from ..shell.compile import _dispatch
    from ..shell.runtime import TempScope
    from ..shell.state import EXPORT, Var
    scope = TempScope()
    for name in sh.exported_env():
        if name not in env:
            scope[name] = Var(None, 0)
    for name, value in env.items():
        scope[name] = Var(value, EXPORT)
    sh.scopes.append(scope)
    try:
        if argv[0] in sh.functions:      # env runs programs, not shell functions
            sh.err(f"env: ‘{argv[0]}’: No such file or directory\n")
            return 127
        return _dispatch(sh, argv[0], argv)
    finally:
        sh.scopes.pop()


_IMPLS = {"whoami": _whoami, "hostname": _hostname, "env": _env, "printenv": _printenv}


def run(sh, argv):
    return run_guarded(argv[0], sh, lambda: _IMPLS[argv[0]](sh, argv))
