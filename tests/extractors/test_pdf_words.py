"""Every word of every corpus pdf page, as an independent reader reads it, is on the served page.

For each page of each pdf of ../shared/corpus that opens, the words that poppler's
`pdftotext` reads in the page's text layer must be in the page's Level 2 Markdown (a table
preview cut at Level 2 read whole at Level 3), normalised as `check/fidelity.py` says:
at least 0.998 of all words, and 0.97 of every page's. PDFium's own page text
(`FPDFText_GetText`, without our layout) is a second reader with the same bounds.

The only pages left out are those where the reader itself misreads the page, each listed with
the reason, checked against the page's rendering; a listed page that now passes fails the
test, so the list stays exact. The fixtures of the losses found so far are tested word for
word (`pdf_glyphs.pdf`: a bullet PDFium's text leaves out, a word drawn off the page, a
heading hyphenated across lines).
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from dpe_server.check.fidelity import (
    EVERY_PAGE,
    OVERALL,
    PageWords,
    compare,
    overall,
    pdftotext_available,
)
from dpe_server.check.fidelity import pdftotext_pages as poppler_pages
from dpe_server.extractors.pdf.plaintext import page_texts as pdfium_pages
from dpe_server.model.tree import Document, Page
from dpe_server.model.uri import parse
from dpe_server.views.payloads import element_view, page_view, preview_content
from dpe_server.views.render import render
from fixtures.builders.pdf_glyphs import OVERDRAWN, TWICE
from fixtures.builders.pdf_hangul import PARAGRAPH
from tests.corpus_trees import Outcome
from tests.extractors.test_pdf_structure import _doc

POPPLER_MISREADS: dict[tuple[str, int], str] = {
    ("docling__redp5110_sampled.pdf", 2): (
        "the highlights box is set in a font with no usable ToUnicode: poppler reads its "
        "letters shifted by three (`(QKDQFH` for `Enhance`), PDFium reads glyph codes; the "
        "words are not in the text layer (only OCR of the rendering could read them)"
    ),
    ("docling__redp5110_sampled.pdf", 9): (
        "each callout of the syntax diagram is drawn twice at one place, once with only some "
        "of its letters (`S ifi th t th`): poppler and PDFium read both drawings "
        "(`iinitially`, `thatt`); the page shows each label once, as the extractor reads it"
    ),
    **{
        ("samplefiles__habibi-rotated.pdf", page): (
            "the Arabic word is drawn in visual order and read reversed (`يبيبَح`); the page "
            "shows حبيبي (ḥabībī), as the extractor reads it"
        )
        for page in range(4)
    },
}
"""Pages where pdftotext misreads what the rendering shows, with the reason."""

POPPLER_CANNOT_READ: dict[str, str] = {
    "pdfjs__poppler-91414-0-53.pdf": (
        "pdftotext exits 99 (`Object '6 0 obj' is being already parsed`: a damaged object "
        "stream) and pdftoppm renders no page; PDFium opens its one page, which holds one word"
    ),
}
"""Files the reader cannot read at all, with the reason."""

PDFIUM_MISREADS: dict[tuple[str, int], str] = {
    key: POPPLER_MISREADS[key]
    for key in [("docling__redp5110_sampled.pdf", 9)]
    + [("samplefiles__habibi-rotated.pdf", page) for page in range(4)]
}
"""Pages where PDFium's page text misreads what the rendering shows, with the reason."""


def served_text(page: Page) -> str:
    """What a client reads of `page`: its Level 2 Markdown, and the whole of every element
    whose Level 2 preview was cut, at Level 3."""
    payload = page_view("h", "d", page, parse(f"dpe://h/d/pages/{page.page_index}"))
    parts = [render(2, payload, "markdown")]
    for element in page.elements:
        if preview_content(element).get("rows_truncated"):
            whole = element_view("h", "d", page.page_index, element)
            parts.append(render(3, whole, "markdown"))
    return "\n\n".join(parts)


def _pages(doc: Document, texts: list[str]) -> list[PageWords]:
    return [
        compare(
            page.page_index,
            texts[page.page_index] if page.page_index < len(texts) else "",
            served_text(page),
        )
        for page in doc.pages
    ]


def _judge(
    outcomes: dict[Path, Outcome],
    read: Callable[[Path], list[str]],
    misreads: dict[tuple[str, int], str],
    cannot_read: dict[str, str],
) -> None:
    judged: list[PageWords] = []
    failures: list[str] = []
    listed_but_fine: list[tuple[str, int]] = []
    figures: list[tuple[float, str]] = []
    for path, outcome in outcomes.items():
        if path.suffix.lower() != ".pdf" or outcome.doc is None:
            continue
        try:
            texts = read(path)
        except subprocess.CalledProcessError as exc:
            if path.name not in cannot_read:
                failures.append(f"{path.name}: the reader failed ({exc.returncode})")
            continue
        if path.name in cannot_read:
            listed_but_fine.append((path.name, -1))
        for page in _pages(outcome.doc, texts):
            key = (path.name, page.page_index)
            if key in misreads:
                if page.recall >= EVERY_PAGE:
                    listed_but_fine.append(key)
                continue
            judged.append(page)
            figures.append((page.recall, f"{path.name} page {page.page_index}"))
            if page.recall < EVERY_PAGE:
                failures.append(f"{key}: {page.recall:.3f}, missing {list(page.missing)[:20]}")
    figures.sort()
    worst = ", ".join(f"{name} {recall:.3f}" for recall, name in figures[:5])
    print(f"\noverall {overall(judged):.5f} over {len(judged)} pages; worst: {worst}")
    assert judged, "no corpus pdf opened"
    assert failures == []
    assert listed_but_fine == [], "listed as misread, but every word is served now"
    assert overall(judged) >= OVERALL, worst


@pytest.mark.corpus
def test_every_word_pdftotext_reads_on_a_corpus_page_is_served(
    corpus_outcomes: dict[Path, Outcome],
) -> None:
    if not pdftotext_available():
        pytest.skip("poppler's pdftotext is not installed (Debian: poppler-utils)")
    _judge(corpus_outcomes, poppler_pages, POPPLER_MISREADS, POPPLER_CANNOT_READ)


@pytest.mark.corpus
def test_every_word_pdfium_reads_on_a_corpus_page_is_served(
    corpus_outcomes: dict[Path, Outcome],
) -> None:
    _judge(corpus_outcomes, pdfium_pages, PDFIUM_MISREADS, {})


def test_a_bullet_without_a_letter_costs_no_word_after_it(fixture_dir: Path) -> None:
    """PDFium's page text leaves out a glyph mapped outside the BMP: the words after it were
    measured one glyph off (`C rrent`, the first word of each bulleted line and the footnotes
    lost)."""
    page = _doc(fixture_dir, "pdf_glyphs.pdf").pages[0]
    text = served_text(page)
    for line in (
        "Security fundamentals",
        "Current state of harbor security",
        "Dredging controls",
        "http://www.example.org/harbor-theft",
        "http://www.example.org/dredging",
    ):
        assert line in text


def test_a_heading_hyphenated_across_lines_is_one_word(fixture_dir: Path) -> None:
    page = _doc(fixture_dir, "pdf_glyphs.pdf").pages[0]
    heading = {"level": 1, "text": "Securing and protecting the harbor data"}
    assert page.elements[0].content == heading


def test_a_word_drawn_off_the_page_is_not_part_of_it(fixture_dir: Path) -> None:
    """A damaged text matrix put a word millions of points off the page in a size of ten
    thousand: the page's body size came from it and every line ran into one paragraph."""
    page = _doc(fixture_dir, "pdf_glyphs.pdf").pages[1]
    texts = [str(e.content.get("text")) for e in page.elements if e.category.value == "text"]
    assert texts == [
        "Schedules of controlled dredging are set forth in this part of the harbor rules, as "
        "they are changed and republished.",
        "Any term contained in this part shall have the definition set forth in the first "
        "section of the harbor act.",
        "The basin is closed to traffic while the dredger works.",
    ]


def test_a_line_ending_with_a_space_character_keeps_it_when_joined(fixture_dir: Path) -> None:
    """Korean lines that break between words end with a space character: the paragraph keeps
    it (`판매했거나 향후`), while a line broken inside a word stays joined (`국회입법조사처`)."""
    page = _doc(fixture_dir, "pdf_hangul.pdf").pages[0]
    texts = [str(e.content.get("text")) for e in page.elements if e.category.value == "text"]
    assert PARAGRAPH in texts


def test_a_label_drawn_twice_at_one_place_reads_once(fixture_dir: Path) -> None:
    """A label drawn first with only some of its letters, then whole, over it; a word drawn
    twice a third of a point apart: each reads once (`SSpecifiifies th t ththat…`)."""
    page = _doc(fixture_dir, "pdf_glyphs.pdf").pages[2]
    texts = [str(e.content.get("text")) for e in page.elements]
    assert texts[:2] == [OVERDRAWN, TWICE]


@pytest.mark.corpus
def test_a_page_says_how_many_of_its_glyphs_have_no_character(
    fixture_dir: Path, corpus_outcomes: dict[Path, Outcome]
) -> None:
    """What no reader of the text layer can give is not lost silently: the bullets mapped
    outside the BMP are three glyphs without text; redp5110's highlights box, set in a font
    with no usable ToUnicode, is hundreds."""
    pages = _doc(fixture_dir, "pdf_glyphs.pdf").pages
    assert [p.metadata.get("glyphs_without_text") for p in pages] == [3, None, None]
    redp = next(o.doc for p, o in corpus_outcomes.items() if p.name.startswith("docling__redp"))
    assert redp is not None
    assert redp.pages[2].metadata["glyphs_without_text"] > 200
