"""A sheet cut at the cell cap keeps its tail when the cap is passed in the part's last chunk
(issue 37): `xlsx.part` looked for the end of the cells only in the chunks not yet read, so a
sheet whose cells passed the cap in the chunk that also held `</sheetData>` lost its merges,
links and the end of its root, and the whole workbook was refused as not well-formed."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from dpe_server.extractors import DEFAULT_LIMITS
from dpe_server.extractors.kit.package import Package
from dpe_server.extractors.xlsx import extract as xlsx_extract
from dpe_server.extractors.xlsx import part
from tests.extractors.test_xlsx_merge_pass import merged_book
from tests.hostile.cases import SHEET_HEAD, SHEET_TAIL, xlsx
from tests.hostile.zipgen import plain


def test_the_cap_passed_in_the_last_chunk_keeps_the_tail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = merged_book(tmp_path / "small.xlsx")  # a sheet part of a few KB: one chunk
    monkeypatch.setattr(part, "CUT_MIN_CELLS", 300)
    limits = dataclasses.replace(DEFAULT_LIMITS, max_cells=400)
    with path.open("rb") as fh:
        doc = xlsx_extract.extract(fh, limits)
    page = doc.pages[0]
    assert page.metadata["truncated"] is True
    assert page.metadata["used_range"] == "A1:C133"  # 400 cells: whole rows of 3
    tables = [e for e in page.elements if e.category.value == "table"]
    assert tables[0].metadata["merged_cells"] == ["B10:C10"]
    links = [e for e in page.elements if e.category.value == "link"]
    assert [link.content["url"] for link in links] == ["https://example.com/three"]


@pytest.mark.parametrize("split", range(1, 12))
def test_the_end_of_the_cells_split_between_read_and_unread_bytes_is_found(split: int) -> None:
    close = b"</sheetData>"
    read = b"<c><v>1</v></c></row>" + close[:split]
    rest = iter([close[split:] + b"<mergeCells/>", b"</worksheet>"])
    assert part._after(rest, close, read) == b"<mergeCells/></worksheet>"


def test_a_part_inflated_whole_is_cut_where_its_cells_pass_the_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A part small enough to be inflated into one buffer (`WHOLE_MAX_BYTES`) whose cells pass
    the cap is cut after the row where they do, as a part read a chunk at a time is: it went
    through the cut as one chunk, so its last row was the cut, and every cell was kept (a
    second reader's finding: a copy of the whole part twice more in memory)."""
    monkeypatch.setattr(part, "CUT_MIN_CELLS", 1_000)
    rows = [
        b"<row>" + b"".join(b'<c t="n"><v>%d</v></c>' % (r * 10 + c) for c in range(10)) + b"</row>"
        for r in range(20_000)
    ]
    data = SHEET_HEAD + b"".join(rows) + SHEET_TAIL
    assert len(data) < part.WHOLE_MAX_BYTES
    xlsx(tmp_path / "book.xlsx", plain("xl/worksheets/sheet1.xml", data))
    with (tmp_path / "book.xlsx").open("rb") as fh:
        got = part.sheet_part(
            Package(fh, "xlsx", DEFAULT_LIMITS), "xl/worksheets/sheet1.xml", 1_000
        )
    kept = bytes(got.data)
    assert got.cut
    assert 1_000 < kept.count(b"<c ") < 1_000 + 64 * 1024 // len(rows[-1]) * 10  # within a chunk
    assert kept.endswith(b"</row></sheetData></worksheet>")
