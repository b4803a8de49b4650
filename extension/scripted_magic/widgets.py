"""The tool browser: an ipywidgets view of a ScriptedTool's tools, with text/plain and text/html
fallbacks for nbconvert, consoles and static viewers."""
from __future__ import annotations

import json

from scripted_kernel.tools import catalog
from scripted_kernel.tools.shapes import shape_text

from .markup import Html, html, join


def select(tool, query: str = "", category: str = "", tag: str = "") -> list:
    defs = tool.tool_defs()
    if category:
        defs = [d for d in defs if d.category == category]
    if tag:
        defs = [d for d in defs if tag in d.tags]
    if query:
        defs = [d for d in defs if catalog.matches_search(d, query)]
    return defs


# Inline styles on JupyterLab's theme variables (with light fallbacks for static HTML): the
# same table in the light and the dark theme, in widgets and in saved notebooks alike.
_CELL = "border:1px solid var(--jp-border-color2,#d0d0d0);padding:3px 8px;text-align:left;vertical-align:top"
_HEAD = _CELL + ";background:var(--jp-layout-color2,#eeeeee);font-weight:600"
_CHIP = ("display:inline-block;margin:1px 3px 1px 0;padding:0 6px;border-radius:9px;font-size:90%;"
         "border:1px solid var(--jp-border-color1,#bdbdbd);background:var(--jp-layout-color1,#ffffff)")
_REQUIRED = "margin-left:6px;font-size:85%;color:var(--jp-warn-color0,#b35900)"
_USAGE = ("user-select:all;cursor:text;display:inline-block;padding:2px 6px;border-radius:3px;"
          "background:var(--jp-layout-color2,#eeeeee);color:var(--jp-content-font-color1,#1a1a1a)")


def _chip(value) -> Html:
    text = value if isinstance(value, str) else json.dumps(value)
    return html("<span class='scripted-chip' style='{}'>{}</span>", _CHIP, text)


def params_html(tool_def) -> Html:
    """A tool's usage line (click selects all of it, to copy), flag table (types, choices,
    defaults) and what it returns; the description is in the title above it."""
    usage = html("<p><code class='scripted-usage' title='click to select, then copy' style='{}'>{}</code></p>",
                 _USAGE, catalog.usage_line(tool_def.name, tool_def.input_schema))
    returns = returns_html(tool_def)
    rows = catalog.flag_rows(tool_def)
    if not rows:
        return html("{}{}", usage, returns)
    with_descriptions = any(r["description"] for r in rows)
    heads = ["flag", "type"] + (["description"] if with_descriptions else [])
    body = []
    for r in rows:
        flag = html("<code>--{}</code>", r["name"])
        if r["required"]:
            flag = html("{}<span class='scripted-required' style='{}'>required</span>", flag, _REQUIRED)
        kind = html("{}", r["type"])
        if r["enum"]:
            kind = html("{}<br>{}", kind, join(_chip(v) for v in r["enum"]))
        if r["default"] is not None:
            kind = html("{}<br><span class='scripted-default'>default {}</span>", kind, _chip(r["default"]))
        cells = [flag, kind] + ([r["description"] or ""] if with_descriptions else [])
        body.append(html("<tr>{}</tr>", join(html("<td style='{}'>{}</td>", _CELL, c) for c in cells)))
    return html("{}<table class='scripted-flags' style='border-collapse:collapse;margin:4px 0 8px'>"
                "<thead><tr>{}</tr></thead><tbody>{}</tbody></table>{}",
                usage, join(html("<th style='{}'>{}</th>", _HEAD, h) for h in heads), join(body), returns)


def returns_html(tool_def) -> Html:
    """What the tool prints, as the prompt shows it (its result shape), if it is known."""
    if not tool_def.output_schema:
        return html("")
    described = tool_def.output_schema.get("description")
    return html("<p class='scripted-returns'><b>Returns</b> <code>{}</code>{}</p>",
                shape_text(tool_def.output_schema, budget=100_000),
                html(" — {}", described) if described else "")


def html_details(defs) -> Html:
    """The tools as static HTML, for every viewer without the live widget (nbconvert, GitHub,
    VS Code, a notebook run by nbclient or papermill): a table of the tools that is always
    visible, then each tool's flags in a section that opens."""
    if not defs:
        return html("<p><i>no tools</i></p>")
    rows = join(html("<tr><td style='{0}'><b>{1}</b></td><td style='{0}'>{2}</td>"
                     "<td style='{0}'><code>{3}</code></td></tr>",
                     _CELL, d.name, d.description or "", catalog.usage_line(d.name, d.input_schema)) for d in defs)
    table = html("<table class='scripted-tools' style='border-collapse:collapse;margin:4px 0 8px'><thead><tr>"
                 "<th style='{0}'>tool</th><th style='{0}'>description</th><th style='{0}'>usage</th>"
                 "</tr></thead><tbody>{1}</tbody></table>", _HEAD, rows)
    sections = join(html("<details><summary><b>{}</b>: flags</summary>{}</details>", d.name, params_html(d))
                    for d in defs)
    return html("{}{}", table, sections)


def tool_page(tool_def) -> dict:
    """`help TOOL` as a whole notebook cell: the tool's page as HTML, text fallback. (No
    text/markdown: a Markdown renderer passes the HTML inside it through, and the catalog's
    Markdown quotes descriptions and schema words as they are, for a model to read; every
    front-end that renders Markdown renders HTML, and prefers it.)"""
    return {"text/plain": catalog.tool_help_text(tool_def), "text/html": tool_page_html(tool_def)}


def tool_page_html(tool_def) -> Html:
    return html("<p><b>{}</b> — {}</p>{}", tool_def.name, tool_def.description or "", params_html(tool_def))


def tool_browser(tool, query: str = "", category: str = "", tag: str = ""):
    """A search box that filters as you type, a category/tag filter, one accordion section per
    tool with its description, usage line and parameter table."""
    import ipywidgets as W
    defs_all = tool.tool_defs()
    categories = sorted({d.category for d in defs_all if d.category})
    tags = sorted({t for d in defs_all for t in d.tags})
    search = W.Text(value=query, placeholder="filter tools…", description="Search")
    kind = W.Dropdown(options=[("all", "")] + [(f"category: {c}", "c:" + c) for c in categories]
                      + [(f"tag: {t}", "t:" + t) for t in tags],
                      value=("c:" + category) if category else (("t:" + tag) if tag else ""),
                      description="Filter")
    count = W.HTML()
    accordion = W.Accordion()

    def refresh(*_):
        chosen = kind.value or ""
        defs = select(tool, search.value, chosen[2:] if chosen.startswith("c:") else "",
                      chosen[2:] if chosen.startswith("t:") else "")
        accordion.children = [W.HTML(params_html(d)) for d in defs]
        accordion.titles = tuple(f"{d.name} — {d.description}" for d in defs)
        count.value = html("<i>{} of {} tools</i>", len(defs), len(defs_all))

    search.observe(refresh, names="value")
    kind.observe(refresh, names="value")
    refresh()
    box = W.VBox([W.HBox([search, kind]), count, accordion])
    box.add_class("scripted-tool-browser")
    return box


def rich_bundle(tool, query: str = "", category: str = "", tag: str = "", widgets: bool = True) -> dict:
    """A display bundle: the widget where a kernel can talk to it, fallbacks for everyone."""
    defs = select(tool, query, category, tag)
    data = {}
    if widgets:
        try:
            data.update(tool_browser(tool, query, category, tag)._repr_mimebundle_())
        except ImportError:
            pass
    data.update({"text/plain": catalog.list_text(defs) or "(no tools)\n", "text/html": html_details(defs)})
    return data
