"""Borderless tables: consecutive lines whose pieces stand in the same columns.

Producers set each cell of a table as a run of its own (an office suite's table without
borders often closer to the next cell than a wide gap), so the columns are the runs of the
first line (at least two; glyphs placed one by one are taken together, see `pieces`). A table
is at least three consecutive lines, none in a monospace font, rows at most three sizes apart,
all of one size but the first (a header row may be up to 25 % larger or smaller). In each line
a run that starts or ends (within half an em) where a column does opens that column's cell,
another run continues the cell before it, and at least two cells are filled, or one when the
line is at most 1.5 × its size under the one before (a cell's wrapped line); a missing cell
is empty (sparse rows keep their columns). The content must be cell-like: no cell longer than
60 characters or ending in a hyphen (a word broken across lines), on average at most four
words a cell (a CJK character counts half a word), and every run in the size of its line (a
footnote mark is no cell). So prose set in several runs, or in two columns the page's column
detection missed, is not read as a table.

The rows are the lines, unless a column carries one value per item (amounts, quantities,
ids: `wrapped`) and some lines do not fill it: then the values' lines start the rows, the
other lines are the wrapped lines of their cells, and the lines above the first value are the
header row (a header cell wrapped onto two lines is one header). Without such a column the
header's lines that fill one cell each join it and the table ends before the next line that
fills one cell. A line at most 1.5 × its size above the header, in its style, whose pieces
(of at most two words, none in the first column) stand in the header's columns holds the
upper lines of header cells set flush with the bottom: it joins the header, unless the
header holds values (a first row of values is no header).
"""

from __future__ import annotations

from collections.abc import Sequence

from dpe_server.extractors.pdf.lines import Line
from dpe_server.extractors.pdf.wrapped import CellLine, item_rows, value_like

Piece = tuple[float, float, str]

MIN_ROWS = 3
_MAX_CELL = 60
_MAX_WORDS = 4.0
_SIZE_TOL = 0.15
_HEADER_SIZE = 0.25
_CJK_START = 0x2E80
_CJK_GAP = 0.3
_GLYPH_GAP = 0.2
_WRAP = 1.5
"""A line filling one cell is a wrapped line of the row above at most this many sizes
under it, else the table has ended."""


def pieces(line: Line) -> list[Piece] | None:
    """The line's runs that hold text (x0, x1, text), glyphs placed one by one taken together
    (CJK characters less than 0.3 em apart; in a line set glyph by glyph, any run less than
    0.2 em from the one before); None when a run is set in another size than the line (a
    footnote mark, a superscript: text, not a cell)."""
    runs = [r for r in line.runs if r.text.strip()]
    glyphs = len(runs) >= 6 and sum(len(r.text.strip()) for r in runs) <= 2 * len(runs)
    out: list[Piece] = []
    for r in runs:
        text = r.text.strip()
        if abs(r.size - line.size) > _SIZE_TOL * line.size:
            return None
        gap = r.x0 - out[-1][1] if out else 0.0
        if out and (
            (glyphs and gap < _GLYPH_GAP * r.size)
            or (_cjk(out[-1][2][-1]) and _cjk(text[0]) and gap < _CJK_GAP * r.size)
        ):
            out[-1] = (out[-1][0], r.x1, out[-1][2] + text)
        else:
            out.append((r.x0, r.x1, text))
    return out


def _cjk(ch: str) -> bool:
    return ord(ch) >= _CJK_START


def _words(cell: str) -> float:
    """Words in a cell: white-space separated, a CJK character half a word."""
    cjk = sum(1 for ch in cell if _cjk(ch))
    return len(cell.split()) + cjk / 2


def _column(columns: Sequence[Piece], piece: Piece, tol: float) -> int | None:
    for k, (x0, x1, _) in enumerate(columns):
        if abs(piece[0] - x0) <= tol or abs(piece[1] - x1) <= tol:
            return k
    return None


def _row(columns: Sequence[Piece], line: Line) -> list[str] | None:
    """The line's cells in the columns, or None when it does not fit them: a run that starts
    or ends where a column does opens that column's cell, any other run continues the cell
    before it (a cell set in several runs)."""
    row = [""] * len(columns)
    tol = max(4.0, 0.5 * line.size)
    current: int | None = None
    for piece in pieces(line) or []:
        k = _column(columns, piece, tol)
        if k is None:
            if current is None:
                return None
            row[current] = f"{row[current]} {piece[2]}"
            continue
        if row[k] or (current is not None and k < current):
            return None
        row[k], current = piece[2], k
    return row if any(row) else None


def _filled(row: Sequence[str]) -> int:
    return sum(1 for c in row if c)


def table_rows(lines: Sequence[Line], start: int) -> tuple[list[list[str]], int]:
    """The rows of a borderless table starting at `lines[start]` and how many lines they
    take (none when there is no table); `lines[start]` may hold the upper lines of header
    cells set flush with the bottom of the header (`_above_header`)."""
    found = _table_rows(lines, start)
    if found[0] or start + 1 >= len(lines):
        return found
    above, head = lines[start], lines[start + 1]
    if (
        head.y - above.y > 0
        or above.y - head.y > _WRAP * head.size
        or above.bold != head.bold
        or abs(above.size - head.size) >= 0.5
        or not (found := _table_rows(lines, start + 1))[0]
        or any(value_like(c) for c in found[0][0])
        or (cells := _above_header(above, head)) is None
    ):
        return [], 0
    rows, taken = found
    return [_joined([cells, rows[0]]), *rows[1:]], taken + 1


def _above_header(above: Line, head: Line) -> list[str] | None:
    """The cells of a line right above a table's header that holds the upper lines of header
    cells wrapped onto two lines and set flush with the bottom (the other cells on the lower
    line): each piece in a column of the header, not the first one (a caption or a title
    starts at the table's left edge), of at most two words, over a header of no values (a
    table's first row of values is no header); None when it is not such a line."""
    columns = pieces(head)
    row = _row(columns, above) if columns else None
    if row is None or row[0] or any(len(c.split()) > 2 for c in row):
        return None
    return row


def _joined(rows: Sequence[Sequence[str]]) -> list[str]:
    """One row of rows, each cell's texts joined top to bottom."""
    return [" ".join(c for c in cells if c) for cells in zip(*rows, strict=True)]


def _table_rows(lines: Sequence[Line], start: int) -> tuple[list[list[str]], int]:
    head = lines[start]
    columns = pieces(head)
    if columns is None or len(columns) < 2 or head.mono:
        return [], 0
    rows = [[p[2] for p in columns]]
    taken = [head]
    body = lines[start + 1].size if start + 1 < len(lines) else head.size
    if abs(body - head.size) > _HEADER_SIZE * head.size:
        return [], 0
    for line in lines[start + 1 :]:
        prev = taken[-1]
        if line.mono or abs(line.size - body) >= 0.5 or prev.y - line.y > 3 * line.size:
            break
        row = _row(columns, line)
        if row is None or (_filled(row) < 2 and prev.y - line.y > _WRAP * line.size):
            break
        rows.append(row)
        taken.append(line)
    cell_lines = [
        CellLine(ln.y, ln.size, {j: c for j, c in enumerate(row) if c})
        for ln, row in zip(taken, rows, strict=True)
    ]
    if cell_like(rows) and (gathered := item_rows(cell_lines, len(columns), header=True)):
        return gathered, len(rows)
    # no value column: the header's wrapped lines (one cell each) join it, the table ends
    # before the next line that fills one cell
    header = next((n for n in range(1, len(rows)) if _filled(rows[n]) >= 2), len(rows))
    end = next((n for n in range(header, len(rows)) if _filled(rows[n]) < 2), len(rows))
    table = [_joined(rows[:header]), *rows[header:end]]
    if len(table) < MIN_ROWS or not cell_like(rows[:end]):
        return [], 0
    return table, end


def cell_like(rows: Sequence[Sequence[str]]) -> bool:
    """Short cells: none longer than 60 characters or ending in a hyphen, on average at most
    four words."""
    cells = [c for row in rows for c in row if c]
    if any(len(c) > _MAX_CELL or c[-1] == "-" for c in cells):
        return False
    return sum(_words(c) for c in cells) <= _MAX_WORDS * len(cells)
