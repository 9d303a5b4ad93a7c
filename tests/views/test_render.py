"""Markdown and text rendering (SPEC §6): every category, every level."""

from __future__ import annotations

import json

import pytest

from dpe_server.model import summaries
from dpe_server.model.info import DocumentInfo, PageInfo
from dpe_server.model.tree import JSON, TABLE_PREVIEW_ROWS, Category, Page, PageBuilder
from dpe_server.model.uri import parse
from dpe_server.views.payloads import catalog_view, document_view, element_view, page_view
from dpe_server.views.render import MIME_TYPES, render, render_element

URI = "dpe://h/d/elements/p0-x1"

# category: (content, summary, expected markdown, expected text)
CASES: dict[Category, tuple[dict[str, JSON], str, str, str]] = {
    Category.TEXT: ({"text": "Hello\nworld"}, "Hello world", "Hello\nworld", "Hello\nworld"),
    Category.HEADING: ({"level": 2, "text": "Revenue"}, "Revenue", "## Revenue", "Revenue"),
    Category.LIST: (
        {
            "ordered": True,
            "items": [
                {"text": "a", "level": 0},
                {"text": "b", "level": 1},
                {"text": "c", "level": 1},
                {"text": "d", "level": 0},
            ],
        },
        "List",
        "1. a\n   1. b\n   2. c\n2. d",
        "1. a\n   1. b\n   2. c\n2. d",
    ),
    Category.CODE: (
        {"text": "print(1)", "language": "python"},
        "Code",
        "```python\nprint(1)\n```",
        "print(1)",
    ),
    Category.TABLE: (
        {"headers": ["季度", "收入"], "rows": [["Q1", "1|2"], ["Q2", "a\nb"]]},
        "Table",
        "| 季度 | 收入 |\n|---|---|\n| Q1 | 1\\|2 |\n| Q2 | a<br>b |",
        "季度\t收入\nQ1\t1|2\nQ2\ta b",
    ),
    Category.PIVOT_TABLE: (
        {"name": "P", "headers": ["k", "sum"], "rows": [["x", "3"]]},
        "Pivot",
        "| k | sum |\n|---|---|\n| x | 3 |",
        "k\tsum\nx\t3",
    ),
    Category.CHART: (
        {"chart_type": "line", "title": "季度收入趋势", "series": [], "data_summary": "Rising."},
        "Line chart",
        "[图表: 季度收入趋势] Rising.",
        "图表: 季度收入趋势\nRising.",
    ),
    Category.DIAGRAM: (
        {"kind": "smartart", "nodes": ["a", "b"], "data_summary": "a → b"},
        "Diagram (smartart, 2 nodes): a, b",
        "[diagram: Diagram (smartart, 2 nodes): a, b]",
        "diagram: Diagram (smartart, 2 nodes): a, b",
    ),
    Category.IMAGE: (
        {"description": "Logo", "mime_type": "image/png"},
        "Image",
        f"![Logo]({URI})",
        "图片: Logo",
    ),
    Category.FORMULA: (
        {"expression": "=SUM(B2:B5)", "result": "10", "cells": "B6:D6", "cell_count": 3},
        "Formula",
        "$ =SUM(B2:B5) $ → 10 · B6:D6 (3 cells)",
        "=SUM(B2:B5) → 10 · B6:D6 (3 cells)",
    ),
    Category.LINK: (
        {"text": "Example", "url": "https://example.com"},
        "Link",
        "[Example](https://example.com)",
        "Example (https://example.com)",
    ),
    Category.ANNOTATION: (
        {"text": "Check", "kind": "comment", "author": "Ann"},
        "Comment by Ann: Check",
        "> Comment by Ann: Check",
        "Comment by Ann: Check",
    ),
    Category.HEADER: (
        {"text": "Top"},
        "Top",
        "[header: Top]",
        "header: Top",
    ),
    Category.FOOTER: ({"text": "P1"}, "P1", "[footer: P1]", "footer: P1"),
    Category.SEPARATOR: (
        {"kind": "page_break"},
        "Page break",
        "[separator: Page break]",
        "separator: Page break",
    ),
    Category.AUDIO: (
        {"name": "a.mp3", "mime_type": "audio/mpeg"},
        "a.mp3",
        "[audio: a.mp3]",
        "audio: a.mp3",
    ),
    Category.VIDEO: (
        {"name": "v.mp4", "mime_type": "video/mp4"},
        "v.mp4",
        "[video: v.mp4]",
        "video: v.mp4",
    ),
    Category.FORM: (
        {"fields": [{"name": "n", "type": "text", "value": ""}]},
        "Form (1 field): n",
        "- n",
        "n",
    ),
    Category.WIDGET: (
        {"kind": "checkbox", "name": "c1", "text": "Agree"},
        "Checkbox c1: Agree",
        "[widget: Checkbox c1: Agree]",
        "widget: Checkbox c1: Agree",
    ),
}


def test_every_category_has_a_case() -> None:
    assert set(CASES) == set(Category)


def _element(category: Category) -> dict[str, JSON]:
    content, summary, _, _ = CASES[category]
    return {
        "element_id": "p0-x1",
        "category": category.value,
        "summary": summary,
        "content": content,
        "uri": URI,
    }


@pytest.mark.parametrize("category", list(Category), ids=[c.value for c in Category])
def test_markdown_per_category(category: Category) -> None:
    assert render_element(_element(category), markdown=True, full=True) == CASES[category][2] + "\n"


@pytest.mark.parametrize("category", list(Category), ids=[c.value for c in Category])
def test_text_per_category(category: Category) -> None:
    assert (
        render_element(_element(category), markdown=False, full=True) == CASES[category][3] + "\n"
    )


def test_code_fence_outgrows_backticks_inside() -> None:
    el = {"element_id": "e", "category": "code", "summary": "", "content": {"text": "a ``` b"}}
    assert render_element(el, markdown=True, full=True).startswith("````\n")


def test_a_nested_item_starts_where_its_parents_text_starts() -> None:
    """CommonMark nests a line under a list item only when it is indented to the item's text:
    3 spaces under `9. `, 4 under `10. `, 2 under `- a) ` (the marker is the `-`)."""
    items = [{"text": f"t{n}", "level": 0, "label": f"{n}."} for n in (9, 10)]
    items.insert(1, {"text": "u", "level": 1, "label": "a)"})
    items += [{"text": "v", "level": 1, "label": "a)"}, {"text": "w", "level": 2}]
    el = {
        "element_id": "e",
        "category": "list",
        "summary": "",
        "content": {"ordered": True, "items": items},
    }
    assert render_element(el, markdown=True, full=True) == (
        "9. t9\n   - a) u\n10. t10\n    - a) v\n      1. w\n"
    )


def test_unordered_list_uses_dashes() -> None:
    el = {
        "element_id": "e",
        "category": "list",
        "summary": "",
        "content": {
            "ordered": False,
            "items": [{"text": "x", "level": 0}, {"text": "y", "level": 2}],
        },
    }
    assert render_element(el, markdown=True, full=True) == "- x\n    - y\n"


@pytest.mark.parametrize(
    ("labels", "ordered", "markdown"),
    [
        ([None, None], True, "1. x\n2. y\n"),
        (["7.", "8."], True, "7. x\n8. y\n"),
        (["9)", "10)"], True, "9) x\n10) y\n"),
        (["iv.", "v."], True, "- iv. x\n- v. y\n"),
        (["1.1.", "1.2."], True, "- 1.1. x\n- 1.2. y\n"),
        ([None, None], False, "- x\n- y\n"),
    ],
    ids=["counted", "decimal-label", "paren-label", "roman-label", "nested-label", "bullets"],
)
def test_list_marker_is_the_number_label(
    labels: list[str | None], ordered: bool, markdown: str
) -> None:
    items = [
        {"text": t, "level": 0} | ({"label": lb} if lb else {})
        for t, lb in zip("xy", labels, strict=True)
    ]
    el = {
        "element_id": "e",
        "category": "list",
        "summary": "",
        "content": {"ordered": ordered, "items": items},
    }
    assert render_element(el, markdown=True, full=True) == markdown


def test_heading_level_is_clamped() -> None:
    el = {
        "element_id": "e",
        "category": "heading",
        "summary": "",
        "content": {"level": 9, "text": "x"},
    }
    assert render_element(el, markdown=True, full=True) == "###### x\n"


# ---- levels -------------------------------------------------------------------------------------

HOST = "h"
DOC = DocumentInfo(
    "d", "file:///x/d.xlsx", "xlsx", "Report", 2, ("k1", "k2"), "About it", "2026-01-01T00:00:00Z"
)
BROKEN = DocumentInfo(
    "e",
    "file:///x/e.docx",
    "docx",
    "e",
    0,
    (),
    "",
    "2026-01-02T00:00:00Z",
    {"kind": "encrypted", "message": "Needs a password."},
)


def _page() -> Page:
    b = PageBuilder(0)
    b.add(Category.HEADING, "Sales", {"level": 1, "text": "Sales"})
    b.add(
        Category.TABLE,
        "Table",
        {
            "headers": ["a"],
            "rows": [[str(i)] for i in range(12)],
            "total_rows": 12,
            "total_columns": 1,
        },
    )
    b.add(Category.IMAGE, "Image", {"description": "Logo", "mime_type": "image/png"})
    return b.build("Sheet1")


LEVEL0 = catalog_view(HOST, [DOC, BROKEN], parse("dpe://h"))
LEVEL1 = document_view(
    HOST,
    DOC,
    [PageInfo(0, "Sheet1", 3), PageInfo(1, "Hidden", 0, {"hidden": True})],
    parse("dpe://h/d?depth=pages"),
)
LEVEL2 = page_view(HOST, "d", _page(), parse("dpe://h/d/pages/0"))
LEVEL3 = element_view(HOST, "d", 0, _page().elements[1])

EXPECTED: dict[tuple[int, str], str] = {
    (0, "markdown"): (
        "# Documents (2)\n\n"
        "- [Report](dpe://h/d) (xlsx, 2 pages, modified 2026-01-01T00:00:00Z): About it\n"
        "- [e](dpe://h/e) (docx, 0 pages, modified 2026-01-02T00:00:00Z)"
        " — error (encrypted): Needs a password.\n"
    ),
    (0, "text"): (
        "Documents (2)\n\n"
        "Report  dpe://h/d  (xlsx, 2 pages, modified 2026-01-01T00:00:00Z): About it\n"
        "e  dpe://h/e  (docx, 0 pages, modified 2026-01-02T00:00:00Z)"
        " — error (encrypted): Needs a password.\n"
    ),
    (1, "markdown"): (
        "# Report\n\n- **doc_ref**: d\n- **uri**: dpe://h/d\n- **file**: file:///x/d.xlsx\n"
        "- **type**: xlsx\n- **pages**: 2\n- **keywords**: k1, k2\n"
        "- **modified**: 2026-01-01T00:00:00Z\n- **summary**: About it\n\n"
        "## Pages (1–2 of 2)\n\n"
        "0. [Sheet1](dpe://h/d/pages/0) (3 elements)\n"
        "1. [Hidden](dpe://h/d/pages/1) (0 elements, hidden)\n"
    ),
    (1, "text"): (
        "Report\n\ndoc_ref: d\nuri: dpe://h/d\nfile: file:///x/d.xlsx\ntype: xlsx\npages: 2\n"
        "keywords: k1, k2\nmodified: 2026-01-01T00:00:00Z\nsummary: About it\n\n"
        "Pages (1–2 of 2)\n\n"
        "0. Sheet1 (3 elements)  dpe://h/d/pages/0\n"
        "1. Hidden (0 elements, hidden)  dpe://h/d/pages/1\n"
    ),
    (2, "markdown"): (
        "# Sheet1\n\n# Sales\n\n| a |\n|---|\n"
        + "".join(f"| {i} |\n" for i in range(TABLE_PREVIEW_ROWS))
        + "\n*Showing 10 of 12 rows; the whole table: dpe://h/d/elements/p0-tbl1*\n\n"
        "![Logo](dpe://h/d/elements/p0-img1)\n"
    ),
    (2, "text"): (
        "Sheet1\n\nSales\n\na\n"
        + "".join(f"{i}\n" for i in range(TABLE_PREVIEW_ROWS))
        + "(Showing 10 of 12 rows; the whole table: dpe://h/d/elements/p0-tbl1)\n\n"
        "图片: Logo\n"
    ),
    (3, "markdown"): "| a |\n|---|\n" + "".join(f"| {i} |\n" for i in range(12)),
    (3, "text"): "a\n" + "".join(f"{i}\n" for i in range(12)),
}
PAYLOADS = {0: LEVEL0, 1: LEVEL1, 2: LEVEL2, 3: LEVEL3}


@pytest.mark.parametrize(
    ("level", "fmt"), list(EXPECTED), ids=[f"L{k[0]}-{k[1]}" for k in EXPECTED]
)
def test_render_level(level: int, fmt: str) -> None:
    assert render(level, PAYLOADS[level], fmt) == EXPECTED[(level, fmt)]  # type: ignore[arg-type]


@pytest.mark.parametrize("level", [0, 1, 2, 3])
def test_json_rendering_round_trips(level: int) -> None:
    assert json.loads(render(level, PAYLOADS[level], "json")) == PAYLOADS[level]


def test_mime_types() -> None:
    assert MIME_TYPES == {
        "json": "application/json",
        "markdown": "text/markdown",
        "text": "text/plain",
    }


def test_page_opening_with_its_title_heading_says_it_once() -> None:
    b = PageBuilder(0)
    b.add(Category.HEADING, "Agenda", {"level": 1, "text": "Agenda"})
    b.add(Category.TEXT, "t", {"text": "Body"})
    payload = page_view(HOST, "d", b.build("Agenda"), parse("dpe://h/d/pages/0"))
    assert render(2, payload, "markdown") == "# Agenda\n\nBody\n"
    assert render(2, payload, "text") == "Agenda\n\nBody\n"


def test_a_title_heading_after_other_elements_opens_the_page_once() -> None:
    """A pdf chapter page: its number and a picture, then its heading (the page's title):
    the Markdown opened with the title at level 1 and printed the heading again at 2."""
    b = PageBuilder(4)
    b.add(Category.TEXT, "1", {"text": "1"})
    b.add(Category.HEADING, "Securing data", {"level": 2, "text": "Securing  data"})
    b.add(Category.TEXT, "t", {"text": "Body"})
    payload = page_view(HOST, "d", b.build("Securing data"), parse("dpe://h/d/pages/4"))
    assert render(2, payload, "markdown") == "## Securing data\n\n1\n\nBody\n"
    assert render(2, payload, "text") == "Securing  data\n\n1\n\nBody\n"


def test_a_page_titled_by_its_number_opens_with_its_elements() -> None:
    """`Page {N+1}` (a pdf page without heading or outline entry) is no heading of the page."""
    b = PageBuilder(1)
    b.add(Category.TEXT, "t", {"text": "reviewed to prevent future discrepancies."})
    payload = page_view(HOST, "d", b.build("Page 2"), parse("dpe://h/d/pages/1"))
    assert render(2, payload, "markdown") == "reviewed to prevent future discrepancies.\n"
    other = page_view(HOST, "d", b.build("Page 7"), parse("dpe://h/d/pages/1"))
    assert render(2, other, "markdown").startswith("# Page 7\n")


@pytest.mark.parametrize(
    ("category", "summary"),
    [
        (Category.HEADER, summaries.header("Cat. No. 28171E")),
        (Category.FOOTER, summaries.footer("Cat. No. 28171E")),
        (Category.AUDIO, summaries.media("Cat. No. 28171E", "audio/mpeg")),
        (Category.VIDEO, summaries.media("Cat. No. 28171E", "video/mp4")),
    ],
)
def test_a_category_label_is_said_once(category: Category, summary: str) -> None:
    """`[{category}: {summary}]`: the summary the extractors write does not name the category
    again (it said `[footer: Footer: Cat. No. 28171E]`)."""
    element = {"category": category.value, "summary": summary, "content": {"text": "x"}}
    body = render_element(element, markdown=True, full=False)
    assert body.startswith(f"[{category.value}: Cat. No. 28171E")
    assert not summary.casefold().startswith(category.value)


def test_empty_table_renders_its_summary_not_an_empty_body() -> None:
    el = {
        "element_id": "p0-tbl1",
        "category": "table",
        "summary": "Table (2 rows × 2 columns)",
        "content": {"headers": [], "rows": [["", ""], ["", ""]]},
    }
    assert render_element(el, markdown=True, full=True) == "[table: Table (2 rows × 2 columns)]\n"
    assert render_element(el, markdown=False, full=True) == "table: Table (2 rows × 2 columns)\n"


def test_formula_of_one_cell_without_result_renders_expression_and_cell() -> None:
    element: dict[str, JSON] = {
        "category": "formula",
        "summary": "Formula",
        "content": {"expression": "=A1*2", "cells": "B1", "cell_count": 1},
    }
    assert render_element(element, markdown=True, full=False) == "$ =A1*2 $ · B1\n"
