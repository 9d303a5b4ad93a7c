"""Excel workbooks: a page is a worksheet (chartsheets too), in workbook order.

`FORMAT` is all the server knows of the format; `extract` is its extractor (the only importer
of its library), imported when a file of it is first read.
"""

from __future__ import annotations

from dpe_server.extractors import ooxml
from dpe_server.extractors.base import Format

FORMAT = Format(
    name="xlsx",
    suffixes=(".xlsx", ".xlsm"),
    kind_name="an Excel workbook",
    page_unit="sheet",
    paged=False,
    extractor="dpe_server.extractors.xlsx.extract:EXTRACTOR",
    check=ooxml.check("xl/"),
    picture=ooxml.picture,
    package_prefix="xl/",
)
