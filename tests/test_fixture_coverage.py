"""The fixture folder is a conformance set (issue 10): every category, every format twice,
and each listed edge case at least once, found by extracting the built fixtures."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from dpe_server.catalog.folder import scan
from dpe_server.extractors import DEFAULT_LIMITS, file_type, for_path
from dpe_server.model.errors import ExtractionError
from dpe_server.model.tree import Category, Document, Page

Docs = dict[str, Document | ExtractionError]

CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
RTL = re.compile(r"[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufeff]")


@pytest.fixture(scope="module")
def docs(fixture_dir: Path) -> Docs:
    out: Docs = {}
    for rel in scan(fixture_dir):
        extractor = for_path(rel)
        if extractor is None:
            continue
        with (fixture_dir / rel).open("rb") as f:
            try:
                out[rel] = extractor.extract(f, DEFAULT_LIMITS)
            except ExtractionError as exc:
                out[rel] = exc
    return out


def _readable(docs: Docs, kind: str | None = None) -> dict[str, Document]:
    return {
        rel: d
        for rel, d in docs.items()
        if isinstance(d, Document) and (kind is None or file_type(rel) == kind)
    }


def _pages(docs: Docs, kind: str) -> list[Page]:
    return [p for d in _readable(docs, kind).values() for p in d.pages]


def test_fixture_coverage_every_category(docs: Docs) -> None:
    found = {el.category for d in _readable(docs).values() for p in d.pages for el in p.elements}
    missing = sorted(c.value for c in Category if c not in found)
    assert missing == [], f"no fixture document has these categories: {missing}"


@pytest.mark.parametrize("kind", ["xlsx", "pdf", "pptx", "docx", "odt", "odp"])
def test_fixture_coverage_two_documents_per_format(docs: Docs, kind: str) -> None:
    count = Counter(file_type(rel) for rel in _readable(docs))
    assert count[kind] >= 2, f"readable {kind} fixtures: {count[kind]}"


def _empty_sheet(docs: Docs) -> bool:
    return any(not p.elements for p in _pages(docs, "xlsx"))


def _picture_only_slide(docs: Docs) -> bool:
    return any(
        p.elements and all(el.category is Category.IMAGE for el in p.elements)
        for p in _pages(docs, "pptx")
    )


def _docx_without_headings(docs: Docs) -> bool:
    return any(
        all(el.category is not Category.HEADING for p in d.pages for el in p.elements)
        for d in _readable(docs, "docx").values()
    )


def _pdf_page_without_text(docs: Docs) -> bool:
    return any(
        p.metadata.get("no_text_layer") is True
        or (p.elements and all(el.category is Category.IMAGE for el in p.elements))
        for p in _pages(docs, "pdf")
    )


def _hidden(kind: str) -> Callable[[Docs], bool]:
    return lambda docs: any(p.metadata.get("hidden") is True for p in _pages(docs, kind))


def _title_and_keywords(docs: Docs) -> bool:
    return any(d.properties.title and d.properties.keywords for d in _readable(docs).values())


def _derived_title(docs: Docs) -> bool:
    return any(not d.properties.title for d in _readable(docs).values())


def _encrypted(docs: Docs) -> bool:
    return any(isinstance(d, ExtractionError) and d.kind == "encrypted" for d in docs.values())


def _text_matching(pattern: re.Pattern[str]) -> Callable[[Docs], bool]:
    def found(docs: Docs) -> bool:
        return any(
            pattern.search(json.dumps(d.to_json(), ensure_ascii=False))
            for d in _readable(docs).values()
        )

    return found


EDGES: dict[str, Callable[[Docs], bool]] = {
    "empty-sheet": _empty_sheet,
    "slide-only-a-picture": _picture_only_slide,
    "docx-without-headings": _docx_without_headings,
    "pdf-page-without-text-layer": _pdf_page_without_text,
    "hidden-sheet": _hidden("xlsx"),
    "hidden-slide": _hidden("pptx"),
    "properties-title-and-keywords": _title_and_keywords,
    "derived-title": _derived_title,
    "encrypted-with-error": _encrypted,
    "cjk-text": _text_matching(CJK),
    "rtl-text": _text_matching(RTL),
}


@pytest.mark.parametrize("edge", list(EDGES), ids=list(EDGES))
def test_fixture_coverage_edge_case(docs: Docs, edge: str) -> None:
    assert EDGES[edge](docs), f"no fixture document shows the edge case '{edge}'"
