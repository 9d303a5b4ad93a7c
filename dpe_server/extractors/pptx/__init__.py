"""PowerPoint decks: a page is a slide (one is read without the others). `extract` is the extractor
(the only importer of its library), imported when a file of the format is first read."""

from __future__ import annotations

from dpe_server.extractors.ooxml import package_format

FORMAT = package_format(
    "pptx", (".pptx", ".pptm"), "a PowerPoint deck", "slide", paged=True, prefix="ppt/"
)
