"""Level 0 written a batch of documents at a time: the same text as the whole payload's."""

from __future__ import annotations

import json

import pytest

from dpe_server.model.info import DocumentInfo
from dpe_server.model.uri import parse
from dpe_server.views import jsontext
from dpe_server.views.listing import catalog_json
from dpe_server.views.payloads import catalog_view

HOST = "local.dpe.t"


def _doc(i: int) -> DocumentInfo:
    error = {"kind": "encrypted", "message": "Needs a password."} if i % 7 == 3 else None
    return DocumentInfo(
        doc_ref=f"d{i}",
        file_uri=f"file:///x/d{i}.pdf",
        file_type="pdf",
        title=f'报告 {i} "q"' if i % 2 else f"d{i}",
        page_count=0 if error else i,
        keywords=("a", "b") if i % 3 else (),
        summary="" if i % 5 else "line\nbreak",
        last_modified="2026-01-01T00:00:00Z",
        error=error,
        extra={"truncated": True} if i % 4 == 1 else {},
    )


QUERIES = ["", "?offset=0&limit=1", "?offset=3&limit=5", "?offset=9", "?limit=100", "?offset=40"]


@pytest.mark.parametrize("count", [0, 1, 2, 10, 11])
@pytest.mark.parametrize("query", QUERIES)
@pytest.mark.parametrize("batch", [1, 3, 256])
def test_pieces_join_to_the_payloads_text(count: int, query: str, batch: int) -> None:
    docs = [_doc(i) for i in range(count)]
    uri = parse(f"dpe://{HOST}{query}")
    expected = json.dumps(catalog_view(HOST, docs, uri), indent=2, ensure_ascii=False)
    assert jsontext.dumps(catalog_view(HOST, docs, uri)) == expected
    assert "".join(catalog_json(HOST, docs, uri, batch)) == expected


class _Counted(list[DocumentInfo]):
    """A listing that records the widest slice taken of it."""

    widest = 0

    def __getitem__(self, index):  # type: ignore[no-untyped-def,override]
        if isinstance(index, slice):
            self.widest = max(self.widest, len(range(len(self))[index]))
        return super().__getitem__(index)


def test_documents_are_taken_a_batch_at_a_time() -> None:
    docs = _Counted(_doc(i) for i in range(100))
    pieces = list(catalog_json(HOST, docs, parse(f"dpe://{HOST}"), batch=8))
    assert docs.widest == 8
    assert len(pieces) == 100 // 8 + 1 + 1  # 13 batches, then the closing
    assert json.loads("".join(pieces))["total_count"] == 100
