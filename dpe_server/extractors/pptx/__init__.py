"""PowerPoint decks: a page is a slide (one is read without the others). `extract` is the extractor
(the only importer of its library), imported when a file of the format is first read."""

from __future__ import annotations

from dpe_server.extractors.ooxml import package_format

SUFFIXES = (".pptx", ".pptm", ".potx", ".potm", ".ppsx", ".ppsm")
"""Decks, macro-enabled decks, templates (both kinds), slide shows (both kinds)."""

FORMAT = package_format("pptx", SUFFIXES, "a PowerPoint deck", "slide", paged=True, prefix="ppt/")
