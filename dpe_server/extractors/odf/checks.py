"""Checks of an OpenDocument package before its extractor runs.

- an OLE2/CFB file or a PDF named .odt/.odp: `unsupported`, naming what it is;
- not a zip: `corrupt`; a zip with no directory at its end: `corrupt`, transient (it may be
  being written); more members than the cap: `too_large`;
- a package whose `META-INF/manifest.xml` declares encryption: `encrypted`;
- a package whose `mimetype` says another OpenDocument type (a spreadsheet named .odt), or an
  OOXML package: `unsupported`, naming it;
- a file that is not a zip is taken for a flat XML document (.fodt, .fodp, whatever its
  suffix): its root's `office:mimetype`, read from the first bytes without parsing, must be
  one of the format's, else `unsupported` naming what it is, or `corrupt` when it names none.
"""

from __future__ import annotations

import re
from typing import BinaryIO

from dpe_server.extractors.base import Limits
from dpe_server.extractors.kit.media import MIMETYPES
from dpe_server.extractors.kit.zips import check_zip, package_mimetype, zip_kind
from dpe_server.model.errors import (
    CorruptError,
    EncryptedError,
    UnsupportedError,
)

_FLAT_MIMETYPE = re.compile(rb"<(?:\w+:)?document\b[^>]*?\bmimetype=[\"']([\w.+/-]{1,100})[\"']")
"""The root `office:document` of a flat file and its `office:mimetype`."""
_FLAT_HEAD = 64 * 1024


def check_package(
    f: BinaryIO, fmt: str, kind: str, limits: Limits, mimetypes: tuple[str, ...]
) -> None:
    if kind == "other":
        check_flat(f, fmt, mimetypes)
        return
    check_zip(f, fmt, kind, limits)
    mimetype, encrypted = package_mimetype(f, fmt, limits)
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


def check_flat(f: BinaryIO, fmt: str, mimetypes: tuple[str, ...]) -> None:
    """A flat OpenDocument file's root names one of `mimetypes` (read from its first bytes)."""
    f.seek(0)
    found = _FLAT_MIMETYPE.search(f.read(_FLAT_HEAD))
    f.seek(0)
    mimetype = found[1].decode("ascii") if found else None
    if mimetype in mimetypes:
        return
    if mimetype in MIMETYPES:
        raise UnsupportedError(
            f"This file is a flat XML {MIMETYPES[mimetype].removeprefix('an ')} renamed to "
            f".{fmt}; give it its own suffix."
        )
    raise CorruptError(
        f"This .{fmt} file is neither an OpenDocument package (a zip) nor a flat OpenDocument "
        "XML document of its kind."
    )
