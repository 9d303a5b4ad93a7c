"""Checks of an OpenDocument package before its extractor runs.

- an OLE2/CFB file or a PDF named .odt/.odp: `unsupported`, naming what it is;
- not a zip: `corrupt`; a zip with no directory at its end: `corrupt`, transient (it may be
  being written); more members than the cap: `too_large`;
- a package whose `META-INF/manifest.xml` declares encryption: `encrypted`;
- a package whose `mimetype` says another OpenDocument type (a spreadsheet named .odt), or an
  OOXML package: `unsupported`, naming it.
"""

from __future__ import annotations

import zipfile
from typing import BinaryIO

from dpe_server.extractors.base import Limits
from dpe_server.extractors.odf import MIMETYPES
from dpe_server.extractors.ooxml.checks import check_zip, zip_kind
from dpe_server.model.errors import EncryptedError, UnsupportedError

_MANIFEST = "META-INF/manifest.xml"
_MANIFEST_HEAD = 1024 * 1024


def check_package(
    f: BinaryIO, fmt: str, kind: str, limits: Limits, mimetypes: tuple[str, ...]
) -> None:
    check_zip(f, fmt, kind, limits)
    mimetype, encrypted = _mimetype(f)
    if encrypted:
        raise EncryptedError(
            f"This .{fmt} file is password-protected; save an unprotected copy to read it."
        )
    if mimetype in mimetypes:
        return
    if mimetype in MIMETYPES:
        raise UnsupportedError(
            f"This file is {MIMETYPES[mimetype]} renamed to .{fmt}; give it its own suffix."
        )
    what = zip_kind(f)
    if what != "a zip archive":
        raise UnsupportedError(f"This file is {what} renamed to .{fmt}; give it its own suffix.")
    if mimetype is None:
        return  # no mimetype member: the extractor says what is missing
    raise UnsupportedError(f"This file is a zip of type {mimetype!r}, not a .{fmt} document.")


def _mimetype(f: BinaryIO) -> tuple[str | None, bool]:
    """The `mimetype` member's text (None when absent), and whether the manifest declares
    encrypted members."""
    f.seek(0)
    try:
        with zipfile.ZipFile(f) as z:
            names = {n.lower(): n for n in z.namelist()}
            mimetype = None
            if "mimetype" in names and z.getinfo(names["mimetype"]).file_size <= 256:
                mimetype = z.read(names["mimetype"]).decode("ascii", "replace").strip()
            encrypted = False
            manifest = names.get(_MANIFEST.lower())
            if manifest is not None:
                with z.open(manifest) as member:
                    encrypted = b"encryption-data" in member.read(_MANIFEST_HEAD)
            return mimetype, encrypted
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, KeyError, NotImplementedError):
        return None, False
    finally:
        f.seek(0)
