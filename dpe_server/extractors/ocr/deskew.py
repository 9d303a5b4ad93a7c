"""A scanned page's skew, found before recognition: the angle at which its lines of text stand
level, found as the rotation whose rows of pixels differ most from one row to the next (level
lines of text make sharp dark and light bands; tilted ones blur them). Pillow only: the page is
reduced to `WIDTH` pixels, rotated by each whole degree up to `MAX_DEGREES` either way, then
by quarter degrees about the best, and squeezed to one column (each row's mean).
"""

from __future__ import annotations

import itertools
from typing import Any

WIDTH = 600
MAX_DEGREES = 5.0
STEP = 0.25
MIN_DEGREES = 0.3
"""A smaller skew is left alone (the engines read it as level)."""


def _sharpness(small: Any, degrees: float) -> float:
    from PIL import Image

    turned = small.rotate(degrees, resample=Image.Resampling.BILINEAR, fillcolor=255)
    rows = turned.resize((1, turned.height), Image.Resampling.BOX).tobytes()
    return float(sum((a - b) ** 2 for a, b in itertools.pairwise(rows)))


def _small(image: Any) -> Any:
    from PIL import Image, ImageOps

    scale = WIDTH / max(image.width, image.height)
    size = (max(1, round(image.width * scale)), max(1, round(image.height * scale)))
    return ImageOps.autocontrast(image.resize(size, Image.Resampling.BOX))


def _best(small: Any) -> tuple[float, dict[float, float]]:
    scores = {float(a): _sharpness(small, float(a)) for a in range(-5, 6)}  # whole degrees
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


def measure(image: Any) -> tuple[float, bool]:
    """`skew(image)`, and whether the grey `image`'s lines of text run up and down (a page fed
    on its side: its columns of pixels band more sharply than its rows), from one reduced
    copy of it."""
    if image.width < 50 or image.height < 50:
        return 0.0, False
    small = _small(image)
    best, scores = _best(small)
    columns = max(_best(small.transpose(2))[1].values())  # ROTATE_90
    return _angle(best, scores), columns > 1.5 * max(scores.values())
