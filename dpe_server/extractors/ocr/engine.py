"""The OCR engines, and `read(image, engine, languages)`: the picture's words with boxes.

`engine` is `--ocr-engine`: `tesseract` (`ocr.tesseract`), `rapidocr` (the `ocr`
extra, `ocr.rapid`), or `auto` (Tesseract when its command is found, else RapidOCR when the
extra is installed: `settings.chosen`). Pictures larger than `MAX_SIDE` pixels on a side are
scaled down first (for Tesseract, those over `LARGE_SIDE`, and only the area of their ink:
`prepare.scaled`; smaller ones of thin strokes are enlarged for it: `SMALL_SIDE`); RapidOCR's
are deskewed first (Tesseract's own pass deskews); the words' boxes are in the pixels of the
picture as read (turned upright when Tesseract found it on its side: `Reading.width`, `height`,
`rotated`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dpe_server.extractors.ocr import deskew, prepare, rapid, settings, tesseract
from dpe_server.extractors.ocr.words import (
    MIN_CONFIDENCE,
    EngineExhausted,
    Unavailable,
    Word,
    exhausted,
)

__all__ = [
    "MAX_SIDE",
    "MIN_CONFIDENCE",
    "EngineExhausted",
    "Reading",
    "Unavailable",
    "Word",
    "available",
    "exhausted",
    "read",
    "recognise",
]

MAX_SIDE = 4000
"""Pixels on the long side at most (a 200 dpi A3 page is 3300)."""
SMALL_SIDE = 2400
LARGE_SIDE = 2600
"""A larger picture is reduced to `SMALL_SIDE` for Tesseract (an A4 page at 300 dpi, 3508
pixels, to some 200 dpi): a third of the pixels, as well read."""
MAX_UPSCALE = 3.0
"""A smaller picture whose strokes are thin (`prepare.thick`: small letters) is enlarged for
Tesseract (at most this many times), which reads letters some 20 pixels tall best: a page
scanned at 72 dpi, a screenshot."""


@dataclass(frozen=True, slots=True)
class Reading:
    """What an engine read of a picture."""

    words: list[Word]
    width: int
    height: int
    """The picture's size as read (after `rotated`), which the words' boxes are in."""
    engine: str
    """The engine and its version (`tesseract 5.3.0`)."""
    rotated: int = 0
    """Degrees (clockwise) the picture was turned to stand upright."""
    skew: float = 0.0
    """Degrees of skew corrected."""
    meta: dict[str, Any] = field(default_factory=dict)


def available(engine: str = "auto") -> bool:
    """Whether pictures can be recognised in this process (loads RapidOCR on first call)."""
    name = settings.chosen(engine)
    if name == "rapidocr":
        try:
            rapid.load()
        except Unavailable:
            return False
    return bool(name)


def read(
    image: Any, engine: str = "auto", languages: tuple[str, ...] = (), dpi: int = 0
) -> Reading:
    """Recognise a PIL image; `Unavailable` when no engine is (see the module). `dpi`: the
    picture's resolution when known (Tesseract sizes its text by it)."""
    from PIL import Image

    name = settings.chosen(engine)
    if not name:
        raise Unavailable(f"no OCR engine ({engine}) is installed")
    scale = 1.0
    thick = None  # told from the ink's area (`tesseract.recognise`) unless known here
    if max(image.size) > MAX_SIDE:
        scale = MAX_SIDE / max(image.size)
    elif name == "tesseract" and max(image.size) > LARGE_SIDE:
        scale = SMALL_SIDE / max(image.size)
    elif name == "tesseract" and max(image.size) < SMALL_SIDE:
        thick = prepare.thick(image.convert("L"))
        if not thick:
            scale = min(MAX_UPSCALE, SMALL_SIDE / max(image.size))
    size = (round(image.width * scale), round(image.height * scale))
    if scale > 1.0 or (scale < 1.0 and name != "tesseract"):  # Tesseract reduces its ink alone
        image = image.resize(size, Image.Resampling.LANCZOS if scale > 1 else Image.Resampling.BOX)
    dpi = round(dpi * scale)
    if name == "tesseract":
        found = tesseract.recognise(
            image,
            settings.tesseract_languages(languages),
            dpi,
            asked=bool(languages),
            thick=thick if scale == 1.0 else None,
            size=size,
        )
        words, (width, height), rotated, skew = found.words, found.size, found.rotated, found.skew
    else:
        skew = deskew.skew(image.convert("L"))
        if skew:
            image = image.convert("RGB").rotate(
                skew, resample=Image.Resampling.BICUBIC, expand=True, fillcolor=(255, 255, 255)
            )
        words, (width, height), rotated = rapid.recognise(image), image.size, 0
    if scale != 1.0:
        words = [
            Word(w.text, w.x0 / scale, w.y0 / scale, w.x1 / scale, w.y1 / scale, w.confidence)
            for w in words
        ]
        width, height = round(width / scale), round(height / scale)
    return Reading(words, width, height, settings.engine_name(name), rotated, skew)


def recognise(image: Any, engine: str = "auto", languages: tuple[str, ...] = ()) -> list[Word]:
    """The words of a PIL image (`read`'s)."""
    return read(image, engine, languages).words
