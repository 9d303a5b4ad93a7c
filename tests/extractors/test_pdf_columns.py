"""Pdf column detection: what is read before, inside and after two columns.

A line above the columns with words at both ends (a running header's page number and date)
is read before the columns when blank space across the whole page parts it from them; blank
space across both columns inside the column text does not cut the columns into bands.
"""

from __future__ import annotations

import io

from reportlab.pdfgen import canvas

from dpe_server.extractors import DEFAULT_LIMITS
from dpe_server.extractors.pdf import extract as pdf_mod
from dpe_server.extractors.pdf.collect import Run
from dpe_server.extractors.pdf.lines import reading_groups
from dpe_server.model.tree import Category, Page
from tests.extractors.test_pdf_layout import run

PROSE = "the employer withholds the tax of every worker in each pay period"


def texts_of(page: Page) -> list[str]:
    return [
        str(e.content["text"])
        for e in page.elements
        if e.category in (Category.TEXT, Category.HEADING)
    ]


def test_line_above_the_columns_is_read_first() -> None:
    top = [run("Page 1 of 67", 42, 876, 14), run("15:46 - 5-Feb-2013", 451, 876, 14)]
    left = [run(f"cover line {i} of the left column here", 42, 750 - 14 * i) for i in range(4)]
    right = [run(f"right prose line {i} {PROSE[:30]}", 315, 750 - 14 * i) for i in range(4)]
    groups = [[r.text for r in g] for g in reading_groups([*right, *left, *top])]
    assert groups[0] == ["Page 1 of 67"]
    assert groups[1] == ["15:46 - 5-Feb-2013"]
    assert groups[2] == [r.text for r in left]
    assert groups[3] == [r.text for r in right]


def test_blank_space_across_both_columns_keeps_the_columns_whole() -> None:
    """Figures at the same height in both columns leave blank space across the page: the
    left column is still read to its end before the right one."""
    left = [run(f"left line {i} {PROSE[:34]}", 42, 750 - 14 * i) for i in range(4)]
    left += [run(f"left below {i} {PROSE[:33]}", 42, 500 - 14 * i) for i in range(4)]
    right = [run(f"right line {i} {PROSE[:33]}", 315, 750 - 14 * i) for i in range(4)]
    right += [run(f"right below {i} {PROSE[:32]}", 315, 500 - 14 * i) for i in range(4)]
    groups = [[r.text for r in g] for g in reading_groups([*right, *left])]
    assert groups == [[r.text for r in left], [r.text for r in right]]


def _two_columns(
    top: float, rows: int, gutter: float, size: float = 8.0
) -> tuple[list[Run], list[Run]]:
    """Two columns of prose lines 168 pt wide, `gutter` apart, from `top` down."""
    left: list[Run] = []
    right: list[Run] = []
    for i in range(rows):
        y = top - 9 * i
        left.append(Run(f"left {i} " + PROSE[:30], 132, 300, y, size, "Times", False, False))
        right.append(
            Run(
                f"right {i} " + PROSE[:29],
                300 + gutter,
                468 + gutter,
                y,
                size,
                "Times",
                False,
                False,
            )
        )
    return left, right


def test_a_gutter_narrower_than_one_and_a_half_em_parts_the_columns() -> None:
    """Lines of the two columns 11 pt apart in 8 pt type are two columns, not one line."""
    left, right = _two_columns(600, 8, 11.0)
    groups = [[r.text for r in g] for g in reading_groups([*left, *right])]
    assert groups == [[r.text for r in left], [r.text for r in right]]


def test_columns_above_a_wide_table_are_found_in_their_half() -> None:
    """A table under the columns crosses the gutter on every row (more rows than a page may
    have crossing it): the gutter is found in the upper half, the columns are read one after
    the other and the table's rows follow them."""
    left, right = _two_columns(600, 10, 12.0)
    table = []
    for i in range(12):
        y = 500 - 7 * i
        table += [
            Run(f"Company {i}", 132, 206, y, 6.0, "Times", False, False),
            Run(f"0071-{i:04}", 298, 332, y, 6.0, "Times", False, False),
            Run(f"{i}.00", 460, 480, y, 6.0, "Times", False, False),
        ]
    groups = [[r.text for r in g] for g in reading_groups([*table, *right, *left])]
    assert groups[0] == [r.text for r in left]
    assert groups[1] == [r.text for r in right]
    assert groups[2][:3] == ["Company 0", "0071-0000", "0.00"]


def test_lines_on_one_side_between_lines_across_stay_in_the_flow() -> None:
    """A code listing across the columns whose shorter lines end before the gutter is one
    group, not cut at every short line."""
    left, right = _two_columns(400, 6, 12.0)
    listing = []
    for i in range(6):
        end = 330 if i % 2 else 280
        listing.append(Run(f"code line {i}", 132, end, 600 - 9 * i, 8.0, "Courier", False, True))
    groups = [[r.text for r in g] for g in reading_groups([*listing, *left, *right])]
    assert groups[0] == [r.text for r in listing]


def _cover_pdf() -> bytes:
    """A cover page shaped as the corpus's tax guide: page number and time at the two ends of
    the top line, then a narrow cover column beside the contents and prose column."""
    buf = io.BytesIO()
    c = canvas.Canvas(buf, pagesize=(612, 936), invariant=1)
    c.setFont("Helvetica-Bold", 14)
    c.drawString(42, 876, "Page 1 of 2")
    c.drawRightString(570, 876, "15:46 - 5-Feb-2013")
    c.setFont("Helvetica", 10)
    c.drawString(42, 750, "Department of the Treasury")
    c.setFont("Helvetica-Bold", 20)
    for i, text in enumerate(
        ["Publication 15 (Circular", "E), Employer's Tax Guide", "for use in 2013"]
    ):
        c.drawString(42, 700 - 30 * i, text)
    c.setFont("Helvetica-Bold", 15)
    c.drawString(315, 750, "Contents")
    c.setFont("Helvetica", 10)
    for i in range(12):
        c.drawString(315, 726 - 12 * i, f"Line {i + 1} of {PROSE}"[:52])
    c.showPage()
    c.save()
    return buf.getvalue()


def test_cover_page_reads_its_top_line_before_the_columns() -> None:
    (page,) = pdf_mod.extract_pages(io.BytesIO(_cover_pdf()), [0], DEFAULT_LIMITS)
    texts = texts_of(page)
    assert texts[:2] == ["Page 1 of 2", "15:46 - 5-Feb-2013"]
    assert texts.index("Department of the Treasury") < texts.index("Contents")


def _register_pdf() -> bytes:
    """A page set as the federal register's: two columns of prose, then a wide table ruled
    above and under its header and under its last row, with rules between its columns but
    none down its sides, then two columns again."""
    buf = io.BytesIO()
    c = canvas.Canvas(buf, pagesize=(612, 792), invariant=1)
    c.setFont("Times-Roman", 8)
    for i in range(6):
        c.drawString(132, 700 - 9 * i, f"above left {i} {PROSE[:26]}")
        c.drawString(312, 700 - 9 * i, f"above right {i} {PROSE[:25]}")
    c.setLineWidth(0.5)
    for y in (630, 612, 560):
        c.line(132, y, 480, y)
    for x in (210, 290, 370):
        c.line(x, 560, x, 630)
    c.setFont("Helvetica", 6)
    for x, head in zip(
        (134, 212, 292, 372), ("Company", "Trade name", "Form", "Amount"), strict=True
    ):
        c.drawString(x, 619, head)
    for i in range(6):
        y = 603 - 7 * i
        c.drawString(134, y, f"Laboratory {i} ....")
        c.drawString(212, y, f"Elixir {i}")
        c.drawString(292, y, "TB")
        c.drawRightString(478, y, f"{i}.50")
    c.setFont("Times-Roman", 8)
    for i in range(6):
        c.drawString(132, 530 - 9 * i, f"below left {i} {PROSE[:26]}")
        c.drawString(312, 530 - 9 * i, f"below right {i} {PROSE[:25]}")
    c.showPage()
    c.save()
    return buf.getvalue()


def test_wide_table_between_columns_keeps_every_column_and_row() -> None:
    """The table's first and last columns, outside its vertical rules, are cells; each line
    of its body is a row; the columns above and under it are read down, in that order."""
    (page,) = pdf_mod.extract_pages(io.BytesIO(_register_pdf()), [0], DEFAULT_LIMITS)
    (table,) = [e for e in page.elements if e.category == Category.TABLE]
    assert table.content["headers"] == ["Company", "Trade name", "Form", "Amount"]
    assert table.content["rows"] == [
        [f"Laboratory {i}", f"Elixir {i}", "TB", f"{i}.50"] for i in range(6)
    ]
    texts = texts_of(page)
    assert [t.split(" ", 2)[:2] for t in texts] == [
        ["above", "left"],
        ["above", "right"],
        ["below", "left"],
        ["below", "right"],
    ]
    order = [e.category for e in page.elements]
    assert order.index(Category.TABLE) == 2
