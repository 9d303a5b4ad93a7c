"""Picture bytes for a Level 3 read of an image element (SPEC §7).

The bytes are read from the file when asked, never kept in the tree, and like any parse of an
untrusted file they are read by an extraction job (`jobs.run_job`, op `image`), in a worker
process when the server runs them there: an OOXML image element names its zip member in
`metadata.part`; a pdf image element names its image stream in `metadata.ref`. Formats a
client can show (png, jpeg, gif, webp) under 5 MB are returned; others are left out.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import BinaryIO

from dpe_server.errors import DpeError
from dpe_server.extractors import DEFAULT_LIMITS
from dpe_server.extractors.drawingml_images import image_mime
from dpe_server.extractors.ooxml import Package
from dpe_server.model import JSON

log = logging.getLogger(__name__)

SHOWABLE = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
MAX_BLOB_BYTES = 5 * 1024 * 1024


def picture(f: BinaryIO, rel: str, metadata: Mapping[str, JSON]) -> tuple[bytes, str] | None:
    """The bytes and mime type of the picture an image element's metadata names, when it can
    be shown; else None."""
    try:
        data = _pdf_image(f, metadata) if rel.lower().endswith(".pdf") else None
        if data is None:
            data = _package_image(f, rel, metadata)
    except (DpeError, OSError, KeyError, ValueError):
        log.debug("no picture bytes for %s", rel, exc_info=True)
        return None
    if data is None or len(data) > MAX_BLOB_BYTES:
        return None
    mime = image_mime("", data[:64])
    return (data, mime) if mime in SHOWABLE else None


def _package_image(f: BinaryIO, rel: str, metadata: Mapping[str, JSON]) -> bytes | None:
    """An OOXML picture: the zip member the element names in `metadata.part`."""
    part = metadata.get("part")
    if not isinstance(part, str):
        return None
    with Package(f, rel.rsplit(".", 1)[-1], DEFAULT_LIMITS) as pkg:
        if not pkg.has(part) or pkg.size(part) > MAX_BLOB_BYTES:
            return None
        return pkg.read(part)


def _pdf_image(f: BinaryIO, metadata: Mapping[str, JSON]) -> bytes | None:
    """A pdf picture: the image stream the element names in `metadata.ref` (JPEG as stored,
    others converted to PNG when Pillow is installed, else left out)."""
    ref = metadata.get("ref")
    if not isinstance(ref, str) or not ref:
        return None
    from dpe_server.extractors.pdf import image_bytes

    found = image_bytes(f, ref, MAX_BLOB_BYTES)
    return None if found is None else found[0]
