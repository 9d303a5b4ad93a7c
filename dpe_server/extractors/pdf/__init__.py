"""PDF: a page is a PDF page.

`FORMAT` is all the server knows of the format; `extract` is its extractor (its modules are the
only importers of pypdf and pypdfium2), imported when a file of it is first read.

The files attached to a pdf (`embedded`) are documents of their own (docs/children.md).

Opening and reading a page: `checks` (what a file under .pdf really is, before the extractor),
`open` (sniffing, PDFium first, pypdf when needed, errors translated), `props` (document
properties and the outline's page map), `collect` (one PDFium pass over a page, its types in
`items`: text runs from `glyphs`, through PDFium's private calls in `prototypes`, with
`textnorm` and `accents`; ruling segments and image draws from `shapes`), `visual`
(right-to-left text from visual order back to logical), `picture_page` (a picture file's
recognised words laid out as a scanned page's, what the registry hands the picture format),
`scanned` (pages that are pictures, recognised, their words as runs), `plaintext` (PDFium's own
text, the word check's second reader).

The layout recovered from them: `lines` (runs into reading-order groups and lines),
`furniture` (running headers and footers), `blocks` (lines into headings, paragraphs, lists,
code and tables), `headings` (which lines are headings, at what level), `sideheads`
(headings in a narrow column left of the body), `runin` (a numbered heading run into its
body), `markers` (list markers and their values), `aligned` (borderless tables), `wrapped`
(their rows whose cells wrap onto several lines), `tables` (ruled tables). Beside the text:
`annots` (links, markup, form fields, widgets, audio and video), `images` (image XObjects and
their alt text); `render` (a page drawn by PDFium, the picture `dpe-server view` shows).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import BinaryIO

from dpe_server.extractors.base import Format, Limits
from dpe_server.model.tree import JSON


def _check(f: BinaryIO, fmt: str, kind: str, limits: Limits) -> None:
    from dpe_server.extractors.pdf.checks import check_pdf

    check_pdf(f, fmt, kind, limits)


def _picture(f: BinaryIO, fmt: str, metadata: Mapping[str, JSON], max_bytes: int) -> bytes | None:
    """The image stream the element names in `metadata.ref` (JPEG as stored, others converted
    to PNG when Pillow is installed, else left out); or, for `rendered_page`, that page drawn
    by PDFium (`render`: what `dpe-server view` draws element boxes over), or the page
    `page_texts` are found on, or `shown_page` when the pdf has not one page for each of
    `sheets` (an office file's pdf export)."""
    page = metadata.get("rendered_page")
    if isinstance(page, int) and not isinstance(page, bool):
        from dpe_server.extractors.pdf.render import SheetPages, page_png

        texts = metadata.get("page_texts")
        wanted = [str(t) for t in texts] if isinstance(texts, list) else []
        sheets, shown = metadata.get("sheets"), metadata.get("shown_page")
        pages = (
            SheetPages(sheets, shown)
            if isinstance(sheets, int) and isinstance(shown, int)
            else None
        )
        return page_png(f, page, max_bytes, wanted, pages)
    ref = metadata.get("ref")
    if not isinstance(ref, str) or not ref:
        return None
    from dpe_server.extractors.pdf.extract import image_bytes

    found = image_bytes(f, ref, max_bytes)
    return None if found is None else found[0]


def _attachments(f: BinaryIO, limits: Limits) -> list[JSON]:
    from dpe_server.extractors.pdf.embedded import attachments

    return attachments(f, limits)


def _attachment(f: BinaryIO, path: str, limits: Limits) -> bytes:
    from dpe_server.extractors.pdf.embedded import attachment

    return attachment(f, path, limits)


FORMAT = Format(
    name="pdf",
    suffixes=(".pdf",),
    kind_name="a PDF",
    page_unit="page",
    paged=True,
    extractor="dpe_server.extractors.pdf.extract:EXTRACTOR",
    check=_check,
    picture=_picture,
    member=_attachment,
    embedded=_attachments,
)
