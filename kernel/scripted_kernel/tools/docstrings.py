"""What a function's docstring tells a model: its summary and body, each parameter's whole
description, what it returns, and the choices a description spells out.

Parsing is docstring_parser's (Google, NumPy, reST/Sphinx and Epydoc styles, detected per
docstring); this module only decides what each part becomes. A section heading without the
blank line before it (`Args:` right under the summary) is still a section, a parameter's
description keeps all its lines and paragraphs, and `Returns` never lands on a parameter that
happens to share its name.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Optional



@dataclass
class DocInfo:
    """What a function's docstring says: its summary, body, parameters and result."""
    summary: str = ""                   # the first sentence or paragraph
    body: str = ""                      # the paragraphs after it (not the sections)
    params: dict = field(default_factory=dict)      # name -> whole description
    returns: Optional[str] = None       # what the Returns section says

    @property
    def description(self) -> str:
        return f"{self.summary}\n\n{self.body}" if self.body else self.summary


def parse_docstring(doc: Optional[str]) -> DocInfo:
    if not doc or not doc.strip():
        return DocInfo()
    import docstring_parser        # here: 10 ms of import that a tool without a docstring does not need
    try:
        parsed = docstring_parser.parse(doc)
    except docstring_parser.ParseError:        # malformed sections: the text is still a description
        return DocInfo(summary=_squash(doc))
    params = {p.arg_name: _paragraphs(p.description or "") for p in parsed.params
              if p.arg_name and not p.arg_name.startswith("*")}
    returns = parsed.returns.description if parsed.returns is not None else None
    return DocInfo(summary=_squash(parsed.short_description or ""),
                   body=_paragraphs(parsed.long_description or ""),
                   params=params, returns=_paragraphs(returns) if returns else None)


def _squash(text: str) -> str:
    return " ".join(text.split())


def _paragraphs(text: str) -> str:
    """Each paragraph on one line, paragraphs apart by a blank line."""
    return "\n\n".join(_squash(p) for p in re.split(r"\n\s*\n", text.strip()) if p.strip())


# ---------------------------------------------------------------- choices in prose

# `[Enum]: ["celsius", "fahrenheit"]`, `Enum: [...]`, `choices: [...]`: a JSON list
_LISTED = re.compile(r"(?:\[?enum\]?|choices|allowed values|options)\s*:\s*(\[[^\]]*\])", re.I)
# `one of: a, b or c`, `Must be one of "a", "b"`, `One of `x`, `y``
_ONE_OF = re.compile(r"\bone of\s*:?\s*(.+?)(?:\.\s|\.$|;|\)|$)", re.I)
_WORD = r"""[`'"]?([A-Za-z0-9_][\w.-]*)[`'"]?"""


def choices_in(description: str) -> Optional[list]:
    """The values a description lists as the only ones allowed, when it says so plainly (a
    JSON list after `Enum:`/`choices:`, or `one of ...`); None when unsure."""
    if not description:
        return None
    listed = _LISTED.search(description)
    if listed:
        try:
            values = json.loads(listed.group(1))
        except ValueError:
            values = None
        if isinstance(values, list) and values and all(isinstance(v, (str, int, float)) for v in values):
            return values
    one_of = _ONE_OF.search(description)
    if one_of:
        parts = [p.strip() for p in re.split(r",|\bor\b|\|", one_of.group(1)) if p.strip()]
        words = [re.fullmatch(_WORD, p) for p in parts]
        if len(words) >= 2 and all(words):
            return [w.group(1) for w in words]          # type: ignore[union-attr]
    return None


def cut_at_sentence(text: str, budget: int) -> str:
    """`text` within `budget` characters, cut after the last sentence that fits (or a word,
    with an ellipsis); whole when it fits."""
    text = " ".join(text.split())
    if len(text) <= budget:
        return text
    head = text[:budget]
    end = max(head.rfind(". "), head.rfind("! "), head.rfind("? "))
    if end >= budget // 3:
        return head[:end + 1]
    space = head.rfind(" ")
    return (head[:space] if space > 0 else head[:budget - 1]).rstrip(",;:") + "…"
