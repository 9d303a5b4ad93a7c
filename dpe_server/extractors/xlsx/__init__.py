"""Excel workbooks: a page is a worksheet (chartsheets too), in workbook order. `extract` is the
extractor, imported when a file of the format is first read.

The workbook: `book` (sheets, styles, shared strings, cell references). A worksheet: `part`
(its part read no further into its cells than the cell cap reaches), `scan`
(one pass over its part's bytes for what python-calamine does not give), `extent`
(the rectangle calamine will allocate, from the cells' own references), `dense` (calamine's
rows as display strings, a few thousand at a time), `cells` (its cells
as display-string grids, cut into tables and headings), `format` (cell values as Excel
shows them), `formulas` (formulas grouped by pattern), `totals` (a total row kept with the
table above it), `tables` (Excel tables and pivot tables), `parts` (the small parts: merges,
links, notes and comments, validations, print header and footer), `drawing` (charts,
pictures, shapes, SmartArt and form controls of its drawings), `page` (its elements in page
order). `values`: pages of sheets known only by their cell values and merged ranges (the
`sheets` and `delimited` formats lay theirs out with it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dpe_server.extractors.ooxml import package_format

if TYPE_CHECKING:
    from dpe_server.extractors.base import Limits
    from dpe_server.extractors.kit.values import ValueSheet
    from dpe_server.model.tree import Page

SUFFIXES = (".xlsx", ".xlsm", ".xltx", ".xltm")
"""Workbooks, macro-enabled workbooks, templates, macro-enabled templates."""

FORMAT = package_format("xlsx", SUFFIXES, "an Excel workbook", "sheet", paged=False, prefix="xl/")


def values_page(index: int, sheet: ValueSheet, limits: Limits, max_cells: int) -> tuple[Page, int]:
    """A sheet known only by its values laid out as an xlsx sheet's cells (`values`, imported
    on first use): what the registry hands the value sheets (`kit.values`)."""
    from dpe_server.extractors.xlsx.values import values_page as page

    return page(index, sheet, limits, max_cells)
