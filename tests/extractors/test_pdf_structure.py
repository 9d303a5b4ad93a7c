"""Structure recovered from pdf layout, on fixtures written as other tools write them
(fixtures/builders/pdf_layout.py): lists with marker runs, heading levels from the document's
styles and the outline, page and document titles, CJK columns, borderless tables, forms."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dpe_server.extractors import DEFAULT_LIMITS
from dpe_server.extractors.pdf import extract as pdf_mod
from dpe_server.extractors.pdf.markers import value
from dpe_server.model.metadata import derive_summary, derive_title, placeholder
from dpe_server.model.tree import Category, Document, Page


def _doc(fixture_dir: Path, name: str) -> Document:
    with (fixture_dir / name).open("rb") as f:
        return pdf_mod.extract(f, DEFAULT_LIMITS)


@pytest.fixture(scope="module")
def office(fixture_dir: Path) -> Document:
    return _doc(fixture_dir, "pdf_office_export.pdf")


@pytest.fixture(scope="module")
def latex(fixture_dir: Path) -> Document:
    return _doc(fixture_dir, "pdf_latex_outline.pdf")


@pytest.fixture(scope="module")
def cjk(fixture_dir: Path) -> Document:
    return _doc(fixture_dir, "pdf_cjk_columns.pdf")


def _of(page: Page, category: Category) -> list[dict[str, Any]]:
    return [dict(el.content) for el in page.elements if el.category is category]


def _headings(page: Page) -> dict[str, int]:
    return {str(c["text"]): int(c["level"]) for c in _of(page, Category.HEADING)}


def test_numbered_list_with_marker_runs_is_an_ordered_list(office: Document) -> None:
    first = _of(office.pages[0], Category.LIST)[0]
    assert first["ordered"] is True
    assert "start" not in first
    assert first["items"] == [
        {"text": "LAYOUTSENT First step", "level": 0, "label": "1."},
        {"text": "LAYOUTSENT Second step", "level": 0, "label": "2."},
        {"text": "LAYOUTSENT Sub step one", "level": 1, "label": "a."},
        {"text": "LAYOUTSENT Sub step two", "level": 1, "label": "b."},
        {"text": "LAYOUTSENT Third step", "level": 0, "label": "3."},
    ]
    texts = [str(c["text"]) for c in _of(office.pages[0], Category.TEXT)]
    assert not any("First step" in t or "1.LAYOUTSENT" in t for t in texts)


def test_list_continuing_after_a_paragraph_keeps_its_start(office: Document) -> None:
    lists = _of(office.pages[0], Category.LIST)
    assert lists[1]["start"] == 4
    assert [i["label"] for i in lists[1]["items"]] == ["4.", "5."]


def test_symbol_and_dingbat_font_bullets(office: Document) -> None:
    bullets = _of(office.pages[0], Category.LIST)[2]
    assert bullets["ordered"] is False
    assert bullets["items"] == [
        {"text": "LAYOUTSENT Rope", "level": 0},
        {"text": "LAYOUTSENT Paint", "level": 0},
        {"text": "LAYOUTSENT Marine paint", "level": 1},
    ]


def test_roman_and_parenthesised_letters_are_two_lists(office: Document) -> None:
    lists = _of(office.pages[0], Category.LIST)[3:]
    assert [[i["label"] for i in lst["items"]] for lst in lists] == [["i.", "ii."], ["(a)", "(b)"]]


def test_heading_levels_from_the_documents_styles(office: Document) -> None:
    assert _headings(office.pages[0]) == {
        "LAYOUTSENT Harbor Report": 1,
        "LAYOUTSENT Steps": 2,
        "LAYOUTSENT Materials": 3,
        "LAYOUTSENT Costs": 2,
    }


def test_title_above_the_outline_gets_its_own_level(latex: Document) -> None:
    headings = _headings(latex.pages[0])
    assert headings["LAYOUTSENT On Harbors"] == 1
    assert (headings["1 Introduction"], headings["1.1 Scope"], headings["2 Method"]) == (2, 3, 2)


def test_page_title_is_the_first_heading_even_before_the_outline(latex: Document) -> None:
    assert latex.pages[0].title == "LAYOUTSENT On Harbors"


def test_borderless_table_from_cell_runs(office: Document) -> None:
    (table,) = _of(office.pages[0], Category.TABLE)
    assert table["headers"] == ["Item", "Qty", "Price"]
    assert table["rows"] == [["Rope", "3", "1.50"], ["Paint", "7", "2.25"], ["Nails", "11", "0.75"]]


def test_estimate_form_is_tables_not_headings(office: Document) -> None:
    page = office.pages[1]
    assert _of(page, Category.HEADING) == []
    fields, items = _of(page, Category.TABLE)
    assert fields["headers"] == ["Customer:", "Harbor Board"]
    assert fields["rows"] == [["Date:", "12 May 2026"], ["Estimate no.:", "E-1042"]]
    assert items["headers"] == ["Description", "Hours", "Rate", "Amount"]
    assert items["rows"][-1] == ["Total", "", "", "690.00"]
    texts = [str(c["text"]) for c in _of(page, Category.TEXT)]
    assert "Payment terms: 30 days Balance due 690.00" in texts


def test_page_without_heading_nor_outline_entry_is_titled_by_its_number(office: Document) -> None:
    """Never by a line of body text (it was "Customer: Harbor Board", the form's first row)."""
    assert office.pages[1].title == "Page 2"


@pytest.mark.parametrize(
    ("name", "stem"),
    [
        pytest.param("pdf_office_export.pdf", "pdf_office_export", id="word-file-name"),
        pytest.param("pdf_latex_outline.pdf", "pdf_latex_outline", id="untitled"),
        pytest.param("pdf_cjk_columns.pdf", "pdf_cjk_columns", id="own-file-name"),
    ],
)
def test_placeholder_metadata_title_falls_back_to_first_heading(
    fixture_dir: Path, name: str, stem: str
) -> None:
    doc = _doc(fixture_dir, name)
    assert doc.properties.title is None
    assert derive_title(doc, stem) == doc.pages[0].elements[0].content["text"]


def test_placeholder_summary_is_derived_instead(office: Document) -> None:
    assert office.properties.summary is None
    summary = derive_summary(office, "pdf")
    assert "unspecified" not in summary
    assert summary.startswith("LAYOUTSENT this report describes")


def test_cjk_two_columns_are_prose_read_left_then_right(cjk: Document) -> None:
    page = cjk.pages[0]
    assert _of(page, Category.TABLE) == []
    texts = [str(c["text"]) for c in _of(page, Category.TEXT)]
    assert len(texts) == 2
    assert (texts[0][:4], texts[0][-5:]) == ("港口工程", "稳步增长。")
    assert (texts[1][:4], texts[1][-3:]) == ("与此同时", "亿元。")


def test_cjk_list_markers(cjk: Document) -> None:
    counted, circled = _of(cjk.pages[1], Category.LIST)
    assert [(i["label"], i["text"]) for i in counted["items"]] == [
        ("一、", "扩建东侧泊位"),
        ("二、", "改善航道条件"),
        ("三、", "引入调度系统"),
    ]
    assert [i["label"] for i in circled["items"]] == ["①", "②"]
    assert counted["ordered"] is circled["ordered"] is True


def test_libreoffice_export(fixture_dir: Path) -> None:
    doc = _doc(fixture_dir, "pdf_soffice_export.pdf")
    page = doc.pages[0]
    assert doc.properties.title is None  # "untitled"
    assert _headings(page) == {
        "SOFFICESENT Harbor Report": 1,
        "SOFFICESENT Steps": 2,
        "SOFFICESENT Items": 2,
        "SOFFICESENT Costs": 3,
    }
    numbered, bullets = _of(page, Category.LIST)
    assert [(i["label"], i["text"], i["level"]) for i in numbered["items"]] == [
        ("1.", "First step", 0),
        ("2.", "Second step", 0),
        ("a.", "Sub step one", 1),
        ("b.", "Sub step two", 1),
        ("3.", "Third step", 0),
    ]
    assert [(i["text"], i["level"]) for i in bullets["items"]] == [
        ("Apples", 0),
        ("Pears", 0),
        ("Green pears", 1),
    ]
    (table,) = _of(page, Category.TABLE)
    assert table["rows"] == [["Rope", "3", "1.50"], ["Paint", "7", "2.25"], ["Nails", "11", "0.75"]]


@pytest.mark.parametrize(
    ("label", "number"),
    [
        ("3.", 3),
        ("c)", 3),
        ("iv.", 4),
        ("(IX)", 9),
        ("三、", 3),
        ("（十二）", 12),
        ("③", 3),
        ("⑵", 2),
    ],
)
def test_list_label_values(label: str, number: int) -> None:
    assert value(label) == number


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("untitled", True),
        ("(anonymous)", True),
        ("(unspecified)", True),
        ("Microsoft Word - harbor.docx", True),
        ("report.pdf", True),
        ("", True),
        ("Harbor Report", False),
        ("Annual results 2024", False),
    ],
)
def test_placeholder_titles(text: str, expected: bool) -> None:
    assert placeholder(text) is expected


def test_placeholder_title_equal_to_the_file_name() -> None:
    assert placeholder("Harbor", "harbor") is True
    assert placeholder("Harbor Report", "harbor") is False


@pytest.mark.parametrize(
    "name",
    [
        "pdf_office_export.pdf",
        "pdf_latex_outline.pdf",
        "pdf_cjk_columns.pdf",
        "pdf_soffice_export.pdf",
    ],
)
def test_one_page_read_matches_the_whole_document(fixture_dir: Path, name: str) -> None:
    whole = _doc(fixture_dir, name)
    for page in whole.pages:
        with (fixture_dir / name).open("rb") as f:
            (alone,) = pdf_mod.extract_pages(f, [page.page_index], DEFAULT_LIMITS)
        assert alone == page
