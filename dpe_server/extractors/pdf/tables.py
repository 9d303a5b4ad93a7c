"""Ruled tables: grids drawn with line and rectangle operators, their text assigned to cells.

Ruling segments (horizontal and vertical, from `collect`) that touch each other form
connected components; a component whose distinct horizontal rules (≥ 2) and column edges (≥ 3)
make at least a 2 × 1 lattice is a table (a frame with rules between its columns only is one
band). The column edges are its vertical rules and, for a
table open at its sides (no rule down its left or right edge, as the US Government Publishing
Office sets them), where at least two of its horizontal rules end beyond its outermost
vertical rule, so its first and last columns are cells too. Each run goes to the cell holding
its first glyph.

A band between two horizontal rules is one row, the lines of each of its cells joined top to
bottom (a cell wrapped over several lines), unless it holds the rows of a table ruled only
around its header: three or more lines that each fill the same two or more cells, each
column's cells starting or ending at one x (a centred cell's wrapped lines do not) and short
(`aligned.cell_like`: no cell over 60 characters or ending in a hyphen, on average at most
four words); then each line is a row. Else, when a column of the band carries one value per
item (amounts, quantities, ids: `wrapped`), its values' lines start the rows and the
other lines are wrapped cells of those rows; in the table's first band the lines above the
first value are its header row. Merged cells are not reconstructed (their text lands
in the cell where it starts). A lattice that is not filled like a table (fewer than two rows
with two filled cells, or under 40 % of cells filled) is a diagram drawn with boxes, and its
text stays in the flow. Pages with more segments than `MAX_TABLE_SEGMENTS` (vector drawings)
are not searched.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

from dpe_server.extractors.pdf.aligned import MIN_ROWS, cell_like
from dpe_server.extractors.pdf.blocks import Block, table_content
from dpe_server.extractors.pdf.collect import Run, Segment
from dpe_server.extractors.pdf.lines import Line, make_lines, single_text
from dpe_server.extractors.pdf.wrapped import CellLine, item_rows

MAX_TABLE_SEGMENTS = 800
_TOL = 2.0
_MAX_ROWS = 500
_MAX_COLS = 60


@dataclass(slots=True)
class Grid:
    xs: list[float]
    ys: list[float]
    """Rule positions: xs left to right, ys top to bottom."""


def _touch(a: Segment, b: Segment) -> bool:
    return (
        a.x0 - _TOL <= b.x1 and b.x0 - _TOL <= a.x1 and a.y0 - _TOL <= b.y1 and b.y0 - _TOL <= a.y1
    )


def _components(segments: Sequence[Segment]) -> list[list[Segment]]:
    parent = list(range(len(segments)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    order = sorted(range(len(segments)), key=lambda i: segments[i].x0)
    for pos, i in enumerate(order):
        a = segments[i]
        for j in order[pos + 1 :]:
            b = segments[j]
            if b.x0 - _TOL > a.x1:
                break
            if _touch(a, b):
                parent[find(i)] = find(j)
    groups: dict[int, list[Segment]] = {}
    for i, seg in enumerate(segments):
        groups.setdefault(find(i), []).append(seg)
    return list(groups.values())


def _distinct(values: list[float]) -> list[float]:
    out: list[float] = []
    for v in sorted(values):
        if not out or v - out[-1] > _TOL:
            out.append(v)
    return out


def find_grids(segments: Sequence[Segment]) -> list[Grid]:
    """Lattices formed by ruling segments."""
    if len(segments) > MAX_TABLE_SEGMENTS or len(segments) < 6:
        return []
    grids: list[Grid] = []
    for comp in _components(segments):
        horizontal = [s for s in comp if s.horizontal]
        vertical = [s for s in comp if not s.horizontal]
        xs = _distinct([s.x0 for s in vertical])
        ys = _distinct([s.y0 for s in horizontal])
        if xs:
            xs = _open_sides(xs, horizontal)
        if not 3 <= len(xs) <= _MAX_COLS + 1 or not 2 <= len(ys) <= _MAX_ROWS + 1:
            continue
        grids.append(Grid(xs, ys[::-1]))
    return grids


def _open_sides(xs: list[float], horizontal: Sequence[Segment]) -> list[float]:
    """`xs` with the edges of a table open at its sides: where at least two horizontal rules
    end (the second furthest end) more than the tolerance beyond the outermost vertical rule."""
    lefts = sorted(s.x0 for s in horizontal if s.x0 < xs[0] - _TOL)
    rights = sorted(s.x1 for s in horizontal if s.x1 > xs[-1] + _TOL)
    left = [lefts[1]] if len(lefts) >= 2 else []
    right = [rights[-2]] if len(rights) >= 2 else []
    return left + xs + right


def ruled_tables(runs: list[Run], segments: Sequence[Segment]) -> tuple[list[Block], list[Run]]:
    """Table blocks for the grids on the page, and the runs not inside any of them."""
    blocks: list[Block] = []
    remaining = runs
    for grid in find_grids(segments):
        cells: dict[tuple[int, int], list[Run]] = {}
        outside: list[Run] = []
        xs, down = grid.xs, [-y for y in grid.ys]
        cols, rows_n = len(xs) - 1, len(down) - 1
        # each run to the (row, column) of the cell holding its first glyph: `xs` the grid's
        # rules left to right, `down` its rules top to bottom negated (both increasing)
        for run in remaining:
            col = bisect_right(xs, run.x0 + min(1.0, (run.x1 - run.x0) / 2)) - 1
            row = bisect_right(down, -(run.y + 0.3 * run.size)) - 1
            if 0 <= col < cols and 0 <= row < rows_n:
                cells.setdefault((row, col), []).append(run)
            else:
                outside.append(run)
        if len(cells) < 2:
            continue
        rows = [
            row
            for i in range(rows_n)
            for row in _band_rows(
                {j: cells[i, j] for j in range(cols) if (i, j) in cells}, cols, i == 0
            )
        ]
        rows = [r for r in rows if any(r)]
        if not _table_like(rows):
            continue
        remaining = outside
        content = table_content(rows)
        bbox = [
            round(grid.xs[0], 1),
            round(grid.ys[-1], 1),
            round(grid.xs[-1], 1),
            round(grid.ys[0], 1),
        ]
        blocks.append(
            Block(
                "table", content, grid.ys[0], grid.xs[0], grid.xs[-1], {"bbox": bbox, "ruled": True}
            )
        )
    return blocks, remaining


def _table_like(rows: list[list[str]]) -> bool:
    """Filled like a table, not a diagram drawn with boxes: at least two rows with two or
    more filled cells, and at least 40 % of all cells filled."""
    if not rows:
        return False
    full_rows = sum(1 for r in rows if sum(1 for c in r if c) >= 2)
    filled = sum(1 for r in rows for c in r if c)
    return full_rows >= 2 and filled >= 0.4 * len(rows) * len(rows[0])


def _band_rows(band: dict[int, list[Run]], cols: int, first: bool) -> list[list[str]]:
    """The rows of one band between two horizontal rules, from its runs by column: one row a
    baseline when the band is rows of a table ruled only around its header (`_rows_of`); the
    rows of its value column when its cells wrap (`wrapped`; the band's first lines are
    its header when it is the table's first band); else one row, a cell's lines its text (a
    cell wrapped over several lines)."""
    column = {id(r): j for j, runs in band.items() for r in runs if r.text.strip()}
    lines = make_lines([r for runs in band.values() for r in runs]) if len(column) > 1 else []
    if len(lines) >= MIN_ROWS and (rows := _rows_of(lines, column, cols)):
        return rows
    if len(lines) >= 2 and (rows := item_rows(_cell_lines(lines, column), cols, first)):
        return rows
    return [[_cell_text(band.get(j, [])) for j in range(cols)]]


def _cell_lines(lines: list[Line], column: dict[int, int]) -> list[CellLine]:
    out = []
    for line in lines:
        by_col: dict[int, list[Run]] = {}
        for r in line.runs:
            if id(r) in column:
                by_col.setdefault(column[id(r)], []).append(r)
        out.append(CellLine(line.y, line.size, {j: _cell_text(rs) for j, rs in by_col.items()}))
    return out


def _rows_of(lines: list[Line], column: dict[int, int], cols: int) -> list[list[str]] | None:
    """The band's lines as rows, or None when they are not rows: every line must fill the same
    two or more cells, each column's cells must start or end at one x (a table's column is
    aligned; the lines of a centred cell are not) and the cells must be short
    (`aligned.cell_like`: the lines of wrapped prose are not)."""
    rows: list[list[str]] = []
    filled: set[int] | None = None
    edges: dict[int, list[tuple[float, float]]] = {}
    for line in lines:
        by_col: dict[int, list[Run]] = {}
        for r in line.runs:
            if id(r) in column:
                by_col.setdefault(column[id(r)], []).append(r)
        if filled is None:
            filled = set(by_col)
        if set(by_col) != filled or len(filled) < 2:
            return None
        for j, runs in by_col.items():
            edges.setdefault(j, []).append((runs[0].x0, runs[-1].x1))
        rows.append([_cell_text(by_col.get(j, [])) for j in range(cols)])
    for cells in edges.values():
        lefts, rights = [e[0] for e in cells], [e[1] for e in cells]
        if max(lefts) - min(lefts) > _TOL and max(rights) - min(rights) > _TOL:
            return None
    return rows if cell_like(rows) else None


def _cell_text(runs: list[Run]) -> str:
    if not runs:
        return ""
    if len(runs) == 1:  # (most cells: `make_lines` would make it one line)
        return single_text(runs[0]).strip()
    return " ".join(line.text for line in make_lines(runs)).strip()
