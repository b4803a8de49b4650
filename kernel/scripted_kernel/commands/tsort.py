"""tsort: topological sort (GNU coreutils), with GNU's output: Kahn's algorithm over the items
in byte order (GNU keeps them in a search tree), each item's successors most recent first, and
GNU's report of each loop and the relation it removes to break it.

GNU finds a loop by walking its tree again and again, tracing predecessors back from the first
item left (detect_loop); that is quadratic (a cycle of 20,000 items: seconds in C, minutes in a
port). Here each item keeps its predecessors by tree position, so each step of that trace (the
first predecessor after the current item, in tree order, wrapping around) is a search, and the
relations removed or printed drop out of it: the same loops, in near-linear time. Every loop
reads the clock."""
from __future__ import annotations

import re
from bisect import bisect_right
from typing import Optional

from ..fs import FsError
from ._bytes import read_bytes, shell_quote, text
from ._options import UsageError, bad_usage, parse
from .registry import Usage, command

USAGE = Usage("[OPTION] [FILE]", "Write totally ordered list consistent with the partial "
              "ordering in FILE.")
_DELIMITERS = re.compile(rb"[ \t\n]+")        # GNU's readtoken: nothing else separates tokens
_CLOCK_EVERY = 4096


class Item:
    __slots__ = ("name", "position", "count", "successors", "printed", "predecessors")

    def __init__(self, name: bytes):
        self.name, self.position, self.count, self.printed = name, 0, 0, False
        self.successors: list[Item] = []           # in input order: GNU's list is the reverse
        self.predecessors: Optional[Predecessors] = None


class Predecessors:
    """The items with a relation to one item, by tree position, and which of them still count
    (not printed, a relation left): the next one after a position is a search over a skip list
    that passes the dead ones (with path compression)."""

    def __init__(self, sources: list):
        self.relations: dict = {}                   # item -> relations from it still there
        for item in sources:
            self.relations[item] = self.relations.get(item, 0) + 1
        self.items = sorted(self.relations, key=lambda item: item.position)
        self.positions = [item.position for item in self.items]
        self.skip = list(range(len(self.items) + 1))       # skip[i] == i: alive (the end too)

    def _alive_from(self, i: int) -> int:
        root = i
        while self.skip[root] != root:
            root = self.skip[root]
        while self.skip[i] != root:                         # path compression
            self.skip[i], i = root, self.skip[i]
        return root

    def drop(self, item: "Item"):
        """`item` no longer counts (printed, or its last relation removed)."""
        k = bisect_right(self.positions, item.position) - 1
        self.skip[k] = k + 1

    def remove_relation(self, item: "Item"):
        self.relations[item] -= 1
        if not self.relations[item]:
            self.drop(item)

    def next_after(self, position: int) -> "Item":
        """The first predecessor that counts after `position` in tree order, else the first."""
        k = self._alive_from(bisect_right(self.positions, position))
        if k == len(self.items):
            k = self._alive_from(0)
        return self.items[k]


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
    tokens = [token for token in _DELIMITERS.split(data) if token]
    if len(tokens) % 2:
        raise UsageError(f"tsort: {shell_quote(name)}: input contains an odd number of tokens")
    items: dict = {}
    for k in range(0, len(tokens), 2):
        a = items.setdefault(tokens[k], Item(tokens[k]))
        b = items.setdefault(tokens[k + 1], Item(tokens[k + 1]))
        if a is not b:
            a.successors.append(b)
            b.count += 1
        if not k & 0xFFFF:
            ctx.budget.check_clock()
    ordered = [items[key] for key in sorted(items)]
    for position, item in enumerate(ordered):
        item.position = position
    return TopologicalSort(ctx, ordered, name).run()


class TopologicalSort:
    def __init__(self, ctx, ordered: list, name: str):
        self.ctx, self.ordered, self.name = ctx, ordered, name
        self.out: list[str] = []
        self.first_left = 0                 # no item before this position is left to print
        self.steps = 0
        self.tracing = False                # the predecessors are kept (from the first loop on)

    def run(self) -> int:
        status = 0
        queue = [item for item in self.ordered if item.count == 0]
        while True:
            self._print(queue)
            first = self._first_left()
            if first is None:
                break
            status = 1
            self.ctx.err(f"tsort: {shell_quote(self.name)}: input contains a loop:\n")
            freed = self._break_loop(first)
            queue = [freed] if freed is not None else []
        self.ctx.out("".join(self.out))
        return status

    def _tick(self):
        self.steps += 1
        if not self.steps % _CLOCK_EVERY:
            self.ctx.budget.check_clock()

    def _print(self, queue: list):
        """Kahn's algorithm from the items in `queue` (their count is 0)."""
        k = 0
        while k < len(queue):
            item = queue[k]
            k += 1
            self._tick()
            self.out.append(text(item.name) + "\n")
            item.printed = True
            for successor in reversed(item.successors):
                successor.count -= 1
                if successor.count == 0:
                    queue.append(successor)
            if self.tracing:
                for successor in set(item.successors):
                    if not successor.printed:
                        successor.predecessors.drop(item)

    def _first_left(self) -> Optional[Item]:
        while self.first_left < len(self.ordered) and self.ordered[self.first_left].printed:
            self.first_left += 1
        return self.ordered[self.first_left] if self.first_left < len(self.ordered) else None

    def _trace_predecessors(self):
        """Every item left (all in loops or after them) gets its predecessors that are left."""
        self.tracing = True
        left = [item for item in self.ordered[self.first_left:] if not item.printed]
        sources: dict = {item: [] for item in left}
        for item in left:
            self._tick()
            for successor in item.successors:
                sources[successor].append(item)
        for item in left:
            item.predecessors = Predecessors(sources[item])

    def _break_loop(self, first: Item) -> Optional[Item]:
        """GNU detect_loop: trace predecessors back from the first item left, each the first
        after the one before in tree order, until one comes round again; print the items from
        there, remove the relation that closed the loop. The item it pointed to, if that freed it."""
        if not self.tracing:
            self._trace_predecessors()
        head, chain = first, {}             # chain: item -> the item traced before it (qlink)
        while True:
            self._tick()
            assert head.predecessors is not None
            found = head.predecessors.next_after(head.position)
            if found in chain:
                break
            chain[found] = head
            head = found
        member = head
        while True:
            self._tick()
            self.ctx.err(f"tsort: {text(member.name)}\n")
            if member is found:
                break
            member = chain[member]
        last = len(found.successors) - 1 - found.successors[::-1].index(head)   # GNU's first
        del found.successors[last]
        head.predecessors.remove_relation(found)
        head.count -= 1
        return head if head.count == 0 else None
