"""The docx extractor over ../shared/corpus (skipped when absent).

Every .docx/.docm of corpus/docx and corpus/bad, from the session's one extraction of the
corpus (tests/corpus_trees.py), with the probe run here on the files that open; per file: a
tree (pages, categories, all text) or an error kind. Every file must end in one of the two,
and the files that hide their text (a body inside a content control, an HTML altChunk,
Strict OOXML) must give it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dpe_server.extractors import DEFAULT_LIMITS
from dpe_server.extractors.docx.extract import probe
from tests.corpus_trees import Outcome

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"

EXPECTED_ERRORS = {
    "poi__ExternalEntityInText.docx": "corrupt",
    "poi__bug53475-password-is-pass.docx": "encrypted",
    "poi__clusterfuzz-testcase-minimized-POIXWPFFuzzer-4959857092198400.docx": "corrupt",
    "poi__crash-517626e815e0afa9decd0ebb6d1dee63fb9907dd.docx": "corrupt",
    "poi__protected_agile.docx": "encrypted",
    "poi__truncated62886.docx": "corrupt",
    "tika__testWORD_protected_passtika.docx": "encrypted",
    "tika__testWORD_truncated.docx": "corrupt",
    "poi__SampleDoc.doc-renamed.docx": "unsupported",
    "samplefiles__minimal-document.pdf-renamed.docx": "unsupported",
    "samplefiles__source.odt-renamed.docx": "unsupported",
    "tika__testWORD_2006ml.flatopc-renamed.docx": "unsupported",
}
EMPTY_OK = {"poi__zero-length.docx"}
"""Readable files with no element (only a watermark picture in the header)."""


def _files() -> list[Path]:
    found = [p for p in (CORPUS / "docx").glob("*.docx")]
    found += [p for p in (CORPUS / "bad").iterdir() if p.suffix in (".docx", ".docm")]
    return sorted(found)


def _row(path: Path, outcome: Outcome) -> dict[str, Any]:
    doc = outcome.doc
    if doc is None:
        return {"name": path.name, "error": {"kind": outcome.kind, "message": outcome.message}}
    with path.open("rb") as f:
        props = probe(f, DEFAULT_LIMITS)
    texts = [str(e.content.get("text", "")) for p in doc.pages for e in p.elements]
    texts += [
        c
        for p in doc.pages
        for e in p.elements
        if e.category.value == "table"
        for row in e.content["rows"]
        for c in row
    ]
    return {
        "name": path.name,
        "pages": len(doc.pages),
        "elements": sum(len(p.elements) for p in doc.pages),
        "probe_pages": props.page_count,
        "probe_titles_match": list(props.page_titles or ()) == [p.title for p in doc.pages],
        "categories": sorted({e.category.value for p in doc.pages for e in p.elements}),
        "text": "\n".join(texts),
    }


@pytest.fixture(scope="module")
def sweep(corpus: Path, corpus_outcomes: dict[Path, Outcome]) -> dict[str, dict[str, Any]]:
    return {path.name: _row(path, corpus_outcomes[path]) for path in _files()}


@pytest.mark.corpus
def test_corpus_every_file_is_a_tree_or_a_clear_error(sweep: dict[str, dict[str, Any]]) -> None:
    assert len(sweep) == len(_files())
    outcomes = {
        name: row["error"]["kind"] if "error" in row else "ok" for name, row in sweep.items()
    }
    expected = {name: EXPECTED_ERRORS.get(name, "ok") for name in sweep}
    assert outcomes == expected


@pytest.mark.corpus
def test_corpus_errors_are_one_plain_sentence(sweep: dict[str, dict[str, Any]]) -> None:
    for row in sweep.values():
        if "error" in row:
            message = row["error"]["message"]
            assert "\n" not in message
            assert "/work/" not in message
            assert "Traceback" not in message


@pytest.mark.corpus
def test_corpus_readable_files_have_elements(sweep: dict[str, dict[str, Any]]) -> None:
    empty = {name for name, row in sweep.items() if "error" not in row and not row["elements"]}
    assert empty == EMPTY_OK


@pytest.mark.corpus
def test_corpus_probe_page_count_is_exact(sweep: dict[str, dict[str, Any]]) -> None:
    for name, row in sweep.items():
        if "error" not in row:
            assert row["probe_pages"] == row["pages"], name
            assert row["probe_titles_match"], name


TEXTS = [
    ("poi__Bug54771a.docx", ["Test Subtitle", "Test User"]),
    ("tika__testAltChunkHTML.docx", ["Simple paragraph with a emphasized word.", "ROW 2"]),
    ("docling__Strict.docx", ["Some text"]),
    ("docling__textbox.docx", ["Student falls ill"]),
    ("tika__testWORD_2006ml.docx", ["This is a text box", "Rich text content control"]),
    ("poi__bug65649.docx", ["ГОСУДАРСТВЕННЫЙ КОНТРАКТ", "Стройвижн"]),
]


@pytest.mark.corpus
@pytest.mark.parametrize(("name", "needles"), TEXTS, ids=[t[0] for t in TEXTS])
def test_corpus_hidden_text_comes_out(
    sweep: dict[str, dict[str, Any]], name: str, needles: list[str]
) -> None:
    text = sweep[name]["text"]
    for needle in needles:
        assert needle in text


CATEGORIES = [
    ("docling__equations.docx", "formula"),
    ("docling__drawingml.docx", "chart"),
    ("docx__shp-inline-shape-access.docx", "diagram"),
    ("docx__tbl-having-tables.docx", "table"),
    ("poi__delins.docx", "annotation"),
    ("poi__form_footnotes.docx", "form"),
    ("docling__docx_checkboxes.docx", "form"),
    ("poi__PageSpecificHeadFoot.docx", "header"),
    ("docx__par-hyperlinks.docx", "link"),
    ("poi__ComplexNumberedLists.docx", "list"),
    ("docling__docx_vml_images.docx", "image"),
]


@pytest.mark.corpus
@pytest.mark.parametrize(("name", "category"), CATEGORIES, ids=[c[0] for c in CATEGORIES])
def test_corpus_structure_is_found(
    sweep: dict[str, dict[str, Any]], name: str, category: str
) -> None:
    assert category in sweep[name]["categories"]
