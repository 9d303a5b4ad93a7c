"""One pass over a pdf page with PDFium: positioned text runs, ruling lines, image draws.

`collect_page` takes a pypdfium2 page and records:

- `Run`s (`glyphs`): text with its measured start and end x, baseline y, rendered size, font
  name, bold, monospace, and the extent of each word;
- axis-aligned ruling `Segment`s from path objects (`shapes`, for ruled tables);
- the image objects drawn and their boxes (`shapes`);
- the page's box and how many annotations it has.

Everything is in page space (points, origin bottom left). The types live in `items`.
"""

from __future__ import annotations

import threading
from typing import Any

import pypdfium2.raw as pdfium_c
from pypdfium2 import PdfiumError

from dpe_server.extractors.pdf.glyphs import read_runs
from dpe_server.extractors.pdf.items import (
    Draw,
    PageContent,
    Run,
    Segment,
    font_name,
    is_bold,
    is_mono,
    plain,
)
from dpe_server.extractors.pdf.shapes import collect_shapes

__all__ = [
    "PDFIUM_LOCK",
    "Draw",
    "PageContent",
    "Run",
    "Segment",
    "collect_page",
    "font_name",
    "is_bold",
    "is_mono",
    "plain",
]

PDFIUM_LOCK = threading.RLock()
"""PDFium is not thread-safe: every call into it in this process holds this lock."""


def on_page(runs: list[Run], box: tuple[float, float, float, float]) -> list[Run]:
    """The runs that reach into the page's visible box: text drawn wholly outside it (a
    damaged `Tm` placing a word millions of points away, in a size of thousands) is not on
    the page, and would make the page's body size and columns out of it."""
    left, bottom, right, top = box
    return [
        r
        for r in runs
        if r.x1 >= left and r.x0 <= right and r.y + r.size >= bottom and r.y - r.size <= top
    ]


def collect_page(page: Any, max_chars: int) -> PageContent:
    """Text runs, rules and image draws of `page` (a `pypdfium2.PdfPage`)."""
    content = PageContent()
    with PDFIUM_LOCK:
        # the raw text page, closed here: pypdfium2's wrapper would add a finalizer per page
        textpage = pdfium_c.FPDFText_LoadPage(page.raw)
        if not textpage:
            raise PdfiumError("Failed to load text page.")
        try:
            content.runs, content.truncated, content.unmapped = read_runs(textpage, max_chars)
        finally:
            pdfium_c.FPDFText_ClosePage(textpage)
        collect_shapes(page.raw, content)
        rect = pdfium_c.FS_RECTF()
        if pdfium_c.FPDF_GetPageBoundingBox(page.raw, rect):
            content.box = (rect.left, rect.bottom, rect.right, rect.top)
            content.runs = on_page(content.runs, content.box)
        content.annots = max(0, pdfium_c.FPDFPage_GetAnnotCount(page.raw))
    content.chars = sum(len(r.text) for r in content.runs)
    return content
