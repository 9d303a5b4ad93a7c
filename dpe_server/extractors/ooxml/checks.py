"""Checks of an OOXML package before its extractor runs: what the first bytes, the zip's end
record and its member names say.

- an OLE2/CFB file named .xlsx/.docx/.pptx: `encrypted` (a password-protected OOXML) or
  `unsupported` naming the legacy type (a renamed .doc/.xls/.ppt);
- a PDF named as an OOXML file: `unsupported`;
- a package of another kind (a workbook named .docx, an OpenDocument file): `unsupported`,
  naming it;
- a zip declaring more members than `limits.max_members`: `too_large`;
- a zip with no directory at its end: `corrupt`, transient (it may be being written).

The package reader keeps its own checks (inflation caps while streaming, no DOCTYPE).
"""

from __future__ import annotations

from typing import BinaryIO

from dpe_server.extractors.base import Limits
from dpe_server.extractors.kit.media import PACKAGE_KINDS
from dpe_server.extractors.kit.zips import check_zip, zip_prefix
from dpe_server.model.errors import UnsupportedError


def check_package(f: BinaryIO, fmt: str, kind: str, limits: Limits, prefix: str) -> None:
    """Raise the project's error when `f` is not a plausible OOXML package of type `fmt`, whose
    parts live under `prefix` (`xl/`, `word/`, `ppt/`)."""
    check_zip(f, fmt, kind, limits)
    actual = zip_prefix(f)
    expected = prefix
    if actual is not None and actual != expected:
        raise UnsupportedError(
            f"This file is {PACKAGE_KINDS[actual]} renamed to .{fmt}; give it its own suffix."
        )
    if actual is None:
        from dpe_server.extractors.kit.zips import opendocument_kind

        what = opendocument_kind(f, fmt, limits)
        if what is not None:
            raise UnsupportedError(
                f"This file is {what} renamed to .{fmt}; give it its own suffix."
            )
