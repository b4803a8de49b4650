"""basename and dirname: string work on paths (no file is touched)."""
from __future__ import annotations

from ._options import bad_usage, parse
from .registry import command



def _basename(path: str, suffix: str = "") -> str:
    stripped = path.rstrip("/")
    if not stripped:
        return "/" if path.startswith("/") else ""
    base = stripped.rsplit("/", 1)[-1]
    if suffix and base != suffix and base.endswith(suffix):
        base = base[:-len(suffix)]
    return base


def _dirname(path: str) -> str:
    stripped = path.rstrip("/")
    if not stripped:
        return "/" if path.startswith("/") else "."
    if "/" not in stripped:
        return "."
    head = stripped.rsplit("/", 1)[0].rstrip("/")
    return head or "/"


@command("basename", "dirname")
def run(ctx, argv):
    cmd = argv[0]

    if cmd == "dirname":
        opts, ops = parse(cmd, argv, short_flags="z", long_flags={"zero": "z"})
        if not ops:
            raise bad_usage("dirname", "missing operand")
        end = "\0" if opts.has("z") else "\n"
        ctx.out("".join(_dirname(p) + end for p in ops))
        return 0
    opts, ops = parse(cmd, argv, short_flags="az", short_values="s",
                      long_flags={"multiple": "a", "zero": "z"}, long_values={"suffix": "s"})
    if not ops:
        raise bad_usage("basename", "missing operand")
    end = "\0" if opts.has("z") else "\n"
    suffix = opts.get("s", "")
    if opts.has("a") or opts.has("s"):
        names = ops
    else:
        if len(ops) > 2:
            raise bad_usage("basename", f"extra operand '{ops[2]}'")
        names, suffix = [ops[0]], (ops[1] if len(ops) == 2 else "")
    ctx.out("".join(_basename(p, suffix) + end for p in names))
    return 0
