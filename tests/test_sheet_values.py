"""The value-only sheet path's shortcuts (xlsx/cells.py, extractors/gcpause.py): a column
converted with one pass over its types gives what a cell-by-cell conversion gives, a dense
grid is its own block, and the cyclic collector is paused only inside the block."""

from __future__ import annotations

import gc
from datetime import date, datetime
from typing import Any

import pytest

from dpe_server.extractors.gcpause import collector_paused
from dpe_server.extractors.xlsx.cells import Grid, _split, blocks, display_rows
from dpe_server.extractors.xlsx.format import CELL_MAX_CHARS, clip, show

COLUMNS: list[tuple[Any, ...]] = [
    ("Name", "a", "b"),
    ("Value", 1.0, 2.5),
    ("When", date(2020, 1, 2), date(2021, 3, 4)),
    (1.0, 2.0, 3.0),
    (date(2020, 1, 1), date(2020, 1, 2), date(2020, 1, 3)),
    (1.5, "x", 2.0),
    ("Mixed", 1.0, "x"),
    ("Stamp", datetime(2020, 1, 2, 3, 4), datetime(2020, 1, 2, 5, 6)),
    ("Flag", True, False),
    ("x" * (CELL_MAX_CHARS + 5), "y", "z"),
    ("Big", 1e20, -3.0),
    (2.0,),
    # .xls and .ods give whole numbers as int: int columns, and ints among floats
    ("Count", 1, -2, 30),
    (1, 2, 3),
    ("Amount", 569.2, 472, -3, 0.1),
    (472, 569.25, 1),
    ("Huge", 10**16, 2.5),
    ("Edge", 10**15 - 1, -(10**15) + 1, 0.5),
    ("Flags", 1, True),
]


def cell_by_cell(col: tuple[Any, ...]) -> list[str]:
    return [clip(v) if isinstance(v, str) else show(v) for v in col]


@pytest.mark.parametrize("col", COLUMNS, ids=range(len(COLUMNS)))
def test_a_column_displays_as_cell_by_cell(col: tuple[Any, ...]) -> None:
    assert [r[0] for r in display_rows([[v] for v in col])] == cell_by_cell(col)


@pytest.mark.parametrize(
    "rows",
    [
        [["a", "b"], ["1", "2"]],
        [["a", "b"], ["", "2"]],
        [["a", "", "c"], ["1", "", "3"]],
        [["a", "b"], ["", ""], ["c", "d"]],
        [["a", "b"], ["1"]],
        [],
    ],
)
def test_blocks_of_a_dense_grid_are_the_split_blocks(rows: list[list[str]]) -> None:
    grid = Grid(3, 2, rows)
    assert [(b.r0, b.c0, b.rows) for b in blocks(grid)] == [
        (b.r0, b.c0, b.rows) for b in _split(rows, 3, 2, 0)
    ]


def test_the_collector_is_paused_in_the_block_and_left_as_found() -> None:
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer block still holds it
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()  # a caller that had it off keeps it off
    finally:
        gc.enable()
    with pytest.raises(KeyError), collector_paused():
        raise KeyError
    assert gc.isenabled()
