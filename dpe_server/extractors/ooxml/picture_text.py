"""The text of a picture inside a docx, pptx or xlsx (OCR, the `dpe-server[ocr]` extra).

A picture of at least `MIN_WIDTH` × `MIN_HEIGHT` pixels in a format Pillow reads, under
`MAX_PIXELS` of its own (counted from its header before anything decodes it: a docx says the
size a picture is shown at, which may be far smaller), is recognised unless `--ocr off`: its
text (lines top to bottom) goes into the image element's `content.text`, and its metadata says
`ocr: true` and the mean confidence; without the extra, `ocr: "unavailable"`. Smaller pictures
(icons, logos, bullets) are not.
A picture of a table (recognised boxes in columns over several rows, as the pdf page layout
finds aligned tables: `pdf.scanned.picture_table`, which the registry hands to `ooxml`) also
gives `content.table`.

With `Limits.ocr_later` (the server's extraction jobs) a picture is not recognised but says
`ocr: "pending"` (`unavailable` at once without the extra), and `with_pictures` makes its page
say `pending` too: the server recognises the page's pictures with an `ocr` job of its own, after
the text of every document, as it recognises a pdf page.

One extraction (a document, or the `ocr` job of one page) spends at most
`Limits.picture_seconds` recognising pictures (a quarter of `--timeout`: a page of many photos
must still fit its job's deadline); pictures after that say `ocr: "skipped"`.
"""

from __future__ import annotations

import io
import logging
import time
import weakref

from dpe_server.extractors.kit.package import Package
from dpe_server.extractors.ocr import recognise, states
from dpe_server.extractors.ocr.engine import Unavailable
from dpe_server.extractors.ocr.layout import text_of
from dpe_server.extractors.ocr.settings import engine_name
from dpe_server.extractors.ooxml import picture_table
from dpe_server.extractors.ooxml.pictures import image_size
from dpe_server.model.content import ImageContent
from dpe_server.model.errors import ExtractionError
from dpe_server.model.tree import JSON

log = logging.getLogger(__name__)

MIN_WIDTH, MIN_HEIGHT = 200, 40
_spent: weakref.WeakKeyDictionary[Package, float] = weakref.WeakKeyDictionary()
MAX_PIXELS = 40_000_000
_READABLE = {"image/png", "image/jpeg", "image/gif", "image/bmp", "image/tiff", "image/webp"}


def recognise_picture(
    pkg: Package, part: str, content: ImageContent, meta: dict[str, JSON]
) -> None:
    """Add the picture's text to `content` and say so in `meta` (see the module)."""
    width, height = content.get("width") or 0, content.get("height") or 0
    if pkg.limits.ocr == "off" or content["mime_type"] not in _READABLE:
        return
    if width < MIN_WIDTH or height < MIN_HEIGHT or _pixels(pkg, part, width * height) > MAX_PIXELS:
        return
    if pkg.limits.ocr_later:
        meta["ocr"] = states.later(pkg.limits.ocr_engine)
        return
    if _spent.get(pkg, 0.0) >= pkg.limits.picture_seconds:
        meta["ocr"] = "skipped"
        return
    start = time.monotonic()
    try:
        _read_text(pkg, part, content, meta)
    finally:
        _spent[pkg] = _spent.get(pkg, 0.0) + time.monotonic() - start


def _pixels(pkg: Package, part: str, shown: int) -> int:
    """The picture's own pixels, from its header (`shown`, the pixels of the size it is shown
    at, when its header does not say)."""
    try:
        size = image_size(pkg.head(part))
    except (ExtractionError, KeyError):
        return shown
    return shown if size is None else size[0] * size[1]


def _read_text(pkg: Package, part: str, content: ImageContent, meta: dict[str, JSON]) -> None:
    try:
        from PIL import Image
    except ImportError:
        return
    try:
        data = pkg.read(part)
        image = Image.open(io.BytesIO(data))  # reads the header only
        if image.width * image.height > MAX_PIXELS:
            return
        image.load()
    except (ExtractionError, OSError, ValueError, Image.DecompressionBombError) as exc:
        log.debug("picture %s not decoded: %s", part, exc)
        return
    limits = pkg.limits
    try:
        words = recognise(image, limits.ocr_engine, limits.ocr_languages)
    except Unavailable:
        meta["ocr"] = "unavailable"
        return
    meta["ocr"] = True
    meta["ocr_engine"] = engine_name(limits.ocr_engine)
    if words:
        content["text"] = text_of(words)
        table = picture_table(words, image.width, image.height)
        if table is not None:
            content["table"] = table
        meta["confidence"] = round(sum(w.confidence for w in words) / len(words), 3)
