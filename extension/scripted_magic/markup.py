"""The one way the notebook makes HTML: a template of its own markup, every value escaped.

What the views show comes from scripts (output, JSON keys, tool parameters), tools (names,
descriptions, schemas, results), files (names) and the user. A browser runs the markup of a
`text/html` output of a cell the user ran (and nbconvert copies it into an exported page), so
none of those strings may ever reach a view as markup: `html("<td>{}</td>", value)` escapes
`value` (`<`, `>`, `&` and both quotes, so a value is also safe in a quoted attribute), and
only what `html` or `join` made passes unescaped into another template. Build no HTML with
f-strings or `+` (tests/hardening/test_notebook_attacks.py checks the sources for it): a
string that lost its `Html` type is escaped again, shown as text, never run.
"""
from __future__ import annotations

from html import escape
from typing import Iterable


class Html(str):
    """Markup made by `html` or `join`: safe to put into another template as it is."""
    __slots__ = ()


def html(template: str, *values) -> Html:
    """`template`, which must be a constant of the view's own markup, with each `{}` filled by
    the next value: an Html value as it is, anything else as text (escaped)."""
    return Html(template.format(*[v if isinstance(v, Html) else escape(str(v)) for v in values]))


def join(parts: Iterable) -> Html:
    """The parts one after the other, each escaped unless it is Html."""
    return Html("".join([p if isinstance(p, Html) else escape(str(p)) for p in parts]))
