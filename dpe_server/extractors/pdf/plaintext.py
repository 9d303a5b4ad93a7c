"""PDFium's own text of each page of a pdf, without the extractor's layout: the second
independent reader of the word check (`check/fidelity.py`, tests/extractors/test_pdf_words.py).

The text within the page's visible box (`FPDFText_GetBoundedText` over the crop box, as
pdftotext reads only what a viewer shows), in PDFium's order, with its line breaks; the
mark it puts for a hyphen that ends a line (U+0002, the line break left out) is read as a
hyphen and a line break; nothing of
`glyphs`, `lines` or `blocks` is used, so a word they lose is still here.
"""

from __future__ import annotations

from pathlib import Path

import pypdfium2

from dpe_server.extractors.pdf.collect import PDFIUM_LOCK

_BOUNDED_HYPHEN = "\x02"
"""How the bounded text marks a hyphen that ends a line (the line break left out)."""


def page_texts(path: Path, password: str = "") -> list[str]:
    """The text of every page of the pdf at `path` (opened with `password`, empty by
    default), as PDFium's page text gives it: a page PDFium cannot load reads as no text,
    and a file it cannot open as no pages."""
    with PDFIUM_LOCK:
        try:
            pdf = pypdfium2.PdfDocument(str(path), password=password)
        except pypdfium2.PdfiumError:
            return []
        try:
            out = []
            for index in range(len(pdf)):
                try:
                    page = pdf[index]
                except pypdfium2.PdfiumError:
                    out.append("")
                    continue
                textpage = page.get_textpage()
                left, bottom, right, top = page.get_bbox()
                text = textpage.get_text_bounded(left, bottom, right, top)
                out.append(text.replace(_BOUNDED_HYPHEN, "-\n"))
                textpage.close()
                page.close()
            return out
        finally:
            pdf.close()
