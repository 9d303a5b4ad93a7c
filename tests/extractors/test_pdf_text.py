"""The pdf text layer (issue 17): measured words, presentation forms, right to left, gutters.

On fixtures/builders/pdf_text.py's `pdf_text.pdf` (see its docstring for what each page
draws) and on synthetic runs.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pypdfium2
import pytest

from dpe_server.extractors import DEFAULT_LIMITS
from dpe_server.extractors.pdf import extract as pdf_mod
from dpe_server.extractors.pdf.accents import compose
from dpe_server.extractors.pdf.collect import Run, collect_page
from dpe_server.extractors.pdf.lines import make_lines, reading_groups
from dpe_server.extractors.pdf.textnorm import clean
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


def test_right_to_left_elements_carry_their_direction(doc: Document) -> None:
    """Page 4, right aligned Hebrew: direction on every element, indents from the right (the
    short last line of a paragraph and the items at the right margin are no indent), the
    table's columns from the rightmost."""
    contents = [(e.category, e.content) for e in doc.pages[4].elements]
    assert contents == [
        (Category.HEADING, {"level": 2, "text": builder.HE_TITLE, "direction": "rtl"}),
        (Category.TEXT, {"text": " ".join(builder.HE_PARA), "direction": "rtl"}),
        (
            Category.LIST,
            {
                "ordered": False,
                "items": [
                    {"text": text, "level": 0, "direction": "rtl"} for text in builder.HE_BULLETS
                ],
            },
        ),
        (
            Category.LIST,
            {
                "ordered": True,
                "items": [
                    {"text": text, "level": 0, "label": f"{n}.", "direction": "rtl"}
                    for n, text in enumerate(builder.HE_STEPS, 1)
                ],
            },
        ),
        (
            Category.TABLE,
            {
                "headers": list(builder.HE_TABLE[0]),
                "rows": [list(row) for row in builder.HE_TABLE[1:]],
                "total_rows": 3,
                "total_columns": 3,
                "direction": "rtl",
            },
        ),
        (Category.TEXT, {"text": builder.LTR_AFTER}),
    ]


def test_a_change_of_direction_ends_a_paragraph(doc: Document) -> None:
    """Page 2: the Arabic and Hebrew lines and the English sentence quoting a Hebrew word are
    not one paragraph; only the right-to-left ones say so."""
    texts = [(e.content["text"], e.content.get("direction")) for e in doc.pages[2].elements]
    assert texts[-1] == (builder.MIXED_HE, None)
    assert all(direction == "rtl" for _, direction in texts[:-1])


def test_right_to_left_columns_right_first() -> None:
    right = [rtl_run(f"שורה {i} בטור הימני של העמוד הזה עם מילים", 330, 560) for i in range(4)]
    left = [rtl_run(f"שורה {i} בטור השמאלי של העמוד הזה עם מילים", 42, 272) for i in range(4)]
    for i, (a, b) in enumerate(zip(right, left, strict=True)):
        a.y = b.y = 700.0 - 14 * i
    groups = [[r.text for r in g] for g in reading_groups([*left, *right])]
    assert groups == [[r.text for r in right], [r.text for r in left]]


def test_tex_accents_composed_where_drawn_over_their_letter(doc: Document) -> None:
    """Page 5: accents drawn over (a cedilla under) their letters, before or after them in the
    text, become the accented letters; accent characters drawn beside letters stay."""
    assert texts(doc, 5) == [builder.TEX_WORDS, builder.TEX_ALONE]


def _extents(*boxes: tuple[float, float]) -> Callable[[int], tuple[float, float] | None]:
    return lambda i: boxes[i] if i < len(boxes) else None


@pytest.mark.parametrize(
    ("text", "boxes", "expected"),
    [
        pytest.param(
            "a\u00a8\u0131", [(0, 5), (5.5, 8), (5, 8.5)], "aï", id="dotless-i-accent-first"
        ),
        pytest.param("e\u00b4", [(0, 5), (1, 4)], "é", id="accent-after"),
        pytest.param("c\u00b8a", [(0, 5), (1.5, 3.5), (5, 10)], "ça", id="cedilla"),
        pytest.param("a\u00b4e", [(0, 5), (5.2, 8), (5, 10)], "aé", id="overlaps-next-more"),
        pytest.param("a\u00a8", [(0, 5), (5.5, 8)], "a\u00a8", id="beside-not-over"),
        pytest.param("\u00a8", [(0, 3)], "\u00a8", id="alone"),
        pytest.param("1\u00b4", [(0, 5), (1, 4)], "1\u00b4", id="over-a-digit"),
        pytest.param("\u0131s", [(0, 3), (3, 7)], "\u0131s", id="dotless-i-kept"),
        pytest.param("a\u00b4e", [(0, 5), (5, 5), (5, 10)], "a\u00b4e", id="no-width"),
    ],
)
def test_compose(text: str, boxes: list[tuple[float, float]], expected: str) -> None:
    assert compose(text, _extents(*boxes)) == expected
