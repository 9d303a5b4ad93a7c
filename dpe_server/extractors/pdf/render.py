"""A pdf page drawn by PDFium, as PNG: the picture `dpe-server view` shows an element's boxes
over. Read like any picture of the file (`isolation.pictures`: an `image` job, in a worker
process when the server runs them there), named by `{"rendered_page": N}`."""

from __future__ import annotations

import io
from typing import BinaryIO

from dpe_server.extractors.pdf.collect import PDFIUM_LOCK

SCALE = 1.5
"""Pixels per point (108 dpi): a letter page is 918 x 1188 pixels."""
MAX_SIDE = 2400
"""Pixels on the longest side at most (a poster-sized page is drawn smaller)."""


def page_png(f: BinaryIO, index: int, max_bytes: int) -> bytes | None:
    """Page `index` drawn at `SCALE` (or smaller, within `MAX_SIDE`), as PNG; None when the
    file cannot be drawn (a password, no such page) or the PNG passes `max_bytes`."""
    import pypdfium2 as pdfium

    f.seek(0)
    data = f.read()
    with PDFIUM_LOCK:  # PDFium is not thread-safe: every call holds the lock
        try:
            pdf = pdfium.PdfDocument(data)
        except pdfium.PdfiumError:
            return None
        try:
            if not 0 <= index < len(pdf):
                return None
            page = pdf[index]
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
