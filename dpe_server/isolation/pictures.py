"""Picture bytes for a Level 3 read of an image element (SPEC §7).

The bytes are read from the file when asked, never kept in the tree, and like any parse of an
untrusted file they are read by an extraction job (`jobs.run_job`, op `image`), in a worker
process when the server runs them there, by the file's format (`Format.picture`: an OOXML image
element names its zip member in `metadata.part`, a pdf image element its image stream in
`metadata.ref`). A picture file beside the document (`metadata.file`, a path relative to it, for
the formats whose `Format.pictures_beside` says so: Markdown, web pages) is opened here, never
by the format, and only inside the served folder: the path resolved against the document's
folder must not climb out of the root (`..`), nor be absolute, nor pass a symlink
(`open_confined`), nor be a document's child's (inside an archive or a message: none served);
its name must be a picture's and it must be a regular file; nothing remote is ever fetched.
Formats a client can show (png, jpeg, gif, webp, by their content) under 5 MB are returned;
others are left out.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from dpe_server.extractors import file_type, format_of
from dpe_server.extractors.kit.media import image_mime
from dpe_server.isolation.confine import open_confined
from dpe_server.model import children
from dpe_server.model.errors import DpeError
from dpe_server.model.tree import JSON

log = logging.getLogger(__name__)

SHOWABLE = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
MAX_BLOB_BYTES = 5 * 1024 * 1024


def picture(
    f: BinaryIO, rel: str, metadata: Mapping[str, JSON], root: Path | None = None
) -> tuple[bytes, str] | None:
    """The bytes and mime type of the picture an image element's metadata names, when it can
    be shown; else None. `root` is the served folder `rel` is in (a picture beside the
    document is read from it: none without it)."""
    fmt = format_of(rel)
    if fmt is None:
        return None
    file = metadata.get("file")
    try:
        if fmt.pictures_beside and isinstance(file, str):
            data = _beside(root, rel, file) if root is not None else None
        elif fmt.picture is not None:
            data = fmt.picture(f, file_type(rel), metadata, MAX_BLOB_BYTES)
        else:
            return None
    except (DpeError, OSError, KeyError, ValueError):
        log.debug("no picture bytes for %s", rel, exc_info=True)
        return None
    if data is None or len(data) > MAX_BLOB_BYTES:
        return None
    mime = image_mime("", data[:64])
    return (data, mime) if mime in SHOWABLE else None


def beside(rel: str, file: str) -> str | None:
    """The path in the folder of `file`, a path relative to the document at `rel` (`..` taken
    as a URL takes it), or None when it leaves the folder, is absolute or names no file, or the
    document is a child (its pictures are inside its container, not in the folder)."""
    file_rel, inner = children.split(rel)
    name = file.rpartition("/")[2]
    if inner or name in ("", ".", "..") or file.startswith("/") or "\0" in file or "\\" in file:
        return None
    parts = list(PurePosixPath(file_rel).parent.parts)
    for part in file.split("/"):
        if part == "..":
            if not parts:
                return None  # above the served folder
            parts.pop()
        elif part not in ("", "."):
            parts.append(part)
    return "/".join(parts)


def _beside(root: Path, rel: str, file: str) -> bytes | None:
    """The bytes of the picture file `file` beside the document `rel` (`beside`), opened
    confined to `root`, when its name is a showable picture's and it is at most
    `MAX_BLOB_BYTES`; else None."""
    path = beside(rel, file)
    if path is None or image_mime(path) not in SHOWABLE:
        return None
    with open_confined(root, path) as found:
        if os.fstat(found.fileno()).st_size > MAX_BLOB_BYTES:
            return None
        return found.read(MAX_BLOB_BYTES + 1)
