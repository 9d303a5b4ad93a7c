"""Rows of a table with no rules between them whose cells wrap onto several lines.

An invoice's item table sets each item's id, quantity and amount on one line while its
description wraps onto the next; with no rule between the rows, the lines are not the rows.
The rows come from the columns that carry one value per item: a value column holds, under
the header, at least two cells and nothing but values (at most three words, 24 characters,
with a digit: amounts, quantities, ids, dates). A line that fills a value column starts a
row, as does a line more than 1.5 × its size under the one before it (a row of its own set
apart, as rows with padding are) unless the next line, close under it, starts one (the
upper line of a vertically centred cell). The other lines are wrapped lines: in each column,
the lines that follow each other closely make one piece of text, cut where a row starts; a
piece goes to the row it starts on, else to the row whose first line is nearest its middle
(a cell centred on its row). The lines above the first row are the header when the table
has one (a header cell wrapped onto two lines is one header row), else they go to the first
row the same way.

With no value column, or no wrapped line, there is nothing to gather: `item_rows` gives None
and its callers keep their own rows.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

_CLOSE = 1.5
"""Lines at most this many sizes apart are one cell's wrapped lines."""
_LEADER = re.compile(r"\.(?:[ \t]*\.){3,}[ \t]*$")
"""A dot leader at the end of a cell: its label ends there."""
_VALUE_WORDS = 3
_VALUE_CHARS = 24


@dataclass(slots=True)
class CellLine:
    """One line of a table: its baseline, its size and its text by column."""

    y: float
    size: float
    cells: dict[int, str]


def value_like(cell: str) -> bool:
    """A value: at most three words and 24 characters, with a digit."""
    return (
        len(cell) <= _VALUE_CHARS
        and len(cell.split()) <= _VALUE_WORDS
        and any(ch.isdigit() for ch in cell)
    )


def _value_columns(lines: Sequence[CellLine], start: int) -> set[int]:
    """The columns whose cells from `lines[start]` on are at least two values and nothing
    else."""
    out = set()
    for j in {j for ln in lines[start:] for j in ln.cells}:
        cells = [ln.cells[j] for ln in lines[start:] if ln.cells.get(j)]
        if len(cells) >= 2 and all(value_like(c) for c in cells):
            out.add(j)
    return out


def _first_row(lines: Sequence[CellLine], header: bool) -> tuple[int, set[int]]:
    """Where the rows start and the value columns from there on: the first line, or when
    `header` the first after the header's lines (the line before it and those following it
    closely that fill no value column)."""
    if not header:
        return 0, _value_columns(lines, 0)
    for i in range(1, len(lines)):
        values = _value_columns(lines, i)
        if values & set(lines[i].cells) or not _close(lines[i - 1], lines[i]):
            return i, values
    return len(lines), set()


def _close(upper: CellLine, lower: CellLine) -> bool:
    return upper.y - lower.y <= _CLOSE * max(upper.size, lower.size)


def _starts(lines: Sequence[CellLine], first: int, values: set[int]) -> list[int]:
    """The lines that start a row, from `first` on."""
    fills = [bool(values & set(ln.cells)) for ln in lines]
    starts = []
    for i in range(first, len(lines)):
        centred = i + 1 < len(lines) and fills[i + 1] and _close(lines[i], lines[i + 1])
        if fills[i] or ((i == first or not _close(lines[i - 1], lines[i])) and not centred):
            starts.append(i)
    return starts


def _gather(lines: Sequence[CellLine], cols: int, begin: int, starts: list[int]) -> list[list[str]]:
    """The rows that start at `starts`, each column's pieces of text from `lines[begin]` on
    going to the row they start on, else (a cell centred on its row) the one whose first line
    is nearest their middle, or the next one after a piece ended by a dot leader."""
    rows: list[list[list[str]]] = [[[] for _ in range(cols)] for _ in starts]
    at = {i: k for k, i in enumerate(starts)}
    for j in range(cols):
        piece: list[int] = []
        led = False
        for i in range(begin, len(lines) + 1):
            if i < len(lines) and not lines[i].cells.get(j):
                continue
            if piece and (
                i == len(lines)
                or i in at
                or not _close(lines[piece[-1]], lines[i])
                or _LEADER.search(lines[piece[-1]].cells[j])
            ):
                texts = [lines[p].cells[j] for p in piece]
                rows[_row_of(lines, starts, at, piece, led)][j] += texts
                led = bool(_LEADER.search(texts[-1]))
                piece = []
            if i < len(lines):
                piece.append(i)
    return [[" ".join(parts) for parts in row] for row in rows]


def _row_of(
    lines: Sequence[CellLine], starts: list[int], at: dict[int, int], piece: list[int], led: bool
) -> int:
    """The row of a column's piece of text: the one it starts on; after a piece ended by a dot
    leader, the next one (a label set flush with the bottom of its row, the value on its last
    line); else the one whose first line is nearest the piece's middle."""
    if piece[0] in at:
        return at[piece[0]]
    if led and (later := [k for k, i in enumerate(starts) if i > piece[0]]):
        return later[0]
    middle = (lines[piece[0]].y + lines[piece[-1]].y) / 2
    return min(range(len(starts)), key=lambda k: abs(lines[starts[k]].y - middle))


def item_rows(lines: Sequence[CellLine], cols: int, header: bool) -> list[list[str]] | None:
    """The rows of a table's lines (top to bottom) in `cols` columns, the header's lines
    joined into its first row when `header`; None when no value column starts two rows or no
    line is a wrapped one."""
    first, values = _first_row(lines, header)
    if not values:
        return None
    starts = _starts(lines, first, values)
    if len(starts) < 2 or (len(starts) + first == len(lines) and (not header or first == 1)):
        return None
    rows = _gather(lines, cols, first if header else 0, starts)
    return [_joined(lines[:first], cols), *rows] if header else rows


def _joined(lines: Sequence[CellLine], cols: int) -> list[str]:
    """One row of the lines, each cell's lines joined."""
    return [" ".join(ln.cells[j] for ln in lines if ln.cells.get(j)) for j in range(cols)]
