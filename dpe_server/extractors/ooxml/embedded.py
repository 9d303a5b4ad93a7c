"""The packages embedded in an OOXML package (`word/embeddings/…`, `xl/embeddings/…`,
`ppt/embeddings/…`): an Excel sheet in a Word document, a Word document in a deck. Each is
a child (docs/children.md), its path the part's name; an OLE object (`oleObject1.bin`) is
listed too, and served when the registry reads its kind (it does not, today)."""

from __future__ import annotations

import mimetypes
from typing import BinaryIO

from dpe_server.extractors.base import Limits
from dpe_server.extractors.kit.package import Package
from dpe_server.model.tree import JSON

FOLDER = "embeddings/"


def embeddings(f: BinaryIO, prefix: str, limits: Limits) -> list[JSON]:
    """Each part under `<prefix>embeddings/`: `{path, name, mime_type, size}`."""
    f.seek(0)
    with Package(f, prefix.rstrip("/"), limits) as package:
        names = [n for n in package.names() if n.lower().startswith(prefix + FOLDER)]
        found: list[JSON] = []
        for name in names:
            leaf = name.rpartition("/")[2]
            mime = mimetypes.guess_type(leaf)[0] or "application/octet-stream"
            found.append(
                {"path": name, "name": leaf, "mime_type": mime, "size": package.size(name)}
            )
    return found


def embedding(f: BinaryIO, path: str, limits: Limits) -> bytes:
    """The bytes of the embedded part `path`, inflated under the caps; KeyError for a part
    that is not an embedding."""
    if f"/{FOLDER}" not in path:
        raise KeyError(path)
    f.seek(0)
    with Package(f, path.partition("/")[0], limits) as package:
        return package.read(path)
