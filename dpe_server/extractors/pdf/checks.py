"""Checks of a pdf before its extractor runs: a zip or an OLE2 file renamed to .pdf is
`unsupported`, naming what it is; a file with no PDF header in its first kilobyte is `corrupt`."""

from __future__ import annotations

from typing import BinaryIO

from dpe_server.extractors.base import Limits
from dpe_server.model.errors import CorruptError, UnsupportedError

PDF_HEAD = 1024
"""pdf readers accept a header anywhere in the first kilobyte."""


def check_pdf(f: BinaryIO, fmt: str, kind: str, limits: Limits) -> None:
    if kind == "zip":
        from dpe_server.extractors.kit.zips import zip_kind

        raise UnsupportedError(f"This file is {zip_kind(f)} renamed to .pdf, not a PDF.")
    if kind == "cfb":
        raise UnsupportedError(
            "This file is a legacy Office (OLE2) document renamed to .pdf, not a PDF."
        )
    f.seek(0)
    if b"%PDF-" not in f.read(PDF_HEAD):
        raise CorruptError("This file is not a PDF: it does not start with a PDF header.")
