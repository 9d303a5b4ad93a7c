"""Tables with no rules between their rows whose cells wrap (`pdf_wrapped`): the rows come from
the baselines of the columns that carry one value per item, on the invoice fixture written
as an office suite writes one (fixtures/builders/pdf_tables.py) and on lines built here."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpe_server.extractors import DEFAULT_LIMITS
from dpe_server.extractors.pdf import extract as pdf_mod
from dpe_server.extractors.pdf.aligned import table_rows
from dpe_server.extractors.pdf.blocks import Block
from dpe_server.extractors.pdf.collect import Run, Segment
from dpe_server.extractors.pdf.lines import make_lines
from dpe_server.extractors.pdf.tables import find_grids, ruled_tables
from dpe_server.extractors.pdf.wrapped import CellLine, item_rows
from dpe_server.model.tree import Category, Document, Page
from tests.extractors.test_pdf_layout import blocks_of, run

HEADER = ["Item", "Description", "Qty", "Unit price", "Tax rate", "Amount"]
ROWS = [
    ["A-100", "Mooring rope, polyester, 24 mm, per metre", "120", "3.20", "20 %", "384.00"],
    ["B-220", "Anti-fouling paint", "6", "48.50", "20 %", "291.00"],
    ["C-310", "Stainless shackles with captive pin, pack of 10", "4", "19.90", "20 %", "79.60"],
    ["D-405", "Labour, hull inspection", "3", "65.00", "20 %", "195.00"],
]


@pytest.fixture(scope="module")
def invoices(fixture_dir: Path) -> Document:
    with (fixture_dir / "pdf_invoice_tables.pdf").open("rb") as f:
        return pdf_mod.extract(f, DEFAULT_LIMITS)


def _table(page: Page) -> dict[str, object]:
    (table,) = [el for el in page.elements if el.category is Category.TABLE]
    return {"ruled": table.metadata.get("ruled"), **table.content}


@pytest.mark.parametrize(
    ("index", "ruled"),
    [
        pytest.param(0, False, id="no-rules"),
        pytest.param(2, True, id="frame-and-column-rules"),
        pytest.param(3, True, id="frame-and-header-rule"),
    ],
)
def test_wrapped_descriptions_stay_in_their_item_row(
    invoices: Document, index: int, ruled: bool
) -> None:
    """One row per item, its description's two lines in its cell, beside its own amount."""
    table = _table(invoices.pages[index])
    assert table["headers"] == HEADER
    assert table["rows"] == ROWS
    assert table["ruled"] is ruled
    texts = [str(el.content.get("text")) for el in invoices.pages[index].elements]
    assert any(t.startswith("TABLESENT total due") for t in texts)


def test_header_wrapped_onto_two_lines_is_one_header_row(invoices: Document) -> None:
    table = _table(invoices.pages[1])
    assert table["headers"] == HEADER
    assert table["rows"] == ROWS


def _lines(*rows: tuple[float, dict[int, str]], size: float = 9.0) -> list[CellLine]:
    return [CellLine(y, size, cells) for y, cells in rows]


def test_cell_centred_on_its_row_goes_to_it() -> None:
    """A description centred on its row (its first line above the amount's, its second under
    it) belongs to that row, not to the one above."""
    lines = _lines(
        (700, {0: "Item", 1: "Amount"}),
        (682, {0: "Rope"}),
        (677, {1: "3.00"}),
        (671, {0: "per metre"}),
        (650, {0: "Paint", 1: "8.00"}),
    )
    assert item_rows(lines, 2, header=True) == [
        ["Item", "Amount"],
        ["Rope per metre", "3.00"],
        ["Paint", "8.00"],
    ]


def test_label_ending_in_a_leader_ends_its_row() -> None:
    """Labels set flush with the bottom of their row, each ending in a dot leader before its
    value: a label's first line goes with the value under it, not the row above."""
    lines = _lines(
        (700, {0: "Weekly . . . . . .", 1: "75.00"}),
        (690, {0: "Annually . . . . .", 1: "3,900.00"}),
        (680, {0: "Daily (each day of the"}),
        (670, {0: "period) . . . . . .", 1: "15.00"}),
    )
    assert item_rows(lines, 2, header=False) == [
        ["Weekly . . . . . .", "75.00"],
        ["Annually . . . . .", "3,900.00"],
        ["Daily (each day of the period) . . . . . .", "15.00"],
    ]


@pytest.mark.parametrize(
    "lines",
    [
        pytest.param(
            _lines((700, {0: "Name", 1: "Note"}), (690, {0: "north shore"}), (680, {1: "calm"})),
            id="no-value-column",
        ),
        pytest.param(
            _lines((700, {0: "Rope", 1: "3.00"}), (690, {0: "Paint", 1: "8.00"})),
            id="nothing-wraps",
        ),
        pytest.param(
            _lines((700, {0: "North", 1: "450"}), (673, {0: "South"}), (646, {0: "East", 1: "9"})),
            id="sparse-rows-set-apart",
        ),
    ],
)
def test_nothing_to_gather(lines: list[CellLine]) -> None:
    """No value column, every line a row already, or lines set apart (sparse rows of their
    own): the callers keep their rows."""
    assert item_rows(lines, 2, header=False) is None


def test_prose_framed_with_rules_between_its_columns_is_no_table() -> None:
    """A frame with rules between its columns is a one-band grid: prose in it, with no
    column of values, stays text."""
    xs = [72.0, 232.0, 392.0, 552.0]
    segs = [Segment(72, y, 552, y) for y in (700, 600)] + [Segment(x, 600, x, 700) for x in xs]
    runs = [
        run(f"column {j} prose line {i} runs on", x + 4, 690 - 11 * i, 9)
        for j, x in enumerate(xs[:-1])
        for i in range(6)
    ]
    assert len(find_grids(segs)) == 1
    tables, rest = ruled_tables(runs, segs)
    assert tables == []
    assert rest == runs


def _crew(header: list[Run]) -> list[Block]:
    """A borderless table of words (no value column) under `header`, rows 18 pt apart."""
    runs = list(header)
    for i, (name, role, port) in enumerate(
        [("Anna", "Pilot", "Kiel"), ("Ben", "Engineer", "Oslo"), ("Cleo", "Cook", "Riga")]
    ):
        y = 682 - 18 * i
        runs += [run(name, 57, y, 9), run(role, 150, y, 9), run(port, 300, y, 9)]
    return blocks_of(runs)


@pytest.mark.parametrize(
    "wrapped",
    [
        pytest.param([run("Home", 300, 700, 9), run("port", 300, 689, 9)], id="top-aligned"),
        pytest.param([run("Home", 300, 711, 9), run("port", 300, 700, 9)], id="bottom-aligned"),
    ],
)
def test_header_cell_wrapped_in_a_table_of_words_is_one_header(wrapped: list[Run]) -> None:
    """A header cell wrapped onto two lines, the other cells on its lower or upper line, in
    a table with no column of values: one header row, the table whole."""
    header = [run("Name", 57, 700, 9), run("Role", 150, 700, 9), *wrapped]
    (table,) = _crew(header)
    assert table.kind == "table"
    assert table.content["headers"] == ["Name", "Role", "Home port"]
    assert table.content["rows"] == [
        ["Anna", "Pilot", "Kiel"],
        ["Ben", "Engineer", "Oslo"],
        ["Cleo", "Cook", "Riga"],
    ]


def test_line_at_a_tables_left_edge_is_no_upper_header_line() -> None:
    """A line close above a table's header that starts at its left edge (a caption, a
    title) is not the upper line of its header cells; the table starts under it."""
    caption = run("Crew", 57, 711, 9)
    header = [run("Name", 57, 700, 9), run("Role", 150, 700, 9), run("Port", 300, 700, 9)]
    rows = [
        [run("Anna", 57, 682 - 18 * i, 9), run("Pilot", 150, 682 - 18 * i, 9)] for i in range(3)
    ]
    lines = make_lines([caption, *header, *(r for row in rows for r in row)])
    assert table_rows(lines, 0) == ([], 0)
    assert table_rows(lines, 1)[0][0] == ["Name", "Role", "Port"]
