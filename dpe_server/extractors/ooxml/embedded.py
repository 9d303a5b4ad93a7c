"""The packages embedded in an OOXML package (`word/embeddings/…`, `xl/embeddings/…`,
`ppt/embeddings/…`): an Excel sheet in a Word document, a Word document in a deck. Each is
a child (docs/children.md), its path the part's name; an OLE object (`oleObject1.bin`) is
listed by the file it carries (`oleobject.carried`), at `<part>/<name>`
(`word/embeddings/oleObject1.bin/report.pdf`), or as itself when it carries none."""

from __future__ import annotations

import mimetypes
from typing import BinaryIO

from dpe_server.extractors.base import Limits
from dpe_server.extractors.kit.package import Package
from dpe_server.extractors.ooxml.oleobject import BIN, carried
from dpe_server.model.tree import JSON

FOLDER = "embeddings/"


def embeddings(f: BinaryIO, prefix: str, limits: Limits) -> list[JSON]:
    """Each part under `<prefix>embeddings/`: `{path, name, mime_type, size}`."""
    f.seek(0)
    with Package(f, prefix.rstrip("/"), limits) as package:
        names = [n for n in package.names() if n.lower().startswith(prefix + FOLDER)]
        found: list[JSON] = []
        for name in names:
            leaf, size = name.rpartition("/")[2], package.size(name)
            path = name
            if leaf.lower().endswith(BIN):
                inside = carried(package.read(name), leaf[: -len(BIN)])
                if inside is not None:
                    leaf, size = inside[0], len(inside[1])
                    path = f"{name}/{leaf}"
            mime = mimetypes.guess_type(leaf)[0] or "application/octet-stream"
            found.append({"path": path, "name": leaf, "mime_type": mime, "size": size})
    return found


def embedding(f: BinaryIO, path: str, limits: Limits) -> bytes:
    """The bytes of the embedded part `path` (or of the file an OLE object carries, at
    `<part>/<name>`), inflated under the caps; KeyError for a part that is not an embedding."""
    if f"/{FOLDER}" not in path:
        raise KeyError(path)
    part, bin_, leaf = path.partition(BIN + "/")
    f.seek(0)
    with Package(f, path.partition("/")[0], limits) as package:
        if not bin_:
            return package.read(path)
        inside = carried(package.read(part + BIN), part.rpartition("/")[2])
    if inside is None or inside[0] != leaf:
        raise KeyError(path)
    return inside[1]
