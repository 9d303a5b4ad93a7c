"""Formulas grouped by pattern: `=B2*C2` … `=B500*C500` is one element over D2:D500.

The element's `expression` is the first cell's own formula (`=B2*C2`, a formula anyone can
read and paste), `cells` the ranges it covers and `cell_count` how many cells they are.

A formula's pattern is its text with every relative reference rewritten relative to the cell
that holds it (R1C1 style), so copies of one formula share a pattern. Shared formulas (one
master cell with `t="shared"` and dependents that carry only `si`) take their master's
pattern. Absolute parts (`$B$1`) stay as they are.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from dpe_server.extractors.kit.a1 import cell_ref, col_index, col_letters, range_ref
from dpe_server.extractors.xlsx.cells import Item
from dpe_server.extractors.xlsx.scan import FormulaCell
from dpe_server.model import summaries
from dpe_server.model.content import FormulaContent
from dpe_server.model.tree import JSON, Category

_STRING = re.compile(r'"(?:[^"]|"")*"')
_REF = re.compile(r"(?<![A-Za-z0-9_.\[\]$])(\$?)([A-Z]{1,3})(\$?)(\d{1,7})(?![A-Za-z0-9_(\[])")
MAX_CELLS_SHOWN = 12
"""Ranges listed in a formula element's `cells` before `…`."""


def _rewrite(text: str, fn: Callable[[re.Match[str]], str]) -> str:
    """Apply `fn` to each cell reference of a formula, outside string literals."""
    out: list[str] = []
    pos = 0
    for s in _STRING.finditer(text):
        out.append(_REF.sub(fn, text[pos : s.start()]))
        out.append(s.group(0))
        pos = s.end()
    out.append(_REF.sub(fn, text[pos:]))
    return "".join(out)


def pattern(text: str, row: int, col: int) -> str:
    """The R1C1-style pattern of a formula held by cell (row, col), 0-based."""
    if '"' not in text:
        # The common case, without a callback per reference: split keeps the groups.
        parts = _REF.split(text)
        out = [parts[0]]
        for i in range(1, len(parts), 5):
            cabs, letters, rabs, digits, rest = parts[i : i + 5]
            out.append(digits if rabs else f"R[{int(digits) - 1 - row}]")
            out.append(letters if cabs else f"C[{col_index(letters) - col}]")
            out.append(rest)
        return "".join(out)

    def rel(m: re.Match[str]) -> str:
        cabs, letters, rabs, digits = m.groups()
        c = letters if cabs else f"C[{col_index(letters) - col}]"
        r = digits if rabs else f"R[{int(digits) - 1 - row}]"
        return f"{r}{c}"

    return _rewrite(text, rel)


def shift(text: str, drow: int, dcol: int) -> str:
    """A formula moved by (drow, dcol), as a shared formula's dependent cell reads it."""

    def rel(m: re.Match[str]) -> str:
        cabs, letters, rabs, digits = m.groups()
        c = letters if cabs else col_letters(max(col_index(letters) + dcol, 0))
        r = int(digits) if rabs else max(int(digits) + drow, 1)
        return f"{cabs}{c}{rabs}{r}"

    return _rewrite(text, rel)


def compact_ranges(cells: Sequence[tuple[int, int]]) -> list[str]:
    """Cells as few rectangles: column runs, then equal runs of adjacent columns merged."""
    by_col: dict[int, list[int]] = {}
    for r, c in cells:
        by_col.setdefault(c, []).append(r)
    runs: list[tuple[int, int, int, int]] = []
    for c in sorted(by_col):
        rows = sorted(set(by_col[c]))
        start = prev = rows[0]
        for r in rows[1:]:
            if r != prev + 1:
                runs.append((start, c, prev, c))
                start = r
            prev = r
        runs.append((start, c, prev, c))
    merged: list[tuple[int, int, int, int]] = []
    open_runs: dict[tuple[int, int], int] = {}  # (first row, last row) → index in merged
    for run in runs:
        i = open_runs.get((run[0], run[2]))
        if i is not None and merged[i][3] + 1 == run[1]:
            m = merged[i]
            merged[i] = (m[0], m[1], m[2], run[3])
        else:
            open_runs[(run[0], run[2])] = len(merged)
            merged.append(run)
    merged.sort()
    return [range_ref(*m) for m in merged]


@dataclass(slots=True)
class _Group:
    text: str
    row: int
    col: int
    kind: str
    cells: list[tuple[int, int]] = field(default_factory=list)


def formula_items(formulas: Sequence[FormulaCell], value: Callable[[int, int], str]) -> list[Item]:
    """One formula element per distinct pattern: the first cell's formula, the cells it covers."""
    masters: dict[str, FormulaCell] = {}
    for f in formulas:
        if f.kind == "shared" and f.text and f.si is not None:
            masters.setdefault(f.si, f)
    groups: dict[str, _Group] = {}
    shared_keys: dict[str, str] = {}
    for f in formulas:
        text, row, col = f.text, f.row, f.col
        if f.kind == "shared" and f.si is not None and f.si in masters:
            # Every cell of a shared formula has its master's pattern by definition.
            m = masters[f.si]
            key = shared_keys.get(f.si) or shared_keys.setdefault(
                f.si, pattern(m.text, m.row, m.col)
            )
            if not text:
                text = shift(m.text, f.row - m.row, f.col - m.col) if key not in groups else ""
        elif text:
            key = pattern(text, row, col)
        else:
            continue
        group = groups.get(key)
        if group is None:
            group = groups[key] = _Group(text or f.text, row, col, f.kind)
        group.cells.append((row, col))
    items: list[Item] = []
    for group in groups.values():
        shown = "=" + group.text
        ranges = compact_ranges(group.cells)
        cells = ", ".join(ranges[:MAX_CELLS_SHOWN]) + (
            " …" if len(ranges) > MAX_CELLS_SHOWN else ""
        )
        content: FormulaContent = {"expression": shown}
        result = value(group.row, group.col)
        if result:
            content["result"] = result
        content["cells"] = cells
        content["cell_count"] = len(group.cells)
        meta: dict[str, JSON] = {
            "source_range": ranges[0] if len(ranges) == 1 else cell_ref(group.row, group.col),
        }
        if group.kind in ("array", "dataTable"):
            meta["formula_type"] = group.kind
        items.append(
            Item(
                Category.FORMULA,
                summaries.formula(shown, cells),
                content,
                meta,
                (group.row, group.col),
            )
        )
    items.sort(key=lambda it: it.order)
    return items
