"""calamine reads a sheet's cells once (issue 37): python-calamine reads a sheet's merged ranges
whenever it hands a sheet over, by parsing the sheet's XML a second time up to its first
`mergeCells`; the package the extractor hands it puts an empty one first (a stored deflate
block before the part's own, `kit.repack.prefixed`), so that pass ends at once. The page's
merged ranges come from the sheet's own tail, and the page is what it was."""

from __future__ import annotations

import dataclasses
import io
import random
import zipfile
import zlib
from pathlib import Path
from typing import Any

import pytest
from python_calamine import CalamineWorkbook

from dpe_server.extractors import DEFAULT_LIMITS
from dpe_server.extractors.kit.package import RawMember
from dpe_server.extractors.kit.repack import crc32_combine, prefixed, repack
from dpe_server.extractors.xlsx import extract as xlsx_extract


@pytest.mark.parametrize("size", [0, 1, 3, 8, 255, 65_536, 300_007])
def test_crc32_combine_is_zlibs_crc_of_the_two_joined(size: int) -> None:
    rng = random.Random(size)
    first = rng.randbytes(41)
    second = rng.randbytes(size)
    combined = crc32_combine(zlib.crc32(first), zlib.crc32(second), len(second))
    assert combined == zlib.crc32(first + second)


def _deflated(name: str, data: bytes) -> RawMember:
    packer = zlib.compressobj(6, zlib.DEFLATED, -15)
    body = packer.compress(data) + packer.flush()
    return RawMember(name, zipfile.ZIP_DEFLATED, zlib.crc32(data), body, len(data))


def _stored(name: str, data: bytes) -> RawMember:
    return RawMember(name, zipfile.ZIP_STORED, zlib.crc32(data), data, len(data))


@pytest.mark.parametrize("member", [_deflated, _stored])
def test_a_prefixed_member_reads_as_the_prefix_then_its_own_bytes(member: Any) -> None:
    data = b"<worksheet>" + b"<row><c><v>1</v></c></row>" * 5_000 + b"</worksheet>"
    raw = member("xl/worksheets/sheet1.xml", data)
    once = prefixed(raw, b"<mergeCells/>")
    if raw.method == zipfile.ZIP_STORED:  # a cut sheet's bytes (up to 256 MB) are not copied
        assert once.data is raw.data
    twice = prefixed(once, b"<!-- first -->")
    with zipfile.ZipFile(repack([once, dataclasses.replace(twice, name="b.xml")])) as z:
        assert z.testzip() is None  # the CRCs and sizes agree with what inflates
        assert z.read("xl/worksheets/sheet1.xml") == b"<mergeCells/>" + data
        assert z.read("b.xml") == b"<!-- first --><mergeCells/>" + data


def test_a_prefix_is_one_stored_block_at_most() -> None:
    with pytest.raises(ValueError, match="a prefix of 1 to 65,535 bytes"):
        prefixed(_deflated("a.xml", b"x"), b"p" * 65_536)
    with pytest.raises(ValueError, match="a prefix of 1 to 65,535 bytes"):
        prefixed(_stored("a.xml", b"x"), b"")


def _packages_handed_to_calamine(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """The packages the extractor opens calamine over, as it opens them."""
    handed: list[bytes] = []
    open_book = xlsx_extract._calamine

    def calamine(source: io.BytesIO) -> Any:
        handed.append(source.getvalue())
        return open_book(source)

    monkeypatch.setattr(xlsx_extract, "_calamine", calamine)
    return handed


def merged_book(path: Path) -> Path:
    """A workbook of one 301-row sheet with a merge (`B10:C10`) and a link (`A3`) in its
    tail, then a second small sheet."""
    from openpyxl import Workbook

    wb = Workbook()
    ws = wb.active
    assert ws is not None
    ws.title = "Data"
    ws.append(["Region", "Q1", "Q2"])
    for r in range(300):
        ws.append([f"r{r % 9}", r * 1.5, r])
    ws.merge_cells("B10:C10")
    ws["A3"].hyperlink = "https://example.com/three"
    wb.create_sheet("Other").append(["a", 1])
    wb.save(str(path))
    return path


def test_calamine_is_handed_each_worksheet_after_an_empty_merge_list(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = merged_book(tmp_path / "merged.xlsx")
    handed = _packages_handed_to_calamine(monkeypatch)
    with path.open("rb") as fh:
        doc = xlsx_extract.extract(fh, DEFAULT_LIMITS)
    assert len(handed) == 1
    with zipfile.ZipFile(io.BytesIO(handed[0])) as z, zipfile.ZipFile(path) as original:
        assert z.testzip() is None
        for part in ("xl/worksheets/sheet1.xml", "xl/worksheets/sheet2.xml"):
            assert z.read(part) == b"<mergeCells/>" + original.read(part)
        assert z.read("xl/styles.xml") == original.read("xl/styles.xml")
    # calamine reads the same cells, and no merged range of its own.
    sheet = CalamineWorkbook.from_filelike(io.BytesIO(handed[0])).get_sheet_by_name("Data")
    bare = CalamineWorkbook.from_path(str(path)).get_sheet_by_name("Data")
    assert sheet.to_python() == bare.to_python()
    assert bare.merged_cell_ranges
    assert not sheet.merged_cell_ranges
    # The page's merged ranges are the sheet's own.
    tables = [e for e in doc.pages[0].elements if e.category.value == "table"]
    merged = [m for t in tables for m in t.metadata.get("merged_cells", [])]  # type: ignore[union-attr]
    assert "B10:C10" in merged


def test_a_sheet_cut_at_the_cell_cap_is_handed_over_after_an_empty_merge_list_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The part cut at the cell cap (`xlsx.part`) is stored, not deflated: its prefix is its
    first bytes, the cut part not copied again."""
    from dpe_server.extractors.xlsx import part

    path = merged_book(tmp_path / "merged.xlsx")
    handed = _packages_handed_to_calamine(monkeypatch)
    monkeypatch.setattr(part, "CUT_MIN_CELLS", 300)
    limits = dataclasses.replace(DEFAULT_LIMITS, max_cells=400)
    with path.open("rb") as fh:
        doc = xlsx_extract.extract(fh, limits)
    assert doc.pages[0].metadata["truncated"] is True
    with zipfile.ZipFile(io.BytesIO(handed[0])) as z:
        assert z.testzip() is None
        assert z.getinfo("xl/worksheets/sheet1.xml").compress_type == zipfile.ZIP_STORED
        sheet = z.read("xl/worksheets/sheet1.xml")
    assert sheet.startswith(b"<mergeCells/><worksheet")
    assert b"</sheetData>" in sheet
    rows = [e.content["rows"] for e in doc.pages[0].elements if e.category.value == "table"]
    assert rows[0][0] == ["r0", "0", "0"]
