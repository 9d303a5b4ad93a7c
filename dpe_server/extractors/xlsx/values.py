"""Pages of sheets known only by their cell values and merged ranges: .xls, .xlsb and .ods
(through calamine) and .csv/.tsv. Their blocks become tables (500-row blocks), headings and
text exactly as an xlsx sheet's do (`page.value_items`), without what only an xlsx package
holds (styles, formulas, Excel tables, drawings, comments). The registry hands this layout
to the value sheets (`kit.values`)."""

from __future__ import annotations

from dpe_server.extractors.base import Limits
from dpe_server.extractors.kit.values import ValueSheet
from dpe_server.extractors.xlsx.cells import CharBudget, Grid, SheetCells, display_rows
from dpe_server.extractors.xlsx.page import value_items
from dpe_server.model.tree import JSON, Page, PageBuilder


def values_page(index: int, sheet: ValueSheet, limits: Limits, max_cells: int) -> tuple[Page, int]:
    """The sheet's page and the cells it used of the `max_cells` left to the workbook."""
    raw = sheet.rows
    width = max(map(len, raw), default=0)
    truncated = bool(width) and len(raw) * width > max_cells
    if truncated:
        raw = raw[: max(max_cells // width, 1)]
    cells = SheetCells([Grid(*sheet.origin, display_rows(raw))], truncated)
    budget = CharBudget(limits.max_chars_per_page)
    items = value_items(cells, list(sheet.merged), budget)
    meta: dict[str, JSON] = {"sheet_type": sheet.kind}
    if sheet.hidden:
        meta["hidden"] = True
    used = cells.used_range()
    if used:
        meta["used_range"] = used
    if truncated or budget.truncated:
        meta["truncated"] = True
    builder = PageBuilder(index, limits.max_elements_per_page)
    for it in items:
        builder.add(it.category, it.summary, it.content, it.metadata)
    return builder.build(sheet.name, meta), len(raw) * width
