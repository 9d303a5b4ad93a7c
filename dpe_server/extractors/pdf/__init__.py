"""PDF: a page is a PDF page.

`FORMAT` is all the server knows of the format; `extract` is its extractor (its modules are the
only importers of pypdf and pypdfium2), imported when a file of it is first read.
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
    to PNG when Pillow is installed, else left out)."""
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
