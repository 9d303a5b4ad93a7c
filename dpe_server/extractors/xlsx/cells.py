"""A worksheet's cells as display-string grids, and the grids cut into tables and headings.

Values come from calamine when the sheet's used rectangle is dense enough for its dense grid
(`SheetScan.dense`), else from `scan.read_cells`, clustered here into small grids so a
sheet with cells in A1 and XFD1048576 never allocates the rectangle between them.

Blocks are found by splitting on empty rows, then empty columns within each band of rows,
recursively: rectangles of used cells separated by blank space. Row and column emptiness is
tested with C-level list operations so a 500,000-cell sheet costs little beyond reading it.
"""

from __future__ import annotations

import operator
import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date
from itertools import compress, islice
from typing import Any, TypeVar

from dpe_server.extractors.kit.a1 import range_ref
from dpe_server.extractors.kit.row_blocks import split_rows
from dpe_server.extractors.xlsx.format import (
    CELL_MAX_CHARS,
    clip,
    general,
    show,
)
from dpe_server.extractors.xlsx.scan import SparseCells
from dpe_server.model import summaries
from dpe_server.model.content import HeadingContent, TableContent, TextContent
from dpe_server.model.direction import is_rtl
from dpe_server.model.tree import JSON, Category

Cell = tuple[int, int]
T = TypeVar("T")
Rect = tuple[int, int, int, int]


@dataclass(slots=True)
class Item:
    """An element before ids are given: the orchestrator numbers them with `PageBuilder`."""

    category: Category
    summary: str
    content: Mapping[str, JSON]
    metadata: dict[str, JSON] = field(default_factory=dict)
    order: tuple[int, int] = (0, 0)
    """(row, col) of the element's anchor, to lay tables and headings out in reading order."""


@dataclass(slots=True)
class CharBudget:
    """Characters of cell text a page may still carry (`Limits.max_chars_per_page`): a file
    whose shared strings repeat one long string in every cell must not become a huge tree."""

    remaining: int
    truncated: bool = False

    def fit(self, rows: list[list[str]]) -> list[list[str]]:
        """The leading rows that fit, charged to the budget."""
        # Characters counted by joining each row, then the rows (C-level; a call of `len`
        # per cell costs four times as much on a 500,000-cell sheet, one per row twice).
        total = len("".join(map("".join, rows)))
        if total <= self.remaining:
            self.remaining -= total
            return rows
        size = 0
        for k, row in enumerate(rows):
            cost = len("".join(row))
            if size + cost > self.remaining:
                self.truncated = True
                self.remaining -= size
                return rows[:k]
            size += cost
        self.remaining -= size
        return rows


@dataclass(slots=True)
class Grid:
    """A rectangle of display strings (`""` = empty) whose top-left cell is (r0, c0)."""

    r0: int
    c0: int
    rows: list[list[str]]
    _width: int = field(default=-1, init=False, repr=False, compare=False)
    """The longest row, once asked (a grid's rows are never lengthened or shortened: a
    block is a new grid; the sheet's grid of 50,000 rows is asked several times)."""

    @property
    def width(self) -> int:
        if self._width < 0:
            self._width = max(map(len, self.rows), default=0)
        return self._width

    @property
    def box(self) -> Rect:
        return (self.r0, self.c0, self.r0 + len(self.rows) - 1, self.c0 + self.width - 1)

    def get(self, row: int, col: int) -> str:
        i, j = row - self.r0, col - self.c0
        if 0 <= i < len(self.rows):
            r = self.rows[i]
            if 0 <= j < len(r):
                return r[j]
        return ""

    def blank(self, rect: Rect) -> None:
        """Empty the cells of `rect` (they belong to an Excel table or a pivot table)."""
        r0, c0, r1, c1 = rect
        for i in range(max(r0 - self.r0, 0), min(r1 - self.r0 + 1, len(self.rows))):
            row = self.rows[i]
            for j in range(max(c0 - self.c0, 0), min(c1 - self.c0 + 1, len(row))):
                row[j] = ""


class SheetCells:
    """All the grids of one sheet; `get` reads any cell (for charts, validations, pivots)."""

    def __init__(self, grids: list[Grid], truncated: bool = False) -> None:
        self.grids = grids
        self.truncated = truncated

    def get(self, row: int, col: int) -> str:
        for g in self.grids:
            value = g.get(row, col)
            if value:
                return value
        return ""

    def area(self, rect: Rect, max_cells: int = 10_000) -> list[list[str]]:
        """The cells of `rect` (clipped to the cells that exist, then to `max_cells`)."""
        r0, c0, r1, c1 = rect
        boxes = [g.box for g in self.grids if g.rows]
        if not boxes:
            return []
        r1 = min(r1, max(b[2] for b in boxes))
        c1 = min(c1, max(b[3] for b in boxes))
        width = c1 - c0 + 1
        if width <= 0 or r1 < r0:
            return []
        r1 = min(r1, r0 + max(max_cells // width, 1) - 1)
        for g in self.grids:
            gr0, gc0, gr1, gc1 = g.box
            if gr0 <= r0 and r1 <= gr1 and gc0 <= c0 and c1 <= gc1:  # one grid holds it all
                return [row[c0 - gc0 : c1 - gc0 + 1] for row in g.rows[r0 - gr0 : r1 - gr0 + 1]]
        return [[self.get(r, c) for c in range(c0, c1 + 1)] for r in range(r0, r1 + 1)]

    def used_range(self) -> str:
        """`A1:J50001`: the rectangle around every grid ("" when there are none)."""
        boxes = [(g.r0, g.c0, g.r0 + len(g.rows) - 1, g.c0 + g.width - 1) for g in self.grids]
        boxes = [b for b in boxes if b[2] >= b[0] and b[3] >= b[1]]
        if not boxes:
            return ""
        return range_ref(
            min(b[0] for b in boxes),
            min(b[1] for b in boxes),
            max(b[2] for b in boxes),
            max(b[3] for b in boxes),
        )

    def blank(self, rect: Rect) -> None:
        for g in self.grids:
            g.blank(rect)


def _numbers(col: Sequence[float], memo: Memo | None = None) -> list[str]:
    """Floats as General shows them: whole numbers as integers (C-level maps throughout)."""
    if all(map(float.is_integer, col)):
        known = memo.get(_WHOLE) if memo else None
        if known:  # a chunk of values all met before (in range: the memo has no other)
            try:
                return list(map(known.__getitem__, col))
            except KeyError:
                pass
        if min(col) > -1e15 and max(col) < 1e15:
            return _repeated(col, _WHOLE, memo)
    whole = list(map(float.is_integer, col))
    # `repr` is the shortest string that reads back as the float: where that has at most 15
    # significant digits and no `.0`, it is what `{:.15g}` shows, at two thirds of the cost.
    shown = list(map(float.__repr__, col))
    # The positions of those `repr` does not show as General does, C-level: the whole ones
    # and, when any is, the long ones.
    fix = compress(range(len(col)), whole)
    if max(map(len, shown)) > _SHORT_REPR:
        long = map(_SHORT_REPR.__lt__, map(len, shown))
        fix = compress(range(len(col)), map(operator.or_, whole, long))
    for i in fix:
        shown[i] = general(col[i])
    return shown


_WHOLE = "%d".__mod__
"""A whole float as an integer, in one call (`str(int(v))` makes an int first)."""


_SHORT_REPR = 16
"""The longest `repr` of a float sure to hold at most 15 significant digits (a sign, a point,
14 digits); a longer one may hold 16 or 17, or be a number of 1e15 or more, which `repr`
writes without an exponent and `{:.15g}` with one."""


Memo = dict[Callable[[Any], str], dict[Any, str]]
"""One column's strings by value, per conversion, kept from one chunk of rows to the next
(`display_rows`' `memos`): a column of days or of small whole numbers repeats its values
over the whole sheet, not only within a chunk."""


def _repeated(
    col: Sequence[T], convert: Callable[[T], str], memo: Memo | None, *, sample: bool = True
) -> list[str]:
    """`convert` mapped over `col`, each distinct value converted once when values repeat
    (dates and small whole numbers mostly do: a hash and a dict lookup cost less than a
    conversion). With `sample`, a column whose first values are all distinct (ids, serial
    numbers) is converted value by value without a set of them all. With `memo`, the values
    converted for the column's earlier chunks are not converted again (a chunk whose values
    all were is one lookup each, without a set of them)."""
    if sample and len(set(islice(col, _SAMPLE))) == min(len(col), _SAMPLE):
        return list(map(convert, col))
    known = {} if memo is None else memo.setdefault(convert, {})
    if known:
        try:
            return list(map(known.__getitem__, col))
        except KeyError:
            pass
    distinct = set(col)
    if 2 * len(distinct) > len(col):
        return list(map(convert, col))
    if len(known) > _MEMO_MAX:
        known.clear()
    missing = distinct.difference(known)
    known.update(zip(missing, map(convert, missing), strict=True))
    return list(map(known.__getitem__, col))


_MEMO_MAX = 8192
"""Values a column's memo keeps at most (it is emptied past this): bounded memory however
many distinct values a sheet has."""


_SAMPLE = 256


def _dates(col: Sequence[date], memo: Memo | None = None) -> list[str]:
    """Dates (without a time) as `show` gives them: ISO 8601. A date hashes for much less than
    it formats, so repeats are always looked for (a column of days in order repeats none in
    its first rows, and many over the sheet)."""
    return _repeated(col, date.isoformat, memo, sample=False)


_NUMBERS = frozenset({int, float})
"""calamine's number types (.xls and .ods give whole numbers as `int`)."""


def _ints(col: tuple[int, ...], memo: Memo | None = None) -> list[str]:
    """Whole numbers (calamine's `int`) as `show` gives them, whatever their size."""
    return _repeated(col, int.__repr__, memo)


_UNIFORM: dict[type, Callable[[tuple[Any, ...], Memo | None], list[str]]] = {
    float: _numbers,
    int: _ints,
    date: _dates,
}
"""Columns of one value type converted by C-level maps (calamine gives .ods dates as `date`)."""


def _display_column(col: tuple[Any, ...], memo: Memo | None = None) -> Sequence[str]:
    """One column of calamine values as display strings; C-level maps for a column of one
    type, or of one type under a text header.

    A column whose second value is a float or a text (most are) is converted as a column of
    that type under its head without a pass over its types first: `float.is_integer` meets
    every value of a float column's conversion and `len` every value of a text column's, and
    each raises TypeError at a value of another type (an int, a date, a boolean, `""`: no
    value calamine gives is a float or has a length but a float or a text); the column then
    goes the general way (`_typed_column`), which gives such a column what this gives."""
    head, second = col[0].__class__, col[1].__class__ if len(col) > 1 else None
    try:
        if second is float and head is float:
            return _numbers(col, memo)
        if second is float and head is str:
            return [clip(col[0]), *_numbers(col[1:], memo)]
        if second is str and head is str:
            return col if max(map(len, col)) <= CELL_MAX_CHARS else list(map(clip, col))
    except TypeError:
        pass
    return _typed_column(col, memo)


def _typed_column(col: tuple[Any, ...], memo: Memo | None) -> Sequence[str]:
    """`_display_column` from the set of the column's types."""
    head = col[0].__class__
    below = set(map(type, islice(col, 1, None)))
    if below | ({head} - {str}) == _NUMBERS:  # ints and floats, perhaps under a text header
        numbers = col[1:] if head is str else col
        if min(numbers) > -1e15 and max(numbers) < 1e15:  # exact as floats: shown alike
            shown = _numbers(tuple(map(float, numbers)), memo)
            return [clip(col[0]), *shown] if head is str else shown
    kind = below.pop() if len(below) == 1 else head if not below else None
    if kind is str and head is str:
        return col if max(map(len, col)) <= CELL_MAX_CHARS else list(map(clip, col))
    if kind is not None and (uniform := _UNIFORM.get(kind)) is not None:
        if head is kind:
            return uniform(col, memo)
        if head is str:
            return [clip(col[0]), *uniform(col[1:], memo)]  # a header over numbers or dates
    return [v if v.__class__ is str and len(v) <= CELL_MAX_CHARS else show(v) for v in col]


def display_rows(raw: list[list[Any]], memos: list[Memo] | None = None) -> list[list[str]]:
    """calamine rows as display strings, converted column by column (much faster than
    a call per cell: a column is usually all text or all numbers). `memos`: one per column,
    kept by the caller across the chunks of one sheet's rows."""
    if not raw:
        return []
    try:  # rows of one width (calamine's are) are not measured: `strict` finds a shorter one
        values = list(zip(*raw, strict=True))
    except ValueError:
        width = max(map(len, raw))
        values = list(zip(*[r + [""] * (width - len(r)) for r in raw], strict=True))
    if memos is None:
        memos = []
    memos.extend({} for _ in range(len(values) - len(memos)))
    columns = list(map(_display_column, values, memos))
    return list(map(list, zip(*columns, strict=True)))


def sparse_cells(cells: SparseCells, max_area: int) -> SheetCells:
    """Cells read one by one, clustered into grids by empty rows and columns."""
    by_row: dict[int, list[int]] = {}
    for r, c in cells.values:
        by_row.setdefault(r, []).append(c)
    grids: list[Grid] = []
    truncated = cells.truncated
    for band in _runs_of_keys(sorted(by_row)):
        cols = sorted({c for r in band for c in by_row[r]})
        for span in _runs_of_keys(cols):
            c0, c1 = span[0], span[-1]
            r0, r1 = band[0], band[-1]
            width = c1 - c0 + 1
            if (r1 - r0 + 1) * width > max_area:
                r1 = r0 + max(max_area // width, 1) - 1
                truncated = True
            rows = [
                [cells.values.get((r, c), "") for c in range(c0, c1 + 1)] for r in range(r0, r1 + 1)
            ]
            grids.append(Grid(r0, c0, rows))
    return SheetCells(grids, truncated)


def _runs_of_keys(keys: Sequence[int]) -> Iterator[list[int]]:
    """Sorted integers cut where they are not consecutive."""
    run: list[int] = []
    for k in keys:
        if run and k != run[-1] + 1:
            yield run
            run = []
        run.append(k)
    if run:
        yield run


def _runs(flags: Sequence[bool]) -> list[tuple[int, int]]:
    """[start, stop) of each run of True."""
    out: list[tuple[int, int]] = []
    start = -1
    for i, f in enumerate(flags):
        if f and start < 0:
            start = i
        elif not f and start >= 0:
            out.append((start, i))
            start = -1
    if start >= 0:
        out.append((start, len(flags)))
    return out


def blocks(grid: Grid) -> list[Grid]:
    """The rectangles of used cells of a grid, separated by empty rows or columns."""
    rows = grid.rows
    if rows and all(map(all, rows)) and len(set(map(len, rows))) == 1:
        return [grid]  # every cell used (a dense table): nothing to split
    return list(_split(rows, grid.r0, grid.c0, 0))


def _split(rows: list[list[str]], r0: int, c0: int, depth: int) -> Iterator[Grid]:
    for a, b in _runs([len(r) != r.count("") for r in rows]):
        band = rows[a:b]
        width = max(len(r) for r in band)
        if any(len(r) < width for r in band):
            band = [r + [""] * (width - len(r)) for r in band]
        columns = list(zip(*band, strict=True))
        spans = _runs([len(col) != col.count("") for col in columns])
        if spans == [(0, width)] or depth > 6:
            yield Grid(r0 + a, c0, band)
            continue
        for x, y in spans:
            sub = [r[x:y] for r in band]
            yield from _split(sub, r0 + a, c0 + x, depth + 1)


# --- tables and headings ------------------------------------------------------------------------

_NUMBERISH = re.compile(
    r"^[-+(]?[$€£¥]?[\d.,]+%?\)?$|^\d{4}-\d{2}-\d{2}|^\d{1,2}[/.]\d{1,2}[/.]\d{2,4}$"
)
HEADER_PROBE_ROWS = 50
"""Rows under a candidate header row looked at for a change of type."""


def _values_below(rows: Sequence[Sequence[str]], j: int) -> bool:
    """Column `j` under the first row holds numbers or dates only (and at least one)."""
    below = [r[j] for r in rows[1 : HEADER_PROBE_ROWS + 1] if j < len(r) and r[j]]
    return bool(below) and all(_NUMBERISH.match(v) for v in below)


def has_header_row(rows: Sequence[Sequence[str]]) -> bool:
    """The first row reads as column names: all text, and the type changes under it (a
    column of numbers or dates below a name), or — with two columns or more — a full row of
    distinct labels over text."""
    if len(rows) < 2:
        return False
    first = rows[0]
    names = [v for v in first if v]
    if not names or any(_NUMBERISH.match(v) for v in names):
        return False
    if any(v and _values_below(rows, j) for j, v in enumerate(first)):
        return True
    return len(first) >= 2 and len(names) == len(first) and len(set(names)) == len(names)


TEXT_BLOCK_MAX_ROWS = 50
"""A one-column block without a header of at most this many rows is text, not a table."""


def is_text_block(rows: Sequence[Sequence[str]]) -> bool:
    """A single cell, or a short one-column block of labels without a header row: a table
    needs two columns or a header."""
    if len(rows) > TEXT_BLOCK_MAX_ROWS:  # not measured (a sheet's grid: 50,000 rows)
        return False
    width = max(map(len, rows), default=0)
    return width == 1 and not has_header_row(rows)


def text_item(block: Grid, budget: CharBudget | None = None) -> Item | None:
    """A one-column block as one text element, its cells one per line."""
    rows = budget.fit(block.rows) if budget is not None else block.rows
    lines = [r[0] for r in rows if r and r[0]]
    if not lines:
        return None
    text = "\n".join(lines)
    box = (block.r0, block.c0, block.r0 + len(rows) - 1, block.c0)
    meta: dict[str, JSON] = {"source_range": range_ref(*box)}
    content = TextContent(text=text)
    if is_rtl(text):
        content["direction"] = "rtl"
    return Item(Category.TEXT, summaries.text(text), content, meta, (block.r0, block.c0))


class MergeIndex:
    """Merged ranges sorted by first row, so a block finds its own without reading all of
    them (a sheet can hold 50,000 merges and hundreds of blocks)."""

    def __init__(self, rects: Iterable[Rect]) -> None:
        self.rects = sorted(rects)
        self._starts = [m[0] for m in self.rects]
        self._tallest = max((m[2] - m[0] for m in self.rects), default=0)
        self._at = {(m[0], m[1]): m for m in self.rects}

    def at(self, row: int, col: int) -> Rect | None:
        """The merged range whose top-left cell is (row, col)."""
        return self._at.get((row, col))

    def hits(self, box: Rect) -> list[Rect]:
        r0, c0, r1, c1 = box
        lo = bisect_left(self._starts, r0 - self._tallest)
        hi = bisect_right(self._starts, r1)
        return [m for m in self.rects[lo:hi] if m[2] >= r0 and m[1] <= c1 and m[3] >= c0]


class PointIndex:
    """Cells (formula cells) sorted by position, to ask whether a block holds any."""

    def __init__(self, cells: Iterable[Cell]) -> None:
        self.cells = sorted(cells)

    def any_in(self, box: Rect) -> bool:
        r0, c0, r1, c1 = box
        for i in range(bisect_left(self.cells, (r0, -1)), len(self.cells)):
            r, c = self.cells[i]
            if r > r1:
                return False
            if c0 <= c <= c1:
                return True
        return False


def table_items(
    block: Grid,
    merges: MergeIndex,
    formula_cells: PointIndex,
    *,
    name: str = "",
    headers: list[str] | None = None,
    budget: CharBudget | None = None,
    total_row: int | None = None,
) -> list[Item]:
    """One table element, or row-block elements (`extractors.kit.row_blocks`).

    `total_row`: the sheet row (0-based) of the block's last row when it is a total row,
    possibly a blank row below the others; the element holding it says `total_row_index`."""
    rows = block.rows
    width = block.width
    if headers is None:
        headers = list(rows[0]) if has_header_row(rows) else []
        body = rows[1:] if headers else rows
    else:
        body = rows[1:] if rows and list(rows[0]) == headers else rows
    head_rows = len(rows) - len(body)
    blocks = split_rows(body, head_rows)
    end = block.r0 + len(rows) - 1 if total_row is None else total_row
    box = (block.r0, block.c0, end, block.c0 + width - 1)
    merged = [range_ref(*m) for m in merges.hits(box)]
    has_formulas = formula_cells.any_in(box)
    items: list[Item] = []
    for whole_part in blocks:
        whole = list(whole_part.rows)
        chunk = budget.fit(whole) if budget is not None else whole
        if not chunk and whole:
            break
        last_index = whole_part.index == whole_part.of - 1
        with_total = total_row is not None and chunk is whole and last_index
        if with_total and total_row is not None:
            last_row = total_row - block.r0 + 1
        else:
            last_row = whole_part.first_row + len(chunk) - 1
        part = replace(whole_part, rows=chunk, last_row=last_row)
        first = block.r0 + part.first_row - 1
        last = max(block.r0 + part.last_row - 1, first)
        top = block.r0 if part.index == 0 else first
        content: TableContent = {
            "headers": headers,
            "rows": chunk,
            "total_rows": len(chunk),
            "total_columns": width,
        }
        if name:
            content["name"] = name
        if with_total:
            content["total_row_index"] = len(chunk) - 1
        meta: dict[str, JSON] = {"source_range": range_ref(top, box[1], last, box[3])}
        if headers:
            meta["header_row"] = block.r0 + 1
        if merged:
            meta["merged_cells"] = merged
        if has_formulas:
            meta["has_formulas"] = True
        # Without a name or headers, the first cells say what the table is about.
        label = name or ("" if headers else ", ".join(v for v in (body[0] if body else []) if v))
        part.place(meta)
        if part.of > 1:
            where = f"rows {first + 1}–{last + 1}"
            label = f"{label or ', '.join(h for h in headers if h)} {where}"
        summary = summaries.table(headers, len(chunk), width, label.strip())
        items.append(Item(Category.TABLE, summary, content, meta, (top, box[1])))
    return items


def heading_item(text: str, row: int, col: int, level: int, merged: Rect | None) -> Item:
    meta: dict[str, JSON] = {
        "source_range": range_ref(*merged) if merged else range_ref(row, col, row, col)
    }
    content = HeadingContent(level=level, text=text)
    if is_rtl(text):
        content["direction"] = "rtl"
    return Item(Category.HEADING, summaries.heading(text, level), content, meta, (row, col))


def lone_cell(rows: Sequence[Sequence[str]]) -> int | None:
    """The column offset of the one non-empty cell of a row, or None."""
    hits = [j for j, v in enumerate(rows[0]) if v] if rows else []
    return hits[0] if len(hits) == 1 else None
