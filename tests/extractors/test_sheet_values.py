"""The value-only sheet path's shortcuts (xlsx/cells.py, extractors/gcpause.py): a column
converted with one pass over its types gives what a cell-by-cell conversion gives, a dense
grid is its own block, and the cyclic collector is paused only inside the block."""

from __future__ import annotations

import gc
import random
from datetime import date, datetime
from typing import Any

import pytest

from dpe_server.extractors.gcpause import collector_paused
from dpe_server.extractors.xlsx import cells
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
    # floats shown from their repr where it is short: every case where repr and 15 digits differ
    ("Sums", 0.1 + 0.2, 1e-05, 1.5e-07, 0.0001, 2e16, 1.2345e20, 5.0, -0.0, 0.5),
    ("Long", 123456789012345.6, 1e15 + 0.5, 1234.5678901234567, -0.000123456789012345, 0.25),
    ("Odd", float("nan"), float("inf"), float("-inf"), 0.75),
    # whole floats, all distinct (each converted: `int.__repr__` of its int), at the edges
    (-0.0, 0.0, 1e15 - 1, -(1e15 - 1), 2.0**49, -3.0, 123456789.0),
    ("Whole", -0.0, 1e15 - 1, 1e15, -1e16, 7.0),
    # repeated values converted once each (dates, whole numbers)
    ("Days", *[date(2020, 1, 1 + i % 3) for i in range(9)]),
    ("Ids", *[i % 4 - 2 for i in range(9)]),
]


def cell_by_cell(col: tuple[Any, ...]) -> list[str]:
    return [clip(v) if isinstance(v, str) else show(v) for v in col]


@pytest.mark.parametrize("col", COLUMNS, ids=range(len(COLUMNS)))
def test_a_column_displays_as_cell_by_cell(col: tuple[Any, ...]) -> None:
    assert [r[0] for r in display_rows([[v] for v in col])] == cell_by_cell(col)


def test_random_floats_display_as_cell_by_cell() -> None:
    rng = random.Random(7)
    col = tuple(
        round(rng.uniform(-1, 1) * 10 ** rng.randint(-12, 18), rng.randint(0, 17))
        for _ in range(20_000)
    )
    assert [r[0] for r in display_rows([[v] for v in ("Random", *col)])] == cell_by_cell(
        ("Random", *col)
    )


def _chunks() -> list[list[tuple[Any, ...]]]:
    """Columns of chunks of rows: values repeating across chunks (each chunk's distinct
    values fewer than half its rows), new ones appearing later, and a column whose type
    changes from chunk to chunk (ints, whole floats, dates, booleans)."""
    days = [date(2020, 1, 1 + i % 28) for i in range(3)]
    wholes = [0.0, -0.0, 1.0, -7.0, 1e15 - 1, -(1e15 - 1), 42.0]
    ints = [0, -1, 10**15, 10**16, 10**20, -(10**18), 7]
    chunks = []
    for k in range(6):
        rows = 64
        chunk = [
            tuple(date(2020, 1 + k % 12, 1 + i % (3 + k)) for i in range(rows)),
            tuple(wholes[(i + k) % (len(wholes) - (k % 3))] for i in range(rows)),
            tuple(ints[(i * k) % len(ints)] for i in range(rows)),
            (
                tuple(days[i % 3] for i in range(rows)),
                tuple(float(i % 5) for i in range(rows)),
                tuple(i % 5 for i in range(rows)),
                tuple(i % 2 == 0 for i in range(rows)),
                tuple((1e16, 1e15, 0.1 + 0.2, -0.0, 2.0)[i % 5] for i in range(rows)),
                tuple(("Total", True, 1, 1.0)[i % 4] for i in range(rows)),
            )[k],
        ]
        chunks.append(chunk)
    return chunks


MIXED_BELOW: list[tuple[Any, ...]] = [
    # a float or a text second, another type further down: the untyped shortcut raises there
    (1.0, 2.0, True, 3.0),
    (1.0, 2.0, "", 3.0),
    (1.0, 2.5, "x"),
    (0.5, 1.5, 1),
    (1.0, 2.0, 10**16),
    (-0.0, 1e15, date(2020, 1, 1)),
    ("H", 1.0, 2.0, ""),
    ("H", 0.1 + 0.2, False),
    ("H", 1e16, datetime(2020, 1, 2, 3, 4)),
    ("H", "a", 1.0),
    ("H", "a", True),
    ("H", "a", date(2021, 3, 4)),
    ("H", "a", "x" * (CELL_MAX_CHARS + 1), 5),
]


def test_columns_of_another_type_below_display_as_cell_by_cell() -> None:
    """Columns the untyped shortcut takes up and gives back (a value of another type below)
    give what each cell converted alone gives, and leave no wrong string in the memos."""
    memos: list[cells.Memo] = []
    for _ in range(2):
        shown = display_rows([list(row) for row in zip(*MIXED_BELOW, strict=False)], memos)
        assert [list(c) for c in zip(*shown, strict=True)] == [
            cell_by_cell(c[: len(shown)]) for c in MIXED_BELOW
        ]
        for col in MIXED_BELOW:
            assert [r[0] for r in display_rows([[v] for v in col], memos)] == cell_by_cell(col)


@pytest.mark.parametrize("memo_max", [8192, 3])
def test_chunks_converted_with_memos_display_as_cell_by_cell(
    memo_max: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sheet's chunks converted with the memos of its earlier chunks (dense.py) give what
    each cell converted alone gives, also when a memo is emptied at its bound."""
    monkeypatch.setattr(cells, "_MEMO_MAX", memo_max)
    memos: list[cells.Memo] = []
    for chunk in _chunks():
        shown = display_rows([list(row) for row in zip(*chunk, strict=True)], memos)
        assert [list(c) for c in zip(*shown, strict=True)] == [cell_by_cell(c) for c in chunk]
    assert memos[0][date.isoformat]
    assert memos[1][cells._WHOLE]
    assert memos[2][int.__repr__]
    # a chunk adds at most its distinct values (8) to a memo at most `memo_max` long
    assert all(len(m) <= memo_max + 8 for memo in memos for m in memo.values())


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


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ([[1.0, "a"], [2.5]], [["1", "a"], ["2.5", ""]]),
        ([[1.0], [2.0, "b"], []], [["1", ""], ["2", "b"], ["", ""]]),
        ([[], []], []),
    ],
)
def test_rows_of_other_widths_are_padded(raw: list[list[Any]], expected: list[list[str]]) -> None:
    assert display_rows(raw) == expected


def test_a_whole_number_memo_answers_only_for_whole_floats_in_range() -> None:
    """The whole-float memo answers a chunk only when every value is a known whole float:
    1e16 beside known values, a boolean or an int equal to a known float go the exact way."""
    memos: list[cells.Memo] = []
    for col in [
        (1.0, 2.0) * 40,
        (1.0, 1e16, 2.0) * 30,
        (1.0, 2.0, True) * 30,
        (2.0, 1.0, 1) * 30,
        (1.0, 2.0) * 40,
    ]:
        assert [r[0] for r in display_rows([[v] for v in col], memos)] == cell_by_cell(col)
    assert set(memos[0][cells._WHOLE]) == {1.0, 2.0}
