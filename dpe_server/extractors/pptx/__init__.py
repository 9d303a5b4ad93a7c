"""PowerPoint decks: a page is a slide (one is read without the others). `extract` is the extractor,
imported when a file of the format is first read.

`context` (what the walker needs around one slide: relationships, layout and master, the page
being built, links), `shapes` (the slide's shape tree in reading order, each shape turned into
its elements), `text` (text bodies: paragraphs as text, list, code and formula blocks),
`objects` (graphic frames: tables, charts, SmartArt; pictures, audio, video), `extras` (what
sits beside the shapes: ActiveX controls, speaker notes, comments).
"""

from __future__ import annotations

from dpe_server.extractors.ooxml import package_format

SUFFIXES = (".pptx", ".pptm", ".potx", ".potm", ".ppsx", ".ppsm")
"""Decks, macro-enabled decks, templates (both kinds), slide shows (both kinds)."""

FORMAT = package_format("pptx", SUFFIXES, "a PowerPoint deck", "slide", paged=True, prefix="ppt/")
