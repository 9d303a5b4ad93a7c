"""Pictures as documents (.png, .jpg/.jpeg, .tif/.tiff, .webp, .bmp, .gif): one page a picture
(a TIFF's every frame a page; a GIF's or WebP's first frame), the picture itself its first
element (an `image`, whose bytes a Level 3 read serves), then the text recognised in it (OCR,
laid out as a scanned pdf page's: the pdf layout, handed over by the registry), and its EXIF
and XMP metadata (date taken, camera, orientation; the location only with `--keep-location`).

`extract` is the extractor, `exif` the metadata, `blob` the bytes a Level 3 read serves; Pillow
(a run-time dependency) decodes them, imported when a picture is first read.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, BinaryIO

from dpe_server.extractors.base import Format, Limits
from dpe_server.extractors.kit.handed import Handed
from dpe_server.model.errors import UnsupportedError
from dpe_server.model.tree import JSON, PageBuilder

if TYPE_CHECKING:
    from dpe_server.extractors.ocr import Word

SUFFIXES = (".png", ".jpg", ".jpeg", ".tif", ".tiff", ".webp", ".bmp", ".gif")

WordLayout = Callable[[Sequence["Word"], int, int, PageBuilder], None]
"""`lay_out(words, width, height, builder)`: add the elements a picture's recognised words
make (pixels, y down) to the page being built."""
_layout: Handed[WordLayout] = Handed("word layout for the picture format")


def lay_out_words_with(layout: WordLayout) -> None:
    """Lay recognised words out with `layout` (the registry hands it the pdf page layout)."""
    _layout.give(layout)


def word_layout() -> WordLayout | None:
    return _layout.maybe()


def _check(f: BinaryIO, fmt: str, kind: str, limits: Limits) -> None:
    names = {"zip": "a zip archive", "pdf": "a PDF", "cfb": "an OLE2 compound file"}
    if kind in names:
        raise UnsupportedError(f"This file is {names[kind]} renamed to .{fmt}, not a picture.")
    from dpe_server.extractors.picture.extract import check_picture

    check_picture(f, fmt)


def _picture(f: BinaryIO, fmt: str, metadata: Mapping[str, JSON], max_bytes: int) -> bytes | None:
    from dpe_server.extractors.picture.blob import picture_bytes

    return picture_bytes(f, metadata, max_bytes)


FORMAT = Format(
    name="picture",
    suffixes=SUFFIXES,
    kind_name="a picture",
    page_unit="picture",
    paged=True,
    extractor="dpe_server.extractors.picture.extract:EXTRACTOR",
    check=_check,
    picture=_picture,
)
