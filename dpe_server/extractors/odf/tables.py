"""OpenDocument tables (`table:table` in a text or a presentation frame) as grids of strings,
in the shape of Word tables (`kit.tables.TableData`, emitted by `kit.tables.emit_table`):

- header rows (`table:table-header-rows`), row groups and `table:table-rows` are read in
  order; `number-rows-repeated` / `number-columns-repeated` repeat a row or cell (each at most
  `MAX_REPEAT` times, the grid at most `MAX_COLUMNS` wide);
- a spanned cell (`number-columns-spanned`, `number-rows-spanned`) keeps its text in its
  top-left cell, the covered cells are "", and `metadata.merged_cells` lists the ranges;
- a nested table becomes its own table element, its cell showing `[table {id}]`;
- the first row is the header row when the table has two rows or more (as for docx).
"""

from __future__ import annotations

from lxml import etree

from dpe_server.extractors.kit.a1 import range_ref
from dpe_server.extractors.kit.items import Item
from dpe_server.extractors.kit.tables import MAX_COLUMNS, NESTED_MARK, TableData
from dpe_server.extractors.odf.inline import InlineReader
from dpe_server.extractors.odf.package import TABLE, TEXT

MAX_REPEAT = 1024
MAX_ROWS = 100_000
_ROW_HOLDERS = frozenset(TABLE + t for t in ("table-header-rows", "table-rows", "table-row-group"))


def _count(el: etree._Element, attr: str) -> int:
    try:
        return max(1, min(int(el.get(TABLE + attr, "1")), MAX_REPEAT))
    except ValueError:
        return 1


def _rows(el: etree._Element) -> list[etree._Element]:
    out: list[etree._Element] = []
    for child in el:
        if child.tag == TABLE + "table-row":
            out.extend([child] * _count(child, "number-rows-repeated"))
        elif child.tag in _ROW_HOLDERS:
            out.extend(_rows(child))
        if len(out) >= MAX_ROWS:
            break
    return out[:MAX_ROWS]


def read_table(tbl: etree._Element, reader: InlineReader) -> TableData:
    """Read a `table:table` (and the tables nested in it); `reader` reads paragraphs."""
    nested: list[TableData] = []
    items: list[Item] = []
    grid: list[list[str]] = []
    merged: list[str] = []
    for r, row in enumerate(_rows(tbl)):
        cells: list[str] = []
        for cell in row:
            if cell.tag not in (TABLE + "table-cell", TABLE + "covered-table-cell"):
                continue
            text = (
                "" if cell.tag != TABLE + "table-cell" else _cell_text(cell, reader, nested, items)
            )
            repeat = _count(cell, "number-columns-repeated")
            cols = _count(cell, "number-columns-spanned")
            rows = _count(cell, "number-rows-spanned")
            if cols > 1 or rows > 1:
                c = len(cells)
                merged.append(range_ref(r, c, r + rows - 1, c + cols - 1))
            cells.extend([text] * min(repeat, MAX_COLUMNS - len(cells)))
            if len(cells) >= MAX_COLUMNS:
                break
        grid.append(cells)
    while len(grid) > 1 and not any(grid[-1]):
        grid.pop()  # repeated empty rows at the end (office suites write them)
    width = max((len(r) for r in grid), default=0)
    grid = [r + [""] * (width - len(r)) for r in grid]
    return TableData(grid, merged, nested, items)


def _cell_text(
    cell: etree._Element, reader: InlineReader, nested: list[TableData], items: list[Item]
) -> str:
    lines: list[str] = []
    for block in cell.iter(TEXT + "p", TEXT + "h", TABLE + "table"):
        if block.tag == TABLE + "table":
            if _owner(block, cell):
                nested.append(read_table(block, reader))
                lines.append(f"{NESTED_MARK}{len(nested) - 1}{NESTED_MARK}")
            continue
        if not _owner(block, cell):
            continue
        para = reader.paragraph(block)
        lines.append(para.text)
        items.extend(para.items)
    return "\n".join(lines).strip()


def _owner(el: etree._Element, cell: etree._Element) -> bool:
    """Whether `el` belongs to `cell` itself, not to a table nested in it."""
    parent = el.getparent()
    while parent is not None and parent is not cell:
        if parent.tag == TABLE + "table":
            return False
        parent = parent.getparent()
    return parent is cell
