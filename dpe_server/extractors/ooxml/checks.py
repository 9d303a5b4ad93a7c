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

import struct
import zipfile
from typing import BinaryIO

from dpe_server.extractors.base import Limits
from dpe_server.extractors.ooxml.package import cfb_error
from dpe_server.model.errors import CorruptError, ExtractionError, TooLargeError, UnsupportedError

_EOCD = b"PK\x05\x06"
_EOCD_SEARCH = 65536 + 22


def check_package(f: BinaryIO, fmt: str, kind: str, limits: Limits, prefix: str) -> None:
    """Raise the project's error when `f` is not a plausible OOXML package of type `fmt`, whose
    parts live under `prefix` (`xl/`, `word/`, `ppt/`)."""
    check_zip(f, fmt, kind, limits)
    actual = _zip_prefix(f)
    expected = prefix
    if actual is not None and actual != expected:
        raise UnsupportedError(
            f"This file is {_kind_names()[actual]} renamed to .{fmt}; give it its own suffix."
        )
    if actual is None:
        from dpe_server.extractors.odf.checks import opendocument_kind

        what = opendocument_kind(f, fmt, limits)
        if what is not None:
            raise UnsupportedError(
                f"This file is {what} renamed to .{fmt}; give it its own suffix."
            )


def check_zip(f: BinaryIO, fmt: str, kind: str, limits: Limits) -> None:
    """The checks of any zip package (OOXML, OpenDocument): what a CFB file or a PDF with its
    suffix is, a zip directory at its end, the member count under the cap."""
    if kind == "cfb":
        err = cfb_error(f, fmt)
        assert isinstance(err, ExtractionError)
        raise err
    if kind == "pdf":
        raise UnsupportedError(f"This file is a PDF renamed to .{fmt}; rename it to .pdf.")
    if kind != "zip":
        raise CorruptError(f"The file is not a .{fmt} package (it is not a zip archive).")
    count = declared_members(f)
    if count is None:
        raise CorruptError(
            f"The .{fmt} package is incomplete (no zip directory at its end); it may be "
            "truncated or still being written.",
            transient=True,
        )
    if count > limits.max_members:
        raise TooLargeError(
            f"The package holds {count} parts, over the limit of {limits.max_members}."
        )


def declared_members(f: BinaryIO) -> int | None:
    """The member count the zip's end-of-central-directory record declares, or None."""
    size = f.seek(0, 2)
    start = max(0, size - _EOCD_SEARCH)
    f.seek(start)
    tail = f.read()
    at = tail.rfind(_EOCD)
    if at < 0 or len(tail) - at < 22:
        return None
    (total,) = struct.unpack("<H", tail[at + 10 : at + 12])
    if total == 0xFFFF:  # zip64: the real count is elsewhere; let zipfile read it
        return 0
    return int(total)


def _names(f: BinaryIO) -> list[str]:
    f.seek(0)
    try:
        with zipfile.ZipFile(f) as z:
            return [n.replace("\\", "/").lstrip("/").lower() for n in z.namelist()]
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, KeyError):
        return []


def _zip_prefix(f: BinaryIO) -> str | None:
    """`xl/`, `word/` or `ppt/` for an OOXML package of that kind, else None."""
    names = _names(f)
    found = [p for p in _kind_names() if any(n.startswith(p) for n in names)]
    return found[0] if len(found) == 1 else None


def zip_kind(f: BinaryIO) -> str:
    """What a zip is, in words: the kind of OOXML package it is, else `a zip archive`."""
    prefix = _zip_prefix(f)
    return _kind_names()[prefix] if prefix else "a zip archive"


def _kind_names() -> dict[str, str]:
    """The registered OOXML formats' part folders and what they are (`xl/`: an Excel workbook)."""
    from dpe_server.extractors.registry import FORMATS

    return {f.package_prefix: f.kind_name for f in FORMATS.values() if f.package_prefix}
