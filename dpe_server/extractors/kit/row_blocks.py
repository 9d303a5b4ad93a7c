"""Splitting a table's rows into row blocks, the same way in every format (SPEC §4).

A table of more than `TABLE_BLOCK_ROWS` body rows becomes several table elements; each one's
metadata says `row_block: {index, of, first_row, last_row}`: `index` from 0 of `of` blocks,
`first_row` and `last_row` the 1-based rows of the source table held here (the header row, when
there is one, is row 1). Each block's content repeats the header row and its `total_rows`
counts the block's own rows. A table that fits in one block has no `row_block`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from dpe_server.model.tree import JSON, TABLE_BLOCK_ROWS

Row = TypeVar("Row")


@dataclass(frozen=True, slots=True)
class RowBlock(Generic[Row]):
    """One block: its rows and where they sit in the source table."""

    index: int
    of: int
    rows: Sequence[Row]
    first_row: int
    last_row: int

    def mark(self) -> dict[str, JSON]:
        """The block's `row_block` metadata."""
        return {
            "index": self.index,
            "of": self.of,
            "first_row": self.first_row,
            "last_row": self.last_row,
        }

    def place(self, meta: dict[str, JSON]) -> None:
        """Add the `row_block` mark to `meta` when the table has more than one block."""
        if self.of > 1:
            meta["row_block"] = self.mark()


def split_rows(
    body: Sequence[Row], head_rows: int, size: int = TABLE_BLOCK_ROWS
) -> list[RowBlock[Row]]:
    """`body` (the rows under `head_rows` header rows) in blocks of at most `size` rows.

    A table without body rows is one empty block."""
    starts = range(0, len(body), size) if body else range(1)
    of = len(starts)
    blocks: list[RowBlock[Row]] = []
    for index, start in enumerate(starts):
        rows = body[start : start + size]
        first = head_rows + start + 1
        blocks.append(RowBlock(index, of, rows, first, first + len(rows) - 1))
    return blocks
