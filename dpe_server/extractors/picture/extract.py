"""A picture file → a document (see the package): one page a frame, the picture as an `image`
element, its recognised text after it, its EXIF and XMP as properties.

Nothing of a picture over `MAX_PIXELS` is decoded (the check before parsing refuses it, from
its header); one over `OCR_PIXELS` is listed but not recognised (`ocr: "skipped"`). With
`Limits.ocr_later` (the server's extraction jobs) a page is not recognised but says
`ocr: "pending"`, as a scanned pdf page does: the server recognises it with a job of its own.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Sequence
from typing import Any, BinaryIO

from dpe_server.extractors.base import Extractor, Limits
from dpe_server.extractors.ocr import read, states
from dpe_server.extractors.ocr.layout import text_of
from dpe_server.extractors.ocr.words import Unavailable
from dpe_server.extractors.picture import word_layout
from dpe_server.extractors.picture.exif import Facts, facts
from dpe_server.model import summaries
from dpe_server.model.content import ImageContent
from dpe_server.model.errors import CorruptError, TooLargeError
from dpe_server.model.tree import JSON, Category, Document, Page, PageBuilder, Properties

MAX_PIXELS = 100_000_000
"""Pixels of one frame at most (the check before parsing refuses a larger picture)."""
OCR_PIXELS = 40_000_000
"""Pixels of a frame recognised at most, as for a picture inside an office file."""
_TURNED = (5, 6, 7, 8)
"""EXIF orientations that stand the picture on its side (width and height swap)."""


def _open(f: BinaryIO) -> Any:
    from PIL import Image, UnidentifiedImageError

    f.seek(0)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            image = Image.open(f)
    except Image.DecompressionBombError as exc:
        raise TooLargeError(
            f"The picture is over the limit of {MAX_PIXELS // 1_000_000} megapixels ({exc})."
        ) from None
    except (UnidentifiedImageError, OSError, ValueError) as exc:
        raise CorruptError(
            "This file is not a picture that can be read (no PNG, JPEG, TIFF, WebP, BMP or GIF "
            f"header, or a damaged one): {exc}"
        ) from None
    width, height = image.size
    if width * height > MAX_PIXELS:
        raise TooLargeError(
            f"The picture is {width} × {height} pixels, over the limit of "
            f"{MAX_PIXELS // 1_000_000} megapixels."
        )
    return image


def check_picture(f: BinaryIO, fmt: str) -> None:
    """A file Pillow cannot identify, or a picture too large to decode, is refused here."""
    _open(f)


def frames(image: Any) -> int:
    """Pages of the picture: a TIFF's frames; one for the others (a GIF's first frame)."""
    return int(getattr(image, "n_frames", 1)) if image.format == "TIFF" else 1


def open_frame(f: BinaryIO, index: int) -> Any:
    """The picture in `f`, at its frame `index`."""
    image = _open(f)
    if index:
        _seek(image, index)
    return image


def _seek(image: Any, index: int) -> None:
    try:
        image.seek(index)
    except (EOFError, OSError, ValueError) as exc:
        raise CorruptError(f"The picture has no frame {index + 1}: {exc}") from None
    width, height = image.size
    if width * height > MAX_PIXELS:
        raise TooLargeError(f"Frame {index + 1} is {width} × {height} pixels, too large.")


def _properties(image: Any, found: Facts, limits: Limits) -> Properties:
    count = frames(image)
    extra = dict(found.extra)
    if count > limits.max_pages:
        extra["pages_in_file"] = count
    return Properties(
        page_count=min(count, limits.max_pages),
        title=found.title,
        keywords=found.keywords,
        extra=extra,
    )


def probe(f: BinaryIO, limits: Limits) -> Properties:
    image = _open(f)
    return _properties(image, facts(image, limits.keep_location), limits)


def _page(image: Any, index: int, count: int, limits: Limits) -> Page:
    if count > 1:
        _seek(image, index)
    orientation = image.getexif().get(0x0112) if index == 0 else None
    width, height = image.size
    if orientation in _TURNED:
        width, height = height, width
    mime = image.get_format_mimetype() or f"image/{str(image.format).lower()}"
    label = f"Frame {index + 1} of {count}" if count > 1 else "Picture"
    content = ImageContent(description=label, mime_type=mime, width=width, height=height)
    b = PageBuilder(index, limits.max_elements_per_page)
    element_meta: dict[str, JSON] = {"frame": index} if count > 1 else {}
    b.add(Category.IMAGE, summaries.image(label, mime, width, height), content, element_meta)
    meta: dict[str, JSON] = {"width": width, "height": height}
    if limits.ocr != "off":
        if limits.ocr_later:
            meta["ocr"] = states.later(limits.ocr_engine)
        elif width * height > OCR_PIXELS:
            meta["ocr"] = "skipped"
        else:
            _recognise(image, b, meta, limits)
    page = b.build(label, meta)
    heading = next((e for e in page.elements if e.category == Category.HEADING), None)
    text = heading.content.get("text") if heading is not None else None
    return dataclasses.replace(page, title=text) if isinstance(text, str) and text else page


def upright(image: Any) -> Any:
    """The frame decoded, turned as its EXIF orientation says, flattened over white."""
    from PIL import Image, ImageOps

    image.load()
    turned = ImageOps.exif_transpose(image) if image.tell() == 0 else image
    if turned.mode in ("RGBA", "LA", "PA", "P") or "transparency" in turned.info:
        rgba = turned.convert("RGBA")
        white = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        return Image.alpha_composite(white, rgba).convert("RGB")
    if turned.mode not in ("L", "RGB"):
        return turned.convert("RGB")
    return turned


def _dpi(image: Any) -> int:
    dpi = image.info.get("dpi")
    try:
        value = round(float(dpi[0]))
    except (TypeError, ValueError, IndexError):
        return 0
    return value if 70 <= value <= 1200 else 0


def _recognise(image: Any, b: PageBuilder, meta: dict[str, JSON], limits: Limits) -> None:
    try:
        picture = upright(image)
    except (OSError, ValueError) as exc:
        meta.update(states.failure("corrupt", f"The picture could not be decoded: {exc}"))
        return
    try:
        reading = read(picture, limits.ocr_engine, limits.ocr_languages, _dpi(image))
    except Unavailable:
        meta["ocr"] = states.UNAVAILABLE
        return
    except RuntimeError as exc:  # the engine's command failed on this picture
        meta.update(states.failure("corrupt", str(exc)))
        return
    meta.update({"ocr": True, "ocr_engine": reading.engine})
    if reading.rotated:
        meta["ocr_rotated"] = reading.rotated
    if not reading.words:
        return
    layout = word_layout()
    if layout is not None:
        layout(reading.words, reading.width, reading.height, b)
        return
    text = text_of(reading.words)
    confidence = round(sum(w.confidence for w in reading.words) / len(reading.words), 3)
    b.add(
        Category.TEXT, summaries.text(text), {"text": text}, {"ocr": True, "confidence": confidence}
    )


def extract_pages(f: BinaryIO, indices: Sequence[int], limits: Limits) -> list[Page]:
    image = _open(f)
    count = min(frames(image), limits.max_pages)
    return [_page(image, i, count, limits) for i in indices if 0 <= i < count]


def extract(f: BinaryIO, limits: Limits) -> Document:
    image = _open(f)
    props = _properties(image, facts(image, limits.keep_location), limits)
    pages = tuple(_page(image, i, props.page_count, limits) for i in range(props.page_count))
    meta: dict[str, JSON] = {k: v for k, v in props.extra.items() if k != "pages_in_file"}
    if "pages_in_file" in props.extra:
        meta["truncated"] = True
    return Document(props, pages, meta)


EXTRACTOR = Extractor(probe, extract, extract_pages)
