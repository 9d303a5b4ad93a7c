"""Spreadsheets read through python-calamine: legacy Excel 97-2003 (.xls, BIFF8), Excel binary
workbooks (.xlsb) and OpenDocument spreadsheets (.ods, and flat XML .fods). A page is a sheet,
in workbook order; cell values (and merged ranges where calamine gives them: .xls) become the
tables, headings and text an xlsx sheet's cells become. `extract` is the extractor, imported
when a file of the format is first read; `checks` are what a file must be before calamine reads
it."""

from __future__ import annotations

from typing import BinaryIO

from dpe_server.extractors.base import Format, Limits


def _check(f: BinaryIO, fmt: str, kind: str, limits: Limits) -> None:
    from dpe_server.extractors.sheets.checks import check_sheets

    check_sheets(f, fmt, kind, limits)


FORMAT = Format(
    name="sheets",
    suffixes=(".xls", ".xlsb", ".ods", ".fods"),
    kind_name="a spreadsheet",
    page_unit="sheet",
    paged=False,
    extractor="dpe_server.extractors.sheets.extract:EXTRACTOR",
    check=_check,
    pdf_export=True,
    recognises_pictures=False,
)
