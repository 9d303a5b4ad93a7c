"""Headings, footnote markers, page titles and running headers of a manual's pages
(fixtures/builders/pdf_heads.py): side heads read before their body, superscript markers in
their paragraph, a running header and a footer of changing section numbers taken as
furniture, a continuation page titled by its number."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dpe_server.extractors import DEFAULT_LIMITS
from dpe_server.extractors.pdf import extract as pdf_mod
from dpe_server.extractors.pdf.blocks import build_blocks
from dpe_server.extractors.pdf.collect import Run
from dpe_server.extractors.pdf.lines import make_lines
from dpe_server.model.tree import Category, Document, Page
from dpe_server.model.uri import parse
from dpe_server.views.payloads import page_view
from dpe_server.views.render import render
from fixtures.builders.pdf_runin import SECTIONS, TABLE


@pytest.fixture(scope="module")
def manual(fixture_dir: Path) -> Document:
    with (fixture_dir / "pdf_side_heads.pdf").open("rb") as f:
        return pdf_mod.extract(f, DEFAULT_LIMITS)


def _of(page: Page, category: Category) -> list[dict[str, Any]]:
    return [dict(el.content) for el in page.elements if el.category is category]


def _markdown(page: Page) -> str:
    payload = page_view("h", "d", page, parse(f"dpe://h/d/pages/{page.page_index}"))
    return render(2, payload, "markdown")


def test_a_superscript_footnote_marker_stays_in_its_paragraph(manual: Document) -> None:
    """`4)` and `10)` raised 4.5 pt over 10 pt text were lines of their own that cut the
    paragraph in three."""
    texts = [str(c["text"]) for c in _of(manual.pages[0], Category.TEXT)]
    assert texts[0] == (
        "The Harbor Authority4) reports that almost 5000 vessels called in 2025, a tenth more"
        " than the year before; the Pilots' Association10) counts the boardings it made at"
        " the fairway buoy in the same year."
    )
    assert not {"4)", "10)"} & set(texts)


def test_footnotes_are_kept_with_their_markers(manual: Document) -> None:
    (notes,) = [c for c in _of(manual.pages[0], Category.LIST) if c["items"][0]["label"] == "4)"]
    assert [(i["label"], i["text"]) for i in notes["items"]] == [
        ("4)", "Harbor Authority statistics, annual report 2025."),
        ("10)", "Pilots' Association, boarding log 2025."),
    ]


def test_side_heads_are_read_before_the_body_beside_them(manual: Document) -> None:
    """The side head's lines were read into the body lines on their baselines
    (`4.2.1 (1) The harbor master… (01-17-2026) it enters… Berth Allocation the…`)."""
    page = manual.pages[0]
    order = [
        (el.category, str(el.content.get("text", "")))
        for el in page.elements
        if el.category in (Category.TEXT, Category.HEADING)
    ]
    assert order[1:5] == [
        (Category.TEXT, "4.2.1 (01-17-2026)"),
        (Category.HEADING, "Berth Allocation"),
        (Category.TEXT, "4.2.2 (01-17-2026)"),
        (Category.HEADING, "Pilot Boarding"),
    ]
    (first, second, _notes) = _of(page, Category.LIST)
    assert first["items"][0]["text"].startswith("The harbor master applies the berth allocation")
    assert first["items"][0]["text"].endswith("with the vessel's name and call sign.")
    assert "Pilot Boarding" not in first["items"][0]["text"]
    assert "(01-17-2026)" not in second["items"][0]["text"]


def test_a_running_header_inside_the_text_block_is_furniture_and_no_title(
    manual: Document,
) -> None:
    """150 pt below the paper's top, it was outside the top 15 % of the paper and was read as
    the page's first line, or its first heading: the page's title."""
    for page in manual.pages:
        header = f"LAYOUTSENT Harbor Manual 4.2 page {page.page_index + 1}"
        assert [c["text"] for c in _of(page, Category.HEADER)] == [header]
        assert header not in [c["text"] for c in _of(page, Category.HEADING)]
    assert [p.title for p in manual.pages] == [
        "Berth Allocation",
        "Tug Assistance",
        "Cargo Handling",
        "Page 4",
        "Waste Reception",
    ]


def test_a_footer_whose_section_number_changes_depth_is_furniture(manual: Document) -> None:
    """`Manual 4.2.1.5` and `Manual 4.2.4` are one footer (the number is one `#`), found 150 pt
    above the paper's edge where the text block ends."""
    footers = [[c["text"] for c in _of(page, Category.FOOTER)] for page in manual.pages]
    assert footers[0] == ["Cat. No. 4711 (01-2026) Harbor Manual 4.2.1.5"]
    assert footers[3] == ["Cat. No. 4711 (01-2026) Harbor Manual 4.2.6.2"]


def test_a_continuation_page_is_titled_by_its_number_and_opens_with_its_text(
    manual: Document,
) -> None:
    page = manual.pages[3]
    assert page.title == "Page 4"
    markdown = _markdown(page)
    assert not markdown.startswith("#")
    assert markdown.splitlines()[2].startswith("The harbor master applies the hazardous goods")


def _run(text: str, x: float, y: float, size: float) -> Run:
    width = 0.5 * size * len(text)
    return Run(text, x, x + width, y, size, "Helvetica", False, False)


def test_a_paragraph_set_larger_than_the_small_print_is_no_heading() -> None:
    """A page of 6 pt schedule entries and 8 pt prose: the prose is 1.3 x the body size, but
    its lines make far more than a heading: a paragraph (it was a heading, the page's
    title)."""
    prose = [
        "(a) Schedule III shall consist of the drugs and other substances, by what-",
        "ever official name, common or usual name, chemical name, or brand name",
        "designated, listed in this section. Each drug or substance has been assigned",
        "the controlled substances code number set forth opposite it.",
    ]
    runs = [_run(text, 72, 700 - 10 * k, 8) for k, text in enumerate(prose)]
    runs += [_run(f"({k}) Substance number {k} " + "." * 60, 72, 600 - 8 * k, 6) for k in range(20)]
    lines = make_lines(runs)
    blocks = build_blocks([lines], 6.0, {})
    assert blocks[0].kind == "text"
    assert str(blocks[0].content["text"]).startswith("(a) Schedule III shall consist")


def test_a_numbered_heading_run_into_its_body_is_split_from_it(fixture_dir: Path) -> None:
    """`**5.1 Hyper Parameter Optimization** We have chosen…` on one baseline: a heading,
    then the section's paragraph; bold numbered labels followed by figures stay a table."""
    with (fixture_dir / "pdf_runin.pdf").open("rb") as f:
        page = pdf_mod.extract(f, DEFAULT_LIMITS).pages[0]
    got = [(e.category.value, dict(e.content)) for e in page.elements]
    for head, lines in SECTIONS:
        heading = next(c for kind, c in got if kind == "heading" and c["text"] == head)
        after = got[[c for _, c in got].index(heading) + 1]
        assert after == ("text", {"text": " ".join(lines)})
    tables = [c for kind, c in got if kind == "table"]
    assert [list(r) for r in TABLE] == [tables[0]["headers"], *tables[0]["rows"]]
