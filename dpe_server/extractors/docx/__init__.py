"""Word documents: a page is a section, between top-level headings and section breaks. `extract` is
the extractor (the only importer of its library), imported when a file of the format is first
read."""

from __future__ import annotations

from dpe_server.extractors.ooxml import package_format

FORMAT = package_format(
    "docx", (".docx", ".docm"), "a Word document", "section", paged=False, prefix="word/"
)
