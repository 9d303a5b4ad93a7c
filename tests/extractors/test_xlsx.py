"""The xlsx extractor on the built fixtures: pages, categories, contents, ids, summaries."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
from python_calamine import CalamineError

from dpe_server.extractors import DEFAULT_LIMITS, Limits, for_suffix
from dpe_server.extractors.kit.package import Package
from dpe_server.extractors.xlsx import extract as xlsx_module
from dpe_server.extractors.xlsx.extract import EXTRACTOR
from dpe_server.extractors.xlsx.format import CELL_MAX_CHARS, clip
from dpe_server.model.errors import CorruptError, EncryptedError, UnsupportedError
from dpe_server.model.tree import TABLE_BLOCK_ROWS, Category, Document, Element, Page
from tests.hostile.cases import sheet_of, xlsx


def _extract(path: Path, limits: Limits = DEFAULT_LIMITS) -> Document:
    with path.open("rb") as f:
        return EXTRACTOR.extract(f, limits)


@pytest.fixture(scope="module")
def doc(fixture_dir: Path) -> Document:
    return _extract(fixture_dir / "xlsx-constructs.xlsx")


def _page(doc: Document, title: str) -> Page:
    return next(p for p in doc.pages if p.title == title)


def _of(page: Page, category: Category) -> list[Element]:
    return [e for e in page.elements if e.category is category]


def test_registry_xlsx_and_xlsm_use_this_extractor() -> None:
    assert for_suffix(".xlsx") is EXTRACTOR
    assert for_suffix(".XLSM") is EXTRACTOR


def test_pages_sheets_in_workbook_order_with_chartsheet(doc: Document) -> None:
    assert [p.title for p in doc.pages] == [
        "Sales", "Data", "Hidden", "Empty", "Intl", "Pivot", "Controls", "Shapes", "ChartSheet",
    ]  # fmt: skip
    assert [p.page_index for p in doc.pages] == list(range(9))
    assert doc.pages[8].metadata["sheet_type"] == "chartsheet"


def test_pages_hidden_sheet_flagged(doc: Document) -> None:
    flags = {p.title: p.metadata.get("hidden", False) for p in doc.pages}
    assert flags["Hidden"] is True
    assert not any(v for k, v in flags.items() if k != "Hidden")
    assert "XS-HIDDEN-CELL" in str(_page(doc, "Hidden").elements[0].content)


def test_pages_empty_sheet_has_no_elements(doc: Document) -> None:
    assert _page(doc, "Empty").elements == ()


def test_ids_follow_page_and_category_scheme(doc: Document) -> None:
    ids = [e.element_id for p in doc.pages for e in p.elements]
    assert len(ids) == len(set(ids))
    sales = _page(doc, "Sales")
    assert [e.element_id for e in sales.elements][:3] == ["p0-h1", "p0-tbl1", "p0-txt1"]
    for page in doc.pages:
        assert all(e.element_id.startswith(f"p{page.page_index}-") for e in page.elements)


def test_summaries_one_line_at_most_120(doc: Document) -> None:
    for page in doc.pages:
        for e in page.elements:
            assert e.summary
            assert "\n" not in e.summary
            assert len(e.summary) <= 120


def test_heading_merged_bold_title_row(doc: Document) -> None:
    (h,) = _of(_page(doc, "Sales"), Category.HEADING)
    assert h.content == {"level": 1, "text": "XS-TITLE Quarterly Sales"}
    assert h.metadata["source_range"] == "A1:F1"


def test_table_display_strings(doc: Document) -> None:
    table = _of(_page(doc, "Sales"), Category.TABLE)[0]
    assert table.content["headers"][:7] == [
        "Region", "Q1", "Q2", "Total", "Share", "Updated", "Active",
    ]  # fmt: skip
    first = table.content["rows"][0]
    assert first[:7] == ["North", "100", "50", "150", "12.5%", "2024-01-01", "TRUE"]
    assert table.content["rows"][1][6] == "FALSE"
    assert table.content["total_rows"] == 5
    assert table.metadata["source_range"] == "A3:H8"
    assert table.metadata["has_formulas"] is True
    assert (
        table.summary == "Table: Region, Q1, Q2, Total, Share, Updated, Active (5 rows × 8 columns)"
    )


def test_table_excel_table_named(doc: Document) -> None:
    named = _of(_page(doc, "Data"), Category.TABLE)[0]
    assert named.content["name"] == "XS_Products"
    assert named.content["headers"] == ["Product", "Units", "Price"]
    assert named.content["rows"][0] == ["XS-PRODUCT-0", "0", "1.5"]
    assert named.metadata["source_range"] == "A1:C7"


def test_table_long_block_split_into_row_blocks(doc: Document) -> None:
    blocks = _of(_page(doc, "Data"), Category.TABLE)[1:]
    assert [b.metadata["row_block"] for b in blocks] == [
        {"index": 0, "of": 3, "first_row": 2, "last_row": 501},
        {"index": 1, "of": 3, "first_row": 502, "last_row": 1001},
        {"index": 2, "of": 3, "first_row": 1002, "last_row": 1201},
    ]
    assert [b.content["total_rows"] for b in blocks] == [500, 500, 200]
    assert all(len(b.content["rows"]) <= TABLE_BLOCK_ROWS for b in blocks)
    assert sum(b.content["total_rows"] for b in blocks) == 1_200
    assert blocks[1].metadata["source_range"] == "F502:G1001"
    assert blocks[2].content["rows"][-1] == ["1200", "XS-ROW-1200"]
    assert all(b.content["headers"] == ["Id", "Value"] for b in blocks)


def test_formula_shared_pattern_collapses_to_one_element(doc: Document) -> None:
    formulas = _of(_page(doc, "Sales"), Category.FORMULA)
    assert formulas[0].content["expression"] == "=B4+C4"
    assert formulas[0].content["cells"] == "D4:D8"
    assert formulas[0].content["result"] == "150"
    assert formulas[0].content["cell_count"] == 5
    assert formulas[1].content["expression"] == "=SUM($B$4:$B$8)*2"
    assert len(formulas) == 2


def test_chart_values_resolved_from_cells(doc: Document) -> None:
    (chart,) = _of(_page(doc, "Sales"), Category.CHART)
    assert chart.content["title"] == "XS-CHART Q1 by region"
    series = chart.content["series"][0]
    assert series["categories"][-1] == "XS-CENTRE"
    assert series["values"] == [100, 110, 120, 130, 140]
    assert chart.content["data_summary"]


def test_chartsheet_chart(doc: Document) -> None:
    (chart,) = _page(doc, "ChartSheet").elements
    assert chart.category is Category.CHART
    assert chart.content["title"] == "XS-CHARTSHEET units"
    assert chart.content["series"][0]["values"][-1] == 15


def test_annotation_note_with_author_and_cell(doc: Document) -> None:
    (note,) = _of(_page(doc, "Sales"), Category.ANNOTATION)
    assert note.content == {
        "text": "XS-NOTE check the north figures",
        "kind": "note",
        "anchor": "A4",
        "author": "XS-Author",
    }


def test_annotation_threaded_comment_with_reply(doc: Document) -> None:
    (thread,) = _of(_page(doc, "Controls"), Category.ANNOTATION)
    assert thread.content["kind"] == "comment"
    assert thread.content["author"] == "XS-Person Ada"
    assert thread.content["anchor"] == "B2"
    assert thread.content["replies"][0]["text"] == "XS-REPLY yes it is"
    assert thread.content["resolved"] is True  # done="1" on the thread's comment


def test_links_external_and_internal(doc: Document) -> None:
    links = _of(_page(doc, "Sales"), Category.LINK)
    assert [(ln.content["text"], ln.content["url"]) for ln in links] == [
        ("XS-LINK-EXTERNAL", "https://example.com/xs-link"),
        ("XS-LINK-INTERNAL", "#'Intl'!A1"),
    ]
    assert links[0].content["cell"] == "A10"


def test_form_validations_list_and_rule(doc: Document) -> None:
    forms = _of(_page(doc, "Sales"), Category.FORM)
    fields = [f.content["fields"][0] for f in forms]
    assert fields[0]["name"] == "G4:G8"
    assert fields[0]["options"] == ["XS-Alpha", "Beta", "Gamma"]
    assert fields[1]["rule"] == "between 0 and 1000"


def test_header_footer_codes_readable(doc: Document) -> None:
    sales = _page(doc, "Sales")
    (header,) = _of(sales, Category.HEADER)
    (footer,) = _of(sales, Category.FOOTER)
    assert header.content["text"] == "XS-HEADER-LEFT | Page {page} of {pages}"
    assert footer.content["text"] == "XS-FOOTER printed {date}"


def test_pivot_table_fields_and_rows(doc: Document) -> None:
    (pivot,) = _page(doc, "Pivot").elements
    assert pivot.category is Category.PIVOT_TABLE
    c = pivot.content
    assert c["name"] == "XS-PIVOT"
    assert c["source"] == "Data!A1:C7"
    assert c["row_fields"] == ["Product"]
    assert c["data_fields"][0]["field"] == "Units"
    assert c["headers"] == ["Row Labels", "Sum of Units"]
    assert c["rows"][-1] == ["Grand Total", "9"]


def test_widgets_form_controls(doc: Document) -> None:
    widgets = _of(_page(doc, "Controls"), Category.WIDGET)
    assert [(w.content["kind"], w.content["name"]) for w in widgets] == [
        ("check_box", "XS-CtrlCheck"),
        ("button", "XS-CtrlButton"),
        ("drop_down", "XS-CtrlDrop"),
    ]
    assert widgets[0].content["checked"] is True
    assert widgets[0].content["text"] == "XS-CHECKBOX agree"


def test_drawing_image_shape_smartart(doc: Document) -> None:
    shapes = _page(doc, "Shapes")
    (image,) = _of(shapes, Category.IMAGE)
    assert image.content == {
        "description": "XS-IMAGE alt text",
        "mime_type": "image/png",
        "width": 4,
        "height": 3,
    }
    diagrams = _of(shapes, Category.DIAGRAM)
    assert diagrams[0].content["nodes"] == ["XS-SHAPE first line", "second line"]
    assert diagrams[1].content["kind"] == "smartart"
    assert diagrams[1].content["nodes"] == ["XS-SMART Plan", "Build", "Ship"]


def test_cjk_and_rtl_text_kept(doc: Document) -> None:
    (table,) = _of(_page(doc, "Intl"), Category.TABLE)
    assert table.content["headers"] == ["项目", "说明"]
    assert table.content["rows"] == [
        ["季度收入对比表", "XS-CJK 中文内容"],
        ["مرحبا بالعالم", "שלום עולם"],
    ]


def test_properties_title_keywords_subject(doc: Document) -> None:
    assert doc.properties.title == "XS-Constructs workbook"
    assert doc.properties.keywords == ("xs-alpha", "xs-beta")
    assert doc.properties.summary == "XS-SUBJECT"


@pytest.mark.parametrize(
    ("name", "title", "keywords"),
    [
        ("xlsx-titled.xlsx", "XS-Titled workbook", ("xs-key-one", "xs-key-two")),
        ("xlsx-untitled.xlsx", None, ()),
    ],
    ids=["titled", "untitled"],
)
def test_probe_properties(
    fixture_dir: Path, name: str, title: str | None, keywords: tuple[str, ...]
) -> None:
    with (fixture_dir / name).open("rb") as f:
        props = EXTRACTOR.probe(f, DEFAULT_LIMITS)
    assert props.title == title
    assert props.keywords == keywords
    assert props.page_titles == ("Only",)
    assert props.page_count == 1


def test_probe_lists_hidden_sheets(fixture_dir: Path) -> None:
    with (fixture_dir / "xlsx-constructs.xlsx").open("rb") as f:
        props = EXTRACTOR.probe(f, DEFAULT_LIMITS)
    assert props.page_count == 9
    assert props.extra["hidden_sheets"] == ["Hidden"]


def test_extract_pages_only_those_asked(fixture_dir: Path) -> None:
    assert EXTRACTOR.extract_pages is not None
    with (fixture_dir / "xlsx-constructs.xlsx").open("rb") as f:
        pages = EXTRACTOR.extract_pages(f, [5, 2], DEFAULT_LIMITS)
    assert [(p.page_index, p.title) for p in pages] == [(5, "Pivot"), (2, "Hidden")]


def test_sparse_corners_never_allocate_the_grid(fixture_dir: Path) -> None:
    doc = _extract(fixture_dir / "xlsx-sparse-corners.xlsx")
    tables = doc.pages[0].elements
    assert [t.metadata["source_range"] for t in tables] == ["A1", "XFD1048576"]
    assert tables[1].content == {"text": "XS-CORNER-XFD"}  # a lone cell is text


def test_cell_cap_truncates(fixture_dir: Path) -> None:
    doc = _extract(fixture_dir / "xlsx-constructs.xlsx", Limits(max_cells=1_000))
    assert doc.metadata.get("truncated") is True


@pytest.mark.parametrize(
    ("data", "error"),
    [
        (b"", CorruptError),
        (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 600, UnsupportedError),
        (b"PK\x03\x04 truncated", CorruptError),
        (b"%PDF-1.7\n", UnsupportedError),
    ],
    ids=["empty", "cfb-not-encrypted", "truncated-zip", "pdf-renamed"],
)
def test_errors_are_project_errors(data: bytes, error: type[Exception]) -> None:
    with pytest.raises(error):
        EXTRACTOR.extract(io.BytesIO(data), DEFAULT_LIMITS)


def test_errors_encrypted_cfb() -> None:
    data = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + "EncryptionInfo".encode("utf-16-le") + b"\0" * 600
    with pytest.raises(EncryptedError):
        EXTRACTOR.probe(io.BytesIO(data), DEFAULT_LIMITS)


def test_fixtures_are_small(fixture_dir: Path) -> None:
    """Deterministic builds: tests/test_fixture_files.py."""
    sizes = [p.stat().st_size for p in fixture_dir.glob("*.xlsx")]
    assert sizes
    assert all(size < 64 * 1024 for size in sizes)


def test_cells_streaming_reader_matches_calamine(
    fixture_dir: Path, doc: Document, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Refusing:
        @staticmethod
        def from_filelike(_: object) -> None:
            raise CalamineError("refused for the test")

    monkeypatch.setattr(xlsx_module, "CalamineWorkbook", Refusing)
    streamed = _extract(fixture_dir / "xlsx-constructs.xlsx")
    assert [p.to_json() for p in streamed.pages] == [p.to_json() for p in doc.pages]


def test_probe_reads_only_workbook_and_core_parts(
    fixture_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    read: list[str] = []
    original = Package.read

    def spy(self: Package, name: str) -> bytes:
        read.append(name)
        return original(self, name)

    monkeypatch.setattr(Package, "read", spy)
    with (fixture_dir / "xlsx-constructs.xlsx").open("rb") as f:
        EXTRACTOR.probe(f, DEFAULT_LIMITS)
    assert sorted(read) == ["docProps/core.xml", "xl/workbook.xml"]


def test_damaged_small_part_is_skipped_not_fatal(fixture_dir: Path) -> None:
    src = (fixture_dir / "xlsx-constructs.xlsx").read_bytes()
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(src)) as zin, zipfile.ZipFile(out, "w") as zout:
        for name in zin.namelist():
            data = zin.read(name)
            if name.startswith("xl/comments"):
                data = data[: len(data) // 2]  # cut short: not well-formed
            zout.writestr(name, data)
    out.seek(0)
    damaged = EXTRACTOR.extract(out, DEFAULT_LIMITS)
    sales = damaged.pages[0]
    assert _of(sales, Category.ANNOTATION) == []
    assert _of(sales, Category.TABLE)
    assert sales.metadata["skipped_parts"][0].startswith("comments: ")


@pytest.fixture(scope="module")
def office(fixture_dir: Path) -> Page:
    return _extract(fixture_dir / "xlsx-office-shapes.xlsx").pages[0]


def test_office_lone_cell_and_notes_column_are_text(office: Page) -> None:
    texts = _of(office, Category.TEXT)
    assert [(t.content["text"], t.metadata["source_range"]) for t in texts] == [
        ("XS-LONE label cell", "A1"),
        ("XS-NOTES first\nsecond note\nthird note", "A3:A5"),
    ]


def test_office_total_row_after_blank_row_joins_its_table(office: Page) -> None:
    table, amount, _ = _of(office, Category.TABLE)
    assert table.content["headers"] == ["Item", "Qty", "Price"]  # text over numbers
    assert table.content["rows"][-1] == ["Total", "6", "60"]
    assert table.content["total_row_index"] == 3
    assert table.metadata["source_range"] == "A8:C13"
    assert amount.content["headers"] == ["XS-Amount"]  # one column, but a header: a table
    assert amount.content["rows"][-1] == ["60"]  # its SUM after a blank row, like the others
    assert amount.content["total_row_index"] == 3
    assert amount.metadata["source_range"] == "E8:E13"


def test_office_excel_table_totals_row_count_marks_its_last_row(office: Page) -> None:
    """`totalsRowCount="1"` makes the table's last row its total row, whatever it says."""
    (table,) = [t for t in _of(office, Category.TABLE) if t.content.get("name") == "XS_Totals"]
    assert table.content["rows"][-1] == ["XS-ALL", "30"]
    assert table.content["total_row_index"] == 2
    assert table.metadata["source_range"] == "G8:H11"


def test_office_collapsed_shared_formula_reads_as_the_first_cells(office: Page) -> None:
    (formula,) = _of(office, Category.FORMULA)
    assert formula.content == {
        "expression": "=SUM(B9:B11)",
        "result": "6",
        "cells": "B13:C13, E13",  # E13's SUM(E9:E11) is the same formula, moved
        "cell_count": 3,
    }


def test_office_note_with_blank_author_has_no_author(office: Page) -> None:
    (note,) = _of(office, Category.ANNOTATION)
    assert "author" not in note.content
    assert note.summary == "Note: XS-BLANK-AUTHOR note"


def test_a_long_shared_string_is_cut_in_every_cell_that_shows_it(tmp_path: Path) -> None:
    """Shared strings are cut to a cell's limit once, when read: every cell showing one (cells
    read one by one, a sheet calamine does not read whole) shows it cut as a cell is; rich
    text runs are joined and phonetic runs left out."""
    ns = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
    long = "ab" * CELL_MAX_CHARS
    sst = (
        f'<sst xmlns="{ns}"><si><t>{long}</t></si><si><r><t>Tok</t></r><r><t>yo</t></r>'
        '<rPh sb="0" eb="2"><t>トウキョウ</t></rPh></si></sst>'
    )
    rows = "".join(f'<row r="{r}"><c r="A{r}" t="s"><v>{r % 2}</v></c></row>' for r in (1, 2, 3))
    path = tmp_path / "long.xlsx"
    xlsx(path, sheet_of(rows + '<row r="5000"><c r="A5000" t="s"><v>0</v></c></row>'), sst)
    texts = [str(e.content["text"]) for e in _extract(path).pages[0].elements]
    cut = clip(long)
    assert len(cut) == CELL_MAX_CHARS
    assert cut.endswith("…")
    assert texts == [f"Tokyo\n{cut}\nTokyo", cut]
