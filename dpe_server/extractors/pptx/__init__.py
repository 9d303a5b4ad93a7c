"""PowerPoint decks: a page is a slide.

`FORMAT` is all the server knows of the format; `extract` is its extractor (the only importer
of its library), imported when a file of it is first read.
"""

from __future__ import annotations

from dpe_server.extractors import ooxml
from dpe_server.extractors.base import Format

FORMAT = Format(
    name="pptx",
    suffixes=(".pptx", ".pptm"),
    kind_name="a PowerPoint deck",
    page_unit="slide",
    paged=True,
    extractor="dpe_server.extractors.pptx.extract:EXTRACTOR",
    check=ooxml.check("ppt/"),
    picture=ooxml.picture,
    package_prefix="ppt/",
)
