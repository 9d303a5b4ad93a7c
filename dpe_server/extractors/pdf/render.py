"""A pdf page drawn by PDFium, as PNG: the picture `dpe-server view` shows an element's boxes
over. Read like any picture of the file (`isolation.pictures`: an `image` job, in a worker
process when the server runs them there), named by `{"rendered_page": N}`; or, for the pdf
LibreOffice exported an office file to, by `{"rendered_page": 0, "page_texts": [...]}`: the
first text of each of the document's pages up to the one wanted, found in that order
(`page_of_texts`), since a docx or odt page (a section) is not a printed page."""

from __future__ import annotations

import io
import unicodedata
from collections.abc import Sequence
from typing import Any, BinaryIO, NamedTuple

from dpe_server.extractors.pdf.collect import PDFIUM_LOCK

SCALE = 1.5
"""Pixels per point (108 dpi): a letter page is 918 x 1188 pixels."""
MAX_SIDE = 2400
"""Pixels on the longest side at most (a poster-sized page is drawn smaller)."""


KEY_CHARS = 40
"""Letters and digits of a page's first text looked for in the pdf's pages."""


def _squeezed(text: str) -> str:
    """Letters and digits only, in NFKC and case-folded: a text's line breaks, list marks and
    punctuation as the pdf prints them do not matter."""
    return "".join(c for c in unicodedata.normalize("NFKC", text) if c.isalnum()).casefold()


def page_of_texts(pdf: Any, texts: Sequence[str]) -> int | None:
    """The page of `pdf` where the last of `texts` is, each looked for from the page the one
    before was found on (a heading repeated later in the document is found in its place);
    an empty text, or one not found, is passed over. None when the last is not found."""
    found: dict[int, str] = {}

    def text_of(i: int) -> str:
        if i not in found:
            page = pdf[i]
            try:
                textpage = page.get_textpage()
                try:
                    found[i] = _squeezed(textpage.get_text_range())
                finally:
                    textpage.close()
            finally:
                page.close()
        return found[i]

    at: int | None = 0
    for n, text in enumerate(texts):
        key = _squeezed(text)[:KEY_CHARS]
        start = at or 0
        hit = next((i for i in range(start, len(pdf)) if key and key in text_of(i)), None)
        if n == len(texts) - 1:
            return hit
        at = start if hit is None else hit
    return None


class SheetPages(NamedTuple):
    """A workbook's export: `sheets` sheets, and the page of the one wanted among the sheets
    shown (-1: a hidden one), for an export that left the hidden sheets out."""

    sheets: int
    shown_page: int


def page_png(
    f: BinaryIO,
    index: int,
    max_bytes: int,
    texts: Sequence[str] = (),
    sheets: SheetPages | None = None,
) -> bytes | None:
    """Page `index` (or the page `page_of_texts` finds `texts` on; or, for `sheets`, the page
    among the sheets shown when the pdf has not a page for every sheet) drawn at `SCALE` (or
    smaller, within `MAX_SIDE`), as PNG; None when the file cannot be drawn (a password, no
    such page) or the PNG passes `max_bytes`."""
    import pypdfium2 as pdfium

    f.seek(0)
    data = f.read()
    with PDFIUM_LOCK:  # PDFium is not thread-safe: every call holds the lock
        try:
            pdf = pdfium.PdfDocument(data)
        except pdfium.PdfiumError:
            return None
        try:
            drawn: int | None = page_of_texts(pdf, texts) if texts else index
            if sheets is not None and len(pdf) != sheets.sheets:
                drawn = sheets.shown_page
            if drawn is None or not 0 <= drawn < len(pdf):
                return None
            page = pdf[drawn]
            try:
                width, height = page.get_size()
                scale = min(SCALE, MAX_SIDE / max(width, height, 1.0))
                image = page.render(scale=scale).to_pil()
            finally:
                page.close()
        finally:
            pdf.close()
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=False)
    png = out.getvalue()
    return png if len(png) <= max_bytes else None
