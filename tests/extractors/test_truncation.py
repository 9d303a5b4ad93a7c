"""Where a cap stops the extraction of a page, the document says `truncated` too, in every
format (Level 0 and 1 show it); tests/catalog/test_catalog.py checks the same of chunked
extraction."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpe_server.extractors import DEFAULT_LIMITS, Limits, for_path


@pytest.mark.parametrize(
    "name",
    ["doc-everything.docx", "xlsx-constructs.xlsx", "deck-everything.pptx", "pdf_structure.pdf"],
)
def test_a_page_cut_by_a_cap_marks_the_document_truncated(fixture_dir: Path, name: str) -> None:
    path = fixture_dir / name
    extractor = for_path(path)
    assert extractor is not None
    with path.open("rb") as f:
        whole = extractor.extract(f, DEFAULT_LIMITS)
    assert "truncated" not in whole.metadata
    assert not any(p.metadata.get("truncated") for p in whole.pages)
    with path.open("rb") as f:
        cut = extractor.extract(f, Limits(max_elements_per_page=1))
    assert any(p.metadata.get("truncated") for p in cut.pages)
    assert cut.metadata["truncated"] is True
