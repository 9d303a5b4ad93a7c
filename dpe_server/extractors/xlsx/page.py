"""One worksheet's elements, in page order: headings, tables and pivot tables in reading
order, then formulas, drawings (charts, images, diagrams), notes and comments, links,
validations, form controls, print headers and footers.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Protocol, TypeVar

from lxml import etree

from dpe_server.extractors.kit.package import Package
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
    is_text_block,
    lone_cell,
    table_items,
    text_item,
)
from dpe_server.extractors.xlsx.drawing import drawing_items, ole_items, widget_items
from dpe_server.extractors.xlsx.format import Styles
from dpe_server.extractors.xlsx.formulas import formula_items, shift
from dpe_server.extractors.xlsx.parts import (
    comment_items,
    header_footer_items,
    hyperlink_items,
    merges,
    validation_items,
)
from dpe_server.extractors.xlsx.scan import FormulaCell, SheetScan
from dpe_server.extractors.xlsx.tables import pivot_defs, pivot_item, table_defs, table_grid
from dpe_server.extractors.xlsx.totals import FormulaAt, is_total_label, total_below
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
        # `totalsRowCount`: the table's last row is its total row (when the grid reaches it).
        reaches = grid.r0 + len(grid.rows) - 1 == t.rect[2] and len(grid.rows) > 1
        total = t.rect[2] if t.totals_rows and reaches else None
        layout.extend(
            table_items(
                grid, merged, fcells, name=t.name, headers=headers, budget=budget, total_row=total
            )
        )
        taken.append(t.rect)
    for p in _guarded("pivot tables", lambda: pivot_defs(pkg, rels), skipped):
        layout.append(pivot_item(p, cells))
        if p.rect is not None:  # from its header row: the captions above are the sheet's cells
            r0, c0, r1, c1 = p.rect
            taken.append((r0 + p.header_row, c0, r1, c1))
    layout.extend(
        _cell_blocks(
            cells,
            taken,
            merged,
            fcells,
            styles=book.styles,
            style_at=style_at,
            budget=budget,
            formula_at=_formula_lookup(scan.formulas),
        )
    )
    items = _in_reading_order(layout)
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


def _in_reading_order(layout: list[Item]) -> list[Item]:
    """Tables and headings in reading order; the first heading is level 1, the others 2."""
    layout.sort(key=lambda it: it.order)
    level_one = True
    for it in layout:
        if it.category.value == "heading":
            it.content = {**it.content, "level": 1 if level_one else 2}
            level_one = False
    return layout


def value_items(cells: SheetCells, merged: list[Rect], budget: CharBudget) -> list[Item]:
    """The elements of a sheet known only by its values and merged ranges (.xls, .xlsb,
    .ods, .csv): its blocks as tables, headings and text, as for an xlsx sheet without
    styles, formulas or Excel tables."""
    layout = _cell_blocks(
        cells,
        [],
        MergeIndex(merged),
        PointIndex(()),
        styles=Styles([], [], []),
        style_at=lambda row, col: 0,
        budget=budget,
        formula_at=lambda row, col: "",
    )
    return _in_reading_order(layout)


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
    formula_at: FormulaAt,
) -> list[Item]:
    """Blocks of used cells as tables (with the total row under them), a lone emphasised or
    merged title cell as a heading, a lone cell or a short column of labels as text."""
    found: list[Grid] = []
    for g in cells.grids:
        found.extend(blocks(_without(g, taken)))
    found.sort(key=lambda b: (b.r0, b.c0))
    found, totals = _with_totals(found, formula_at)
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
                out.extend(table_items(body, merged, fcells, budget=budget, total_row=totals[i]))
                continue
        if is_text_block(rows):
            item = text_item(b, budget)
            out.extend([item] if item is not None else [])
            continue
        out.extend(table_items(b, merged, fcells, budget=budget, total_row=totals[i]))
    return out


def _with_totals(found: list[Grid], formula_at: FormulaAt) -> tuple[list[Grid], list[int | None]]:
    """The blocks with each total row joined to the table above it (after at most one blank
    row), and for each block the sheet row of its total row, if it has one."""
    out: list[Grid] = []
    totals: list[int | None] = []
    joined: set[int] = set()
    for i, b in enumerate(found):
        if i in joined:
            continue
        table = len(b.rows) >= 2 and not is_text_block(b.rows)  # one column with a header too
        end, right = b.r0 + len(b.rows) - 1, b.c0 + b.width
        nxt = next((n for n in found[i + 1 :] if n.r0 > end and b.c0 <= n.c0 < right), None)
        row = total_below(b, nxt, formula_at) if table and nxt is not None else None
        if row is not None and nxt is not None:
            joined.add(found.index(nxt))
            out.append(Grid(b.r0, b.c0, [*b.rows, row]))
            totals.append(nxt.r0)
        else:
            out.append(b)
            last = b.rows[-1] if b.rows else []
            label = next((v for v in last if v), "")
            totals.append(b.r0 + len(b.rows) - 1 if table and is_total_label(label) else None)
    return out, totals


def _formula_lookup(formulas: list[FormulaCell]) -> FormulaAt:
    """A cell's formula text; a shared formula's dependent reads its master's, moved."""
    by_cell = {(f.row, f.col): f for f in formulas}
    masters = {f.si: f for f in formulas if f.kind == "shared" and f.text and f.si is not None}

    def formula_at(row: int, col: int) -> str:
        f = by_cell.get((row, col))
        if f is None:
            return ""
        m = masters.get(f.si) if not f.text and f.si is not None else None
        return shift(m.text, row - m.row, col - m.col) if m is not None else f.text

    return formula_at


def _is_number(text: str) -> bool:
    try:
        float(text.replace(",", "").rstrip("%"))
    except ValueError:
        return False
    return True
