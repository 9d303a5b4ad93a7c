"""The rectangle python-calamine will allocate for a sheet, from the cells' own references.

calamine places a cell by its `r` attribute, whatever `<row r=…>` holds it, and allocates the
rectangle from the first to the last used row and column of those places, densely: a sheet
whose `<row r="1">` holds `<c r="A1">` and `<c r="XFD1048576">` is 17 billion cells, an
allocation that kills the process. So the extent is read from the cells' references, never
from the rows' numbers (nor `<dimension>`).

Reading 500,000 references one by one costs more than calamine's own read of the sheet; so
the extent is guessed from the first and last cells (a sheet's cells come in row order) and
then checked with one regular-expression search for a cell whose reference falls outside it
(`_outside`: the rows as a pattern of the numbers between the two, `_between`). A cell outside
widens the guess and the search goes on from it, a few times at most; past that, or at a cell
whose reference is not its first attribute, every reference is read (`_every_reference`).

calamine knows a cell by its element's local name: `<c\tr="…">` and `<x:c r="…">` are cells
too (whatever `x` is bound to, or if it is not). A cell written with white space other than
a space after its name is found by the search (its reference is not ` r="…"`); a cell with
another prefix than the sheet's leaves the sheet to the streaming reader (`foreign_cell`).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import NamedTuple

from dpe_server.extractors.kit.package import PartBytes

_REF = re.compile(rb'([A-Z]{1,3})([1-9][0-9]{0,6})"')
"""A cell reference as written in `r="…"`, from its first letter to the closing quote."""

MAX_WIDENING = 8
"""Cells outside the guessed extent followed before every reference is read instead."""

COLUMN_UPPER = {1: 25, 2: 701, 3: 16_383}
"""The last column a reference of so many letters may name (0-based; XFD is Excel's last)."""


class Extent(NamedTuple):
    row0: int
    row1: int
    """0-based first and last rows of the cells' references."""
    letters: int
    """The most letters of a reference's column (its upper bound: `COLUMN_UPPER`)."""
    cells: int
    """The cells read with a reference (`<c ` elements when the fast check held)."""


ANY_CELL = re.compile(rb"<(?:[A-Za-z_][\w.-]*:)?c[\s/>]")
"""A cell element as calamine reads it: any prefix, any white space after the name."""


def cell_extent(
    cells: PartBytes, prefix: bytes, n_cells: int, start: int = 0, end: int | None = None
) -> Extent | None:
    """The rows and the widest column name of the cells of `sheetData` (`cells[start:end]`,
    its element prefix `prefix`, `n_cells` the `<c ` in it; read in place, not copied out),
    or None when a cell has no reference (calamine would place it by the rows' numbers and
    its neighbours) or another prefix: the streaming reader reads such a sheet."""
    end = len(cells) if end is None else end
    if foreign_cell(cells, prefix, start, end):
        return None
    c_ref = b"<" + prefix + b'c r="'
    first, last = cells.find(c_ref, start, end), cells.rfind(c_ref, start, end)
    if first < 0:
        return _every_reference(cells, prefix, start, end)
    a = _REF.match(cells, first + len(c_ref), end)
    b = _REF.match(cells, last + len(c_ref), end)
    if a is None or b is None:
        return _every_reference(cells, prefix, start, end)
    lo, hi = sorted((int(a[2]), int(b[2])))
    letters = max(len(a[1]), len(b[1]))
    at = start
    for _ in range(MAX_WIDENING):
        found = _outside(prefix, letters, lo, hi).search(cells, at, end)
        if found is None:
            return Extent(lo - 1, hi - 1, letters, n_cells)
        at = found.start()
        ref = _REF.match(cells, found.end() + 4, end)
        if ref is None or not cells.startswith(b' r="', found.end(), end):
            return _every_reference(cells, prefix, start, end)
        lo, hi = min(lo, int(ref[2])), max(hi, int(ref[2]))
        letters = max(letters, len(ref[1]))
    return _every_reference(cells, prefix, start, end)


@lru_cache(maxsize=32)
def _outside(prefix: bytes, letters: int, lo: int, hi: int) -> re.Pattern[bytes]:
    """A cell (`<c` then a space, `/` or `>`) whose reference is not its first attribute, or
    names a column of more than `letters` letters or a row outside lo..hi (1-based)."""
    rows = "|".join(_between(lo, hi)).encode()
    # The usual cell is refused by its first test (the reference), so that comes first; one
    # letter as a plain class, not a repeat: a sixth fewer instructions over 500,000 cells.
    column = b"[A-Z]" if letters == 1 else b"[A-Z]{1,%d}" % letters
    return re.compile(
        rb"<" + re.escape(prefix) + rb"c(?! r=\"%s(?:%s)\")(?![^\s/>])" % (column, rows)
    )


def foreign_cell(cells: PartBytes, prefix: bytes, start: int = 0, end: int | None = None) -> bool:
    """Whether a cell element of `cells[start:end]` has another prefix than `prefix` (none:
    `<x:c`; `x:`: `<c` or `<y:c`). Without a prefix, looked for only where a colon is (one
    `memchr`), then `:c`."""
    end = len(cells) if end is None else end
    if not prefix and (cells.find(b":", start, end) < 0 or cells.find(b":c", start, end) < 0):
        return False
    p = re.escape(prefix)
    other = re.compile(rb"<(?!" + p + rb"c[\s/>])(?:[A-Za-z_][\w.-]*:)?c[\s/>]")
    return other.search(cells, start, end) is not None


def count_cells(cells: PartBytes, start: int = 0, end: int | None = None) -> int:
    """Every cell element of `cells[start:end]` calamine would read (`ANY_CELL`)."""
    return len(ANY_CELL.findall(cells, start, len(cells) if end is None else end))


def _every_reference(cells: PartBytes, prefix: bytes, start: int, end: int) -> Extent | None:
    """The extent from every cell's reference wherever it is among its attributes; None
    unless every cell element (of the sheet's prefix: `foreign_cell` was asked) has one."""
    p = re.escape(prefix)
    refs = re.compile(rb"<" + p + rb'c(?=[\s/>])[^>]*?\br="([A-Z]{1,3})([1-9][0-9]{0,6})"')
    found = refs.findall(cells, start, end)
    n_cells = count_cells(cells, start, end)
    if not found or len(found) != n_cells:
        return None
    rows = {int(digits) for digits in {d for _, d in found}}
    letters = max(len(x) for x in {x for x, _ in found})
    return Extent(min(rows) - 1, max(rows) - 1, letters, n_cells)


def _between(lo: int, hi: int) -> list[str]:
    """Regular-expression alternatives matching exactly the decimal numbers lo..hi (no
    leading zeros), the longest first (most of a sheet's rows have the most digits)."""
    out: list[str] = []
    for digits in range(len(str(hi)), len(str(lo)) - 1, -1):
        a, b = max(lo, 10 ** (digits - 1)), min(hi, 10**digits - 1)
        if a <= b:
            out.extend(_same_length(str(a), str(b)))
    return out


def _same_length(lo: str, hi: str) -> list[str]:
    """Alternatives for the digit strings lo..hi of one length."""
    if not lo:
        return [""]
    if lo[0] == hi[0]:
        return [lo[0] + rest for rest in _same_length(lo[1:], hi[1:])]
    n = len(lo) - 1
    zeros, nines = "0" * n, "9" * n
    tail = f"[0-9]{{{n}}}" if n else ""
    out: list[str] = []
    start, stop = int(lo[0]), int(hi[0])
    if lo[1:] != zeros:
        out += [lo[0] + rest for rest in _same_length(lo[1:], nines)]
        start += 1
    last: list[str] = []
    if hi[1:] != nines:
        last = [hi[0] + rest for rest in _same_length(zeros, hi[1:])]
        stop -= 1
    if start <= stop:
        out.append((str(start) if start == stop else f"[{start}-{stop}]") + tail)
    return out + last
