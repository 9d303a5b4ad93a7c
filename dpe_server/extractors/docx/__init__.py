"""Word documents: a page is a section, between top-level headings and section breaks. `extract` is
the extractor, imported when a file of the format is first read.

Around one part: `xml` (WordprocessingML names, parts parsed with Strict OOXML mapped),
`parts` (the main part, notes, comments, headers and footers, altChunk content), `styles`
(what the styles part says of a paragraph), `numbering` (what a list item is and the label Word
shows on it). The page plan: `pages` (the body flattened into the blocks `kit.pages` plans pages
from). The elements: `body` (a planned page's blocks as elements, in document order), `runs`
(one paragraph: its visible text and the elements inside it), `items` (`PartCtx`: which part a
module reads), `tables` (Word tables as grids of display strings), `drawing` (pictures, charts,
SmartArt, text boxes, embedded objects, ActiveX controls), `forms` (content controls and
legacy form fields), `comments` (the comments, replies under the comment they answer).
"""

from __future__ import annotations

from dpe_server.extractors.ooxml import package_format

SUFFIXES = (".docx", ".docm", ".dotx", ".dotm")
"""Documents, macro-enabled documents, templates, macro-enabled templates."""

FORMAT = package_format("docx", SUFFIXES, "a Word document", "section", paged=False, prefix="word/")
