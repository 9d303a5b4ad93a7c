"""The whole folder (issue 18, part A): OOXML templates, macro-enabled files and slide shows
read by their family's extractor; .xls, .xlsb and .ods through calamine; .csv and .tsv; a
legacy file under a new suffix read as what it is. Every file goes through `run_job`, as the
server reads it (the checks before parsing, the real format sniffed)."""

from __future__ import annotations

import io
import json
import shutil
import zipfile
from pathlib import Path

import pytest

from dpe_server.catalog.folder import doc_ref_for, scan
from dpe_server.extractors import file_type
from dpe_server.isolation.client import InlineJobs, run_inline
from dpe_server.model.errors import ExtractionError
from dpe_server.model.tree import Category, Document, Page
from dpe_server.read.oneshot import OneShotReader
from fixtures.builders import delimited, flat_odf, ods, xls


def extract(root: Path, rel: str) -> Document:
    return run_inline(InlineJobs().extract(root, rel))


def error_of(root: Path, rel: str) -> ExtractionError:
    with pytest.raises(ExtractionError) as err:
        extract(root, rel)
    return err.value


def texts(page: Page) -> str:
    return " ".join(str(e.content) for e in page.elements)


def _rewrite(src: Path, dst: Path, extra: dict[str, bytes], content_type: tuple[str, str]) -> None:
    """A copy of the package `src` with parts added and one content type replaced."""
    old, new = content_type
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            data = zin.read(info)
            if info.filename == "[Content_Types].xml":
                assert old.encode() in data
                data = data.replace(old.encode(), new.encode())
            zout.writestr(info, data)
        for name, data in extra.items():
            zout.writestr(name, data)


ML = "application/vnd.openxmlformats-officedocument."
MS = "application/vnd.ms-"
WORKBOOK = ML + "spreadsheetml.sheet.main+xml"
DOCUMENT = ML + "wordprocessingml.document.main+xml"
DECK = ML + "presentationml.presentation.main+xml"
VARIANTS = [
    # (fixture, new name, content type replacing the main one, VBA project added)
    ("xlsx-titled.xlsx", "book.xltx", ML + "spreadsheetml.template.main+xml", False),
    ("xlsx-titled.xlsx", "book.xlsm", MS + "excel.sheet.macroEnabled.main+xml", True),
    ("xlsx-titled.xlsx", "book.xltm", MS + "excel.template.macroEnabled.main+xml", True),
    ("doc-everything.docx", "doc.dotx", ML + "wordprocessingml.template.main+xml", False),
    ("doc-everything.docx", "doc.docm", MS + "word.document.macroEnabled.main+xml", True),
    ("doc-everything.docx", "doc.dotm", MS + "word.template.macroEnabledTemplate.main+xml", False),
    ("deck-everything.pptx", "deck.potx", ML + "presentationml.template.main+xml", False),
    ("deck-everything.pptx", "deck.ppsx", ML + "presentationml.slideshow.main+xml", False),
    ("deck-everything.pptx", "deck.ppsm", MS + "powerpoint.slideshow.macroEnabled.main+xml", True),
    (
        "deck-everything.pptx",
        "deck.pptm",
        MS + "powerpoint.presentation.macroEnabled.main+xml",
        True,
    ),
]
MAIN = {"xlsx": WORKBOOK, "docx": DOCUMENT, "pptx": DECK}
VBA = {"xlsx": "xl/vbaProject.bin", "docx": "word/vbaProject.bin", "pptx": "ppt/vbaProject.bin"}


@pytest.mark.parametrize("variant", VARIANTS, ids=[v[1] for v in VARIANTS])
def test_ooxml_variant_is_read_by_its_family(
    fixture_dir: Path, tmp_path: Path, variant: tuple[str, str, str, bool]
) -> None:
    source, name, main, vba = variant
    family = Path(source).suffix[1:]
    dst = tmp_path / name
    extra = {VBA[family]: b"\xd0\xcf\x11\xe0 not run"} if vba else {}
    _rewrite(fixture_dir / source, dst, extra, (MAIN[family], main))
    plain = extract(fixture_dir, source)
    doc = extract(tmp_path, name)
    assert name in scan(tmp_path)  # listed
    assert file_type(name) == name.rsplit(".", 1)[1]
    assert [p.title for p in doc.pages] == [p.title for p in plain.pages]
    assert [len(p.elements) for p in doc.pages] == [len(p.elements) for p in plain.pages]
    macro_enabled = vba or "macroEnabled" in main
    assert doc.metadata.get("has_macros") is (True if macro_enabled else None)
    assert "has_macros" not in plain.metadata


def test_ods_sheets_values_and_row_blocks(fixture_dir: Path) -> None:
    doc = extract(fixture_dir, ods.WORKBOOK)
    assert [p.title for p in doc.pages] == ["OS-Summary", "OS-Long", "OS-Hidden", "OS-Empty"]
    assert doc.properties.extra["hidden_sheets"] == ["OS-Hidden"]
    summary, long, hidden, empty = doc.pages
    table = next(e for e in summary.elements if e.category is Category.TABLE)
    assert table.content["headers"] == ["Region", "Units", "Opened"]
    assert table.content["rows"][0] == ["OS-North", "1200", "2024-03-01"]
    assert table.content["rows"][1][1] == "800.5"
    assert "OS-Note: figures are provisional" in texts(summary)
    assert "TRUE" in texts(summary)
    assert "FALSE" in texts(summary)
    blocks = [e for e in long.elements if e.category is Category.TABLE]
    assert [b.metadata["row_block"]["of"] for b in blocks] == [3, 3, 3]  # type: ignore[index]
    assert sum(b.content["total_rows"] for b in blocks) == ods.BLOCK_ROWS  # type: ignore[misc]
    assert all(b.content["headers"] == ["Item", "Value"] for b in blocks)
    assert hidden.metadata["hidden"] is True
    assert "OS-secret sheet" in texts(hidden)
    assert empty.elements == ()


def test_ods_pages_alone(fixture_dir: Path) -> None:
    pages = run_inline(InlineJobs().extract_pages(fixture_dir, ods.WORKBOOK, [1]))
    assert [p.title for p in pages] == ["OS-Long"]


def test_flat_ods_reads_as_its_package(fixture_dir: Path, tmp_path: Path) -> None:
    """ods-flat.fods is ods-workbook.ods's parts in one XML document: the same sheets, hidden
    sheet and cells; a flat file of another kind, or with a DOCTYPE, is refused."""
    flat, package = extract(fixture_dir, flat_odf.SHEETS_FILE), extract(fixture_dir, ods.WORKBOOK)
    assert flat.properties == package.properties
    assert [(p.title, p.metadata, p.elements) for p in flat.pages] == [
        (p.title, p.metadata, p.elements) for p in package.pages
    ]
    shutil.copy(fixture_dir / flat_odf.DECK_FILE, tmp_path / "deck.fods")
    data = (fixture_dir / flat_odf.SHEETS_FILE).read_bytes()
    (tmp_path / "doctype.fods").write_bytes(data.replace(b"?>", b"?><!DOCTYPE x>", 1))
    err = error_of(tmp_path, "deck.fods")
    assert (err.kind, "flat XML OpenDocument presentation" in err.message) == ("unsupported", True)
    err = error_of(tmp_path, "doctype.fods")
    assert (err.kind, "DOCTYPE" in err.message) == ("corrupt", True)


def test_an_indented_flat_ods_reads_as_its_package(fixture_dir: Path, tmp_path: Path) -> None:
    """LibreOffice writes a flat file indented, a line per element; calamine took the
    indentation inside a table row for a cell and refused the file ("Cannot detect file
    format"). The same spreadsheet indented reads as the package does, a paragraph's spaces
    kept."""
    from lxml import etree

    root = etree.fromstring((fixture_dir / flat_odf.SHEETS_FILE).read_bytes())
    etree.indent(root, space=" ")  # whitespace-only text between elements, as LibreOffice's
    (tmp_path / "indented.fods").write_bytes(etree.tostring(root, xml_declaration=True))
    indented, package = extract(tmp_path, "indented.fods"), extract(fixture_dir, ods.WORKBOOK)
    assert [(p.title, p.metadata, p.elements) for p in indented.pages] == [
        (p.title, p.metadata, p.elements) for p in package.pages
    ]


def test_xls_read_by_calamine(fixture_dir: Path) -> None:
    doc = extract(fixture_dir, xls.XLS)
    assert [p.title for p in doc.pages] == ["First Sheet", "Sheet Number 2", "Sheet3"]
    assert "Test spreadsheet" in texts(doc.pages[0])
    assert "read_as" not in doc.metadata


def test_xlsb_values_of_every_kind(fixture_dir: Path) -> None:
    doc = extract(fixture_dir, xls.XLSB)
    assert [p.title for p in doc.pages] == ["Sheet1", "Sheet2", "Sheet3", "Merged Cells"]
    (table,) = doc.pages[0].elements
    assert table.category is Category.TABLE
    date_and_times = ["2010-10-10", "2010-10-10T10:10:10", "10:10:10", "10:10:10", "255:10:10"]
    assert table.content["rows"] == [  # type: ignore[index]
        ["String", "1", "1.1", "TRUE", "FALSE", *date_and_times]
    ]
    assert doc.pages[0].metadata["used_range"] == "A2:J2"
    assert doc.pages[1].elements == ()
    assert doc.pages[2].metadata["used_range"] == "B2:D4"


def test_xlsb_hidden_and_chart_sheets(fixture_dir: Path) -> None:
    doc = extract(fixture_dir, xls.XLSB_SHEETS)
    visible, hidden, very_hidden, chart = doc.pages
    assert doc.properties.extra["hidden_sheets"] == ["Hidden", "VeryHidden"]
    assert "This workbook contains 4 sheets" in texts(visible)
    assert hidden.metadata["hidden"] is very_hidden.metadata["hidden"] is True
    # calamine reads no chart, and fails on an .xlsb chart sheet's part: a page with no
    # elements that says what it is, the rest of the workbook read.
    assert chart.metadata["sheet_type"] == "chartsheet"
    assert chart.elements == ()


def test_legacy_file_renamed_to_a_new_suffix_is_read_as_what_it_is(fixture_dir: Path) -> None:
    doc = extract(fixture_dir, xls.RENAMED)
    assert doc.metadata["read_as"] == "xls"
    assert [p.title for p in doc.pages] == [p.title for p in extract(fixture_dir, xls.XLS).pages]


def test_new_file_under_a_legacy_suffix_is_named(fixture_dir: Path, tmp_path: Path) -> None:
    shutil.copy(fixture_dir / "xlsx-titled.xlsx", tmp_path / "book.xls")
    shutil.copy(fixture_dir / "deck-everything.pptx", tmp_path / "deck.ods")
    (tmp_path / "junk.xlsb").write_bytes(b"not a spreadsheet at all")
    for name, what in (("book.xls", "an Excel workbook"), ("deck.ods", "a PowerPoint deck")):
        err = error_of(tmp_path, name)
        assert err.kind == "unsupported"
        assert f"{what} renamed to {Path(name).suffix}" in err.message
    assert error_of(tmp_path, "junk.xlsb").kind == "corrupt"


def test_broken_spreadsheets_are_errors_not_crashes(tmp_path: Path) -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("mimetype", "application/vnd.oasis.opendocument.spreadsheet")
        z.writestr("content.xml", "<not-closed")
    (tmp_path / "broken.ods").write_bytes(buf.getvalue())
    (tmp_path / "cut.xls").write_bytes(
        (Path(xls.COMMITTED) / "poi-SampleSS.xls").read_bytes()[:3000]
    )
    for name in ("broken.ods", "cut.xls"):
        assert error_of(tmp_path, name).kind == "corrupt"


@pytest.mark.parametrize(
    ("name", "encoding", "sep", "first_row"),
    [
        (delimited.LONG, "utf-8", ",", ["0", "CS-quoted, with comma\nand a line break", "0.5"]),
        (delimited.SEMICOLON, "utf-8", ";", ["CS-Deutschland", "Berlin", "3645000"]),
        (delimited.CP1252, "cp1252", ",", ["CS-Café", "3.50 €", "crème brûlée"]),
        (delimited.UTF16_TSV, "utf-16", "\t", ["CS-東京", "日本"]),
    ],
)
def test_delimited_encoding_and_delimiter(
    fixture_dir: Path, name: str, encoding: str, sep: str, first_row: list[str]
) -> None:
    doc = extract(fixture_dir, name)
    (page,) = doc.pages
    assert page.metadata["encoding"] == encoding
    assert page.metadata["delimiter"] == sep
    tables = [e for e in page.elements if e.category is Category.TABLE]
    assert tables[0].content["rows"][0] == first_row


def test_delimited_rows_in_blocks_of_500(fixture_dir: Path) -> None:
    (page,) = extract(fixture_dir, delimited.LONG).pages
    blocks = [e for e in page.elements if e.category is Category.TABLE]
    assert [b.content["total_rows"] for b in blocks] == [500, 500, 100]
    assert blocks[2].metadata["row_block"] == {
        "index": 2,
        "of": 3,
        "first_row": 1002,
        "last_row": 1101,
    }
    assert all(b.content["headers"] == ["Id", "Name", "Amount"] for b in blocks)


def test_delimited_edge_cases(tmp_path: Path, fixture_dir: Path) -> None:
    (tmp_path / "empty-ish.csv").write_bytes(b"\n")
    (tmp_path / "one.csv").write_bytes(b"lonely")
    (tmp_path / "binary.csv").write_bytes(b"a,b\n\x00\x01\x02,c\n")
    shutil.copy(fixture_dir / "xlsx-titled.xlsx", tmp_path / "book.csv")
    (tmp_path / "latin.tsv").write_bytes("a\tb\n\x81x\ty\n".encode("latin-1"))
    assert extract(tmp_path, "empty-ish.csv").pages[0].elements == ()
    assert "lonely" in texts(extract(tmp_path, "one.csv").pages[0])
    assert error_of(tmp_path, "binary.csv").kind == "corrupt"
    err = error_of(tmp_path, "book.csv")
    assert err.kind == "unsupported"
    assert "renamed to .csv" in err.message
    (page,) = extract(tmp_path, "latin.tsv").pages
    assert page.metadata["encoding"] == "latin-1"  # 0x81 is undefined in cp1252


def test_level_1_says_has_macros_and_read_as(fixture_dir: Path, tmp_path: Path) -> None:
    _rewrite(
        fixture_dir / "xlsx-titled.xlsx",
        tmp_path / "book.xlsm",
        {VBA["xlsx"]: b"\xd0\xcf\x11\xe0 not run"},
        (WORKBOOK, MS + "excel.sheet.macroEnabled.main+xml"),
    )
    shutil.copy(fixture_dir / xls.RENAMED, tmp_path / xls.RENAMED)
    with OneShotReader(tmp_path, cache=False) as reader:
        found = {}
        for rel in ("book.xlsm", xls.RENAMED):
            uri = f"dpe://{reader.host}/{doc_ref_for(rel)}"
            found[rel] = json.loads(reader.read(uri)[0].text or "{}")
    assert found["book.xlsm"]["has_macros"] is True
    assert "read_as" not in found["book.xlsm"]
    assert found[xls.RENAMED]["read_as"] == "xls"
    assert found[xls.RENAMED]["file_type"] == "xlsx"
    assert "has_macros" not in found[xls.RENAMED]
