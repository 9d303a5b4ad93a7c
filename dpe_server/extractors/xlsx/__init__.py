"""Excel workbooks: a page is a worksheet (chartsheets too), in workbook order. `extract` is the
extractor (the only importer of its library), imported when a file of the format is first read."""

from __future__ import annotations

from dpe_server.extractors.ooxml import package_format

FORMAT = package_format(
    "xlsx", (".xlsx", ".xlsm"), "an Excel workbook", "sheet", paged=False, prefix="xl/"
)
