"""Right-to-left pdf text in logical order (issue 30): lam-alef ligatures, numbers, Latin
words, brackets and gaps between scripts, from glyphs drawn in visual order.

On fixtures/builders/pdf_rtl.py's `pdf_rtl.pdf` (its docstring says how each page is drawn)
and on visual strings written by python-bidi.
"""

from __future__ import annotations

from pathlib import Path

import pypdfium2
import pytest
from bidi import get_display

from dpe_server.extractors import DEFAULT_LIMITS
from dpe_server.extractors.pdf import extract as pdf_mod
from dpe_server.extractors.pdf.collect import collect_page
from dpe_server.extractors.pdf.lines import make_lines
from dpe_server.extractors.pdf.visual import logical, pair_brackets, visual_word
from dpe_server.model.tree import Document
from fixtures.builders import pdf_rtl as builder


@pytest.fixture(scope="module")
def path(fixture_dir: Path) -> Path:
    return fixture_dir / "pdf_rtl.pdf"


@pytest.fixture(scope="module")
def doc(path: Path) -> Document:
    with path.open("rb") as f:
        return pdf_mod.extract(f, DEFAULT_LIMITS)


def lines_of(path: Path, index: int) -> list[str]:
    pdf = pypdfium2.PdfDocument(str(path))
    try:
        return [line.text for line in make_lines(collect_page(pdf[index], 100_000).runs)]
    finally:
        pdf.close()


def test_lines_shaped_in_pieces_read_in_logical_order(path: Path) -> None:
    """Page 0, as LibreOffice draws it: lam-alef ligature glyphs whose ToUnicode is their
    two letters (`الإنتاجية`, `خلال`, not `اإلنتاجية`, `خالل`), brackets that are the
    characters they stand for, numbers and Latin words as pieces of their own."""
    assert lines_of(path, 0) == [builder.FACTS_AR, builder.MIXED_HE, builder.FACTS_FA]


def test_one_string_per_line_read_in_logical_order(path: Path) -> None:
    """Page 1: lam-alef presentation forms, brackets drawn as their mirrored shapes, and a
    percent sign drawn left of its number after Arabic letters (an Arabic number: `50%`)."""
    assert lines_of(path, 1) == [builder.LIGATURES_AR, builder.BRACKETS_AR, builder.FACTS_AR]


def test_a_gap_between_scripts_is_a_space(path: Path) -> None:
    """Page 2: `Python` 0.12 em from the Arabic words on either side, no space drawn."""
    assert lines_of(path, 2) == [builder.WORDS_AR]


def test_numbers_drawn_glyph_by_glyph_from_the_right(path: Path) -> None:
    """Page 3: every glyph placed from the right end; `47,500` and `12.5%` read as drawn
    (not `005,74`, `5.21%`)."""
    assert lines_of(path, 3) == [builder.GLYPHS_AR]


def test_elements_in_logical_order(doc: Document) -> None:
    texts = " ".join(str(e.content.get("text", "")) for e in doc.pages[0].elements)
    assert builder.FACTS_AR in texts
    assert builder.MIXED_HE in texts


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(builder.FACTS_AR, id="arabic-numbers-brackets"),
        pytest.param(builder.MIXED_HE, id="hebrew-number-latin-words"),
        pytest.param(builder.FACTS_FA, id="persian-digits"),
        pytest.param(builder.GLYPHS_AR, id="thousands-decimals-percent"),
        pytest.param("المبلغ ١٢٣٫٥٠ دينار [ملاحظة] {أ}", id="arabic-indic-digits"),
        pytest.param("נכתב ב-C++ ו-Python 3.12 (גרסה חדשה)", id="latin-with-digits"),
    ],
)
def test_logical_undoes_the_visual_order(text: str) -> None:
    assert logical(builder.visual(text), rtl=True) == text


def test_logical_of_a_left_to_right_line_reverses_only_its_hebrew() -> None:
    text = "The word שלום means (peace) in 2 words"
    assert logical(str(get_display(text, base_dir="L")), rtl=False) == text


@pytest.mark.parametrize(
    ("shown", "expected"),
    [
        pytest.param(")2026 - 2024( ةرتفلا", "الفترة (2024 - 2026)", id="swapped-to-pair"),
        pytest.param("(2026 - 2024) ةرتفلا", "الفترة (2024 - 2026)", id="mirrored-shapes"),
    ],
)
def test_brackets_pair(shown: str, expected: str) -> None:
    """Whether a producer wrote a bracket's character or its mirrored shape, the
    right-to-left line's brackets come out paired; a lone one stays as it is."""
    assert logical(shown, rtl=True) == expected


def test_a_lone_bracket_is_kept() -> None:
    """Nothing pairs it either way: as PDFium gave it."""
    assert pair_brackets(list("1) البند"), [2, 1, 1, 1, 1, 1, 1, 1]) == "1) البند"


@pytest.mark.parametrize(
    ("glyphs", "expected"),
    [
        # PDFium gives a ligature glyph's two letters (ToUnicode: lam, alef) reversed
        pytest.param([("ة", 0, 5), ("ا", 5, 9), ("ل", 5, 9), ("خ", 9, 14)], "ةالخ", id="tounicode"),
        # ... and those of a presentation form it decomposed itself in logical order
        pytest.param([("ل", 5, 9), ("ا", 5, 9), ("خ", 9, 14)], "الخ", id="form"),
        pytest.param([("n", 0, 5), ("م", 6.5, 10), ("ن", 10, 14)], "n من", id="gap"),
        pytest.param([("n", 0, 5), ("م", 5.5, 10)], "nم", id="kerned"),
    ],
)
def test_visual_word(glyphs: list[tuple[str, float, float]], expected: str) -> None:
    """A word's glyphs as drawn, left to right: a ligature's letters in logical order
    written right to left as the glyph shows them (`ال` for `لا`), a space where a gap
    parts two scripts (10 pt text)."""
    assert visual_word(glyphs, 10.0) == expected
