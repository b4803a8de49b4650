"""Variables: scalars, sparse indexed arrays, associative arrays, attributes and scopes."""
from __future__ import annotations

from typing import Optional

EXPORT, READONLY, INTEGER, LOWER, UPPER, NAMEREF, CAPITALIZE = 1, 2, 4, 8, 16, 32, 64


class IndexedArray:
    """bash's sparse indexed array. Keeps the next append index and whether the keys are in
    ascending insertion order, so appends and iteration stay O(1) per element."""
    __slots__ = ("d", "top", "ordered")

    def __init__(self, values=None):
        self.d: dict[int, str] = {}
        self.top = 0
        self.ordered = True
        if values:
            for v in values:
                self.d[self.top] = v
                self.top += 1

    def copy(self) -> "IndexedArray":
        new = IndexedArray()
        new.d = dict(self.d)
        new.top = self.top
        new.ordered = self.ordered
        return new

    def resolve(self, i: int) -> Optional[int]:
        """A negative index counts back from the highest index + 1; None when out of range."""
        if i < 0:
            i += self.top
            if i < 0:
                return None
        return i

    def get(self, i: int) -> Optional[str]:
        if i < 0:
            i += self.top
        return self.d.get(i)

    def set(self, i: int, value: str):
        d = self.d
        if i not in d:
            if i >= self.top:
                self.top = i + 1
            elif d:
                self.ordered = False
        d[i] = value

    def append(self, value: str):
        self.d[self.top] = value
        self.top += 1

    def unset(self, i: int):
        if self.d.pop(i, None) is not None and i == self.top - 1:
            self.top = max(self.d) + 1 if self.d else 0

    def keys(self) -> list:
        if not self.ordered:
            self.d = dict(sorted(self.d.items()))
            self.ordered = True
        return list(self.d)

    def values(self) -> list:
        if not self.ordered:
            self.d = dict(sorted(self.d.items()))
            self.ordered = True
        return list(self.d.values())

    def __len__(self):
        return len(self.d)


def _fnv1(key: str) -> int:
    h = 2166136261
    for b in key.encode("utf-8", "surrogateescape"):
        h = ((h * 16777619) & 0xFFFFFFFF) ^ b
    return h


def assoc_order(d: dict) -> list:
    """The keys of an associative array in the order bash lists them: bash keeps them in a hash
    table (FNV-1, 1024 buckets, growing 4x at 2 entries a bucket) with the newest key first in
    its bucket."""
    n = len(d)
    if n < 2:
        return list(d)
    buckets = 1024
    while n >= buckets * 2:
        buckets *= 4
    mask = buckets - 1
    keyed = [(_fnv1(k) & mask, -i, k) for i, k in enumerate(d)]
    keyed.sort()
    return [k for _, _, k in keyed]


class Var:
    """One variable. `value` is a str (scalar), an IndexedArray, a dict (associative array),
    or None (declared but unset, e.g. `local x`).

    A subshell shares its parent's Var objects (copy on write): `owner` is the token of the
    shell that may change this one in place; any other shell copies it first (see
    Shell.lookup_own). None: no shell owns it yet.

    `number` is the integer arithmetic last stored, as the string `number_text`: while
    `value` is that very string, arithmetic reads the number without parsing the text again
    (`i++` in a loop). Any other assignment stores another string, and the pair is ignored."""
    __slots__ = ("value", "attrs", "owner", "number_text", "number")

    def __init__(self, value=None, attrs: int = 0, owner=None):
        self.value = value
        self.attrs = attrs
        self.owner = owner
        self.number_text: Optional[str] = None
        self.number = 0

    def copy(self, owner=None) -> "Var":
        v = self.value
        if type(v) is IndexedArray:
            v = v.copy()
        elif type(v) is dict:
            v = dict(v)
        return Var(v, self.attrs, owner)

    @property
    def is_array(self) -> bool:
        return type(self.value) is IndexedArray

    @property
    def is_assoc(self) -> bool:
        return type(self.value) is dict

    def scalar(self) -> Optional[str]:
        """$name: a scalar's value, an array's element 0."""
        v = self.value
        if type(v) is str or v is None:
            return v
        if type(v) is IndexedArray:
            return v.d.get(0)
        return v.get("0")

    def values(self) -> list:
        v = self.value
        if v is None:
            return []
        if type(v) is str:
            return [v]
        if type(v) is IndexedArray:
            return v.values()
        return [v[k] for k in assoc_order(v)]

    def keys(self) -> list:
        v = self.value
        if v is None:
            return []
        if type(v) is str:
            return ["0"]
        if type(v) is IndexedArray:
            return [str(k) for k in v.keys()]
        return assoc_order(v)
