"""basename and dirname: string work on paths (no file is touched)."""
from __future__ import annotations

from ._options import bad_usage, parse
from .registry import Usage, command



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


USAGES = {
    "basename": Usage("NAME [SUFFIX]  or:  basename OPTION... NAME...",
                      "Print NAME with any leading directory components removed.", (
        "-a, --multiple       support multiple arguments and treat each as a NAME",
        "-s, --suffix=SUFFIX  remove a trailing SUFFIX; implies -a",
        "-z, --zero           end each output line with NUL, not newline")),
    "dirname": Usage("[OPTION] NAME...",
                     "Output each NAME with its last non-slash component and trailing slashes removed.", (
        "-z, --zero           end each output line with NUL, not newline",)),
}


@command("basename", "dirname", usage=USAGES)
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
