"""Cells written as calamine reads them but not as the scan looked for them (issue 37):
calamine knows a cell by its element's local name, so `<c\\n r="A1">` and `<x:c r="A1">` are
cells; the scan counted and searched `<c ` with the sheet's own prefix only. A sheet whose
cells all had a line break after `c` was shown empty, and a prefixed cell far from the others
was left out of the extent calamine allocates (the process died, as with
`test_xlsx_lying_extent`). A comment after the cells holding `</sheetData>` ended the cells
there and the workbook was refused as corrupt."""

from __future__ import annotations

from pathlib import Path

from dpe_server.extractors import DEFAULT_LIMITS
from dpe_server.extractors.xlsx.extract import EXTRACTOR
from dpe_server.extractors.xlsx.scan import scan_sheet
from dpe_server.model.tree import Page
from tests.extractors.test_xlsx_lying_extent import first_page_under_a_workers_limit
from tests.hostile.cases import SHEET_HEAD, SHEET_TAIL, plain, prefixed_cell, xlsx

FAR = '<x:c xmlns:x="http://schemas.openxmlformats.org/spreadsheetml/2006/main" r="XFD1048576">'


def _page(path: Path, rows: str, tail: bytes = SHEET_TAIL) -> Page:
    xlsx(path, plain("xl/worksheets/sheet1.xml", SHEET_HEAD + rows.encode() + tail))
    with path.open("rb") as f:
        return EXTRACTOR.extract(f, DEFAULT_LIMITS).pages[0]


def _table_rows(page: Page) -> list[list[str]]:
    return [row for e in page.elements for row in e.content.get("rows", [])]


def test_cells_with_a_line_break_after_their_name_are_shown(tmp_path: Path) -> None:
    rows = "".join(
        f'<row r="{r}"><c\n r="A{r}"><v>{r}</v></c><c\tr="B{r}"><v>{2 * r}</v></c></row>'
        for r in range(1, 5)
    )
    page = _page(tmp_path / "breaks.xlsx", rows)
    assert page.metadata["used_range"] == "A1:B4"
    assert _table_rows(page) == [["1", "2"], ["2", "4"], ["3", "6"], ["4", "8"]]


def test_a_prefixed_cell_makes_the_sheet_not_dense() -> None:
    rows = f'<row r="1"><c r="A1"><v>1</v></c>{FAR}<v>2</v></x:c></row>'.encode()
    scan = scan_sheet(SHEET_HEAD + rows + SHEET_TAIL, set())
    assert not scan.dense
    assert scan.n_cells == 2


def test_the_prefixed_cell_sheet_is_read_without_the_process_dying(tmp_path: Path) -> None:
    """Extracted in a process of its own under a worker's address-space limit (2 GiB): the
    old code handed the sheet to calamine, whose allocation failed."""
    path = tmp_path / "prefixed.xlsx"
    prefixed_cell(path, tmp_path)
    meta, contents = first_page_under_a_workers_limit(path)
    assert meta["used_range"] == "A1:XFD1048576"
    assert contents == [{"text": "1"}, {"text": "2"}]


def test_a_comment_after_the_cells_holding_their_end_tag_is_not_their_end(
    tmp_path: Path,
) -> None:
    rows = '<row r="1"><c r="A1"><v>1</v></c><c r="B1"><v>2</v></c></row>'
    tail = b"</sheetData><!-- copied: </sheetData><mergeCells> -->"
    merges = b'<mergeCells count="1"><mergeCell ref="A3:B3"/></mergeCells></worksheet>'
    page = _page(tmp_path / "comment.xlsx", rows, tail + merges)
    assert page.metadata["used_range"] == "A1:B1"
    assert _table_rows(page) == [["1", "2"]]


def test_an_arrow_in_the_tails_text_does_not_move_the_end_to_a_comment_of_the_cells(
    tmp_path: Path,
) -> None:
    """`-->` is text like any other outside a comment (a print header here): the end of the
    cells is not taken for one inside a comment because of it."""
    rows = '<row r="1"><c r="A1"><v>1</v></c><!-- a note --><c r="B1"><v>2</v></c></row>'
    tail = b"</sheetData><headerFooter><oddHeader>in --> out</oddHeader></headerFooter>"
    page = _page(tmp_path / "arrow.xlsx", rows, tail + b"</worksheet>")
    assert page.metadata["used_range"] == "A1:B1"
    assert _table_rows(page) == [["1", "2"]]
