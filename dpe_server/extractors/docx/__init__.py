"""Word documents: a page is a section, between top-level headings and section breaks.

`FORMAT` is all the server knows of the format; `extract` is its extractor (the only importer
of its library), imported when a file of it is first read.
"""

from __future__ import annotations

from dpe_server.extractors import ooxml
from dpe_server.extractors.base import Format

FORMAT = Format(
    name="docx",
    suffixes=(".docx", ".docm"),
    kind_name="a Word document",
    page_unit="section",
    paged=False,
    extractor="dpe_server.extractors.docx.extract:EXTRACTOR",
    check=ooxml.check("word/"),
    picture=ooxml.picture,
    package_prefix="word/",
)
