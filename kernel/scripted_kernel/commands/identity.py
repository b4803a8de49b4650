"""whoami, hostname, env, printenv: the script's own identity and exported variables (never
the host's)."""
from __future__ import annotations

from .registry import Usage, command


def _whoami(ctx, argv):
    ctx.out(getattr(ctx.fs, "user", None) or ctx.getenv("USER") or "user")
    ctx.out("\n")
    return 0


def _hostname(ctx, argv):
    ctx.out((ctx.hostname or "sandbox") + "\n")
    return 0


def _printenv(ctx, argv):
    args = [a for a in argv[1:] if a not in ("-0", "--null")]
    end = "\0" if len(args) != len(argv) - 1 else "\n"
    env = ctx.env()
    if not args:
        ctx.out("".join(f"{k}={v}{end}" for k, v in env.items()))
        return 0
    status = 0
    for name in args:
        if name in env:
            ctx.out(env[name] + end)
        else:
            status = 1
    return status


def _env(ctx, argv):
    """env [-i] [-u NAME] [NAME=VALUE]... [COMMAND [ARG]...]"""
    args = argv[1:]
    env = ctx.env()
    while args and args[0].startswith("-") and args[0] != "-":
        a = args.pop(0)
        if a in ("-i", "--ignore-environment"):
            env = {}
        elif a in ("-u", "--unset") and args:
            env.pop(args.pop(0), None)
        elif a == "--":
            break
        else:
            ctx.err(f"env: invalid option -- '{a.lstrip('-')[:1]}'\nTry 'env --help' for more information.\n")
            return 125
    if args and args[0] == "-":
        env = {}
        args.pop(0)
    while args and "=" in args[0] and not args[0].startswith("="):
        name, _, value = args.pop(0).partition("=")
        env[name] = value
    if not args:
        ctx.out("".join(f"{k}={v}\n" for k, v in env.items()))
        return 0
    return _run_with(ctx, env, args)


def _run_with(ctx, env: dict, argv: list) -> int:
    """COMMAND run with exactly `env` as its environment (env runs programs, never shell
    functions)."""
    status = ctx.run(argv, env=env)
    if status is None:
        ctx.err(f"env: ‘{argv[0]}’: No such file or directory\n")
        return 127
    return status


_IMPLS = {"whoami": _whoami, "hostname": _hostname, "env": _env, "printenv": _printenv}


USAGES = {
    "whoami": Usage("", "Print the user name associated with the current effective user ID."),
    "hostname": Usage("", "Show the system's host name."),
    "env": Usage("[NAME=VALUE]... [COMMAND [ARG]...]", "Print the environment, or run COMMAND in a modified one."),
    "printenv": Usage("[VARIABLE]...", "Print the values of the specified environment VARIABLE(s), or all of them."),
}


@command("whoami", "hostname", "env", "printenv", usage=USAGES)
def run(ctx, argv):
    return _IMPLS[argv[0]](ctx, argv)
