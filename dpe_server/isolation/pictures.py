"""Picture bytes for a Level 3 read of an image element (SPEC §7).

The bytes are read from the file when asked, never kept in the tree, and like any parse of an
untrusted file they are read by an extraction job (`jobs.run_job`, op `image`), in a worker
process when the server runs them there, by the file's format (`Format.picture`: an OOXML
image element names its zip member in `metadata.part`, a pdf image element its image stream
in `metadata.ref`). Formats a client can show (png, jpeg, gif, webp) under 5 MB are returned;
others are left out.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import BinaryIO

from dpe_server.extractors import file_type, format_of
from dpe_server.extractors.kit.media import image_mime
from dpe_server.model.errors import DpeError
from dpe_server.model.tree import JSON

log = logging.getLogger(__name__)

SHOWABLE = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
MAX_BLOB_BYTES = 5 * 1024 * 1024


def picture(f: BinaryIO, rel: str, metadata: Mapping[str, JSON]) -> tuple[bytes, str] | None:
    """The bytes and mime type of the picture an image element's metadata names, when it can
    be shown; else None."""
    fmt = format_of(rel)
    if fmt is None or fmt.picture is None:
        return None
    try:
        data = fmt.picture(f, file_type(rel), metadata, MAX_BLOB_BYTES)
    except (DpeError, OSError, KeyError, ValueError):
        log.debug("no picture bytes for %s", rel, exc_info=True)
        return None
    if data is None or len(data) > MAX_BLOB_BYTES:
        return None
    mime = image_mime("", data[:64])
    return (data, mime) if mime in SHOWABLE else None
