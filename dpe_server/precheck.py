"""Checks made on every file before its extractor runs, in one place for all formats.

`precheck(f, suffix, limits)` looks at the first bytes (and, for a zip, its central
directory's end record and member names) and refuses what the suffix does not match:

- an empty file: `corrupt`, transient (it may be being written);
- an OLE2/CFB file named .xlsx/.docx/.pptx: `encrypted` (a password-protected OOXML) or
  `unsupported` naming the legacy type (a renamed .doc/.xls/.ppt);
- a PDF named as an OOXML file, a zip or CFB named .pdf: `unsupported`, naming what it is;
- an OOXML package of another kind (a workbook named .docx): `unsupported`, naming it;
- a zip declaring more members than `limits.max_members`: `too_large`;
- anything else not starting as its format does: `corrupt`.

The extractors keep their own checks (`ooxml.Package` enforces inflation caps while
streaming, refuses DOCTYPE); this adds what no single extractor can see.
"""

from __future__ import annotations

import struct
import zipfile
from typing import BinaryIO

from dpe_server.errors import CorruptError, ExtractionError, TooLargeError, UnsupportedError
from dpe_server.extractors import Limits
from dpe_server.extractors.ooxml import cfb_error, sniff

OOXML_KINDS = {"xlsx": "xl/", "xlsm": "xl/", "docx": "word/", "docm": "word/"}
OOXML_KINDS |= {"pptx": "ppt/", "pptm": "ppt/"}
KIND_NAMES = {"xl/": "an Excel workbook", "word/": "a Word document", "ppt/": "a PowerPoint deck"}
PDF_HEAD = 1024
"""pdf readers accept a header anywhere in the first kilobyte."""
_EOCD = b"PK\x05\x06"
_EOCD_SEARCH = 65536 + 22


def precheck(f: BinaryIO, suffix: str, limits: Limits) -> None:
    """Raise the project's error when `f` is not a plausible file of `suffix`. Rewinds `f`."""
    fmt = suffix.lower().lstrip(".")
    kind = sniff(f)
    if kind == "empty":
        raise CorruptError(
            "The file is empty (0 bytes); it may still be being written.", transient=True
        )
    try:
        if fmt == "pdf":
            _check_pdf(f, kind)
        elif fmt in OOXML_KINDS:
            _check_ooxml(f, fmt, kind, limits)
    finally:
        f.seek(0)


def _check_pdf(f: BinaryIO, kind: str) -> None:
    if kind == "zip":
        raise UnsupportedError(f"This file is {_zip_kind(f)} renamed to .pdf, not a PDF.")
    if kind == "cfb":
        raise UnsupportedError(
            "This file is a legacy Office (OLE2) document renamed to .pdf, not a PDF."
        )
    f.seek(0)
    if b"%PDF-" not in f.read(PDF_HEAD):
        raise CorruptError("This file is not a PDF: it does not start with a PDF header.")


def _check_ooxml(f: BinaryIO, fmt: str, kind: str, limits: Limits) -> None:
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
    actual = _zip_prefix(f)
    expected = OOXML_KINDS[fmt]
    if actual is not None and actual != expected:
        raise UnsupportedError(
            f"This file is {KIND_NAMES[actual]} renamed to .{fmt}; give it its own suffix."
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
    found = [p for p in KIND_NAMES if any(n.startswith(p) for n in names)]
    return found[0] if len(found) == 1 else None


def _zip_kind(f: BinaryIO) -> str:
    prefix = _zip_prefix(f)
    return KIND_NAMES[prefix] if prefix else "a zip archive"
