"""Every word of an element's text content reaches its Markdown and text (`model/words.py`):
chart data tables, annotations with replies, form fields, long headers, media extras."""

from __future__ import annotations

from typing import Any

from dpe_server.model.chart_data import CHART_PREVIEW_ROWS
from dpe_server.model.words import missing, phrases
from dpe_server.views.render import render_element

URI = "dpe://h/d/elements/p0-chart1"


def _md(category: str, content: dict[str, Any], *, full: bool = False, summary: str = "S") -> str:
    element = {"category": category, "content": content, "summary": summary, "uri": URI}
    return render_element(element, markdown=True, full=full)


def _txt(category: str, content: dict[str, Any], summary: str = "S") -> str:
    element = {"category": category, "content": content, "summary": summary, "uri": URI}
    return render_element(element, markdown=False, full=False)


def _chart(*series: dict[str, Any]) -> dict[str, Any]:
    return {"chart_type": "bar", "title": "Sales", "series": list(series), "data_summary": "Up."}


def test_chart_with_several_series_renders_a_wide_table_under_its_first_line() -> None:
    content = _chart(
        {"name": "2020", "categories": ["North", "South"], "values": [10, 12.5]},
        {"name": "2021", "categories": ["North", "South"], "values": [11, None]},
    )
    assert _md("chart", content) == (
        "[图表: Sales] Up.\n\n"
        "|  | 2020 | 2021 |\n|---|---|---|\n| North | 10 | 11 |\n| South | 12.5 |  |\n"
    )
    assert _txt("chart", content) == (
        "图表: Sales\nUp.\n\n\t2020\t2021\nNorth\t10\t11\nSouth\t12.5\t\n"
    )


def test_chart_series_with_their_own_categories_render_one_row_per_point() -> None:
    content = _chart(
        {"name": "a", "categories": [1, 2], "values": [5, 6]},
        {"name": "b", "categories": [3], "values": [7]},
    )
    body = _md("chart", content)
    assert "| series | category | value |" in body
    assert "| a | 2 | 6 |" in body
    assert "| b | 3 | 7 |" in body


def test_chart_table_is_capped_at_level_2_saying_what_it_left_out_and_whole_at_level_3() -> None:
    n = CHART_PREVIEW_ROWS + 5
    cats = [f"c{i}" for i in range(n)]
    content = _chart(
        {"name": "x", "categories": cats, "values": list(range(n))},
        {"name": "y", "categories": cats, "values": list(range(n))},
    )
    level2 = _md("chart", content)
    assert f"| c{CHART_PREVIEW_ROWS - 1} |" in level2
    assert f"| c{CHART_PREVIEW_ROWS} |" not in level2
    assert f"*10 more data points left out; all of them: {URI}*" in level2
    assert missing("chart", content, level2) == []
    level3 = _md("chart", content, full=True)
    assert f"| c{n - 1} | {n - 1} | {n - 1} |" in level3
    assert "left out" not in level3


def test_annotation_renders_author_anchor_text_and_replies() -> None:
    content = {
        "kind": "comment",
        "text": "Is this right?\nSee row 4.",
        "author": "Ada",
        "anchor": "B2",
        "replies": [{"author": "Bob", "text": "Yes it is", "date": "2024-01-02"}],
    }
    assert _md("annotation", content) == (
        "> Comment by Ada (on “B2”): Is this right?\n> See row 4.\n> - Reply by Bob: Yes it is\n"
    )
    assert _txt("annotation", content) == (
        "Comment by Ada (on “B2”): Is this right?\nSee row 4.\n  Reply by Bob: Yes it is\n"
    )


def test_a_resolved_thread_says_so() -> None:
    content = {"kind": "comment", "text": "Fix it", "author": "Ada", "resolved": True}
    assert _md("annotation", content) == "> Comment by Ada (resolved): Fix it\n"


def test_annotation_without_an_author_omits_it() -> None:
    content = {"kind": "note", "text": "Check the north figures"}
    assert _md("annotation", content) == "> Note: Check the north figures\n"


def test_form_fields_render_label_value_options_and_checked_state() -> None:
    content = {
        "fields": [
            {"name": "agree", "kind": "checkbox", "value": "checked", "checked": True},
            {"name": "spam", "kind": "checkbox", "value": "", "checked": False},
            {"name": "ok", "label": "ok", "kind": "checkbox", "checked": True, "value": "Yes"},
            {"name": "c1", "label": "Colour", "kind": "dropdown", "value": "Red",
             "options": ["Red", "Blue"]},
            {"name": "B4:C8", "kind": "number", "value": "", "rule": "between 0 and 9"},
        ]
    }  # fmt: skip
    assert _md("form", content) == (
        "- [x] agree\n- [ ] spam\n- [x] ok\n- Colour (c1): Red (options: Red, Blue)\n"
        "- B4:C8 (rule: between 0 and 9)\n"
    )
    assert _txt("form", content).splitlines()[:2] == ["[x] agree", "[ ] spam"]


def test_a_header_longer_than_its_summary_renders_in_full() -> None:
    text = "Quarterly report " + " ".join(f"word{i}" for i in range(40))
    body = _md("header", {"text": text}, summary="Quarterly report word0 word1…")
    assert body.startswith("[header: Quarterly report word0 word1…]\n\n- ")
    assert missing("header", {"text": text}, body) == []


def test_a_diagram_renders_nodes_its_summary_left_out() -> None:
    content = {"kind": "smartart", "nodes": ["Plan", "Build", "Ship"], "data_summary": "x"}
    body = _md("diagram", content, summary="Diagram (smartart, 3 nodes): Plan, Build")
    assert body == "[diagram: Diagram (smartart, 3 nodes): Plan, Build]\n\n- Ship\n"


def test_phrases_skip_identifiers_and_binary_and_count_numbers() -> None:
    content = {
        "text": "one\n\n two ",
        "mime_type": "image/png",
        "kind": "comment",
        "tag": "p0-ann1",
        "result": 150,
        "flag": True,
        "nested": {"cell": "A1", "formula": "=A1"},
    }
    assert phrases("annotation", content) == ["one", "two", "150", "=A1"]
    table = {"name": "T1", "headers": ["h"], "rows": [["r"]], "total_rows": 30}
    assert phrases("table", table) == ["h", "r"]


def test_missing_reads_markdown_escapes_and_line_breaks() -> None:
    content = {"headers": ["a|b"], "rows": [["x\ny"]]}
    assert missing("table", content, "| a\\|b |\n|---|\n| x<br>y |") == []
    assert missing("text", {"text": "[1] note"}, "\\[1\\] note") == []
    assert missing("text", {"text": "gone"}, "other words") == ["gone"]
