"""Sheets known only by their cell values and merged ranges (.xls, .xlsb, .ods through
calamine; .csv, .tsv): what such a sheet is (`ValueSheet`), and its page (`values_page`), laid
out as an xlsx sheet's cells are. The layout is xlsx's (`xlsx.values`): the registry hands it
over (`lay_out_values_with`), so that no format imports another."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dpe_server.extractors.base import Limits
from dpe_server.extractors.kit.handed import Handed
from dpe_server.model.tree import Page


@dataclass(frozen=True, slots=True)
class ValueSheet:
    name: str
    rows: list[list[Any]]
    """Cell values by row (str, float, int, bool, dates; `""` for an empty cell)."""
    origin: tuple[int, int] = (0, 0)
    """(row, col), 0-based, of `rows[0][0]` in the sheet."""
    merged: tuple[tuple[int, int, int, int], ...] = ()
    """Merged ranges (row0, col0, row1, col1), inclusive, 0-based."""
    hidden: bool = False
    kind: str = "worksheet"
    """The page's `sheet_type`: worksheet, chartsheet, dialogsheet or macrosheet."""


ValuesLayout = Callable[[int, ValueSheet, Limits, int], tuple[Page, int]]
"""`layout(index, sheet, limits, max_cells)`: the sheet's page and the cells it used of the
`max_cells` left to the workbook."""
_LAYOUT: Handed[ValuesLayout] = Handed("cell layout for the value sheets")


def lay_out_values_with(layout: ValuesLayout) -> None:
    """Lay value sheets out with `layout` (the registry hands over xlsx's)."""
    _LAYOUT.give(layout)


def values_page(index: int, sheet: ValueSheet, limits: Limits, max_cells: int) -> tuple[Page, int]:
    """The sheet's page and the cells it used of the `max_cells` left to the workbook."""
    return _LAYOUT.get()(index, sheet, limits, max_cells)
