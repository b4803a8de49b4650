"""IFS word splitting: the fields of an unquoted expansion, as bash splits them."""
from __future__ import annotations

import re

DEFAULT_IFS = " \t\n"


class Fields(list):
    """Fields already split (an unquoted `${x:-a "b c"}`): joined at the edges, never re-split."""


def split_fields(items, ifs: str) -> list[str]:
    """items: (value, splittable) pairs; value is str or list (multi-field). → fields."""
    fields: list[str] = []
    cur: list[str] = []
    started = False
    ws = "".join(c for c in ifs if c in " \t\n")
    other = "".join(c for c in ifs if c not in " \t\n")
    for value, splittable in items:
        if type(value) is str:
            if not splittable:
                cur.append(value)
                started = True
            elif value:
                started = _split_into(value, ifs, ws, other, cur, started, fields)
            continue
        if not value:           # a list: several fields
            continue
        if type(value) is Fields or not splittable:
            cur.append(value[0])
            started = True
            for v in value[1:]:
                fields.append("".join(cur))
                cur.clear()
                cur.append(v)
            continue
        if ifs and ifs[0] in other:
            # bash joins an unquoted $@ / $* / ${a[@]} with IFS's first character and splits
            # the result: with a non-blank separator, an empty element in the middle stays an
            # empty field ("a" "" "b" with IFS=: gives a, "", b), a trailing one does not
            started = _split_into(ifs[0].join(value), ifs, ws, other, cur, started, fields)
            continue
        for k, v in enumerate(value):
            if k and started:
                fields.append("".join(cur))
                cur.clear()
                started = False
            if v:
                started = _split_into(v, ifs, ws, other, cur, started, fields)
    if started:
        fields.append("".join(cur))
    return fields


def _split_into(value: str, ifs: str, ws: str, other: str, cur: list, started: bool,
                fields: list) -> bool:
    """Split `value` onto the field being built in `cur` (emitting finished fields).
    Returns whether a field is still open."""
    if not ifs:
        cur.append(value)
        return True
    if not other:
        pieces = value.split() if ws == DEFAULT_IFS else [p for p in re.split(
            "[" + re.escape(ws) + "]+", value) if p]
        if not pieces:
            if started:
                fields.append("".join(cur))
                cur.clear()
            return False
        if started and value[0] in ws:
            fields.append("".join(cur))
            cur.clear()
        cur.append(pieces[0])
        for piece in pieces[1:]:
            fields.append("".join(cur))
            cur.clear()
            cur.append(piece)
        if value[-1] in ws:
            fields.append("".join(cur))
            cur.clear()
            return False
        return True
    i, n = 0, len(value)
    in_field = started
    while i < n:
        c = value[i]
        if c in ws:
            while i < n and value[i] in ws:
                i += 1
            if i < n and value[i] in other:       # "ws : ws" is one delimiter
                fields.append("".join(cur))
                cur.clear()
                in_field = False
                i += 1
                while i < n and value[i] in ws:
                    i += 1
            elif in_field:
                fields.append("".join(cur))
                cur.clear()
                in_field = False
            continue
        if c in other:
            fields.append("".join(cur))
            cur.clear()
            in_field = False
            i += 1
            while i < n and value[i] in ws:
                i += 1
            continue
        j = i
        while j < n and value[j] not in ifs:
            j += 1
        cur.append(value[i:j])
        in_field = True
        i = j
    return in_field
