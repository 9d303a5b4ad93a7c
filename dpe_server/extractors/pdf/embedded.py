"""The files attached to a pdf (its `/EmbeddedFiles` name tree, as pypdf reads it): each a
child (docs/children.md) at `attachments/<name>` (the n-th file of one name, n > 1, at
`attachments/<n>/<name>`)."""

from __future__ import annotations

import mimetypes
from collections.abc import Iterator
from typing import BinaryIO

from dpe_server.extractors.base import Limits
from dpe_server.extractors.pdf.open import open_pdf, translated
from dpe_server.model.tree import JSON


def _attached(f: BinaryIO) -> Iterator[tuple[str, bytes]]:
    f.seek(0)
    reader = open_pdf(f)
    with translated(f):
        found = reader.attachments
        for name, datas in found.items():
            leaf = name.replace("\\", "/").rpartition("/")[2] or "attachment"
            for n, data in enumerate(datas, 1):
                yield (f"attachments/{leaf}" if n == 1 else f"attachments/{n}/{leaf}"), data


def attachments(f: BinaryIO, limits: Limits) -> list[JSON]:
    """Each attached file: `{path, name, mime_type, size}`."""
    out: list[JSON] = []
    for path, data in _attached(f):
        leaf = path.rpartition("/")[2]
        mime = mimetypes.guess_type(leaf)[0] or "application/octet-stream"
        out.append({"path": path, "name": leaf, "mime_type": mime, "size": len(data)})
    return out


def attachment(f: BinaryIO, path: str, limits: Limits) -> bytes:
    """The bytes of the attached file at `path`; KeyError when none is."""
    for found, data in _attached(f):
        if found == path:
            return data
    raise KeyError(path)
