"""`dpe-server read` keeps the pages of the document it extracted: reading each of them after
Level 1 (what converting the whole file does) reads none back from the store, even past the
server's page cache (256 pages, half of them kept from an extraction)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dpe_server.catalog.sqlite import SqliteStore
from dpe_server.model.uri import format_uri
from dpe_server.read.oneshot import OneShotReader

HOST = "test"
PAGES = 300


def test_every_page_of_a_long_document_is_read_from_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    text = "".join(f"# Chapter {i}\n\nThe words of chapter {i}.\n\n" for i in range(PAGES))
    (folder / "book.md").write_text(text, encoding="utf-8")

    def from_store(self: SqliteStore, key: str, index: int) -> None:
        raise AssertionError(f"page {index} read back from the store")

    with OneShotReader(folder, HOST, cache_dir=tmp_path / "cache") as reader:
        base = format_uri(HOST, reader.entries()[0].doc_ref)
        listed = json.loads(reader.read(base + "?depth=pages")[0].text or "")
        assert listed["page_count"] == PAGES
        monkeypatch.setattr(SqliteStore, "page", from_store)
        for i in range(PAGES):
            body = reader.read(f"{base}/pages/{i}?format=markdown")[0].text or ""
            assert f"The words of chapter {i}." in body
