"""Excel workbooks: a page is a worksheet (chartsheets too), in workbook order. `extract` is the
extractor (the only importer of its library), imported when a file of the format is first read."""

from __future__ import annotations

from dpe_server.extractors.ooxml import package_format

SUFFIXES = (".xlsx", ".xlsm", ".xltx", ".xltm")
"""Workbooks, macro-enabled workbooks, templates, macro-enabled templates."""

FORMAT = package_format("xlsx", SUFFIXES, "an Excel workbook", "sheet", paged=False, prefix="xl/")
