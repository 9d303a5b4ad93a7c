"""The bytes of a picture file that a Level 3 read of its image element serves: the file as it
is when a client can show it (PNG, JPEG, GIF, WebP; first frame) and it fits; else the frame
converted to PNG, or to JPEG at a smaller size until it fits (a TIFF fax, a BMP, a 12 MB phone
photo)."""

from __future__ import annotations

import io
from collections.abc import Mapping
from typing import Any, BinaryIO

from dpe_server.model.tree import JSON

AS_IS = frozenset({"PNG", "JPEG", "GIF", "WEBP"})


def picture_bytes(f: BinaryIO, metadata: Mapping[str, JSON], max_bytes: int) -> bytes | None:
    from dpe_server.extractors.picture.extract import open_frame

    frame = metadata.get("frame", 0)
    index = frame if isinstance(frame, int) else 0
    f.seek(0, 2)
    size = f.tell()
    image = open_frame(f, index)
    if image.format in AS_IS and index == 0 and size <= max_bytes:
        f.seek(0)
        return f.read()
    return _converted(image, max_bytes)


def _converted(image: Any, max_bytes: int) -> bytes | None:
    from PIL import Image

    alpha = image.mode in ("RGBA", "LA", "PA") or "transparency" in image.info
    rgb = image.convert("RGBA" if alpha else "RGB")
    buf = io.BytesIO()
    rgb.save(buf, "PNG", optimize=False)
    if buf.tell() <= max_bytes:
        return buf.getvalue()
    flat = rgb.convert("RGB")
    for _ in range(6):
        buf = io.BytesIO()
        flat.save(buf, "JPEG", quality=85)
        if buf.tell() <= max_bytes:
            return buf.getvalue()
        flat = flat.resize(
            (max(1, flat.width // 2), max(1, flat.height // 2)), Image.Resampling.BOX
        )
    return None
