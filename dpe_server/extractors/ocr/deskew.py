"""A scanned page's skew, found before recognition: the angle at which its lines of text stand
level, found as the rotation whose rows of pixels differ most from one row to the next (level
lines of text make sharp dark and light bands; tilted ones blur them). Pillow only: the page is
reduced to `WIDTH` pixels, rotated by each whole degree up to `MAX_DEGREES` either way, then
by quarter degrees about the best, and squeezed to one column (each row's mean); whether it
lies on its side, by whole degrees alone on the copy transposed. The same copy
says where the page's ink lies (`Survey.ink`): what Tesseract's preparation works on.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

WIDTH = 600
MAX_DEGREES = 5.0
STEP = 0.25
MIN_DEGREES = 0.3
"""A smaller skew is left alone (the engines read it as level)."""
INK = 160
"""A pixel of the reduced copy darker than this is ink (speckles, averaged away, are not)."""
MARGIN = 0.04
"""Of the page's long side, kept around its ink: twice the blank Tesseract is given around the
ink it finds at full size (`tesseract.MARGIN`), which the reduced copy's can miss by a few
pixels (a faint stroke, a speck)."""


@dataclass(frozen=True, slots=True)
class Survey:
    angle: float
    """`skew`'s."""
    sideways: bool
    """The page's lines of text run up and down (a page fed on its side)."""
    ink: tuple[int, int, int, int] | None
    """The box of its ink in its pixels (`MARGIN` around it), None on a blank page."""


def _sharpness(small: Any, degrees: float) -> float:
    from PIL import Image, ImageChops

    # nearest pixel, a tenth of a bilinear rotation's cost: the rows' means smooth it
    turned = small.rotate(degrees, resample=Image.Resampling.NEAREST, fillcolor=255)
    rows = turned.resize((1, turned.height), Image.Resampling.BOX)
    steps = ImageChops.difference(  # each row's mean against the next's
        rows.crop((0, 0, 1, rows.height - 1)), rows.crop((0, 1, 1, rows.height))
    )
    return float(sum(n * v * v for v, n in enumerate(steps.histogram())))


def _small(image: Any) -> Any:
    from PIL import Image, ImageOps

    scale = WIDTH / max(image.width, image.height)
    size = (max(1, round(image.width * scale)), max(1, round(image.height * scale)))
    # the means of whole blocks first (`reduce`: a large page's copy at a third of the cost)
    return ImageOps.autocontrast(image.resize(size, Image.Resampling.BOX, reducing_gap=1.0))


def _coarse(small: Any) -> dict[float, float]:
    return {float(a): _sharpness(small, float(a)) for a in range(-5, 6)}  # whole degrees


def _best(small: Any) -> tuple[float, dict[float, float]]:
    scores = _coarse(small)
    coarse = max(scores, key=lambda a: (scores[a], -abs(a)))
    for fine in (coarse - 2 * STEP, coarse - STEP, coarse + STEP, coarse + 2 * STEP):
        if abs(fine) <= MAX_DEGREES:
            scores[fine] = _sharpness(small, fine)
    return max(scores, key=lambda a: (scores[a], -abs(a))), scores


def _angle(best: float, scores: dict[float, float]) -> float:
    if abs(best) < MIN_DEGREES or scores[best] <= 1.05 * scores[0.0]:
        return 0.0
    return best


def skew(image: Any) -> float:
    """The degrees (counter-clockwise) to turn the grey `image` by for its lines to stand
    level; 0.0 when under `MIN_DEGREES` or unclear."""
    if image.width < 50 or image.height < 50:
        return 0.0
    return _angle(*_best(_small(image)))


def survey(image: Any, sideways: bool = True, page: tuple[int, int] | None = None) -> Survey:
    """`skew(image)`, whether the grey `image`'s lines of text run up and down (unless
    `sideways` is False: its columns of pixels band more sharply than its rows), and where its
    ink lies (in the pixels of the page read at `page`, when it is read smaller than
    `image`), from one reduced copy of it."""
    page = page or image.size
    if image.width < 50 or image.height < 50:
        return Survey(0.0, False, (0, 0, *page))
    small = _small(image)
    box = small.point(lambda v: 255 if v < INK else 0).getbbox()
    if box is None:
        return Survey(0.0, False, None)
    best, scores = _best(small)
    # on its side, its columns band more sharply (at a whole degree: the quarters about the
    # best add little to a ratio of 1.5, and cost four rotations more)
    up = sideways and max(_coarse(small.transpose(2)).values()) > 1.5 * max(scores.values())
    fx, fy = page[0] / small.width, page[1] / small.height
    margin = round(MARGIN * max(page))
    ink = (
        max(0, math.floor(box[0] * fx) - margin),
        max(0, math.floor(box[1] * fy) - margin),
        min(page[0], math.ceil(box[2] * fx) + margin),
        min(page[1], math.ceil(box[3] * fy) + margin),
    )
    return Survey(_angle(best, scores), up, ink)
