"""A table read as a rectangular grid of display strings (`TableData`: merged ranges in A1
notation, nested tables, the items found in its cells), written to a page (`emit_table`): the
first row is the header row when the table has two rows or more; more data rows than a row
block holds are split into row-block elements (`extractors.kit.row_blocks`); a nested table
becomes its own table element and its parent cell shows `[table {id}]`."""

from __future__ import annotations

from dataclasses import dataclass, field

from dpe_server.extractors.kit.items import Item
from dpe_server.extractors.kit.row_blocks import RowBlock, split_rows
from dpe_server.model import summaries
from dpe_server.model.content import TableContent
from dpe_server.model.tree import JSON, Category, PageBuilder, parse_element_id

MAX_COLUMNS = 1024
"""Grid columns of one table at most: the rest of a wider (malformed) grid is dropped."""


NESTED_MARK = "\ufffc"
"""Stands in a cell's text for a nested table until its element id is known."""


@dataclass(slots=True)
class TableData:
    grid: list[list[str]]
    merged: list[str]
    nested: list[TableData] = field(default_factory=list)
    items: list[Item] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)


def _blocks_of(table: TableData) -> tuple[list[str], list[RowBlock[list[str]]]]:
    grid = table.grid
    headers, body = (grid[0], grid[1:]) if len(grid) >= 2 else ([], grid)
    return headers, split_rows(body, 1 if headers else 0)


def _plan(table: TableData, n: int, page: int) -> int:
    """Give `table` and its nested tables (pre-order) their ids from number `n`."""
    count = len(_blocks_of(table)[1])
    table.ids = [f"p{page}-tbl{n + i}" for i in range(count)]
    n += count
    for child in table.nested:
        n = _plan(child, n, page)
    return n


def _fill(text: str, table: TableData) -> str:
    if NESTED_MARK not in text:
        return text
    parts = text.split(NESTED_MARK)
    for i in range(1, len(parts), 2):
        parts[i] = f"[table {table.nested[int(parts[i])].ids[0]}]"
    return "".join(parts)


def emit_table(builder: PageBuilder, table: TableData, meta: dict[str, JSON]) -> list[Item]:
    """Add `table` (row blocks, then its nested tables) to the page; returns the cell items."""
    parts = parse_element_id(builder.next_id(Category.TABLE))
    assert parts is not None
    _plan(table, parts.n, builder.page_index)
    return _emit(builder, table, meta)


def _emit(builder: PageBuilder, table: TableData, meta: dict[str, JSON]) -> list[Item]:
    headers, blocks = _blocks_of(table)
    width = len(table.grid[0]) if table.grid else 0
    nested_ids = [t.ids[0] for t in table.nested]
    for block in blocks:
        if table.nested:
            head = [_fill(h, table) for h in headers]
            body = [[_fill(c, table) for c in row] for row in block.rows]
        else:
            head, body = headers, list(block.rows)
        content: TableContent = {
            "headers": head,
            "rows": body,
            "total_rows": len(body),
            "total_columns": width,
        }
        if nested_ids:
            content["nested_tables"] = nested_ids
        block_meta: dict[str, JSON] = dict(meta)
        if table.merged:
            block_meta["merged_cells"] = table.merged
        block.place(block_meta)
        builder.add(Category.TABLE, summaries.table(head, len(body), width), content, block_meta)
    items = list(table.items)
    for i, child in enumerate(table.nested):
        items.extend(_emit(builder, child, {"nested_in": table.ids[0], "nested_index": i + 1}))
    return items
