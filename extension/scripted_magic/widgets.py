"""The tool browser: an ipywidgets view of a ScriptedTool's tools, with text/plain, text/html
and text/markdown fallbacks for nbconvert, consoles and static viewers."""
from __future__ import annotations

import html

from scripted_kernel.tools import catalog


def select(tool, query: str = "", category: str = "", tag: str = "") -> list:
    defs = tool.tool_defs()
    if category:
        defs = [d for d in defs if d.category == category]
    if tag:
        defs = [d for d in defs if tag in d.tags]
    if query:
        defs = [d for d in defs if catalog.matches_search(d, query)]
    return defs


def params_html(tool_def) -> str:
    rows = catalog.flag_rows(tool_def)
    usage = html.escape(catalog.usage_line(tool_def.name, tool_def.input_schema))
    parts = [f"<p>{html.escape(tool_def.description or '')}</p>", f"<p><code>{usage}</code></p>"]
    if rows:
        parts.append("<table><thead><tr><th>flag</th><th>type</th><th>required</th><th>enum</th>"
                     "<th>description</th></tr></thead><tbody>")
        for r in rows:
            enum = ", ".join(html.escape(str(v)) for v in r["enum"]) if r["enum"] else ""
            parts.append(f"<tr><td><code>--{html.escape(r['name'])}</code></td><td>{html.escape(r['type'])}</td>"
                         f"<td>{'yes' if r['required'] else ''}</td><td>{enum}</td>"
                         f"<td>{html.escape(r['description'] or '')}</td></tr>")
        parts.append("</tbody></table>")
    return "".join(parts)


def html_details(defs) -> str:
    if not defs:
        return "<p><i>no tools</i></p>"
    return "".join(f"<details><summary><b>{html.escape(d.name)}</b> — {html.escape(d.description or '')}"
                   f"</summary>{params_html(d)}</details>" for d in defs)


def markdown_list(defs) -> str:
    return "\n".join(catalog.tool_markdown(d) for d in defs) or "_no tools_"


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
        count.value = f"<i>{len(defs)} of {len(defs_all)} tools</i>"

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
    data.update({"text/plain": catalog.list_text(defs) or "(no tools)\n",
                 "text/markdown": markdown_list(defs),
                 "text/html": html_details(defs)})
    return data
