"""`dpe-server view` draws office pages from LibreOffice's pdf export of the file (in a
worker, once per version, kept in the server's cache folder): a pptx slide is the export's
page of that slide, a docx section the printed page where its first text is; without
LibreOffice a page is its tree alone, with a sentence saying why."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image

from fixtures.goldens import EXPECTED
from tests.surface.viewer_server import Viewer, served_viewer

SOFFICE = shutil.which("soffice")
DECK = "deck-everything-feeb87"
DOC = "doc-everything-15a1f5"
BOOK = "xlsx-constructs-b33793"
"""Sheets Sales, Data, Hidden (hidden), Empty, Intl, Pivot."""
SCALE = 1.5
SLIDE = (720, 540)
"""deck-everything.pptx's slide size in points (`p:sldSz` 9144000 x 6858000 EMU)."""
LETTER = (612, 792)
"""doc-everything.docx's page size in points (`w:pgSz` 12240 x 15840 twips)."""

needs_soffice = pytest.mark.skipif(SOFFICE is None, reason="LibreOffice (soffice) not installed")
CALC = SOFFICE is not None and (Path(SOFFICE).resolve().parent / "libsclo.so").is_file()
needs_calc = pytest.mark.skipif(
    not CALC, reason="LibreOffice Calc not installed (Debian: libreoffice-calc-nogui)"
)


@pytest.fixture(scope="module")
def viewer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Viewer]:
    if SOFFICE is None:
        pytest.skip("LibreOffice (soffice) not installed")
    names = ("deck-everything.pptx", "doc-everything.docx", "xlsx-constructs.xlsx")
    with served_viewer(tmp_path_factory, only=names) as running:
        running.settled()
        yield running


def _picture(viewer: Viewer, ref: str, index: int) -> Image.Image:
    status, body, kind = viewer.get(f"/doc/{ref}/pages/{index}/picture")
    assert (status, kind) == (200, "image/png"), body[:300]
    return Image.open(io.BytesIO(body)).convert("L")


def _ink(image: Image.Image) -> int:
    """Dark pixels (text, shapes)."""
    return sum(image.histogram()[:128])


def _drawn(image: Image.Image) -> None:
    """Not a blank page: dark pixels (text) on a light ground."""
    darkest, lightest = image.getextrema()
    assert (darkest < 80, lightest > 200) == (True, True)
    assert _ink(image) > 500


@needs_soffice
def test_a_slide_is_drawn_from_libreoffices_pdf_export(viewer: Viewer) -> None:
    html = viewer.text(f"/doc/{DECK}/pages/1")
    assert f"<div class='page office'><img alt='' src='/doc/{DECK}/pages/1/picture'" in html
    assert "class='box'" not in html  # a pptx tree has no bboxes: no box drawn
    slides = [_picture(viewer, DECK, i) for i in (1, 4, 1)]
    for slide in slides:
        assert slide.size == (SLIDE[0] * SCALE, SLIDE[1] * SCALE)
        _drawn(slide)
    # slide 4 is hidden, and drawn all the same (exported too): not slide 1's picture
    assert slides[0].tobytes() != slides[1].tobytes()
    assert slides[0].tobytes() == slides[2].tobytes()
    exports = list((viewer.cache / "view-exports").iterdir())
    assert len(exports) == 1  # exported once, kept in the cache folder, not beside the file
    assert exports[0].read_bytes().startswith(b"%PDF-")
    assert not [p for p in viewer.folder.iterdir() if p.suffix == ".pdf"]


@needs_soffice
def test_a_docx_section_is_drawn_as_the_printed_page_it_begins_on(viewer: Viewer) -> None:
    pages = json.loads((EXPECTED / "docx" / "doc-everything" / "pages.json").read_text("utf-8"))
    assert [p["title"] for p in pages["pages"]][4] == "SENT-H1-GAMMA"
    first, last = _picture(viewer, DOC, 0), _picture(viewer, DOC, 4)
    for page in (first, last):
        assert page.size == (LETTER[0] * SCALE, LETTER[1] * SCALE)
        _drawn(page)
    # the last section begins on the fifth of the six printed pages: its heading and three
    # shapes at the top, the rest of the page blank; the first page is full of text
    assert first.tobytes() != last.tobytes()
    width, height = last.size
    assert _ink(last.crop((0, 0, width, height // 2))) > 500
    assert _ink(last.crop((0, height // 2, width, height))) == 0
    assert _ink(first.crop((0, height // 2, width, height))) > 500


@needs_calc
def test_a_sheet_is_drawn_whole_on_a_page_of_its_own(viewer: Viewer) -> None:
    html = viewer.text(f"/doc/{BOOK}/pages/4")
    assert f"<img alt='' src='/doc/{BOOK}/pages/4/picture'" in html
    sales, data, intl = (_picture(viewer, BOOK, i) for i in (0, 1, 4))
    # Sales: a title and a few wide rows; Data: five columns of many rows; Intl: a few cells
    assert sales.width > 3 * sales.height
    assert data.height > 10 * data.width
    assert intl.size not in (sales.size, data.size)
    _drawn(sales)
    assert intl.getextrema()[0] < 80  # a few cells of text
    assert _ink(intl) > 100


def test_a_sheet_is_found_whether_or_not_hidden_sheets_were_exported() -> None:
    """`page_png` with `SheetPages`: the sheet's own page when the pdf has one for every
    sheet, else its page among the sheets shown (-1, a hidden sheet: no picture)."""
    from dpe_server.extractors.pdf.render import SheetPages, page_png

    pdf = _printed([["A"], ["B B B B"], ["C C C C C C C C C C"]])
    ink = [
        _ink(Image.open(io.BytesIO(page_png(io.BytesIO(pdf), i, 10**8) or b"")).convert("L"))
        for i in range(3)
    ]
    assert ink[0] < ink[1] < ink[2]

    def drawn(index: int, sheets: SheetPages) -> int | None:
        png = page_png(io.BytesIO(pdf), index, 10**8, (), sheets)
        return None if png is None else ink.index(_ink(Image.open(io.BytesIO(png)).convert("L")))

    assert drawn(2, SheetPages(3, 1)) == 2  # every sheet exported: its own page
    assert drawn(3, SheetPages(4, 2)) == 2  # one hidden sheet left out: its page among those shown
    assert drawn(1, SheetPages(4, -1)) is None  # the hidden one itself


def _printed(pages: list[list[str]]) -> bytes:
    """A pdf of these pages of lines."""
    from reportlab.lib.pagesizes import letter
    from reportlab.pdfgen import canvas

    out = io.BytesIO()
    drawing = canvas.Canvas(out, pagesize=letter, invariant=True)
    for lines in pages:
        for n, line in enumerate(lines):
            drawing.drawString(72, 700 - 16 * n, line)
        drawing.showPage()
    drawing.save()
    return out.getvalue()


def test_a_sections_printed_page_is_found_by_the_first_texts_in_order() -> None:
    """`page_of_texts`: each section's first text is looked for after the one before was
    found (a heading repeated later is found in its place), whatever the line breaks, list
    marks and case; a section whose text is nowhere after them has no page."""
    import pypdfium2 as pdfium

    from dpe_server.extractors.pdf.render import page_of_texts

    printed = [
        ["1. Introduction", "Why harbors silt up."],
        ["more about silt"],
        ["2. Method of the", "survey, in detail"],
        ["1. Introduction"],  # an appendix repeating the first heading
    ]
    pdf = pdfium.PdfDocument(_printed(printed))
    try:
        sections = ["Introduction", "Method of the survey, in detail", "INTRODUCTION"]
        assert [page_of_texts(pdf, sections[: n + 1]) for n in range(3)] == [0, 2, 3]
        assert page_of_texts(pdf, ["Introduction", "", "Method of the survey"]) == 2
        assert page_of_texts(pdf, ["Method of the survey", "more about silt"]) is None
        assert page_of_texts(pdf, ["no such words anywhere"]) is None
    finally:
        pdf.close()


@pytest.fixture(scope="module")
def without_soffice(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Viewer]:
    bare = tmp_path_factory.mktemp("no-soffice-path")  # a PATH on which no soffice is found
    env = {**os.environ, "PATH": str(bare)}
    with served_viewer(tmp_path_factory, only=("deck-everything.pptx",), env=env) as running:
        running.settled()
        yield running


def test_without_libreoffice_an_office_page_is_its_tree_saying_why(
    without_soffice: Viewer,
) -> None:
    html = without_soffice.text(f"/doc/{DECK}/pages/1")
    assert "<img" not in html
    assert re.search(r"<p class='note'>No picture: drawing office pages needs LibreOffice", html)
    assert "Agenda SENT_TITLE_1" in html  # the tree, all the same
    status, body, _ = without_soffice.get(f"/doc/{DECK}/pages/1/picture")
    assert status == 404
    assert b"needs LibreOffice" in body
    assert not (without_soffice.cache / "view-exports").exists()


def test_exports_unused_for_thirty_days_are_deleted(tmp_path: Path) -> None:
    from types import SimpleNamespace
    from typing import cast

    from dpe_server.surface.app import DpeApp
    from dpe_server.surface.viewer_pictures import FOLDER, Pictures

    exports = tmp_path / "cache" / FOLDER
    exports.mkdir(parents=True)
    old, recent = exports / "a-1.pdf", exports / "b-2.pdf"
    for path, days in ((old, 31), (recent, 29)):
        path.write_bytes(b"%PDF-1.7")
        when = time.time() - days * 86_400
        os.utime(path, (when, when))
    settings = SimpleNamespace(cache=True, cache_dir=tmp_path / "cache")
    app = SimpleNamespace(settings=settings, catalog=SimpleNamespace(root=tmp_path / "docs"))
    assert Pictures(cast(DpeApp, app)).folder() == exports
    assert sorted(p.name for p in exports.iterdir()) == ["b-2.pdf"]
    # a cache folder inside the served one is never written: a temporary folder instead
    settings.cache_dir = tmp_path / "docs" / "cache"
    inside = Pictures(cast(DpeApp, app)).folder()
    assert not inside.is_relative_to(tmp_path)
