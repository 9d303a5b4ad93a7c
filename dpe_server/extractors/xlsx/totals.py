"""Total rows: a row under a table, after at most one blank row, whose first cell says
Total (合计, 总计…) or whose cells are SUM formulas over the columns above, belongs to
that table (the table's `total_row_index` names it) instead of being a table of its own.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from dpe_server.extractors.kit.a1 import col_letters
from dpe_server.extractors.xlsx.cells import Grid

TOTAL_LABELS = frozenset(
    {"total", "totals", "grand total", "subtotal", "sum", "合计", "总计", "小计", "合計", "總計"}
)
MAX_GAP = 1
"""Blank rows that may separate a table from its total row."""

_SUM = re.compile(r"^SUM\(\$?([A-Z]{1,3})\$?\d+:\$?([A-Z]{1,3})\$?\d+\)$", re.IGNORECASE)

FormulaAt = Callable[[int, int], str]
"""The formula text (without `=`) of a cell, "" when it holds none."""


def is_total_label(text: str) -> bool:
    return text.strip().rstrip(":：").strip().casefold() in TOTAL_LABELS


def sums_column_above(formula: str, col: int) -> bool:
    """`SUM(B2:B9)` held in column B: the total of the column above."""
    m = _SUM.match(formula.strip())
    letters = col_letters(col)
    return m is not None and m.group(1).upper() == letters == m.group(2).upper()


def is_total_row(row: Sequence[str], r: int, c0: int, formula_at: FormulaAt) -> bool:
    """The first non-empty cell is a total label, or every non-empty cell past a text label
    is a SUM over its own column."""
    filled = [(j, v) for j, v in enumerate(row) if v]
    if not filled:
        return False
    if is_total_label(filled[0][1]):
        return True
    sums = [sums_column_above(formula_at(r, c0 + j), c0 + j) for j, _ in filled]
    return all(sums[1:]) and (sums[0] or len(sums) > 1)


def total_below(table: Grid, below: Grid, formula_at: FormulaAt) -> list[str] | None:
    """`below` as the total row of `table` (padded to its columns), or None."""
    table_end = table.r0 + len(table.rows) - 1
    if len(below.rows) != 1 or not 1 <= below.r0 - table_end <= MAX_GAP + 1:
        return None
    if below.c0 < table.c0 or below.c0 + below.width > table.c0 + table.width:
        return None
    if not is_total_row(below.rows[0], below.r0, below.c0, formula_at):
        return None
    row = [""] * table.width
    offset = below.c0 - table.c0
    row[offset : offset + below.width] = below.rows[0]
    return row
