"""A cell's JSON result: a tree that keeps the key order jq printed, wherever it is shown.

Notebook files are written with their keys sorted (nbformat), so an `application/json` object
whose keys were in another order comes back reordered when the notebook is reopened. The bundle
therefore always carries an HTML tree (the order is in the markup: JupyterLab after a reload,
nbconvert, GitHub and VS Code show it), and `application/json` (JupyterLab's JSON viewer)
only when sorting would not change the document.
"""
from __future__ import annotations

import json

from .markup import Html, html, join

MAX_TREE_CHARS = 2_000_000      # a longer document is shown as its text only

# the view's own markup (Html: put into the templates as it is): styles and punctuation
_KEY = Html("color:var(--jp-mirror-editor-property-color,#0055aa)")
_STRING = Html("color:var(--jp-mirror-editor-string-color,#a31515)")
_NUMBER = Html("color:var(--jp-mirror-editor-number-color,#098658)")
_LITERAL = Html("color:var(--jp-mirror-editor-keyword-color,#0000ff)")
_MUTED = Html("color:var(--jp-content-font-color3,#888888)")
_NOTHING, _COMMA, _EMPTY_OBJECT, _EMPTY_ARRAY = Html(""), Html(","), Html("{}"), Html("[]")
_BRACES, _BRACKETS = (Html("{"), Html("}")), (Html("["), Html("]"))


def sort_stable(value) -> bool:
    """Whether writing `value` with sorted keys keeps it as it is."""
    if isinstance(value, dict):
        keys = list(value)
        return keys == sorted(keys) and all(sort_stable(v) for v in value.values())
    if isinstance(value, list):
        return all(sort_stable(v) for v in value)
    return True


def _style(value) -> Html:
    if isinstance(value, str):
        return _STRING
    if isinstance(value, bool) or value is None:
        return _LITERAL
    return _NUMBER


def _node(value, key, comma: bool) -> Html:
    """One value of the tree: a line for a scalar or an empty container, a section that opens
    for the others; `key` is its key in an object (None in an array and at the top)."""
    label = _NOTHING if key is None else html("<span style='{}'>{}</span>: ", _KEY, json.dumps(key, ensure_ascii=False))
    tail = _COMMA if comma else _NOTHING
    if not isinstance(value, (dict, list)):       # one call for a scalar's line: the tree's most of them
        return html("<div>{}<span style='{}'>{}</span>{}</div>", label, _style(value),
                    json.dumps(value, ensure_ascii=False), tail)
    if not value:
        return html("<div>{}{}{}</div>", label, _EMPTY_OBJECT if isinstance(value, dict) else _EMPTY_ARRAY, tail)
    is_dict = isinstance(value, dict)
    opening, closing = _BRACES if is_dict else _BRACKETS
    items = list(value.items()) if isinstance(value, dict) else [(None, v) for v in value]
    count = f"{len(items)} {'key' if is_dict else 'item'}{'s' if len(items) != 1 else ''}"
    last = len(items) - 1
    children = join([_node(v, k, i < last) for i, (k, v) in enumerate(items)])
    return html("<details open><summary>{}{}<span style='{}'> {}</span></summary>"
                "<div style='padding-left:1.5em'>{}</div>{}{}</details>",
                label, opening, _MUTED, count, children, closing, tail)


def tree_html(value) -> Html:
    return html("<div class='scripted-json' style='font-family:var(--jp-code-font-family,monospace);"
                "font-size:var(--jp-code-font-size,13px);line-height:1.45'>{}</div>", _node(value, None, False))


def json_bundle(value, text: str) -> dict:
    """The display bundle of one JSON document printed as `text`."""
    bundle = {"text/plain": text.rstrip("\n")}
    try:
        if len(text) <= MAX_TREE_CHARS:
            bundle["text/html"] = tree_html(value)
        if sort_stable(value):
            bundle["application/json"] = value
    except RecursionError:             # nested deeper than a tree can be drawn: the text only
        bundle = {"text/plain": bundle["text/plain"]}
    return bundle


class JSONResult:
    """A cell's JSON result, its Out[n]: `value` is the parsed document, `text` what the
    script printed; indexing, `len` and iteration go to the value. (Not a dict or list
    subclass: IPython would then print it with its own pretty-printer.)"""

    def __init__(self, value, text: str):
        self.value = value
        self.text = text

    def _repr_mimebundle_(self, include=None, exclude=None):
        return json_bundle(self.value, self.text)

    def __getitem__(self, key):
        return self.value[key]

    def __len__(self):
        return len(self.value)

    def __iter__(self):
        return iter(self.value)

    def __contains__(self, item):
        return item in self.value

    def __eq__(self, other):
        return self.value == (other.value if isinstance(other, JSONResult) else other)

    __hash__ = None  # type: ignore[assignment]  # unhashable, as a dict or list: mypy refuses the idiom

    def __repr__(self):
        return self.text.rstrip("\n")


def json_result(value, text: str):
    """`value` (the parsed document) as a cell's result."""
    return JSONResult(value, text)
