"""What scripts and models read about tools: `help`, `discover`, usage text, Markdown and the
system prompt. One renderer serves the builtins, `ScriptedTool.help()` and the prompts."""
from __future__ import annotations

import json
import math
import re
from typing import Sequence

from .docstrings import cut_at_sentence
from .flags import type_label, usage_line
from .shapes import shape_text

DESCRIPTION_BUDGET = 300        # characters of a tool's description in the prompt and in listings
# the text commands the prompt names (a tool that took one of these names is left out)
TEXT_COMMANDS = ("jq", "grep", "sed", "awk", "sort", "uniq", "cut", "tr", "wc", "head", "tail", "seq")


def flag_rows(tool_def) -> list[dict]:
    """One row per flag, in schema order: name, type, required, enum, default, description."""
    schema = tool_def.input_schema or {}
    required = set(schema.get("required", []) or [])
    rows = []
    for name, sub in (schema.get("properties") or {}).items():
        rows.append({"name": name, "type": type_label(sub), "required": name in required,
                     "enum": sub.get("enum"), "default": sub.get("default"),
                     "description": sub.get("description", "")})
    return rows


def tool_help_text(tool_def) -> str:
    summary, *body = (tool_def.description or "").split("\n\n")
    lines = [f"{tool_def.name} - {summary}".rstrip(" -"), *body,
             f"Usage: {usage_line(tool_def.name, tool_def.input_schema)}"]
    rows = flag_rows(tool_def)
    if rows:
        lines.append("Flags:")
        for r in rows:
            notes = []
            if r["required"]:
                notes.append("required")
            if r["enum"]:
                notes.append("one of: " + ", ".join(json.dumps(v) for v in r["enum"]))
            if r["default"] is not None:
                notes.append(f"default: {json.dumps(r['default'])}")
            detail = r["description"]
            if notes:
                detail = (detail + " " if detail else "") + "(" + "; ".join(notes) + ")"
            lines.append(f"  --{r['name']} <{r['type']}>  {detail}".rstrip())
    if tool_def.output_schema:
        lines.append(f"Returns: {shape_text(tool_def.output_schema, budget=100_000)}")
        described = tool_def.output_schema.get("description")
        if described:
            lines.append(f"  {described}")
    meta = []
    if tool_def.category:
        meta.append(f"category: {tool_def.category}")
    if tool_def.tags:
        meta.append("tags: " + ", ".join(tool_def.tags))
    if meta:
        lines.append("; ".join(meta))
    return "\n".join(lines) + "\n"


def tool_json(tool_def) -> dict:
    return {"name": tool_def.name, "description": tool_def.description,
            "usage": usage_line(tool_def.name, tool_def.input_schema),
            "input_schema": tool_def.input_schema, "output_schema": tool_def.output_schema,
            "returns": shape_text(tool_def.output_schema) if tool_def.output_schema else None,
            "tags": list(tool_def.tags), "category": tool_def.category}


def tool_markdown(tool_def) -> str:
    parts = [f"### `{tool_def.name}`", "", tool_def.description or "", "",
             f"Usage: `{usage_line(tool_def.name, tool_def.input_schema)}`", ""]
    rows = flag_rows(tool_def)
    if rows:
        parts.append("| flag | type | required | description |")
        parts.append("|---|---|---|---|")
        for r in rows:
            desc = r["description"]
            if r["enum"]:
                desc += (" " if desc else "") + "one of " + ", ".join(f"`{json.dumps(v)}`" for v in r["enum"])
            parts.append(f"| `--{r['name']}` | {r['type']} | {'yes' if r['required'] else 'no'} | {desc} |")
        parts.append("")
    if tool_def.output_schema:
        parts += [f"Returns: `{shape_text(tool_def.output_schema, budget=100_000)}`", ""]
    return "\n".join(parts)


def one_line(description: str) -> str:
    """A description as the prompt and listings show it: one line within DESCRIPTION_BUDGET,
    cut after a sentence (`help TOOL` shows it whole)."""
    return cut_at_sentence(description or "", DESCRIPTION_BUDGET)


def list_text(tool_defs) -> str:
    width = max((len(t.name) for t in tool_defs), default=0)
    return "".join(f"{t.name.ljust(width)}  {one_line(t.description)}\n" for t in tool_defs)


def matches_search(tool_def, text: str) -> bool:
    """Whether every word of `text` is in the tool's name, description, category or tags."""
    text = text.lower()
    haystack = " ".join([tool_def.name, tool_def.description or "", tool_def.category or ""] +
                        list(tool_def.tags)).lower()
    return all(word in haystack for word in text.split())


# ---------------------------------------------------------------- ranked search (discover --search)

_WORD = re.compile(r"[a-z]+|[0-9]+")
# how much a word counts where it stands: a tool's name says most about what it does
_FIELD_WEIGHTS = (("name", 3), ("tags", 2), ("category", 2), ("flags", 1), ("returns", 1), ("description", 1))


def _words(text: str) -> list:
    """`getUserOrders`, `get_user-orders` and `Get user orders` as the same words."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text or "")
    return [_stem(w) for w in _WORD.findall(spaced.lower())]


def _stem(word: str) -> str:
    """A plural's singular, enough for `orders` to find `order` (no dictionary)."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def _document(tool_def) -> list:
    """The words a search weighs for one tool, each field's repeated by its weight."""
    props = (tool_def.input_schema or {}).get("properties") or {}
    result = (tool_def.output_schema or {}).get("properties") or {}
    fields = {"name": tool_def.name, "tags": " ".join(tool_def.tags), "category": tool_def.category or "",
              "flags": " ".join(list(props) + [str(p.get("description", "")) for p in props.values()
                                               if isinstance(p, dict)]),
              "returns": " ".join(result), "description": tool_def.description or ""}
    words: list = []
    for field, weight in _FIELD_WEIGHTS:
        words += _words(fields[field]) * weight
    return words


def search(tool_defs: list, text: str, k1: float = 1.2, b: float = 0.75) -> list:
    """The tools that match `text`, best first (BM25 over names, descriptions, flags, tags,
    categories and result fields); ties keep the order the tools were registered in."""
    query = set(_words(text))
    if not query or not tool_defs:
        return []
    docs = [_document(t) for t in tool_defs]
    average = sum(map(len, docs)) / len(docs) or 1.0
    frequency = {w: sum(1 for d in docs if w in d) for w in query}
    scored = []
    for index, (tool_def, doc) in enumerate(zip(tool_defs, docs)):
        score = 0.0
        for word in query:
            count = doc.count(word)
            if count:
                idf = math.log(1 + (len(docs) - frequency[word] + 0.5) / (frequency[word] + 0.5))
                score += idf * count * (k1 + 1) / (count + k1 * (1 - b + b * len(doc) / average))
        if score > 0:
            scored.append((-score, index, tool_def))
    return [t for _, _, t in sorted(scored, key=lambda s: (s[0], s[1]))]


def system_prompt(name: str, short_description: str, tool_defs: list, compact: bool,
                  context: Sequence[str] = (), files: str = "there is no file system") -> str:
    """The prompt a model gets: name, description, input and output, `## Tips`, the host's
    context blocks, then `## Available tool commands` (a line each, with its usage and what it
    returns; names only when compact). The tools come last, in registration order, so that
    appending a tool leaves the prompt before it byte for byte (a provider's prompt cache)."""
    lines = [f"# {name}", ""]
    if short_description:
        lines += [short_description, ""]
    lines += ['Input: {"commands": "<bash script>"}', "Output: {stdout, stderr, exit_code}", "",
              "## Tips", "",
              "- One script does the whole task: combine the tools with pipes, variables, loops and "
              "conditionals; print only the result you need.",
              "- Flags: `--name value` or `--name=value`; a boolean is `--flag`, `--flag false` or `--no-flag`; "
              "repeat a flag (or give a JSON array) for a list; `--name null` where a flag accepts null.",
              "- Tools print JSON (the shape after → ); filter it with jq: `TOOL ... | jq .field`."]
    text_commands = " ".join(c for c in TEXT_COMMANDS if c not in {t.name for t in tool_defs})
    lines += [f"- Text commands read stdin: {text_commands} and more; {files} and no network.",
              "- Run `help TOOL` for a tool's flags before you call it; `discover --search TEXT` finds tools."
              if compact else
              "- `help TOOL` describes a tool's flags; `discover --search TEXT` finds tools.",
              "- A failing tool prints `TOOL: message` on stderr and exits non-zero; recover with `||`.", ""]
    for block in context:
        lines += ["---", "", block.strip(), ""]
    lines += ["## Available tool commands", ""]
    for t in tool_defs:
        lines.append(f"- `{t.name}`: {one_line(t.description)}")
        if not compact:
            returns = f" → `{shape_text(t.output_schema)}`" if t.output_schema else ""
            lines.append(f"  Usage: `{usage_line(t.name, t.input_schema)}`{returns}")
    return "\n".join(lines).rstrip() + "\n"
