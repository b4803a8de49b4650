"""The tool browser's HTML: one flag table per tool, no empty columns, enums as chips, required
flags marked, the description once, the usage line selectable as a whole."""
import re

import pytest

pytest.importorskip("ipywidgets")
from scripted_kernel import ScriptedTool, ToolDef  # noqa: E402
from scripted_magic.widgets import html_details, params_html, tool_browser  # noqa: E402

SCHEMA = {"type": "object", "required": ["id"],
          "properties": {"id": {"type": "integer", "description": "The id."},
                         "state": {"type": "string", "enum": ["open", "closed"]}}}


def headers(fragment: str) -> list:
    return re.findall(r"<th[^>]*>([^<]*)</th>", fragment)


def test_flag_table_columns_chips_and_required_marks():
    fragment = params_html(ToolDef("lookup", "Find things.", SCHEMA))
    assert headers(fragment) == ["flag", "type", "description"]          # no enum, no required column
    assert re.findall(r"<span class='scripted-chip'[^>]*>([^<]*)</span>", fragment) == ["open", "closed"]
    rows = re.findall(r"<tr>(.*?)</tr>", fragment.split("<tbody>")[1])
    assert ["required" in row for row in rows] == [True, False]
    assert "border:1px solid var(--jp-border-color2" in fragment            # themed borders
    assert re.search(r"<code class='scripted-usage'[^>]*user-select:all[^>]*>lookup --id &lt;integer&gt;", fragment)


def test_no_description_column_when_no_flag_has_one():
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    assert headers(params_html(ToolDef("count", "Count.", schema))) == ["flag", "type"]


def test_description_is_shown_once():
    fragment = html_details([ToolDef("lookup", "Find things quickly.", SCHEMA)])
    assert fragment.count("Find things quickly.") == 1
    tool = ScriptedTool.builder("t").tool(ToolDef("lookup", "Find things quickly.", SCHEMA), lambda a: "").build()
    browser = tool_browser(tool)
    accordion = browser.children[2]
    assert accordion.titles == ("lookup — Find things quickly.",)
    assert "Find things quickly." not in accordion.children[0].value


def test_the_tool_page_shows_defaults_and_what_the_tool_returns():
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
    try:
        import ecommerce
    finally:
        sys.path.pop(0)
    page = params_html(ecommerce.api.tools["create_discount"].tool_def)
    assert "<b>Returns</b> <code>{code: string, user_id: integer, percent: integer, reason: string}</code>" in page
    assert "class='scripted-default'>default <span class='scripted-chip'" in page and ">loyalty</span>" in page
    assert "Returns" not in params_html(ToolDef("plain", "no shape"))

