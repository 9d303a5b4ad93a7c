"""How a dense xlsx sheet reaches its page (issue 37): calamine's rows taken a chunk at a time
and dropped once shown, a package handed to calamine whose parts stay compressed, the cyclic
collector paused while the rows are built; the page is what it was."""

from __future__ import annotations

import dataclasses
import gc
import io
import zipfile
from pathlib import Path
from typing import Any

import pytest
from python_calamine import CalamineWorkbook

from dpe_server.extractors import DEFAULT_LIMITS
from dpe_server.extractors.kit.package import Package
from dpe_server.extractors.xlsx import dense
from dpe_server.extractors.xlsx import extract as xlsx_extract
from dpe_server.extractors.xlsx.dense import CHUNK_ROWS, dense_cells
from dpe_server.extractors.xlsx.format import NumberFormat, Styles
from dpe_server.extractors.xlsx.scan import SheetScan
from dpe_server.model.tree import Document

ROWS = 3 * CHUNK_ROWS + 7


def _book(path: Path, rows: int = ROWS) -> Path:
    from openpyxl import Workbook

    wb = Workbook(write_only=True)
    ws = wb.create_sheet("Data")
    ws.append(["Id", "Name", "Amount"])
    for r in range(rows - 1):
        ws.append([r + 1, f"item {r % 7}", r * 0.25])
    wb.save(str(path))
    return path


def _extract(path: Path) -> Document:
    with path.open("rb") as fh:
        return xlsx_extract.extract(fh, DEFAULT_LIMITS)


class _Row(list[Any]):
    """A row of values that counts how many rows are alive at once."""

    alive = 0
    most = 0

    def __init__(self, values: list[Any]) -> None:
        super().__init__(values)
        _Row.alive += 1
        _Row.most = max(_Row.most, _Row.alive)

    def __del__(self) -> None:
        _Row.alive -= 1


class _Sheet:
    """calamine's sheet with its rows counted (a Rust type: wrapped, not patched)."""

    def __init__(self, sheet: Any) -> None:
        self._sheet = sheet
        self.start, self.height, self.width = sheet.start, sheet.height, sheet.width

    def to_python(self, *args: Any, **kwargs: Any) -> list[_Row]:
        return [_Row(r) for r in self._sheet.to_python(*args, **kwargs)]

    def iter_rows(self) -> Any:
        return (_Row(r) for r in self._sheet.iter_rows())


class _Workbook:
    def __init__(self, book: Any) -> None:
        self._book = book

    def get_sheet_by_name(self, name: str) -> _Sheet:
        return _Sheet(self._book.get_sheet_by_name(name))


class _Calamine:
    """Stands for `CalamineWorkbook` in the extractor: the real one, its sheets wrapped."""

    @staticmethod
    def from_filelike(source: Any) -> _Workbook:
        return _Workbook(CalamineWorkbook.from_filelike(source))


def test_a_dense_sheet_is_read_a_chunk_of_rows_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _book(tmp_path / "rows.xlsx")
    whole = _extract(path)
    monkeypatch.setattr(xlsx_extract, "CalamineWorkbook", _Calamine)
    _Row.alive = _Row.most = 0
    streamed = _extract(path)
    # Never the whole sheet's values at once: a chunk of rows, and the one being taken.
    assert 0 < _Row.most <= CHUNK_ROWS + 1 < ROWS
    assert [p.to_json() for p in streamed.pages] == [p.to_json() for p in whole.pages]


def test_rows_are_built_with_the_cyclic_collector_paused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _book(tmp_path / "rows.xlsx", rows=10)
    seen: list[bool] = []
    convert = dense.display_rows

    def display_rows(raw: list[list[Any]], memos: Any = None) -> list[list[str]]:
        seen.append(gc.isenabled())
        return convert(raw, memos)

    monkeypatch.setattr(dense, "display_rows", display_rows)
    assert gc.isenabled()
    _extract(path)
    assert seen == [False]
    assert gc.isenabled()


def test_number_formats_and_errors_land_on_their_cells_across_chunks() -> None:
    """Cells whose number format calamine does not apply, and error values, are found in
    whichever chunk of rows holds them (rows relative to the sheet's first used cell)."""
    height = 2 * CHUNK_ROWS + 3
    rows = [[float(r), 0.5, "x"] for r in range(height)]
    percent = NumberFormat.parse("0.0%")
    styles = Styles([NumberFormat.parse("General"), percent], [False, False], [False, False])
    scan = SheetScan(tail=None, cells=None, prefix=b"")  # type: ignore[arg-type]
    origin = (4, 2)
    marked = (0, CHUNK_ROWS - 1, CHUNK_ROWS, height - 1)
    scan.styled = {(4 + i, 3): 1 for i in marked} | {(3, 3): 1, (4, 9): 1}
    scan.errors = {(4 + i, 4): "#DIV/0!" for i in marked} | {(4 + height, 4): "#N/A"}
    cells = dense_cells(
        iter(rows), (height, 3), origin, scan, styles=styles, date1904=False, max_cells=10**6
    )
    grid = cells.grids[0]
    assert (grid.r0, grid.c0, len(grid.rows), cells.truncated) == (4, 2, height, False)
    for i, row in enumerate(grid.rows):
        expected = ["50.0%", "#DIV/0!"] if i in marked else ["0.5", "x"]
        assert row == [str(i), *expected]


def test_a_sheet_past_the_cell_cap_keeps_its_first_whole_rows() -> None:
    scan = SheetScan(tail=None, cells=None, prefix=b"")  # type: ignore[arg-type]
    rows = ([str(r), "v"] for r in range(CHUNK_ROWS * 2))
    cells = dense_cells(
        rows,
        (CHUNK_ROWS * 2, 2),
        (0, 0),
        scan,
        styles=Styles([], [], []),
        date1904=False,
        max_cells=2 * CHUNK_ROWS + 3,
    )
    assert cells.truncated
    assert len(cells.grids[0].rows) == CHUNK_ROWS + 1


def test_calamine_reads_the_parts_as_they_were_compressed(tmp_path: Path) -> None:
    """The package calamine opens holds each part's compressed bytes (checked by inflating
    them under the caps first), not the inflated sheet, and reads as the file does."""
    path = _book(tmp_path / "rows.xlsx")
    with path.open("rb") as fh, Package(fh, "xlsx", DEFAULT_LIMITS) as pkg:
        package = xlsx_extract._cell_package(pkg)
        sheet_size = pkg.size("xl/worksheets/sheet1.xml")
    assert len(package.getvalue()) < sheet_size / 3
    with zipfile.ZipFile(io.BytesIO(package.getvalue())) as z:
        assert z.testzip() is None
        info = z.getinfo("xl/worksheets/sheet1.xml")
        assert info.compress_type == zipfile.ZIP_DEFLATED
        assert info.file_size == sheet_size
    ours = CalamineWorkbook.from_filelike(package).get_sheet_by_name("Data").to_python()
    assert ours == CalamineWorkbook.from_path(str(path)).get_sheet_by_name("Data").to_python()


def test_a_sheet_past_the_cell_cap_is_read_no_further_than_the_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A part larger than one part may inflate to, whose cells pass the workbook's cap, is
    read up to the row where they do; the rest of its cells are skipped, its tail (merges,
    links) still read; the page says truncated."""
    from openpyxl import Workbook

    from dpe_server.extractors.xlsx import part

    wb = Workbook()
    ws = wb.active
    assert ws is not None
    ws.title = "Data"
    ws.append(["Id", "Name", "Amount", "Note", "Flag"])
    for r in range(4_000):
        ws.append([r + 1, f"item {r % 7}", r * 0.25, "some words here", r % 2 == 0])
    ws.merge_cells("D2:E2")
    ws["A3"].hyperlink = "https://example.com/three"
    path = tmp_path / "long.xlsx"
    wb.save(str(path))
    with zipfile.ZipFile(path) as z:
        size = z.getinfo("xl/worksheets/sheet1.xml").file_size
    limits = dataclasses.replace(DEFAULT_LIMITS, max_cells=1_000, max_part_bytes=size // 4)
    monkeypatch.setattr(part, "CUT_MIN_CELLS", 500)
    with path.open("rb") as fh:
        doc = xlsx_extract.extract(fh, limits)
    page = doc.pages[0]
    assert doc.metadata == {"truncated": True}
    assert page.metadata["truncated"] is True
    tables = [e for e in page.elements if e.category.value == "table"]
    # E2 is blank: it is merged into D2
    assert tables[0].content["rows"][0] == ["1", "item 0", "0", "some words here", ""]
    assert tables[0].metadata["merged_cells"] == ["D2:E2"]
    assert sum(len(t.content["rows"]) for t in tables) == 1_000 // 5 - 1  # whole rows, header
    links = [e for e in page.elements if e.category.value == "link"]
    assert [link.content["url"] for link in links] == ["https://example.com/three"]
