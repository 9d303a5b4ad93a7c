"""The pdf extractor over ../shared/corpus/pdf: every file a tree or a clear error kind.

The trees come from the session's one extraction of the corpus (tests/corpus_trees.py: worker
processes, stderr captured per file). Run with `-s` to see the table.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dpe_server.model.tree import Category, Document, Page
from tests.corpus_trees import Outcome
from tests.extractors.test_pdf_columns import texts_of

pytestmark = pytest.mark.corpus

KINDS = {"encrypted", "corrupt", "unsupported", "too_large"}

NEEDS_PASSWORD = {
    "pdfjs__issue6010_2.pdf",
    "pypdf__r4-aes-user-password.pdf",
    "samplefiles__libreoffice-writer-password.pdf",
}
OPENS_WITH_EMPTY_PASSWORD = {
    "pypdf__r6-empty-password.pdf",
    "pypdf__r6-user-password.pdf",
    "unstructured__copy-protected.pdf",
}


def _row(outcome: Outcome) -> dict[str, Any]:
    doc = outcome.doc
    if doc is None:
        row: dict[str, Any] = {"ok": False, "kind": outcome.kind, "message": outcome.message}
    else:
        wire = json.dumps(doc.to_json(), ensure_ascii=False).encode("utf-8")
        text = wire.decode("utf-8")
        row = {
            "ok": True,
            "pages": len(doc.pages),
            "categories": sorted({el.category.value for p in doc.pages for el in p.elements}),
            "json_round_trip": Document.from_json(json.loads(wire)) == doc,
            "page_errors": sum(1 for p in doc.pages if "error" in p.metadata),
            "ligatures": sorted({c for c in text if "\ufb00" <= c <= "\ufb4f"}),
        }
    return {**row, "stderr": outcome.stderr, "seconds": outcome.seconds}


@pytest.fixture(scope="module")
def sweep(corpus: Path, corpus_outcomes: dict[Path, Outcome]) -> dict[str, dict[str, Any]]:
    files = sorted((corpus / "pdf").glob("*.pdf"))
    if not files:
        pytest.skip("no pdf files in the corpus")
    results = {f.name: _row(corpus_outcomes[f]) for f in files}
    print()
    for name, r in sorted(results.items()):
        outcome = f"{r['pages']} pages" if r["ok"] else r["kind"]
        cats = ",".join(r.get("categories", []))
        print(f"{name[:58]:58} {outcome:10} {r.get('seconds', '-'):>6}s {cats}")
    return results


def test_corpus_every_pdf_tree_or_error_kind(sweep: dict[str, dict[str, Any]]) -> None:
    bad = {
        name: r
        for name, r in sweep.items()
        if not (r["ok"] and r["pages"] >= 1) and r.get("kind") not in KINDS
    }
    assert bad == {}


OPENED_BEFORE_ISSUE_17 = 39
"""Documents the pypdf text layer opened (a tree of at least one page); PDFium must not lose
any."""


def test_corpus_as_many_documents_open(sweep: dict[str, dict[str, Any]]) -> None:
    assert sum(1 for r in sweep.values() if r["ok"] and r["pages"] >= 1) >= OPENED_BEFORE_ISSUE_17


def test_corpus_no_presentation_forms(sweep: dict[str, dict[str, Any]]) -> None:
    """Ligatures (U+FB00–U+FB4F) are read as their letters on every page."""
    assert {name: r["ligatures"] for name, r in sweep.items() if r.get("ligatures")} == {}


def test_corpus_trees_are_plain_json(sweep: dict[str, dict[str, Any]]) -> None:
    assert [name for name, r in sweep.items() if r["ok"] and not r["json_round_trip"]] == []


def test_corpus_no_noise_on_stdio(sweep: dict[str, dict[str, Any]]) -> None:
    assert {name: r["stderr"] for name, r in sweep.items() if r.get("stderr")} == {}


@pytest.mark.parametrize("name", sorted(NEEDS_PASSWORD))
def test_corpus_password_files_are_encrypted(sweep: dict[str, dict[str, Any]], name: str) -> None:
    assert sweep[name]["kind"] == "encrypted"


@pytest.mark.parametrize("name", sorted(OPENS_WITH_EMPTY_PASSWORD))
def test_corpus_empty_password_files_open(sweep: dict[str, dict[str, Any]], name: str) -> None:
    assert sweep[name]["ok"] is True
    assert "text" in sweep[name]["categories"]


@pytest.mark.parametrize(
    ("name", "category"),
    [
        pytest.param("samplefiles__annotated_pdf.pdf", "annotation", id="annotations"),
        pytest.param("samplefiles__pdflatex-forms.pdf", "form", id="acroform"),
        pytest.param("samplefiles__pdflatex-outline.pdf", "link", id="links"),
        pytest.param("pdfjs__js-buttons.pdf", "widget", id="buttons"),
        pytest.param("tika__testPDF_jpeg2000.pdf", "image", id="jpx-image"),
        pytest.param("pdfjs__tracemonkey.pdf", "heading", id="paper-headings"),
        pytest.param("unstructured__pdf2image-memory-error-test-400p.pdf", "footer", id="footers"),
    ],
)
def test_corpus_constructs_found(
    sweep: dict[str, dict[str, Any]], name: str, category: str
) -> None:
    assert category in sweep[name]["categories"]


def test_corpus_400_pages(sweep: dict[str, dict[str, Any]]) -> None:
    assert sweep["unstructured__pdf2image-memory-error-test-400p.pdf"]["pages"] == 400


def _tree(corpus: Path, corpus_outcomes: dict[Path, Outcome], name: str) -> Document:
    doc = corpus_outcomes[corpus / "pdf" / name].doc
    assert doc is not None
    return doc


def test_corpus_tax_guide_cover_top_line_before_the_columns(
    corpus: Path, corpus_outcomes: dict[Path, Outcome]
) -> None:
    """The tax guide's cover: a narrow cover column beside the contents, read before them.
    Above its visible box the file prints a proof's marks (`Page 1 of 67`, `15:46 -
    5-Feb-2013`, `MUST be removed before printing`): outside the crop box, no viewer shows
    them and pdftotext does not read them, so they are not part of the page."""
    doc = _tree(corpus, corpus_outcomes, "tika__testPDF_childAttachments.pdf")
    texts = texts_of(doc.pages[0])
    assert texts[0] == "Department of the Treasury"
    assert texts.index("Feb 05, 2013") < texts.index("Contents")
    page = json.dumps(doc.pages[0].to_json(), ensure_ascii=False)
    assert "15:46" not in page
    assert "removed before printing" not in page


def test_corpus_tex_accents_composed(corpus: Path, corpus_outcomes: dict[Path, Outcome]) -> None:
    """The LaTeX paper sets `\\"{\\i}` as a diaeresis over a dotless i: read as `ï`."""
    doc = _tree(corpus, corpus_outcomes, "pdfjs__tracemonkey.pdf")
    text = json.dumps(doc.to_json(), ensure_ascii=False)
    assert "naïve" in text
    assert "\u00a8" not in text
    assert "ı" not in text


def test_corpus_narrow_gutter_above_a_table(
    corpus: Path, corpus_outcomes: dict[Path, Outcome]
) -> None:
    """The federal register pages: two columns 12 pt apart in 8 pt type, a wide table under
    them on page 9; each column is read down, not line by line across both."""
    doc = _tree(corpus, corpus_outcomes, "tika__testPDF_bad_page_303226.pdf")
    texts = texts_of(doc.pages[8])
    assert any(
        t.startswith("time after the receipt of an application for an exclusion under this")
        and "shall notify the applicant of his acceptance" in t
        for t in texts
    )


def _tables(page: Page) -> list[dict[str, Any]]:
    return [dict(e.content) for e in page.elements if e.category == Category.TABLE]


def test_corpus_federal_register_wide_table(
    corpus: Path, corpus_outcomes: dict[Path, Outcome]
) -> None:
    """Page 87 of the federal regulations: a table across both columns, ruled above and under
    its header and under its last row, with rules between its columns and none down its
    sides. Its six columns and fifteen rows are cells, without their dot leaders; none of its
    words is read as prose."""
    doc = _tree(corpus, corpus_outcomes, "tika__testPDF_bad_page_303226.pdf")
    page = doc.pages[8]
    (table,) = _tables(page)
    assert table["headers"][:5] == [
        "Company",
        "Trade name",
        "NDC code",
        "Form",
        "Controlled substance",
    ]
    assert table["headers"][5].startswith("(mg or mg/")
    rows = table["rows"]
    assert len(rows) == 15
    assert rows[3][2] == "........................"  # no code: a leader alone stays
    assert rows[0] == [
        "Bioline Laboratories",
        "Theophed",
        "00719–1945",
        "TB",
        "Phenobarbital",
        "8.00",
    ]
    assert rows[-1] == [
        "White Hall Labs",
        "Primatene (P-tablets)",
        "00573–2940",
        "TB",
        "Phenobarbital",
        "8.00",
    ]
    texts = texts_of(page)
    assert not [t for t in texts if "Laboratories" in t or t.startswith(("Company", "8.00"))]


def test_corpus_tax_guide_ruled_tables(corpus: Path, corpus_outcomes: dict[Path, Outcome]) -> None:
    """The tax guide's boxed tables: rows of a band under the header (no rule between them)
    are rows; a ruled row whose cells wrap over several lines stays one row."""
    doc = _tree(corpus, corpus_outcomes, "tika__testPDF_childAttachments.pdf")
    (futa,) = _tables(doc.pages[35])
    assert futa["rows"] == [
        ["Jan.–Feb.–Mar.", "Mar. 31", "Apr. 30"],
        ["Apr.–May–June", "June 30", "July 31"],
        ["July–Aug.–Sept.", "Sept. 30", "Oct. 31"],
        ["Oct.–Nov.–Dec.", "Dec. 31", "Jan. 31"],
    ]
    (special,) = _tables(doc.pages[36])
    assert [
        "Disabled worker's wages paid after year in which worker became entitled to disability"
        " insurance benefits under the Social Security Act.",
        "Withhold",
        "Exempt, if worker did not perform any service for employer during period for which"
        " payment is made.",
        "Taxable",
    ] in special["rows"]
