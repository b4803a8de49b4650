"""What scripts and models read about tools: `help`, `discover`, usage text, Markdown and the
system prompt. One renderer serves the builtins, `ScriptedTool.help()` and the prompts."""
from __future__ import annotations

import json

from .flags import type_label, usage_line


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
    lines = [f"{tool_def.name} - {tool_def.description}".rstrip(" -"),
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
            "input_schema": tool_def.input_schema, "tags": list(tool_def.tags),
            "category": tool_def.category}


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
    return "\n".join(parts)


def list_text(tool_defs) -> str:
    width = max((len(t.name) for t in tool_defs), default=0)
    return "".join(f"{t.name.ljust(width)}  {t.description}\n" for t in tool_defs)


def matches_search(tool_def, text: str) -> bool:
    text = text.lower()
    haystack = " ".join([tool_def.name, tool_def.description or "", tool_def.category or ""] +
                        list(tool_def.tags)).lower()
    return all(word in haystack for word in text.split())


def system_prompt(name: str, short_description: str, tool_defs: list, compact: bool,
                  context: list[str] = (), files: str = "there is no file system") -> str:
    """The prompt a model gets: what the tool is, how to call tools from bash, the tools.
    `files` says what a script may do with files (the filesystem mode)."""
    lines = [f"# {name}", ""]
    if short_description:
        lines += [short_description, ""]
    lines += [
        "Run a bash script in one call. Every tool below is a command; combine them with pipes,",
        "variables, loops and conditionals, and print only the result you need.",
        "",
        "- Call a tool with flags: `tool --name value` (or `--name=value`; `--flag` for booleans).",
        "- Tools print JSON: filter it with `jq` (e.g. `get_user --id 1 | jq -r .name`).",
        "- Text commands read standard input: jq grep sed awk sort uniq cut tr wc head tail seq"
        f" and more; {files} and no network.",
        "- `help TOOL` shows a tool's flags; `discover --search TEXT` finds tools.",
        "- A failing tool prints `TOOL: message` on stderr and exits non-zero; use `||` to recover.",
        "",
    ]
    if compact:
        lines += ["## Tools", ""]
        lines += [f"- `{t.name}`: {t.description}" for t in tool_defs]
        lines += ["", "Run `help TOOL` before calling a tool whose flags you do not know.", ""]
    else:
        lines += ["## Tools", ""]
        for t in tool_defs:
            lines.append(tool_markdown(t))
    for block in context:
        lines += ["---", "", block.strip(), ""]
    return "\n".join(lines).rstrip() + "\n"
