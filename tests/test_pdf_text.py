"""The pdf text layer (issue 17): measured words, presentation forms, right to left, gutters.

On fixtures/builders/pdf_text.py's `pdf_text.pdf` (see its docstring for what each page
draws) and on synthetic runs.
"""

from __future__ import annotations

from pathlib import Path

import pypdfium2
import pytest

from dpe_server.extractors import DEFAULT_LIMITS
from dpe_server.extractors.pdf import extract as pdf_mod
from dpe_server.extractors.pdf.collect import Run, collect_page
from dpe_server.extractors.pdf.lines import make_lines
from dpe_server.extractors.pdf.textnorm import clean, rtl_majority
from dpe_server.model.tree import Category, Document
from fixtures.builders import pdf_text as builder


@pytest.fixture(scope="module")
def path(fixture_dir: Path) -> Path:
    return fixture_dir / "pdf_text.pdf"


@pytest.fixture(scope="module")
def doc(path: Path) -> Document:
    with path.open("rb") as f:
        return pdf_mod.extract(f, DEFAULT_LIMITS)


def texts(doc: Document, index: int) -> list[str]:
    return [
        str(e.content["text"])
        for e in doc.pages[index].elements
        if e.category in (Category.TEXT, Category.HEADING)
    ]


def runs_of(path: Path, index: int) -> list[Run]:
    pdf = pypdfium2.PdfDocument(str(path))
    try:
        return collect_page(pdf[index], 100_000).runs
    finally:
        pdf.close()


def test_words_from_measured_gaps(doc: Document) -> None:
    assert texts(doc, 0) == [
        "See the full harbor report for details.",
        "An important note.",
        "Placed words without spaces.",
        "The model produced spaced letters.",
        "Wide word spacing here.",
        "Narrow squeezed",
        "Bold twice.",
    ]


def test_link_anchor_is_the_text_under_the_rectangle(doc: Document) -> None:
    (link,) = [e for e in doc.pages[0].elements if e.category is Category.LINK]
    assert link.content["text"] == "full harbor report"


def test_text_at_cuts_inside_a_run(path: Path) -> None:
    """A rectangle over one word of a run gives that word, not a slice by proportion."""
    runs = runs_of(path, 0)
    x = 72 + builder.width("See the full ", 11)
    rect = (x - 0.5, 716.0, x + builder.width("harbor", 11) + 0.5, 732.0)
    assert pdf_mod._text_at(runs)(rect) == "harbor"


def test_presentation_forms_and_soft_hyphens(doc: Document) -> None:
    text = " ".join(texts(doc, 1))
    assert "The configuration of the flow is effective." in text
    assert "A hyphenated word." in text
    assert "بال" in text
    assert not [c for c in text if "\ufb00" <= c <= "\ufdff" or "\ufe70" <= c <= "\ufeff"]


def test_right_to_left_lines_in_logical_order(path: Path) -> None:
    lines = [ln.text for ln in make_lines(runs_of(path, 2))]
    assert lines == [builder.ARABIC, builder.HEBREW, builder.MIXED_AR, builder.MIXED_HE]


def test_cjk_columns_are_not_glued(path: Path) -> None:
    runs = [r for r in runs_of(path, 3) if r.text != builder.MARGIN_NOTE]
    assert sorted(r.text for r in runs) == sorted(builder.CJK_LEFT + builder.CJK_RIGHT)
    first = make_lines(runs)[0]
    assert first.text == f"{builder.CJK_LEFT[0]} {builder.CJK_RIGHT[0]}"


def test_rotated_text_is_one_run(path: Path) -> None:
    """A vertical margin note is not cut into a run per word (each word has its own y)."""
    assert builder.MARGIN_NOTE in [r.text for r in runs_of(path, 3)]


def rtl_run(text: str, x0: float, x1: float) -> Run:
    return Run(text, x0, x1, 700.0, 10.0, "F", False, False)


def test_runs_of_a_right_to_left_line_are_read_right_to_left() -> None:
    line = make_lines([rtl_run("עולם", 100, 130), rtl_run("שלום", 150, 180)])[0]
    assert line.text == "שלום עולם"


@pytest.mark.parametrize(
    ("raw", "clean_text"),
    [
        pytest.param("con\ufb01guration", "configuration", id="fi-ligature"),
        pytest.param("\ufb00\ufb02\ufb06", "fffl" + "st", id="ff-fl-st"),
        pytest.param("\ufedf\ufe8e", "\u0644\u0627", id="arabic-forms"),
        pytest.param("hy\u00adphen", "hyphen", id="soft-hyphen"),
        pytest.param("\ufeffzero\u200bwidth", "zerowidth", id="invisible"),
        pytest.param("nul\x00ctl\x01\x7f", "nulctl", id="control-characters"),
        pytest.param("Ａ² ™ ½", "Ａ² ™ ½", id="other-compatibility-forms-kept"),
    ],
)
def test_clean(raw: str, clean_text: str) -> None:
    assert clean(raw) == clean_text


def test_rtl_majority() -> None:
    assert rtl_majority("שלום עולם abc")
    assert not rtl_majority("The word שלום means peace")
    assert not rtl_majority("東京都")
