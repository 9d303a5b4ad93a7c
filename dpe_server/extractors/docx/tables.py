"""Word tables as rectangular grids of display strings.

- horizontal merges (`w:gridSpan`) and vertical merges (`w:vMerge` restart/continue) are
  resolved: the merged text sits in the top-left cell, covered cells are "", and every merge
  is listed in `metadata.merged_cells` as a range in A1 notation relative to the table
  (row 1 is the table's first row, column A its first grid column);
- `w:gridBefore` / `w:gridAfter` and short rows are padded with "";
- content controls and custom XML around rows and cells are unwrapped;
- a nested table becomes its own table element; the parent cell shows `[table {id}]`;
- the first row is the header row when the table has two rows or more; more than
  `TABLE_BLOCK_ROWS` data rows are split into row-block elements (`extractors.kit.row_blocks`).
"""

from __future__ import annotations

from lxml import etree

from dpe_server.extractors.docx.forms import sdt_field
from dpe_server.extractors.docx.pages import block_text
from dpe_server.extractors.docx.runs import InlineReader
from dpe_server.extractors.docx.xml import W, int_or, val
from dpe_server.extractors.kit.a1 import range_ref
from dpe_server.extractors.kit.forms import form_item
from dpe_server.extractors.kit.items import Item
from dpe_server.extractors.kit.tables import MAX_COLUMNS, NESTED_MARK, TableData

_WRAPPERS = (W + "sdt", W + "customXml", W + "ins", W + "moveTo")
_TC, _TCPR, _GRIDSPAN, _VMERGE = W + "tc", W + "tcPr", W + "gridSpan", W + "vMerge"
_P, _TBL, _TR, _TRPR, _SDT = W + "p", W + "tbl", W + "tr", W + "trPr", W + "sdt"
_VAL = W + "val"
MAX_SPAN = 64
"""Grid columns one cell may span, or a row may skip (Word tables have at most 63)."""


def _unwrap(el: etree._Element, tag: str) -> list[etree._Element]:
    out: list[etree._Element] = []
    for child in el:
        if child.tag == tag:
            out.append(child)
        elif child.tag in _WRAPPERS:
            inner = child.find(W + "sdtContent") if child.tag == W + "sdt" else child
            if inner is not None:
                out.extend(_unwrap(inner, tag))
    return out


_Cell = tuple[int, int, str, str | None]
"""(grid column, columns spanned, text, vMerge value or None)."""


def read_table(tbl: etree._Element, reader: InlineReader) -> TableData:
    """Read a `w:tbl` (and the tables nested in it) into a grid."""
    nested: list[TableData] = []
    items: list[Item] = []
    rows: list[list[_Cell]] = []
    width = 0
    for tr in _unwrap(tbl, _TR):
        trpr = tr.find(_TRPR)
        col = min(max(0, int_or(val(trpr, "gridBefore"), 0)), MAX_SPAN) if trpr is not None else 0
        cells: list[_Cell] = []
        for tc in _unwrap(tr, _TC):
            span, vmerge = 1, None
            tcpr = tc[0] if len(tc) and tc[0].tag == _TCPR else None
            if tcpr is not None:
                for prop in tcpr:
                    if prop.tag == _GRIDSPAN:
                        span = min(max(1, int_or(prop.get(_VAL), 1)), MAX_SPAN)
                    elif prop.tag == _VMERGE:
                        vmerge = prop.get(_VAL) or "continue"
            cells.append((col, span, _cell_text(tc, reader, nested, items), vmerge))
            col += span
        after = min(max(0, int_or(val(trpr, "gridAfter"), 0)), MAX_SPAN) if trpr is not None else 0
        width = max(width, col + after)
        rows.append(cells)
    if not rows:
        width = len(tbl.findall(f"{W}tblGrid/{W}gridCol"))
    grid, merged = _resolve(rows, min(width, MAX_COLUMNS))
    items.extend(_table_sdts(tbl))
    return TableData(grid, merged, nested, items)


def _table_sdts(tbl: etree._Element) -> list[Item]:
    """Content controls around rows and cells of this table (not of nested tables, not
    inside paragraphs: those are read with their own table or paragraph) as form items."""
    out: list[Item] = []
    for sdt in tbl.iter(_SDT):
        node = sdt.getparent()
        while node is not None and node is not tbl and node.tag not in (_P, _TBL):
            node = node.getparent()
        if node is not tbl:
            continue
        content = sdt.find(W + "sdtContent")
        value = block_text(content)[:2000].strip() if content is not None else ""
        fld = sdt_field(sdt.find(W + "sdtPr"), value)
        if fld is not None:
            out.append(form_item([fld], 1, "content_control"))
    return out


def _cell_text(
    tc: etree._Element, reader: InlineReader, nested: list[TableData], items: list[Item]
) -> str:
    lines: list[str] = []
    for block in tc:
        tag = block.tag
        if tag == _P:
            para = reader.paragraph(block)
            lines.append(para.text)
            if para.items:
                items.extend(para.items)
        elif tag == _TCPR:
            continue
        elif tag == _TBL:
            nested.append(read_table(block, reader))
            lines.append(f"{NESTED_MARK}{len(nested) - 1}{NESTED_MARK}")
        elif tag in _WRAPPERS:
            inner = block.find(W + "sdtContent") if tag == W + "sdt" else block
            if inner is not None:
                lines.append(_cell_text(inner, reader, nested, items))
    if len(lines) == 1:
        return lines[0].strip()
    return "\n".join(lines).strip()


def _resolve(rows: list[list[_Cell]], width: int) -> tuple[list[list[str]], list[str]]:
    grid = [[""] * width for _ in rows]
    spans: dict[tuple[int, int], list[int]] = {}
    """(row, col) of a merge's top-left cell → [rows, cols]."""
    above: dict[int, tuple[int, int]] = {}
    """column → (row, col) of the merge anchor a vMerge continue cell joins."""
    for r, cells in enumerate(rows):
        row = grid[r]
        for col, span, text, vmerge in cells:
            if col >= width:
                continue
            if vmerge == "continue" and r > 0:
                anchor = above.get(col)
                if anchor is not None:
                    ar, ac = anchor
                    spans[anchor][0] = r - ar + 1
                    if text:
                        grid[ar][ac] = f"{grid[ar][ac]}\n{text}".strip()
                    continue
            row[col] = text
            if span > 1 or vmerge == "restart":
                spans[(r, col)] = [1, span]
            if above:
                for c in range(col, min(col + span, width)):
                    above.pop(c, None)
            if vmerge == "restart":
                above[col] = (r, col)
    merged = [
        range_ref(r, c, r + nr - 1, c + nc - 1)
        for (r, c), (nr, nc) in sorted(spans.items())
        if nr > 1 or nc > 1
    ]
    return grid, merged
