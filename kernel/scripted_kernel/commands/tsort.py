"""tsort: topological sort (GNU coreutils), ported from its Knuth algorithm T so that the order
of the output and the loops it reports are GNU's: items are visited in byte order (GNU keeps
them in a search tree), each item's successors most recent first."""
from __future__ import annotations

from typing import Optional

from ..fs import FsError
from ..base.limits import check_clock
from ._bytes import read_bytes, shell_quote, text
from ._options import UsageError, bad_usage, parse
from .registry import Usage, command

USAGE = Usage("[OPTION] [FILE]", "Write totally ordered list consistent with the partial "
              "ordering in FILE.")


class Item:
    __slots__ = ("name", "count", "successors", "qlink", "done")

    def __init__(self, name: bytes):
        self.name, self.count, self.done = name, 0, False
        self.successors: list[Item] = []
        self.qlink: Optional[Item] = None


@command("tsort", usage=USAGE)
def run(ctx, argv):
    _, ops = parse("tsort", argv)
    if len(ops) > 1:
        raise bad_usage("tsort", f"extra operand ‘{ops[1]}’")
    name = ops[0] if ops else "-"
    try:
        data = read_bytes(ctx, name)
    except FsError as e:
        raise UsageError(f"tsort: {shell_quote(name)}: {e.strerror}") from None
    tokens = data.split()
    if len(tokens) % 2:
        raise UsageError(f"tsort: {shell_quote(name)}: input contains an odd number of tokens")
    items: dict = {}
    for k in range(0, len(tokens), 2):
        a = items.setdefault(tokens[k], Item(tokens[k]))
        b = items.setdefault(tokens[k + 1], Item(tokens[k + 1]))
        if a is not b:
            a.successors.insert(0, b)          # GNU prepends to the successor list
            b.count += 1
    ordered = [items[key] for key in sorted(items)]
    out: list[str] = []
    status = _sort(ctx, ordered, out, name)
    ctx.out("".join(out))
    return status


def _sort(ctx, ordered: list, out: list, name: str) -> int:
    remaining, status = len(ordered), 0
    while remaining:
        queue = [item for item in ordered if item.count == 0 and not item.done]
        k = 0
        while k < len(queue):
            item = queue[k]
            k += 1
            out.append(text(item.name) + "\n")
            item.done = True
            remaining -= 1
            for successor in item.successors:
                successor.count -= 1
                if successor.count == 0:
                    queue.append(successor)
            if not k & 4095:
                check_clock()
        if remaining:
            ctx.err(f"tsort: {shell_quote(name)}: input contains a loop:\n")
            status = 1
            _break_loop(ctx, ordered)
    return status


def _break_loop(ctx, ordered: list):
    """GNU detect_loop, walked over the items until one relation of a loop is removed."""
    loop: list[Optional[Item]] = [None]
    while True:
        for item in ordered:
            if _detect(ctx, item, loop):
                break
        if loop[0] is None:
            return


def _detect(ctx, k: Item, loop: list[Optional[Item]]) -> bool:
    if k.count <= 0 or k.done:
        return False
    if loop[0] is None:
        loop[0] = k
        return False
    for index, successor in enumerate(k.successors):
        if successor is not loop[0]:
            continue
        if k.qlink is None:
            k.qlink = loop[0]
            loop[0] = k
            return False
        member: Optional[Item] = loop[0]
        while member is not None:
            following = member.qlink
            ctx.err(f"tsort: {text(member.name)}\n")
            if member is k:
                successor.count -= 1
                del k.successors[index]
                break
            member.qlink = None
            member = following
        while member is not None:          # tidy the rest of the path for the next search
            following = member.qlink
            member.qlink = None
            member = following
        loop[0] = None
        return True
    return False
