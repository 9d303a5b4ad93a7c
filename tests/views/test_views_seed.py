"""The seed's own examples (seeds/finder-dpe-spec.zh.txt), rebuilt from a tree, field for field.

The seed's element ids (`tbl-001`) predate this server's id scheme; the tree here uses them
as given, since views never interpret ids. Extension fields are allowed beside the seed's
(SPEC §4), but only the ones named per case.
"""

from __future__ import annotations

from collections.abc import Mapping

from dpe_server.model.info import DocumentInfo, PageInfo
from dpe_server.model.tree import Category, Element, Page
from dpe_server.model.uri import parse
from dpe_server.views.payloads import catalog_view, document_view, element_view, page_view

HOST = "com.example.docs"

RPT = DocumentInfo(
    doc_ref="rpt-2026",
    file_uri="file:///data/reports/2026-annual.xlsx",
    file_type="xlsx",
    title="2026 年度报告",
    page_count=12,
    keywords=("财务", "年报"),
    summary="2026 年度财务与运营报告",
    last_modified="2026-01-15T08:30:00Z",
)
CONTRACT = DocumentInfo(
    doc_ref="contract-a1",
    file_uri="file:///data/contracts/a1.pdf",
    file_type="pdf",
    title="A1 合同",
    page_count=5,
    keywords=("合同",),
    summary="A1 项目服务合同",
    last_modified="2026-02-01T14:00:00Z",
)

SEED_RPT = {
    "doc_ref": "rpt-2026",
    "uri": "dpe://com.example.docs/rpt-2026",
    "file_uri": "file:///data/reports/2026-annual.xlsx",
    "file_type": "xlsx",
    "title": "2026 年度报告",
    "page_count": 12,
    "keywords": ["财务", "年报"],
    "summary": "2026 年度财务与运营报告",
    "last_modified": "2026-01-15T08:30:00Z",
}

TABLE = {
    "headers": ["季度", "收入(万元)", "同比增长"],
    "rows": [
        ["Q1", "1,250", "+12%"],
        ["Q2", "1,380", "+15%"],
        ["Q3", "1,420", "+8%"],
        ["Q4", "1,560", "+18%"],
    ],
}

PAGE0 = Page(
    page_index=0,
    title="概览",
    elements=(
        Element("h-001", Category.HEADING, "2026 年度总结", {"level": 1, "text": "2026 年度总结"}),
        Element(
            "txt-001",
            Category.TEXT,
            "报告引言段落",
            {"text": "本报告总结了 2026 年度公司在各业务领域的运营情况..."},
        ),
        Element(
            "tbl-001",
            Category.TABLE,
            "季度收入对比表(4行3列)",
            {**TABLE, "total_rows": 4, "total_columns": 3},
            {"source_range": "A1:C5", "has_formulas": True},
        ),
        Element(
            "chart-001",
            Category.CHART,
            "季度收入趋势图",
            {
                "chart_type": "line",
                "title": "季度收入趋势",
                "data_summary": "Q1-Q4 收入呈上升趋势,Q4 达到最高点 1,560 万元",
            },
        ),
    ),
)


def assert_seed(actual: object, seed: object, extra: frozenset[str] = frozenset()) -> None:
    """`actual` has every field of `seed` with the same value; other keys only from `extra`."""
    if isinstance(seed, Mapping):
        assert isinstance(actual, Mapping)
        missing = set(seed) - set(actual)
        assert not missing, f"missing fields {missing}"
        unexpected = set(actual) - set(seed) - extra
        assert not unexpected, f"unexpected fields {unexpected}"
        for key, value in seed.items():
            assert_seed(actual[key], value, extra)
    elif isinstance(seed, list):
        assert isinstance(actual, list)
        assert len(actual) == len(seed)
        for a, s in zip(actual, seed, strict=True):
            assert_seed(a, s, extra)
    else:
        assert actual == seed


def test_level0_matches_seed() -> None:
    payload = catalog_view(HOST, [RPT, CONTRACT], parse("dpe://com.example.docs"))
    seed_contract = {
        "doc_ref": "contract-a1",
        "uri": "dpe://com.example.docs/contract-a1",
        "file_uri": "file:///data/contracts/a1.pdf",
        "file_type": "pdf",
        "title": "A1 合同",
        "page_count": 5,
        "keywords": ["合同"],
        "summary": "A1 项目服务合同",
        "last_modified": "2026-02-01T14:00:00Z",
    }
    assert payload == {"documents": [SEED_RPT, seed_contract], "total_count": 2}


def test_level1_metadata_matches_seed() -> None:
    payload = document_view(HOST, RPT, None, parse("dpe://com.example.docs/rpt-2026"))
    assert payload == SEED_RPT


def test_level1_pages_matches_seed() -> None:
    titles = ["概览", "收入分析", *(f"第{i}页" for i in range(2, 12))]
    counts = [8, 15, *([3] * 10)]
    pages = [PageInfo(i, t, n) for i, (t, n) in enumerate(zip(titles, counts, strict=True))]
    payload = document_view(HOST, RPT, pages, parse("dpe://com.example.docs/rpt-2026?depth=pages"))
    seed_pages = [
        {
            "page_index": 0,
            "title": "概览",
            "element_count": 8,
            "uri": "dpe://com.example.docs/rpt-2026/pages/0",
            "doc_ref": "rpt-2026",
        },
        {
            "page_index": 1,
            "title": "收入分析",
            "element_count": 15,
            "uri": "dpe://com.example.docs/rpt-2026/pages/1",
            "doc_ref": "rpt-2026",
        },
    ]
    # The seed abbreviates its page list to two entries of twelve.
    assert payload["pages"][:2] == seed_pages
    assert len(payload["pages"]) == 12
    assert {k: payload[k] for k in ("page_offset", "page_limit", "page_total")} == {
        "page_offset": 0,
        "page_limit": 20,
        "page_total": 12,
    }
    assert {
        k: v
        for k, v in payload.items()
        if k not in ("pages", "page_offset", "page_limit", "page_total")
    } == SEED_RPT


def test_level1_pages_offset_limit_slice() -> None:
    pages = [PageInfo(i, f"p{i}", 1) for i in range(12)]
    payload = document_view(
        HOST, RPT, pages, parse("dpe://com.example.docs/rpt-2026?depth=pages&offset=10&limit=10")
    )
    assert [p["page_index"] for p in payload["pages"]] == [10, 11]
    assert (payload["page_offset"], payload["page_limit"], payload["page_total"]) == (10, 10, 12)


def test_level2_matches_seed() -> None:
    payload = page_view(HOST, "rpt-2026", PAGE0, parse("dpe://com.example.docs/rpt-2026/pages/0"))
    seed = {
        "page_index": 0,
        "title": "概览",
        "doc_ref": "rpt-2026",
        "uri": "dpe://com.example.docs/rpt-2026/pages/0",
        "elements": [
            {
                "element_id": "h-001",
                "category": "heading",
                "summary": "2026 年度总结",
                "content": {"level": 1, "text": "2026 年度总结"},
            },
            {
                "element_id": "txt-001",
                "category": "text",
                "summary": "报告引言段落",
                "content": {"text": "本报告总结了 2026 年度公司在各业务领域的运营情况..."},
            },
            {
                "element_id": "tbl-001",
                "category": "table",
                "summary": "季度收入对比表(4行3列)",
                "content": TABLE,
            },
            {
                "element_id": "chart-001",
                "category": "chart",
                "summary": "季度收入趋势图",
                "content": {
                    "chart_type": "line",
                    "title": "季度收入趋势",
                    "data_summary": "Q1-Q4 收入呈上升趋势,Q4 达到最高点 1,560 万元",
                },
            },
        ],
        "element_count": 4,
    }
    # Level 2 tables also say how many rows there are and whether the preview cut them.
    assert_seed(payload, seed, frozenset({"total_rows", "total_columns", "rows_truncated"}))
    assert payload["elements"][2]["content"]["rows_truncated"] is False


def test_level2_categories_filter_counts_after_filtering() -> None:
    uri = parse("dpe://com.example.docs/rpt-2026/pages/0?categories=table,pivot_table")
    payload = page_view(HOST, "rpt-2026", PAGE0, uri)
    assert [e["element_id"] for e in payload["elements"]] == ["tbl-001"]
    assert payload["element_count"] == 1


def test_level3_matches_seed() -> None:
    element = PAGE0.elements[2]
    payload = element_view(HOST, "rpt-2026", 0, element)
    assert payload == {
        "element_id": "tbl-001",
        "category": "table",
        "doc_ref": "rpt-2026",
        "page_index": 0,
        "uri": "dpe://com.example.docs/rpt-2026/elements/tbl-001",
        "summary": "季度收入对比表(4行3列)",
        "content": {**TABLE, "total_rows": 4, "total_columns": 3},
        "metadata": {"source_range": "A1:C5", "has_formulas": True},
    }
