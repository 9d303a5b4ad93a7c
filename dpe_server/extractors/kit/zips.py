"""What a zip is before a format reads it: the checks of any zip package (`check_zip`: what a
CFB file or a PDF under a package's suffix is, a zip directory at its end, the member count
under the cap), the kind of OOXML package it is (by its part folder: `zip_prefix`,
`zip_kind`) and the OpenDocument type its `mimetype` member names (`opendocument_kind`)."""

from __future__ import annotations

import struct
import zipfile
from typing import BinaryIO

from dpe_server.extractors.base import Limits
from dpe_server.extractors.kit.media import MIMETYPES, PACKAGE_KINDS
from dpe_server.extractors.kit.package import Package, cfb_error
from dpe_server.model.errors import CorruptError, ExtractionError, TooLargeError, UnsupportedError

_EOCD = b"PK\x05\x06"


_EOCD_SEARCH = 65536 + 22


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


def zip_prefix(f: BinaryIO) -> str | None:
    """`xl/`, `word/` or `ppt/` for an OOXML package of that kind, else None."""
    names = _names(f)
    found = [p for p in PACKAGE_KINDS if any(n.startswith(p) for n in names)]
    return found[0] if len(found) == 1 else None


def zip_kind(f: BinaryIO) -> str:
    """What a zip is, in words: the kind of OOXML package it is, else `a zip archive`."""
    prefix = zip_prefix(f)
    return PACKAGE_KINDS[prefix] if prefix else "a zip archive"


_MANIFEST = "META-INF/manifest.xml"


def opendocument_kind(f: BinaryIO, fmt: str, limits: Limits) -> str | None:
    """What an OpenDocument package is (`an OpenDocument text`), by its `mimetype`; None for
    a zip that is not one."""
    return MIMETYPES.get(package_mimetype(f, fmt, limits)[0] or "")


def package_mimetype(f: BinaryIO, fmt: str, limits: Limits) -> tuple[str | None, bool]:
    """The `mimetype` member's text (None when absent), and whether the manifest declares
    encrypted members; read through the guarded package reader."""
    try:
        with Package(f, fmt, limits) as pkg:
            mimetype = None
            if pkg.has("mimetype") and pkg.size("mimetype") <= 256:
                mimetype = pkg.read("mimetype").decode("ascii", "replace").strip()
            encrypted = pkg.has(_MANIFEST) and b"encryption-data" in pkg.head(_MANIFEST)
            return mimetype, encrypted
    except ExtractionError:
        return None, False  # the extractor, opening it again, says what is wrong
    finally:
        f.seek(0)
