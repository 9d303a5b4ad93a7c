"""The pdf layout heuristics on synthetic runs: lines, columns, blocks, grids, furniture."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dpe_server.extractors.pdf.blocks import Block, build_blocks
from dpe_server.extractors.pdf.collect import Run, Segment, font_name, is_bold, is_mono, plain
from dpe_server.extractors.pdf.furniture import edge_lines, repeated
from dpe_server.extractors.pdf.headings import body_size
from dpe_server.extractors.pdf.lines import make_lines, reading_groups
from dpe_server.extractors.pdf.tables import find_grids, ruled_tables
from dpe_server.model.metadata import split_keywords


def load_builder() -> Any:
    """fixtures/builders/pdf.py."""
    from fixtures.builders import pdf

    return pdf


def run(text: str, x: float, y: float, size: float = 10.0, *, font: str = "Helvetica") -> Run:
    return Run(text, x, x + 0.5 * size * len(text), y, size, font, is_bold(font), is_mono(font))


def blocks_of(runs: list[Run], outline: dict[str, int] | None = None) -> list[Block]:
    groups = [make_lines(g) for g in reading_groups(runs)]
    lines = [ln for g in groups for ln in g]
    return build_blocks(groups, body_size(lines), outline or {})


@pytest.mark.parametrize(
    ("raw", "name", "bold", "mono"),
    [
        pytest.param("/ABCDEF+Helvetica-Bold", "Helvetica-Bold", True, False, id="subset-bold"),
        pytest.param("/Courier", "Courier", False, True, id="courier"),
        pytest.param("/XYZABC+DejaVuSansMono", "DejaVuSansMono", False, True, id="mono"),
        pytest.param("/Consolas-Bold", "Consolas-Bold", True, True, id="consolas-bold"),
        pytest.param("/Times-Roman", "Times-Roman", False, False, id="plain"),
    ],
)
def test_font_name_style_flags(raw: str, name: str, bold: bool, mono: bool) -> None:
    assert font_name({"/BaseFont": raw}) == name
    assert (is_bold(name), is_mono(name)) == (bold, mono)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        pytest.param("a\ud83d\ude00b", "a\U0001f600b", id="pair-joined"),
        pytest.param("a\udb80b", "a\ufffdb", id="lone-replaced"),
        pytest.param("a\x00b", "ab", id="nul-dropped"),
    ],
)
def test_plain_text_is_utf8_safe(raw: str, expected: str) -> None:
    assert plain(raw) == expected
    plain(raw).encode("utf-8")


def test_make_lines_orders_runs_on_a_baseline() -> None:
    lines = make_lines([run("world", 60, 700.3), run("hello", 20, 700), run("next", 20, 686)])
    assert [ln.text for ln in lines] == ["hello world", "next"]


def test_reading_groups_two_columns_left_first() -> None:
    left = [run(f"left column line number {i} words", 72, 700 - 14 * i) for i in range(4)]
    right = [run(f"right column line number {i} word", 330, 700 - 14 * i) for i in range(4)]
    title = run("A title that spans both of the columns of this page ok", 72, 730, 16)
    groups = reading_groups([*right, title, *left])
    texts = [[r.text for r in g] for g in groups]
    assert texts[0] == [title.text]
    assert texts[1] == [r.text for r in left]
    assert texts[2] == [r.text for r in right]


def test_reading_groups_aligned_table_is_not_columns() -> None:
    runs = []
    for i, (a, b) in enumerate([("Region", "Sales"), ("North", "120"), ("South", "98")] * 2):
        runs += [run(a, 72, 700 - 14 * i), run(b, 330, 700 - 14 * i)]
    assert len(reading_groups(runs)) == 1


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        pytest.param(["an extra-", "ordinary day"], "an extraordinary day", id="hyphen-joined"),
        pytest.param(["a well-", "Known name"], "a well-Known name", id="hyphen-before-capital"),
        pytest.param(["MASTER-", "FILE ready"], "MASTERFILE ready", id="hyphen-in-capitals"),
        pytest.param(["one line", "two line"], "one line two line", id="space"),
        pytest.param(["中文", "句子"], "中文句子", id="cjk-no-space"),
    ],
)
def test_paragraph_line_joining(lines: list[str], expected: str) -> None:
    runs = [run(t, 72, 700 - 12 * i) for i, t in enumerate(lines)]
    (block,) = blocks_of(runs)
    assert block.kind == "text"
    assert block.content["text"] == expected


def test_paragraph_break_on_wide_gap() -> None:
    runs = [run("first para", 72, 700), run("second para", 72, 670)]
    assert [b.content["text"] for b in blocks_of(runs)] == ["first para", "second para"]


@pytest.mark.parametrize(
    ("marker", "ordered"),
    [
        pytest.param("\u2022", False, id="bullet"),
        pytest.param("\x7f", False, id="reportlab-bullet"),
        pytest.param("-", False, id="dash"),
        pytest.param("*", False, id="star"),
        pytest.param("\u25e6", False, id="white-bullet"),
        pytest.param("1.", True, id="number-dot"),
        pytest.param("a)", True, id="letter-paren"),
        pytest.param("(iv)", True, id="roman"),
    ],
)
def test_list_markers(marker: str, ordered: bool) -> None:
    runs = [run(f"{marker} item one", 72, 700), run(f"{marker} item two", 72, 686)]
    (block,) = blocks_of(runs)
    assert block.kind == "list"
    assert block.content["ordered"] is ordered
    assert [i["text"] for i in block.content["items"]] == ["item one", "item two"]


@pytest.mark.parametrize(
    ("second", "kinds"),
    [
        pytest.param("941. You must receive notice", ["text"], id="number-continues"),
        pytest.param("(b) of the act applies", ["text"], id="letter-continues"),
        pytest.param("1. First step", ["text", "list"], id="one-starts-a-list"),
        pytest.param("a) First step", ["text", "list"], id="a-starts-a-list"),
        pytest.param("\u2022 A point", ["text", "list"], id="bullet-starts-a-list"),
    ],
)
def test_a_wrapped_line_starting_with_a_number_continues_the_paragraph(
    second: str, kinds: list[str]
) -> None:
    """Only a bullet or a first number (1., a), i.) ends a paragraph whose next line starts
    with it (CommonMark's rule): "…you must file Forms / 941. You must…" is one paragraph."""
    runs = [run("you must contact the IRS to request to file Forms", 72, 700), run(second, 72, 688)]
    blocks = blocks_of(runs)
    assert [b.kind for b in blocks] == kinds
    if kinds == ["text"]:
        assert blocks[0].content["text"].endswith(second)


def test_a_number_after_the_last_numbered_item_ends_the_paragraph() -> None:
    """An item whose wrapped lines return to the margin reads as a paragraph; the next number
    still starts an item."""
    runs = [
        run("1. Add the wages to the last payment of", 72, 700),
        run("a. Withhold the flat rate", 90, 688),
        run("b. Or add them to the wages of", 90, 676),
        run("the payroll period and withhold the tax.", 72, 664),
        run("2. If you did not withhold income tax", 72, 652),
        run("use method 1-b above.", 72, 640),
    ]
    kinds = [(b.kind, b.content.get("start")) for b in blocks_of(runs)]
    assert kinds == [("list", None), ("text", None), ("list", 2), ("text", None)]


def test_list_item_continuation_line() -> None:
    runs = [run("\u2022 item that wraps", 72, 700), run("onto a second line", 82, 686)]
    (block,) = blocks_of(runs)
    assert block.content["items"] == [{"text": "item that wraps onto a second line", "level": 0}]


def test_heading_from_outline_entry_level() -> None:
    runs = [run("Plain Looking Title", 72, 720), run("body text " * 5, 72, 700)]
    blocks = blocks_of(runs, {"plain looking title": 2})
    assert (blocks[0].kind, blocks[0].content["level"]) == ("heading", 2)


def test_heading_outline_match_ignores_section_number() -> None:
    runs = [run("2.1 Scope Of Work", 72, 720), run("body text " * 5, 72, 700)]
    blocks = blocks_of(runs, {"scope of work": 3})
    assert blocks[0].content == {"level": 3, "text": "2.1 Scope Of Work"}


def test_heading_bold_at_body_size_is_level_five() -> None:
    runs = [
        run("Bold Lead", 72, 720, font="Helvetica-Bold"),
        run("body text that is long enough", 72, 700),
    ]
    assert blocks_of(runs)[0].content == {"level": 5, "text": "Bold Lead"}


def test_code_block_from_monospace_lines() -> None:
    runs = [run("if x:", 72, 700, font="Courier"), run("pass", 82.8, 689, 9, font="Courier")]
    (block,) = blocks_of(runs)
    assert block.kind == "code"
    assert block.content["text"] == "if x:\n  pass"


def _grid_segments(xs: list[float], ys: list[float]) -> list[Segment]:
    segs = [Segment(xs[0], y, xs[-1], y) for y in ys]
    segs += [Segment(x, min(ys), x, max(ys)) for x in xs]
    return segs


def test_find_grids_lattice() -> None:
    (grid,) = find_grids(_grid_segments([72, 172, 272], [700, 680, 660]))
    assert grid.xs == [72, 172, 272]
    assert grid.ys == [700, 680, 660]


def test_find_grids_ignores_a_lone_box() -> None:
    assert find_grids(_grid_segments([72, 272], [700, 600])) == []


def test_ruled_tables_assigns_runs_to_cells() -> None:
    segs = _grid_segments([72, 172, 272], [700, 680, 660])
    runs = [run("A", 76, 686), run("B", 176, 686), run("1", 76, 666), run("2", 176, 666)]
    outside = run("after", 72, 600)
    (table,), rest = ruled_tables([*runs, outside], segs)
    assert table.content["headers"] == ["A", "B"]
    assert table.content["rows"] == [["1", "2"]]
    assert rest == [outside]


def _open_sided(xs: list[float], ys: list[float], left: float, right: float) -> list[Segment]:
    """A table ruled as the US Federal Register sets one: horizontal rules from `left` to
    `right`, vertical rules only between its columns (`xs`), none down its two sides."""
    segs = [Segment(left, y, right, y) for y in ys]
    segs += [Segment(x, min(ys), x, max(ys)) for x in xs]
    return segs


def test_find_grids_open_at_its_sides() -> None:
    """Where the horizontal rules end beyond the outermost vertical ones are the table's
    edges: its first and last columns are cells too."""
    (grid,) = find_grids(_open_sided([200, 300, 400], [700, 680, 600], 100, 500))
    assert grid.xs == [100, 200, 300, 400, 500]


def test_find_grids_one_rule_reaching_out_is_no_edge() -> None:
    segs = _grid_segments([72, 172, 272], [700, 680, 660])
    segs.append(Segment(20, 640, 400, 640))  # a rule under the table, touching it
    (grid,) = find_grids(segs)
    assert grid.xs == [72, 172, 272]


def _header_and_body(body: list[list[tuple[str, float]]], xs: list[float]) -> list[Run]:
    """Runs of a two-band table (header band 700–680, body band 680–600) over columns
    starting at `xs`: `body` lists each line's cells as (text, x offset in its column)."""
    runs = [run(f"Col {j}", x + 2, 686, 8) for j, x in enumerate(xs)]
    for i, line in enumerate(body):
        runs += [run(text, xs[j] + 2 + dx, 668 - 10 * i, 8) for j, (text, dx) in enumerate(line)]
    return runs


def test_ruled_table_body_without_rules_between_rows() -> None:
    """A table ruled above and under its header and under its last row (the federal
    register's): each line of the body band is a row, not one cell of all the lines."""
    segs = _open_sided([200, 300, 400], [700, 680, 600], 100, 500)
    body = [[(f"Company {i}", 0), (f"Name {i}", 0), ("TB", 0), (f"{i}.00", 0)] for i in range(5)]
    (table,), rest = ruled_tables(_header_and_body(body, [100, 200, 300, 400]), segs)
    assert rest == []
    assert table.content["headers"] == ["Col 0", "Col 1", "Col 2", "Col 3"]
    assert table.content["rows"] == [
        [f"Company {i}", f"Name {i}", "TB", f"{i}.00"] for i in range(5)
    ]


def test_ruled_table_cells_without_dot_leaders() -> None:
    """Dots leading from a cell's text to the next column are no part of it; a leader alone
    (no value) and an ellipsis stay."""
    segs = _grid_segments([100, 200, 300], [700, 680, 600])
    body = [
        [("Theophed .........", 0), ("8.00", 0)],
        [("Tedral . . . . . . .", 0), ("..........", 0)],
        [("Paid on a . . .", 0), ("etc....", 0)],
    ]
    (table,), _ = ruled_tables(_header_and_body(body, [100, 200]), segs)
    assert table.content["rows"] == [
        ["Theophed", "8.00"],
        ["Tedral", ".........."],
        ["Paid on a . . .", "etc...."],
    ]


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(
            [
                [("July 1, 2011", 0), ("Oct. 1, 2011", 0), ("Jan. 1, 2012", 0)],
                [("through", 6), ("through", 6), ("through", 6)],
                [("Sep. 30, 2011", -1), ("Dec. 31, 2011", -1), ("Mar. 31, 2012", -1)],
            ],
            id="centred-lines",
        ),
        pytest.param(
            [
                [("Wages paid after", 0), ("Withhold", 0), ("Exempt if", 0)],
                [("the year the", 0), ("", 0), ("no service", 0)],
                [("worker retired.", 0), ("", 0), ("was done.", 0)],
            ],
            id="one-cell-wraps-further",
        ),
    ],
)
def test_ruled_row_wrapped_over_lines_stays_one_row(body: list[list[tuple[str, float]]]) -> None:
    """The lines of cells wrapped in one ruled row are not rows: centred lines do not stand
    at one x in their column; lines that fill fewer cells than the first are wrapped text."""
    segs = _grid_segments([100, 200, 300, 400], [700, 680, 600])
    runs = [r for r in _header_and_body(body, [100, 200, 300]) if r.text]
    (table,), _ = ruled_tables(runs, segs)
    assert len(table.content["rows"]) == 1
    assert table.content["rows"][0][0] == " ".join(line[0][0] for line in body)


def test_ruled_right_to_left_table_from_its_rightmost_column() -> None:
    segs = _grid_segments([72, 172, 272], [700, 680, 660])
    runs = [run("כמות", 76, 686), run("פריט", 176, 686), run("3", 76, 666), run("חבל", 176, 666)]
    (table,), _ = ruled_tables(runs, segs)
    assert table.content == {
        "headers": ["פריט", "כמות"],
        "rows": [["חבל", "3"]],
        "total_rows": 1,
        "total_columns": 2,
        "direction": "rtl",
    }


def test_repeated_edge_lines_normalise_digits() -> None:
    box = (0.0, 0.0, 612.0, 792.0)

    def page(n: int) -> list[Run]:
        return [
            run("Report header", 72, 760, 9),
            run("body " * 8, 72, 400),
            run(f"Page {n}", 290, 30, 9),
        ]

    edges = [edge_lines(page(n), box) for n in range(1, 6)]
    found = repeated(edges[2], [edges[1], edges[3], edges[0], edges[4]])
    assert sorted((e.top, e.line.text) for e in found) == [
        (False, "Page 3"),
        (True, "Report header"),
    ]


def test_repeated_needs_two_of_four_neighbours() -> None:
    box = (0.0, 0.0, 612.0, 792.0)
    mine = edge_lines([run("Once only", 72, 760, 9), run("x " * 30, 72, 400)], box)
    other = edge_lines([run("Once only", 72, 760, 9), run("y " * 30, 72, 400)], box)
    blank = edge_lines([run("z " * 30, 72, 400)], box)
    assert repeated(mine, [other, blank, blank, blank]) == []


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        pytest.param("a, b; c", ("a", "b", "c"), id="mixed"),
        pytest.param("x,,x", ("x",), id="dedupe"),
        pytest.param("", (), id="empty"),
        pytest.param("财务；年报，预算、季度", ("财务", "年报", "预算", "季度"), id="cjk"),
        pytest.param("one\ntwo  words", ("one", "two words"), id="lines-and-spaces"),
    ],
)
def test_keywords_split(raw: str, expected: tuple[str, ...]) -> None:
    assert split_keywords(raw) == expected


def test_pdf_fixtures_are_small(fixture_dir: Path) -> None:
    """Deterministic builds: tests/test_fixture_files.py."""
    names = ("pdf_structure.pdf", "pdf_encrypted.pdf", "pdf_owner_only.pdf")
    assert all((fixture_dir / name).stat().st_size < 64_000 for name in names)


def test_marker_runs_make_a_list_not_a_table() -> None:
    runs = []
    for i, (marker, text) in enumerate([("1.", "First step"), ("2.", "Second"), ("3.", "Third")]):
        runs += [run(marker, 72, 700 - 14 * i), run(text, 86, 700 - 14 * i)]
    (block,) = blocks_of(runs)
    assert block.kind == "list"
    assert [(i["label"], i["text"]) for i in block.content["items"]] == [
        ("1.", "First step"),
        ("2.", "Second"),
        ("3.", "Third"),
    ]


def test_numbered_rows_of_three_cells_are_a_table() -> None:
    runs = []
    for i, cells in enumerate([("1.", "Rope", "3"), ("2.", "Paint", "7"), ("3.", "Nails", "11")]):
        runs += [run(cell, x, 700 - 14 * i) for cell, x in zip(cells, (72, 100, 200), strict=True)]
    (block,) = blocks_of(runs)
    assert block.kind == "table"
    assert block.content["rows"] == [["2.", "Paint", "7"], ["3.", "Nails", "11"]]


def test_prose_in_runs_is_no_table() -> None:
    words = "the harbor board agreed to take the next steps this spring"
    runs = []
    for i in range(4):
        runs += [run(words, 72, 700 - 12 * i), run(words, 360, 700 - 12 * i)]
    assert all(b.kind != "table" for b in blocks_of(runs))


def test_prose_set_glyph_by_glyph_is_no_table() -> None:
    lines = [
        "the harbor board met in spring",
        "and agreed on the next steps of",
        "the works along the east quay as",
        "the estimate of the costs allows",
    ]
    runs = []
    for i, line in enumerate(lines):
        x = 72.0
        for ch in line:
            if ch != " ":
                runs.append(run(ch, x, 700 - 12 * i))
            x += 5.0 if ch != " " else 3.0
    assert [b.kind for b in blocks_of(runs)] == ["text"]


def test_table_set_glyph_by_glyph() -> None:
    runs = []
    rows = [("Item", "Qty", "Price"), ("Rope", "3", "1.50"), ("Paint", "7", "2.25")]
    for i, row in enumerate(rows):
        for cell, x0 in zip(row, (72.0, 160.0, 220.0), strict=True):
            runs += [run(ch, x0 + 5.0 * k, 700 - 14 * i) for k, ch in enumerate(cell)]
    (block,) = blocks_of(runs)
    assert block.kind == "table"
    assert block.content["rows"] == [["Rope", "3", "1.50"], ["Paint", "7", "2.25"]]


@pytest.mark.parametrize(
    ("font", "glyph", "is_list"),
    [
        pytest.param("Wingdings-Regular", "l", True, id="wingdings-letter-is-a-disc"),
        pytest.param("Symbol", "\u2022", True, id="symbol-bullet"),
        pytest.param("Symbol", "\uf0b7", True, id="symbol-private-use"),
        pytest.param("Symbol", "{", False, id="symbol-brace"),
        pytest.param("Symbol", "\u2265", False, id="symbol-math-sign"),
        pytest.param("CMSY10", "{", False, id="latex-math-brace"),
    ],
)
def test_one_glyph_run_of_a_symbol_font(font: str, glyph: str, is_list: bool) -> None:
    runs = []
    for i, text in enumerate(["first item text", "second item text"]):
        runs += [run(glyph, 72, 700 - 14 * i, font=font), run(text, 86, 700 - 14 * i)]
    assert (blocks_of(runs)[0].kind == "list") is is_list
