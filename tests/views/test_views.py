"""Views beyond the seed's examples: previews, slices, errors and extension fields."""

from __future__ import annotations

from dpe_server.model.info import DocumentInfo, PageInfo
from dpe_server.model.tree import TABLE_PREVIEW_ROWS, Category, PageBuilder
from dpe_server.model.uri import parse
from dpe_server.views.payloads import catalog_view, document_view, element_view, page_view

HOST = "local.dpe.t"


def _doc(ref: str, **kw: object) -> DocumentInfo:
    base: dict[str, object] = {
        "doc_ref": ref,
        "file_uri": f"file:///x/{ref}.pdf",
        "file_type": "pdf",
        "title": ref,
        "page_count": 1,
        "keywords": (),
        "summary": "",
        "last_modified": "2026-01-01T00:00:00Z",
    }
    base.update(kw)
    return DocumentInfo(**base)  # type: ignore[arg-type]


def _big_table_page(rows: int) -> PageBuilder:
    b = PageBuilder(2)
    b.add(
        Category.TABLE,
        "t",
        {"headers": ["a", "b"], "rows": [[str(i), "x"] for i in range(rows)], "total_rows": rows},
    )
    return b


def test_catalog_without_offset_lists_everything() -> None:
    docs = [_doc(f"d{i}") for i in range(30)]
    payload = catalog_view(HOST, docs, parse(f"dpe://{HOST}"))
    assert len(payload["documents"]) == 30
    assert payload["total_count"] == 30


def test_catalog_offset_limit_slices_but_counts_all() -> None:
    docs = [_doc(f"d{i}") for i in range(30)]
    payload = catalog_view(HOST, docs, parse(f"dpe://{HOST}?offset=25&limit=10"))
    assert [d["doc_ref"] for d in payload["documents"]] == ["d25", "d26", "d27", "d28", "d29"]
    assert payload["total_count"] == 30


def test_catalog_offset_alone_uses_default_limit() -> None:
    docs = [_doc(f"d{i}") for i in range(50)]
    payload = catalog_view(HOST, docs, parse(f"dpe://{HOST}?offset=1"))
    assert len(payload["documents"]) == 20


def test_unreadable_document_lists_error_with_zero_pages() -> None:
    doc = _doc("enc", page_count=0, error={"kind": "encrypted", "message": "Needs a password."})
    payload = catalog_view(HOST, [doc], parse(f"dpe://{HOST}"))["documents"][0]
    assert payload["page_count"] == 0
    assert payload["error"] == {"kind": "encrypted", "message": "Needs a password."}


def test_level1_depth_metadata_has_no_pages() -> None:
    payload = document_view(HOST, _doc("d"), [PageInfo(0, "a", 1)], parse(f"dpe://{HOST}/d"))
    assert "pages" not in payload
    assert "page_total" not in payload


def test_level1_page_index_carries_hidden_flag() -> None:
    pages = [PageInfo(0, "a", 1), PageInfo(1, "b", 0, {"hidden": True})]
    payload = document_view(HOST, _doc("d"), pages, parse(f"dpe://{HOST}/d?depth=pages"))
    assert "hidden" not in payload["pages"][0]
    assert payload["pages"][1]["hidden"] is True


def test_level1_offset_past_end_gives_empty_pages() -> None:
    pages = [PageInfo(0, "a", 1)]
    payload = document_view(HOST, _doc("d"), pages, parse(f"dpe://{HOST}/d?depth=pages&offset=5"))
    assert payload["pages"] == []
    assert payload["page_total"] == 1


def test_level2_table_preview_is_cut_and_says_so() -> None:
    page = _big_table_page(TABLE_PREVIEW_ROWS + 5).build("Sheet")
    payload = page_view(HOST, "d", page, parse(f"dpe://{HOST}/d/pages/2"))
    content = payload["elements"][0]["content"]
    assert len(content["rows"]) == TABLE_PREVIEW_ROWS
    assert content["rows_truncated"] is True
    assert content["total_rows"] == TABLE_PREVIEW_ROWS + 5


def test_level2_does_not_mutate_the_tree() -> None:
    page = _big_table_page(TABLE_PREVIEW_ROWS + 5).build("Sheet")
    page_view(HOST, "d", page, parse(f"dpe://{HOST}/d/pages/2"))
    assert len(page.elements[0].content["rows"]) == TABLE_PREVIEW_ROWS + 5


def test_level3_table_is_whole() -> None:
    page = _big_table_page(TABLE_PREVIEW_ROWS + 5).build("Sheet")
    payload = element_view(HOST, "d", 2, page.elements[0])
    assert len(payload["content"]["rows"]) == TABLE_PREVIEW_ROWS + 5
    assert payload["content"]["total_columns"] == 2
    assert payload["uri"] == f"dpe://{HOST}/d/elements/p2-tbl1"
    assert "rows_truncated" not in payload["content"]


def test_level2_page_metadata_becomes_extension_fields() -> None:
    page = PageBuilder(0).build("Hidden", {"hidden": True, "title": "ignored"})
    payload = page_view(HOST, "d", page, parse(f"dpe://{HOST}/d/pages/0"))
    assert payload["hidden"] is True
    assert payload["title"] == "Hidden"


def test_level2_elements_have_no_metadata() -> None:
    b = PageBuilder(0)
    b.add(Category.TEXT, "t", {"text": "t"}, {"bbox": [0, 0, 1, 1]})
    payload = page_view(HOST, "d", b.build("x"), parse(f"dpe://{HOST}/d/pages/0"))
    assert set(payload["elements"][0]) == {"element_id", "category", "summary", "content"}
