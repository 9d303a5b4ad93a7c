"""Views: pure functions from the catalog's data and a parsed URI to the payloads of SPEC §4.

No I/O and no globals: the catalog hands in what it has (document summaries, page headers,
one page or one element), the view shapes it for Level 0, 1, 2 or 3.
"""

from __future__ import annotations

from collections.abc import Sequence

from dpe_server.model.info import DocumentInfo, PageInfo
from dpe_server.model.tree import JSON, TABLE_PREVIEW_ROWS, Category, Element, Page
from dpe_server.model.uri import DEFAULT_LIMIT, DpeUri, format_uri

_CORE_PAGE_KEYS = frozenset({"page_index", "title", "element_count", "uri", "doc_ref", "elements"})


def document_summary(host: str, doc: DocumentInfo) -> dict[str, JSON]:
    """The DocumentSummary of Level 0, which is also Level 1 with depth=metadata."""
    out: dict[str, JSON] = {
        "doc_ref": doc.doc_ref,
        "uri": format_uri(host, doc.doc_ref),
        "file_uri": doc.file_uri,
        "file_type": doc.file_type,
        "title": doc.title,
        "page_count": doc.page_count,
        "keywords": list(doc.keywords),
        "summary": doc.summary,
        "last_modified": doc.last_modified,
    }
    if doc.error is not None:
        out["error"] = dict(doc.error)
    for key, value in doc.extra.items():
        out.setdefault(key, value)
    return out


def catalog_range(count: int, uri: DpeUri) -> range:
    """The positions Level 0 lists of `count` documents: every one, or the `offset`/`limit`
    slice when the URI gives them."""
    if uri.offset is None and uri.limit is None:
        return range(count)
    start = uri.offset or 0
    return range(count)[start : start + (uri.limit or DEFAULT_LIMIT)]


def catalog_view(host: str, docs: Sequence[DocumentInfo], uri: DpeUri) -> dict[str, JSON]:
    """Level 0: every document, or the `offset`/`limit` slice when the URI gives them
    (`views.listing` writes the same JSON one document at a time)."""
    shown = catalog_range(len(docs), uri)
    return {
        "documents": [document_summary(host, doc) for doc in docs[shown.start : shown.stop]],
        "total_count": len(docs),
    }


def _page_entry(host: str, doc_ref: str, page: PageInfo) -> dict[str, JSON]:
    out: dict[str, JSON] = {
        "page_index": page.page_index,
        "title": page.title,
        "element_count": page.element_count,
        "uri": format_uri(host, doc_ref, page_index=page.page_index),
        "doc_ref": doc_ref,
    }
    for key, value in page.metadata.items():
        if key not in _CORE_PAGE_KEYS:
            out[key] = value
    return out


def document_view(
    host: str, doc: DocumentInfo, pages: Sequence[PageInfo] | None, uri: DpeUri
) -> dict[str, JSON]:
    """Level 1: the document's metadata, with the page index slice when depth=pages.

    `pages` is every page of the document (or None when only metadata is wanted).
    """
    out = document_summary(host, doc)
    if uri.depth == "pages":
        all_pages = pages or ()
        offset = uri.offset or 0
        limit = uri.limit or DEFAULT_LIMIT
        out["pages"] = [
            _page_entry(host, doc.doc_ref, p) for p in all_pages[offset : offset + limit]
        ]
        out["page_offset"] = offset
        out["page_limit"] = limit
        out["page_total"] = len(all_pages)
    return out


_TABLES = (Category.TABLE, Category.PIVOT_TABLE)
"""The categories whose rows Level 2 previews (`preview_content`; any other's content is
shown whole, a copy of it)."""


def preview_content(element: Element) -> dict[str, JSON]:
    """An element's content as Level 2 shows it: tables cut to a preview of their rows."""
    content = dict(element.content)
    if element.category in _TABLES:
        rows = content.get("rows") or []
        total = content.get("total_rows", len(rows))
        content["total_rows"] = total
        content["rows_truncated"] = len(rows) > TABLE_PREVIEW_ROWS or total > len(rows)
        content["rows"] = rows[:TABLE_PREVIEW_ROWS]
    return content


def page_view(host: str, doc_ref: str, page: Page, uri: DpeUri) -> dict[str, JSON]:
    """Level 2: one page with its elements (filtered by `categories`), tables previewed."""
    wanted = uri.categories
    elements = [el for el in page.elements if wanted is None or el.category in wanted]
    out: dict[str, JSON] = {
        "page_index": page.page_index,
        "title": page.title,
        "doc_ref": doc_ref,
        "uri": format_uri(host, doc_ref, page_index=page.page_index),
        "elements": [
            {
                "element_id": el.element_id,
                "category": el.category._value_,  # `.value`, without the property
                "summary": el.summary,
                "content": preview_content(el) if el.category in _TABLES else dict(el.content),
            }
            for el in elements
        ],
        "element_count": len(elements),
    }
    for key, value in page.metadata.items():
        if key not in _CORE_PAGE_KEYS:
            out[key] = value
    return out


def element_view(host: str, doc_ref: str, page_index: int, element: Element) -> dict[str, JSON]:
    """Level 3: one element in full, with its metadata."""
    content = dict(element.content)
    if element.category is Category.TABLE:
        rows = content.get("rows") or []
        content.setdefault("total_rows", len(rows))
        content.setdefault("total_columns", max((len(r) for r in rows), default=0))
    return {
        "element_id": element.element_id,
        "category": element.category._value_,
        "doc_ref": doc_ref,
        "page_index": page_index,
        "uri": format_uri(host, doc_ref, element_id=element.element_id),
        "summary": element.summary,
        "content": content,
        "metadata": dict(element.metadata),
    }
