"""A dense sheet's cells (calamine's rows) as display strings, a few thousand rows at a time.

calamine hands its rows over one by one (`iter_rows`); each chunk of them is converted
column by column (`cells.display_rows`) and dropped, so the sheet's values are never held
as Python objects beside their display strings: a 50,000 x 10 sheet held both as 500,000
values and 500,000 strings, the strings alone are what the page keeps. What is kept across
chunks is each column's memo of repeated values (`cells.Memo`, at most 8,192 a column): a
date or a small whole number is converted once a sheet, not once a chunk.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable
from itertools import islice
from typing import Any, TypeVar

from dpe_server.extractors.xlsx.cells import Cell, Grid, Memo, SheetCells, display_rows
from dpe_server.extractors.xlsx.format import Styles, show_number
from dpe_server.extractors.xlsx.scan import SheetScan

T = TypeVar("T")

CHUNK_ROWS = 4096
"""Rows of values converted at once (about 2 MB of Python values for 10 columns)."""


def dense_cells(
    rows: Iterable[list[Any]],
    shape: tuple[int, int],
    origin: Cell,
    scan: SheetScan,
    *,
    styles: Styles,
    date1904: bool,
    max_cells: int,
) -> SheetCells:
    """calamine's rows (values, `""` empty) of a `shape` (height, width) rectangle as display
    strings, honouring number formats and error values; at most `max_cells` cells (whole
    rows: the page says `truncated`)."""
    height, width = shape
    keep, truncated = height, False
    if width and height * width > max_cells:
        keep, truncated = max(max_cells // width, 1), True
    r0, c0 = origin
    styled = _by_row(scan.styled, origin)
    errors = _by_row(scan.errors, origin)
    out: list[list[str]] = []
    memos: list[Memo] = []  # each column's strings by value, across the chunks
    source = islice(rows, keep)
    while chunk := list(islice(source, CHUNK_ROWS)):
        first = len(out)
        shown = display_rows(chunk, memos)
        end = first + len(chunk)
        for i, j, xf in _between(styled, first, end):
            raw = chunk[i - first]
            if 0 <= j < len(raw) and isinstance(v := raw[j], float):
                shown[i - first][j] = show_number(v, styles.format(xf), date1904)
        for i, j, text in _between(errors, first, end):
            row = shown[i - first]
            if 0 <= j < len(row):
                row[j] = text
        out.extend(shown)
        del chunk  # before the next chunk is taken: one chunk of values at a time
    return SheetCells([Grid(r0, c0, out)], truncated)


def _by_row(cells: dict[Cell, T], origin: Cell) -> list[tuple[int, int, T]]:
    """(row, col, value) relative to `origin`, sorted by row (cells above it left out)."""
    r0, c0 = origin
    return sorted(((r - r0, c - c0, v) for (r, c), v in cells.items() if r >= r0), key=_row)


def _row(entry: tuple[int, int, Any]) -> int:
    return entry[0]


def _between(entries: list[tuple[int, int, T]], first: int, end: int) -> list[tuple[int, int, T]]:
    """The entries of rows first..end-1 (`entries` sorted by row)."""
    if not entries or entries[-1][0] < first or entries[0][0] >= end:
        return []
    lo = bisect_left(entries, first, key=_row)
    hi = bisect_left(entries, end, key=_row)
    return entries[lo:hi]
