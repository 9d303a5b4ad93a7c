"""The files attached to a pdf (its `/EmbeddedFiles` name tree, as pypdf reads it): each a
child (docs/children.md) at `attachments/<name>` (the n-th file of one name, n > 1, at
`attachments/<n>/<name>`); and the files its pages' file attachment annotations hold, at
`pages/<page>/<name>` (page from 1; `pages/<page>/<n>/<name>` for the n-th of one name)."""

from __future__ import annotations

import mimetypes
from collections.abc import Iterator
from typing import Any, BinaryIO

from dpe_server.extractors.base import Limits
from dpe_server.extractors.pdf.open import open_pdf, translated
from dpe_server.model.tree import JSON


def _attached(f: BinaryIO) -> Iterator[tuple[str, bytes]]:
    f.seek(0)
    reader = open_pdf(f)
    with translated(f):
        found = reader.attachments
        for name, datas in found.items():
            leaf = _leaf(name)
            for n, data in enumerate(datas, 1):
                yield (f"attachments/{leaf}" if n == 1 else f"attachments/{n}/{leaf}"), data
        for index, page in enumerate(reader.pages, 1):
            taken: set[str] = set()
            for name, data in _annotated(page):
                leaf = _leaf(name)
                path = f"pages/{index}/{leaf}"
                n = 1
                while path in taken:
                    n += 1
                    path = f"pages/{index}/{n}/{leaf}"
                taken.add(path)
                yield path, data


def _leaf(name: str) -> str:
    return name.replace("\\", "/").rpartition("/")[2] or "attachment"


def _annotated(page: Any) -> Iterator[tuple[str, bytes]]:
    """The files a page's file attachment annotations hold (`/Subtype /FileAttachment`, the
    file in its file specification's `/EF`): name and bytes."""
    annots = page.get("/Annots")
    annots = annots.get_object() if annots is not None else None
    for ref in annots if isinstance(annots, list) else ():
        annot = ref.get_object()
        if not isinstance(annot, dict) or annot.get("/Subtype") != "/FileAttachment":
            continue
        spec = annot.get("/FS")
        spec = spec.get_object() if spec is not None else None
        files = spec.get("/EF") if isinstance(spec, dict) else None
        files = files.get_object() if files is not None else None
        stream = (files.get("/UF") or files.get("/F")) if isinstance(files, dict) else None
        if stream is None or not isinstance(spec, dict):
            continue
        name = spec.get("/UF") or spec.get("/F") or "attachment"
        yield str(name), stream.get_object().get_data()


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
