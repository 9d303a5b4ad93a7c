"""The xlsx extractor's pure pieces: formula patterns, number formats, header/footer codes,
block detection, the fast scan of a worksheet part."""

from __future__ import annotations

import pytest
from lxml import etree

from dpe_server.extractors.kit.a1 import parse_range
from dpe_server.extractors.kit.xml import local
from dpe_server.extractors.xlsx.book import kid, kids, walk
from dpe_server.extractors.xlsx.cells import (
    TEXT_BLOCK_MAX_ROWS,
    Grid,
    MergeIndex,
    PointIndex,
    blocks,
    has_header_row,
    is_text_block,
)
from dpe_server.extractors.xlsx.format import NumberFormat, format_kind, general, show_number
from dpe_server.extractors.xlsx.formulas import (
    compact_ranges,
    formula_items,
    pattern,
    shift,
)
from dpe_server.extractors.xlsx.parts import _notes, header_footer_text
from dpe_server.extractors.xlsx.scan import FormulaCell, scan_sheet
from dpe_server.extractors.xlsx.totals import is_total_row, total_below


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (("B2*C2", 1, 3), ("B500*C500", 499, 3)),
        (("SUM($A$1:A2)", 1, 1), ("SUM($A$1:A9)", 8, 1)),
        (("B2+B3", 3, 1), ("C2+C3", 3, 2)),
    ],
    ids=["row-copies", "anchored-running-total", "column-copies"],
)
def test_pattern_copies_share_a_pattern(a: tuple[str, int, int], b: tuple[str, int, int]) -> None:
    assert pattern(*a) == pattern(*b)


def test_pattern_differs_for_different_formulas() -> None:
    assert pattern("B2*C2", 1, 3) != pattern("B2+C2", 1, 3)


def test_pattern_ignores_strings_and_function_names() -> None:
    assert pattern('LOG10(A1)&"A1"', 0, 1) == 'LOG10(R[0]C[-1])&"A1"'


def test_shift_moves_relative_refs_only() -> None:
    assert shift("B2*$C$2+C$1", 3, 1) == "C5*$C$2+D$1"


def test_compact_ranges_merges_columns() -> None:
    cells = [(r, c) for r in range(1, 5) for c in (3, 4)] + [(9, 0)]
    assert compact_ranges(cells) == ["D2:E5", "A10"]


@pytest.mark.parametrize(
    ("value", "code", "shown"),
    [
        (0.125, "0.0%", "12.5%"),
        (0.5, "0%", "50%"),
        (1234567.891, "#,##0.00", "1,234,567.89"),
        (3.0, "0.00", "3.00"),
        (45292.0, "yyyy-mm-dd", "2024-01-01"),
        (45292.5, "yyyy-mm-dd h:mm", "2024-01-01T12:00:00"),
        (0.5625, "h:mm", "13:30:00"),
        (12.5, '"$"#,##0.00', "$12.50"),
    ],
    ids=["pct-1dp", "pct", "thousands", "fixed", "date", "datetime", "time", "currency"],
)
def test_show_number_per_format(value: float, code: str, shown: str) -> None:
    assert show_number(value, NumberFormat.parse(code)) == shown


@pytest.mark.parametrize(
    ("value", "shown"), [(3.0, "3"), (2.5, "2.5"), (0.1 + 0.2, "0.3"), (-4.0, "-4")],
    ids=["int", "half", "float-noise", "negative"],
)  # fmt: skip
def test_general_format(value: float, shown: str) -> None:
    assert general(value) == shown


def test_format_kind_text_and_general() -> None:
    assert format_kind("@") == "text"
    assert format_kind("General") == "general"
    assert format_kind('[Red]"x"0.00') == "number"


@pytest.mark.parametrize(
    ("code", "text"),
    [
        ("&LLeft&CPage &P of &N&RRight", "Left | Page {page} of {pages} | Right"),
        ('&C&"Arial,Bold"&14Title &A', "Title {sheet}"),
        ("&RPrinted &D &T&L&F", "{file} | Printed {date} {time}"),
        ("Fish && Chips", "Fish & Chips"),
    ],
    ids=["sections", "font-and-size", "codes-order", "ampersand"],
)
def test_header_footer_text(code: str, text: str) -> None:
    assert header_footer_text(code) == text


def test_blocks_split_on_empty_rows_and_columns() -> None:
    rows = [
        ["a", "b", "", "x"],
        ["1", "2", "", "y"],
        ["", "", "", ""],
        ["c", "", "", ""],
    ]
    found = [(b.r0, b.c0, len(b.rows), b.width) for b in blocks(Grid(0, 0, rows))]
    assert found == [(0, 0, 2, 2), (0, 3, 2, 1), (3, 0, 1, 1)]


def test_has_header_row_needs_text_over_data() -> None:
    assert has_header_row([["Name", "Qty"], ["x", "1"]])
    assert not has_header_row([["1", "2"], ["3", "4"]])
    assert not has_header_row([["Name", "Qty"]])


SHEET = (
    b'<?xml version="1.0"?><x:worksheet xmlns:x="http://schemas.openxmlformats.org/'
    b'spreadsheetml/2006/main"><x:dimension ref="A1"/><x:sheetData>'
    b'<x:row r="2"><x:c r="B2" s="1"><x:v>0.5</x:v></x:c><x:c r="C2"><x:f>B2*2</x:f>'
    b'<x:v>1</x:v></x:c><x:c r="D2" t="e"><x:v>#DIV/0!</x:v></x:c></x:row>'
    b'<x:row r="9"><x:c r="AA9"><x:v>1</x:v></x:c></x:row></x:sheetData>'
    b'<x:mergeCells count="1"><x:mergeCell ref="A1:B1"/></x:mergeCells></x:worksheet>'
)


def test_scan_sheet_real_extent_not_dimension() -> None:
    scan = scan_sheet(SHEET, {1})
    assert scan.bounds == (1, 1, 8, 26)
    assert scan.n_cells == 4
    assert scan.dense


def test_scan_sheet_formulas_styles_errors_and_tail() -> None:
    scan = scan_sheet(SHEET, {1})
    assert [(f.row, f.col, f.text) for f in scan.formulas] == [(1, 2, "B2*2")]
    assert scan.styled == {(1, 1): 1}
    assert scan.errors == {(1, 3): "#DIV/0!"}
    assert [m.get("ref") for m in scan.tail.iter("{*}mergeCell")] == ["A1:B1"]


def test_scan_sheet_sparse_corners_not_dense() -> None:
    data = (
        b'<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>'
        b'<row r="1"><c r="A1"><v>1</v></c></row><row r="1048576"><c r="XFD1048576"><v>2</v></c>'
        b"</row></sheetData></worksheet>"
    )
    scan = scan_sheet(data, set())
    assert scan.bounds == (0, 0, 1048575, 16383)
    assert not scan.dense


def test_formula_items_copied_formulas_collapse() -> None:
    cells = [FormulaCell(r, 3, f"B{r + 1}*C{r + 1}", "normal") for r in range(1, 500)]
    (item,) = formula_items(cells, lambda r, c: f"v{r}")
    assert item.content == {
        "expression": "=B2*C2",
        "result": "v1",
        "cells": "D2:D500",
        "cell_count": 499,
    }


def test_formula_items_shared_formula_dependents_join_master() -> None:
    cells = [
        FormulaCell(1, 4, "B2+C2", "shared", "0"),
        *(FormulaCell(r, 4, "", "shared", "0") for r in range(2, 6)),
        FormulaCell(1, 5, "SUM(E2:E6)", "normal"),
    ]
    items = formula_items(cells, lambda r, c: "")
    assert [(i.content["expression"], i.content["cells"]) for i in items] == [
        ("=B2+C2", "E2:E6"),
        ("=SUM(E2:E6)", "F2"),
    ]
    assert "result" not in items[0].content  # no cached value: no result


def test_formula_items_shared_across_columns_show_the_first_cells_formula() -> None:
    """As an office suite writes a SUM filled right: the master holds `ref`, the others `si`."""
    cells = [
        FormulaCell(4, 1, "SUM(B2:B4)", "shared", "0"),
        FormulaCell(4, 2, "", "shared", "0"),
        FormulaCell(4, 3, "", "shared", "0"),
    ]
    (item,) = formula_items(cells, lambda r, c: "60")
    assert item.content == {
        "expression": "=SUM(B2:B4)",
        "result": "60",
        "cells": "B5:D5",
        "cell_count": 3,
    }
    assert item.summary == "Formula over B5:D5: =SUM(B2:B4)"


def test_merge_index_finds_ranges_touching_a_block() -> None:
    index = MergeIndex([(0, 0, 0, 5), (10, 2, 12, 3), (40, 0, 41, 1)])
    assert index.hits((11, 0, 20, 2)) == [(10, 2, 12, 3)]
    assert index.hits((1, 0, 9, 9)) == []
    assert index.at(10, 2) == (10, 2, 12, 3)
    assert index.at(11, 2) is None


def test_point_index_any_in_box() -> None:
    index = PointIndex([(5, 3), (5, 9), (20, 1)])
    assert index.any_in((4, 8, 6, 9))
    assert not index.any_in((6, 0, 19, 9))


def test_scan_sheet_rows_past_excel_limit_not_dense() -> None:
    data = (
        b'<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>'
        b'<row r="2000000"><c r="A2000000"><v>1</v></c></row></sheetData></worksheet>'
    )
    assert not scan_sheet(data, set()).dense


def test_note_with_blank_author_has_no_author() -> None:
    """An office suite leaves `<author> </author>` (or empty) for a note nobody signed."""
    root = etree.fromstring(
        '<comments xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
        "<authors><author> </author><author/></authors><commentList>"
        '<comment ref="A1" authorId="0"><text><r><t>blank author</t></r></text></comment>'
        '<comment ref="A2" authorId="1"><text><r><t>empty author</t></r></text></comment>'
        "</commentList></comments>"
    )
    notes = _notes(root, set())
    assert [n.content for n in notes] == [
        {"text": "blank author", "kind": "note", "anchor": "A1"},
        {"text": "empty author", "kind": "note", "anchor": "A2"},
    ]
    assert [n.summary for n in notes] == ["Note: blank author", "Note: empty author"]


def test_has_header_row_by_type_change() -> None:
    assert has_header_row([["Amount"], ["10"], ["2024-01-02"]])  # one column, text over values
    assert not has_header_row([["first note"], ["second note"]])  # one column of labels
    assert has_header_row([["项目", "说明"], ["a", "b"]])  # a full row of distinct labels
    assert not has_header_row([["Name", ""], ["x", "y"]])  # text over text, a gap


def test_text_block_single_cell_or_short_label_column() -> None:
    assert is_text_block([["lone"]])
    assert is_text_block([["a"], ["b"], ["c"]])
    assert not is_text_block([["Amount"], ["1"], ["2"]])  # a header: a table
    assert not is_text_block([["a", "b"]])  # two columns: a table
    assert not is_text_block([["x"]] * (TEXT_BLOCK_MAX_ROWS + 1))


@pytest.mark.parametrize(
    ("row", "formulas", "total"),
    [
        (["Total", "6"], {}, True),
        (["合计：", ""], {}, True),
        (["  grand TOTAL ", "1"], {}, True),
        (["Net", "6"], {(12, 1): "SUM(B9:B11)"}, True),
        (["Net", "6"], {(12, 1): "SUM(C9:C11)"}, False),  # another column's sum
        (["Plum", "3"], {}, False),
    ],
)
def test_is_total_row(row: list[str], formulas: dict[tuple[int, int], str], total: bool) -> None:
    assert is_total_row(row, 12, 0, lambda r, c: formulas.get((r, c), "")) is total


def test_total_below_at_most_one_blank_row_and_inside_the_columns() -> None:
    table = Grid(7, 0, [["Item", "Qty", "Price"], ["a", "1", "2"]])
    none = lambda r, c: ""  # noqa: E731
    assert total_below(table, Grid(9, 0, [["Total", "1"]]), none) == ["Total", "1", ""]
    assert total_below(table, Grid(10, 0, [["Total", "1"]]), none) == ["Total", "1", ""]
    assert total_below(table, Grid(11, 0, [["Total", "1"]]), none) is None  # two blank rows
    assert total_below(table, Grid(10, 2, [["Total", "1"]]), none) is None  # wider than it


_BOOK_XML = (
    b'<a xmlns="urn:x" xmlns:y="urn:y"><b i="1"/><!-- b --><?b pi?><y:b i="2"/>'
    b'<c><b i="3"/><d xmlns=""><b i="4"/></d></c></a>'
)


def test_local_name_lookups_match_any_namespace_and_skip_comments() -> None:
    """`kids`, `kid` and `walk` match a local name in any namespace (Transitional, Strict) or
    none, in document order, never a comment or processing instruction."""
    root = etree.fromstring(_BOOK_XML)
    assert [e.get("i") for e in kids(root, "b")] == ["1", "2"]
    assert [e.get("i") for e in walk(root, "b")] == ["1", "2", "3", "4"]
    first = kid(root, "b")
    assert first is not None
    assert first.get("i") == "1"
    assert kid(root, "d") is None
    assert kids(None, "b") == []
    assert kid(None, "b") is None
    assert [local(e) for e in walk(root, "a")] == ["a"]  # the element itself
    assert [e.get("i") for e in walk(root, "b")] == [
        e.get("i") for e in root.iter() if local(e) == "b"
    ]


@pytest.mark.parametrize(
    ("ref", "rect"),
    [
        ("A1:C5", (0, 0, 4, 2)),
        ("C5:A1", (0, 0, 4, 2)),
        ("AB10:B2", (1, 1, 9, 27)),
        ("XFD1048576:A1", (0, 0, 1048575, 16383)),
        ("a1:c5", (0, 0, 4, 2)),
        ("$A$1:$C$5", (0, 0, 4, 2)),
        ("'Sheet 1'!A1:B2", (0, 0, 1, 1)),
        (" A1 : B2 ", (0, 0, 1, 1)),
        ("B3", (2, 1, 2, 1)),
        ("A0:B1", (-1, 0, 0, 1)),
        ("ABCD1:B2", None),
        ("A12345678:B2", None),
        ("A1:", (0, 0, 0, 0)),
        ("A1:B2:C3", None),
        ("", None),
    ],
)
def test_parse_range_reads_every_way_of_writing_a_range(
    ref: str, rect: tuple[int, int, int, int] | None
) -> None:
    assert parse_range(ref) == rect
