"""A web page's `<table>` read as a grid (`colspan` and `rowspan` placed, the spanned cells
named in A1 notation, a cell's text at its top-left), its `<caption>`; the header row is the
first, as for every format (`kit.tables`). A table nested in a cell is a table of its own
(`TableData.nested`): its element follows its parent's, the cell says `[table {id}]`."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from lxml import etree

from dpe_server.extractors.html.visible import HIDDEN, tag
from dpe_server.extractors.kit.a1 import range_ref
from dpe_server.extractors.kit.items import Item
from dpe_server.extractors.kit.tables import MAX_COLUMNS, TableData

InlineOf = Callable[[etree._Element, list[TableData] | None], tuple[str, list[Item]]]
"""`inline_of(el, nested)`: the text and items of a cell (a table inside it added to `nested`
and named by its place) or, `nested` None, of a caption (a table inside it read as text)."""
MAX_SPAN = 1000
"""Rows or columns one cell spans at most (HTML caps `colspan` at 1000)."""
_SECTIONS = frozenset({"thead", "tbody", "tfoot"})


def _rows(table: etree._Element, marks: Mapping[etree._Element, str]) -> list[etree._Element]:
    """The table's own rows (not those of a table nested in a cell), the header first."""
    head: list[etree._Element] = []
    body: list[etree._Element] = []
    foot: list[etree._Element] = []
    for child in table:
        name = tag(child)
        if marks.get(child) is HIDDEN:
            continue
        if name == "tr":
            body.append(child)
        elif name in _SECTIONS:
            rows = [r for r in child if tag(r) == "tr" and marks.get(r) is not HIDDEN]
            {"thead": head, "tbody": body, "tfoot": foot}[name].extend(rows)
    return head + body + foot


def _span(value: str | None) -> int:
    value = (value or "").strip()
    return min(max(int(value), 1), MAX_SPAN) if value.isdigit() else 1


def read_table(
    el: etree._Element, inline_of: InlineOf, marks: Mapping[etree._Element, str]
) -> tuple[TableData, str] | None:
    """The table's grid and its caption's text; None when it has no cell. `marks` are the
    tree's (`visible.marks`): a hidden element is marked `HIDDEN`, asked of a dictionary
    rather than of each cell's attributes."""
    caption = ""
    for child in el:
        if tag(child) == "caption" and marks.get(child) is not HIDDEN:
            caption = inline_of(child, None)[0]
    grid: dict[tuple[int, int], str] = {}
    merged: list[str] = []
    items: list[Item] = []
    nested: list[TableData] = []
    width = 0
    rows = _rows(el, marks)
    for r, tr in enumerate(rows):
        c = 0
        for cell in tr:
            if tag(cell) not in ("td", "th") or marks.get(cell) is HIDDEN:
                continue
            while (r, c) in grid:
                c += 1
            if c >= MAX_COLUMNS:
                break
            text, found = inline_of(cell, nested)
            items.extend(found)
            down = min(_span(cell.get("rowspan")), len(rows) - r)
            across = min(_span(cell.get("colspan")), MAX_COLUMNS - c)
            for dr in range(down):
                for dc in range(across):
                    grid[(r + dr, c + dc)] = ""
            grid[(r, c)] = text
            if down > 1 or across > 1:
                merged.append(range_ref(r, c, r + down - 1, c + across - 1))
            c += across
            width = max(width, c)
    if not grid:
        return None
    table = [[grid.get((r, c), "") for c in range(width)] for r in range(len(rows))]
    return TableData(table, merged, nested=nested, items=items), caption
