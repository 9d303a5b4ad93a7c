"""A1 notation for cells and ranges (`B3`, `A1:C5`): spreadsheet references, and the way
merged cells of any table (xlsx, docx, pptx) are named in `metadata.merged_cells`."""

from __future__ import annotations

import functools
import re

_REF = re.compile(r"\$?([A-Za-z]{1,3})\$?(\d{1,7})")
_PLAIN_RANGE = re.compile(r"([A-Z]{1,3})([0-9]{1,7}):([A-Z]{1,3})([0-9]{1,7})")
"""A range as a merge or a table writes it (no sheet, no `$`, no spaces), which `_REF` reads."""


@functools.cache
def col_index(letters: str) -> int:
    """0-based column of `A`, `AB`, `XFD`."""
    n = 0
    for ch in letters.upper():
        n = n * 26 + ord(ch) - 64
    return n - 1


def col_letters(index: int) -> str:
    """`A` for 0, `AB` for 27."""
    out = ""
    n = index + 1
    while n:
        n, rem = divmod(n - 1, 26)
        out = chr(65 + rem) + out
    return out


def cell_ref(row: int, col: int) -> str:
    """`B3` for (2, 1), 0-based."""
    return f"{col_letters(col)}{row + 1}"


def parse_ref(ref: str) -> tuple[int, int] | None:
    """(row, col) 0-based of `B3` / `$B$3`; None when it is not a cell reference."""
    m = _REF.fullmatch(ref.strip())
    if m is None:
        return None
    return int(m.group(2)) - 1, col_index(m.group(1))


def parse_range(ref: str) -> tuple[int, int, int, int] | None:
    """(row0, col0, row1, col1) inclusive, 0-based, of `A1:C5` or `B3`; None when invalid."""
    m = _PLAIN_RANGE.fullmatch(ref)
    if m is not None:  # the usual `A1:C5`, read as below with one match instead of three
        r0, r1 = int(m.group(2)) - 1, int(m.group(4)) - 1
        c0, c1 = col_index(m.group(1)), col_index(m.group(3))
        return min(r0, r1), min(c0, c1), max(r0, r1), max(c0, c1)
    ref = ref.rsplit("!", maxsplit=1)[-1].strip()
    first, _, last = ref.partition(":")
    a = parse_ref(first)
    b = parse_ref(last) if last else a
    if a is None or b is None:
        return None
    return min(a[0], b[0]), min(a[1], b[1]), max(a[0], b[0]), max(a[1], b[1])


def range_ref(r0: int, c0: int, r1: int, c1: int) -> str:
    """`A1:C5`, or `B3` for a single cell."""
    a, b = cell_ref(r0, c0), cell_ref(r1, c1)
    return a if a == b else f"{a}:{b}"
