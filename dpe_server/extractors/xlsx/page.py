"""One worksheet's elements, in page order: headings, tables and pivot tables in reading
order, then formulas, drawings (charts, images, diagrams), notes and comments, links,
validations, form controls, print headers and footers.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Protocol, TypeVar

from lxml import etree

from dpe_server.extractors.ooxml.package import Package
from dpe_server.extractors.xlsx.book import SheetInfo, rel_id, walk
from dpe_server.extractors.xlsx.cells import (
    CharBudget,
    Grid,
    Item,
    MergeIndex,
    PointIndex,
    Rect,
    SheetCells,
    blocks,
    heading_item,
    lone_cell,
    table_items,
)
from dpe_server.extractors.xlsx.drawing import drawing_items, ole_items, widget_items
from dpe_server.extractors.xlsx.format import Styles
from dpe_server.extractors.xlsx.formulas import formula_items
from dpe_server.extractors.xlsx.parts import (
    comment_items,
    header_footer_items,
    hyperlink_items,
    merges,
    validation_items,
)
from dpe_server.extractors.xlsx.scan import SheetScan
from dpe_server.extractors.xlsx.tables import pivot_defs, pivot_item, table_defs, table_grid
from dpe_server.model.errors import CorruptError, DpeError, UnsupportedError

Cell = tuple[int, int]
T = TypeVar("T")

STYLE_LOOKUPS = 64
"""Cells whose style a sheet looks up at most to decide whether they are title rows."""


class BookLike(Protocol):
    pkg: Package
    styles: Styles

    @property
    def people(self) -> dict[str, str]: ...

    def resolve(self, formula: str, default: SheetInfo | None) -> list[str]: ...


def build_sheet_items(
    book: BookLike,
    info: SheetInfo,
    cells: SheetCells,
    scan: SheetScan,
    *,
    styles: dict[Cell, int] | None,
    budget: CharBudget,
    skipped: list[str],
) -> list[Item]:
    """The page's elements. A damaged small part (a comments, drawing or pivot part...) is
    left out and named in `skipped` rather than failing the whole workbook."""
    pkg = book.pkg
    assert info.part is not None
    rels = pkg.rels(info.part)
    tail = scan.tail
    merged = MergeIndex(merges(tail))
    fcells = PointIndex((f.row, f.col) for f in scan.formulas)

    def resolve(formula: str) -> list[str]:
        return book.resolve(formula, info)

    looked_up: dict[Cell, int] = {}

    def style_at(row: int, col: int) -> int:
        """A candidate title cell's style; each lookup searches the cells, so a sheet of
        scattered single cells gets STYLE_LOOKUPS of them at most."""
        if styles is not None:
            return styles.get((row, col), 0)
        if (row, col) not in looked_up:
            if len(looked_up) >= STYLE_LOOKUPS:
                return 0
            looked_up[(row, col)] = scan.style_of(row, col)
        return looked_up[(row, col)]

    layout: list[Item] = []
    taken: list[Rect] = []
    for t in _guarded("Excel tables", lambda: table_defs(pkg, rels), skipped):
        grid, headers = table_grid(t, cells, max_cells=max(budget.remaining, 1))
        layout.extend(
            table_items(grid, merged, fcells, name=t.name, headers=headers, budget=budget)
        )
        taken.append(t.rect)
    for p in _guarded("pivot tables", lambda: pivot_defs(pkg, rels), skipped):
        layout.append(pivot_item(p, cells))
        if p.rect is not None:
            taken.append(p.rect)
    layout.extend(
        _cell_blocks(
            cells, taken, merged, fcells, styles=book.styles, style_at=style_at, budget=budget
        )
    )
    layout.sort(key=lambda it: it.order)
    level_one = True
    for it in layout:
        if it.category.value == "heading":
            it.content["level"] = 1 if level_one else 2
            level_one = False

    items = layout
    items.extend(formula_items(scan.formulas, cells.get))
    for d in walk(tail, "drawing"):
        rel = rels.get(rel_id(d) or "")
        if rel is not None:
            read = functools.partial(drawing_items, pkg, rel.target, resolve)
            items.extend(_guarded("drawing", read, skipped))
    items.extend(_guarded("comments", lambda: comment_items(pkg, rels, book.people), skipped))
    items.extend(hyperlink_items(tail, rels, cells))
    items.extend(validation_items(tail, resolve))
    items.extend(_guarded("form controls", lambda: widget_items(pkg, tail, rels), skipped))
    items.extend(ole_items(tail, rels))
    items.extend(header_footer_items(tail))
    return items


_PART_ERRORS = (CorruptError, UnsupportedError, ValueError, KeyError, IndexError, etree.LxmlError)


def _guarded(what: str, read: Callable[[], list[T]], skipped: list[str]) -> list[T]:
    """`read()`, or nothing (and a note in `skipped`) when its part is damaged."""
    try:
        return read()
    except _PART_ERRORS as exc:
        reason = exc.message if isinstance(exc, DpeError) else type(exc).__name__
        skipped.append(f"{what}: {reason}")
        return []


def _without(grid: Grid, taken: list[Rect]) -> Grid:
    if not taken:
        return grid
    copy = Grid(grid.r0, grid.c0, [list(r) for r in grid.rows])
    for rect in taken:
        copy.blank(rect)
    return copy


def _cell_blocks(
    cells: SheetCells,
    taken: list[Rect],
    merged: MergeIndex,
    fcells: PointIndex,
    *,
    styles: Styles,
    style_at: Callable[[int, int], int],
    budget: CharBudget,
) -> list[Item]:
    """Blocks of used cells as tables, a lone emphasised or merged title cell as a heading."""
    found: list[Grid] = []
    for g in cells.grids:
        found.extend(blocks(_without(g, taken)))
    found.sort(key=lambda b: (b.r0, b.c0))
    out: list[Item] = []

    def titled(row: int, col: int) -> tuple[bool, Rect | None]:
        m = merged.at(row, col)
        spans = m is not None and (m[3] > m[1] or m[2] > m[0])
        return spans or styles.emphasised(style_at(row, col)), m

    for i, b in enumerate(found):
        rows = b.rows
        width = b.width
        if len(rows) == 1 and width == 1 and i + 1 < len(found):
            nxt = found[i + 1]
            text = rows[0][0]
            below = 1 <= nxt.r0 - b.r0 <= 3 and nxt.c0 <= b.c0 < nxt.c0 + max(nxt.width, 1)
            ok, m = titled(b.r0, b.c0)
            if below and ok and not _is_number(text):
                out.append(heading_item(text, b.r0, b.c0, 1, m))
                continue
        j = lone_cell(rows)
        if j == 0 and len(rows) >= 3 and width >= 2 and not _is_number(rows[0][0]):
            ok, m = titled(b.r0, b.c0)
            if ok:
                out.append(heading_item(rows[0][0], b.r0, b.c0, 1, m))
                body = Grid(b.r0 + 1, b.c0, rows[1:])
                out.extend(table_items(body, merged, fcells, budget=budget))
                continue
        out.extend(table_items(b, merged, fcells, budget=budget))
    return out


def _is_number(text: str) -> bool:
    try:
        float(text.replace(",", "").rstrip("%"))
    except ValueError:
        return False
    return True
