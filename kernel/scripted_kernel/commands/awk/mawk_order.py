"""`for (key in array)` in mawk's order.

POSIX leaves the order unspecified; scripts compared with the system awk (mawk on Debian and
Ubuntu) should print the same lines in the same order. mawk 1.3.4 keeps each array as a hash
table with two lists per bucket: one for keys used as strings (FNV-1a of the text, bucket =
hash & hmask) and one for keys used as integers (bucket = value & hmask). A key found or added
moves to the front of its list; a loop walks the string lists bucket by bucket. Integer-only
arrays (and split()'s) get their string lists only when first needed, by walking the integer
lists in the same way. The table starts with 64 buckets and doubles once it holds more than 12
keys a bucket on average; deleting never shrinks it.

`MawkArray` records what that order needs: the dict's own order is the order of last use on
the string lists (oldest first), `by_string` tells whether the string lists exist yet,
`on_ilist` which keys are also on an integer list, `peak` the largest size reached since the
array was last emptied. Only programs that contain a `for (k in a)` use it (see codegen), so
other programs pay nothing.
"""
from __future__ import annotations

MAX_INT = 0x7FFFFFFF          # mawk's Int; integral numbers beyond it are used as strings
_START_HMASK = 63
_KEYS_PER_BUCKET = 12


class MawkArray(dict):
    __slots__ = ("by_string", "peak", "on_ilist")

    def __init__(self, *args):
        super().__init__(*args)
        self.by_string = bool(self)       # a copied array (ENVIRON, ARGV) was built by name
        self.peak = 0
        self.on_ilist: set = set()        # keys also on an integer list, once by_string

    def clear(self):
        dict.clear(self)
        self.by_string = False
        self.peak = 0
        self.on_ilist = set()

    def pop(self, key, default=None):
        if len(self) > self.peak:
            self.peak = len(self)
        self.on_ilist.discard(key)
        return dict.pop(self, key, default)


def touch(arr, value, to_str) -> str:
    """The key for `value` in `arr`, after moving an existing key to the end of `arr`'s
    order as mawk moves it to the front of its list."""
    if type(value) is float and value.is_integer() and -MAX_INT <= value <= MAX_INT:
        key = str(int(value))
        if not arr.by_string:
            if key in arr:
                arr[key] = dict.pop(arr, key)
        elif key not in arr.on_ilist:
            # found (or added) through the string lists, then put on an integer list too;
            # later integer uses leave the string lists alone
            arr.on_ilist.add(key)
            if key in arr:
                arr[key] = dict.pop(arr, key)
        return key
    key = to_str(value)
    if not arr.by_string:
        _add_string_lists(arr)
    if key in arr:
        arr[key] = dict.pop(arr, key)
    return key


def loop_order(arr) -> list:
    """The keys of `arr` in the order mawk's `for (k in arr)` visits them."""
    if type(arr) is not MawkArray:
        return list(arr)
    if not arr.by_string:
        _add_string_lists(arr)
    hmask = _hmask(arr)
    return sorted(reversed(arr), key=lambda k: _fnv1a(k) & hmask)


def _add_string_lists(arr):
    """mawk's first string use of an integer-keyed array: walk the integer lists (most recent
    first in each) and push each key onto the front of its string list, so the walk's order
    becomes the string lists' order of use."""
    hmask = _hmask(arr)
    walk = sorted(reversed(arr), key=lambda k: int(k) & hmask)
    for key in walk:
        arr[key] = dict.pop(arr, key)
    arr.on_ilist = set(arr)
    arr.by_string = True


def _hmask(arr) -> int:
    hmask = _START_HMASK
    size = max(arr.peak, len(arr))
    while size > (hmask + 1) * _KEYS_PER_BUCKET:
        hmask = hmask * 2 + 1
    return hmask


def _fnv1a(text: str) -> int:
    h = 2166136261
    for byte in text.encode("utf-8", "surrogateescape"):
        h = ((h ^ byte) * 16777619) & 0xFFFFFFFF
    return h
