"""Word documents: a page is a section, between top-level headings and section breaks. `extract` is
the extractor (the only importer of its library), imported when a file of the format is first
read."""

from __future__ import annotations

from dpe_server.extractors.ooxml import package_format

SUFFIXES = (".docx", ".docm", ".dotx", ".dotm")
"""Documents, macro-enabled documents, templates, macro-enabled templates."""

FORMAT = package_format("docx", SUFFIXES, "a Word document", "section", paged=False, prefix="word/")
