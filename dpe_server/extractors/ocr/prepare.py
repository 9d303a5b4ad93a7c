"""A scanned page made ready for Tesseract (`tesseract.recognise`): only the area of its ink
(`deskew.Survey.ink`, found on the reduced copy the skew is measured on) is filtered of
speckles, turned level and cleared of ruled lines; the blank rest of the page is never
processed (an A4 page's 11 lines are a seventh of its pixels: the median filter and the
bicubic rotation cost by the pixel, 0.23 and 0.25 CPU-s on the whole page). The median filter
is Pillow's pixels without Pillow's rank filter (`median`: a fifth of its cost).

The area is turned by the transform that turns the whole page (`turned`: Pillow's own
`rotate(angle, expand=True)`), sampled on the area's window of the turned page only, so its
pixels are those the whole page turned would hold there; the words read in it are placed in the
whole page turned (`Level.offset`, `Level.size`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

RULE_SHARE = 0.04
MIN_RULE = 40
THICK_SHARE = 0.1
PAD = 4
"""Pixels of the page kept around the ink's area for the filter's and the rotation's kernels."""


@dataclass(frozen=True, slots=True)
class Level:
    image: Any
    """The ink's area, filtered, turned level and cleared of rules."""
    offset: tuple[int, int]
    """Where its top left corner stands in the whole page turned level."""
    size: tuple[int, int]
    """The whole page turned level (`turned`)."""


def level(
    grey: Any,
    angle: float,
    ink: tuple[int, int, int, int],
    filtered: bool | None,
    page: tuple[int, int] | None = None,
) -> Level:
    """The area `ink` of the grey page, median-filtered (when `filtered`, or when None and its
    strokes are `thick`), turned by `angle` degrees counter-clockwise (as the whole page) and
    `unruled` (rules as long as the whole page's make them). `page`: the size the page is read
    at, `ink` and the result in its pixels, when `grey` is larger (`scaled`)."""
    from PIL import Image

    page = page or grey.size
    side = max(page)
    if not angle:  # rules found on the whole page, as level as it will be
        grey = unruled(scaled(grey, page, (0, 0, *page)))
    x0, y0, x1, y1 = ink
    source = (
        max(0, x0 - PAD),
        max(0, y0 - PAD),
        min(page[0], x1 + PAD),
        min(page[1], y1 + PAD),
    )
    area = scaled(grey, page, source)
    if filtered is None:
        filtered = thick(area)
    if filtered:
        area = median(area)
    if not angle:
        return Level(area, (source[0], source[1]), page)
    size, (a, b, c, d, e, f) = turned(page, angle)
    corners = [_forward((a, b, c, d, e, f), x, y) for x in (x0, x1) for y in (y0, y1)]
    left = max(0, math.floor(min(p[0] for p in corners)))
    top = max(0, math.floor(min(p[1] for p in corners)))
    right = min(size[0], math.ceil(max(p[0] for p in corners)))
    bottom = min(size[1], math.ceil(max(p[1] for p in corners)))
    window = (a, b, a * left + b * top + c - source[0], d, e, d * left + e * top + f - source[1])
    image = area.transform(
        (max(1, right - left), max(1, bottom - top)),
        Image.Transform.AFFINE,
        window,
        resample=Image.Resampling.BICUBIC,
        fillcolor=255,
    )
    return Level(unruled(image, side), (left, top), size)


def scaled(grey: Any, page: tuple[int, int], box: tuple[int, int, int, int]) -> Any:
    """The window `box` of the grey picture reduced to `page` pixels (by their means: Pillow's
    `resize(page, BOX)`), reducing that window alone (an A4 page at 300 dpi read at 200: its
    ink's area is a third of its pixels, the whole page's reduction 0.03 CPU-s)."""
    from PIL import Image

    if page == grey.size:
        return grey.crop(box)
    fx, fy = grey.width / page[0], grey.height / page[1]
    x0, y0, x1, y1 = box
    return grey.resize(
        (x1 - x0, y1 - y0), Image.Resampling.BOX, box=(x0 * fx, y0 * fy, x1 * fx, y1 * fy)
    )


def turned(size: tuple[int, int], angle: float) -> tuple[tuple[int, int], tuple[float, ...]]:
    """The size of a picture of `size` turned by `angle` degrees counter-clockwise and expanded
    to hold it, and the affine matrix from its pixels to the picture's: as Pillow's `rotate`."""
    w, h = size
    t = -math.radians(angle)
    a, b = round(math.cos(t), 15), round(math.sin(t), 15)
    c = a * -w / 2 + b * -h / 2 + w / 2
    f = -b * -w / 2 + a * -h / 2 + h / 2
    xs = [a * x + b * y + c for x, y in ((0, 0), (w, 0), (w, h), (0, h))]
    ys = [-b * x + a * y + f for x, y in ((0, 0), (w, 0), (w, h), (0, h))]
    nw = math.ceil(max(xs)) - math.floor(min(xs))
    nh = math.ceil(max(ys)) - math.floor(min(ys))
    dx, dy = -(nw - w) / 2, -(nh - h) / 2
    return (nw, nh), (a, b, a * dx + b * dy + c, -b, a, -b * dx + a * dy + f)


def _forward(matrix: tuple[float, ...], x: float, y: float) -> tuple[float, float]:
    """Where the picture's point (x, y) stands in the turned picture (`matrix` inverted)."""
    a, b, c, d, e, f = matrix
    x, y = x - c, y - f
    return a * x + d * y, b * x + e * y


def unruled(grey: Any, side: int = 0) -> Any:
    """`grey` with its ruled lines painted white: dark runs longer than `RULE_SHARE` of the
    page's long side (`side`, else `grey`'s; and at least `MIN_RULE` pixels) across or down it
    (a table's rules, a frame, an underline), found by squeezing the picture along each
    axis."""
    from PIL import Image, ImageChops, ImageFilter

    run = max(MIN_RULE, round((side or max(grey.size)) * RULE_SHARE))
    ink = grey.point(lambda v: 255 if v < 128 else 0)
    masks = []
    for size in (
        (max(1, grey.width // run), grey.height),
        (grey.width, max(1, grey.height // run)),
    ):
        squeezed = ink.resize(size, Image.Resampling.BOX).point(lambda v: 255 if v > 235 else 0)
        squeezed = squeezed.filter(ImageFilter.MaxFilter(3))  # a run across two blocks
        if squeezed.getbbox() is not None:
            masks.append(squeezed.resize(grey.size, Image.Resampling.NEAREST))
    if not masks:
        return grey
    mask = masks[0] if len(masks) == 1 else ImageChops.lighter(masks[0], masks[1])
    mask = mask.filter(ImageFilter.MaxFilter(3))
    return Image.composite(Image.new("L", grey.size, 255), grey, mask)


def thick(grey: Any) -> bool:
    """Whether the ink of `grey` is in strokes at least three pixels wide (a scan at 150 dpi
    or more, a photo): more than `THICK_SHARE` of its dark pixels survive an erosion by a
    3 × 3 square (the darker of the picture shifted by a pixel each way, across then down:
    a tenth of a rank filter's cost). A screenshot's one-pixel strokes do not."""
    from PIL import ImageChops

    ink = grey.point(lambda v: 255 if v < 128 else 0)
    inked = int(ink.histogram()[255])
    if not inked:
        return False
    core = ink
    for dx, dy in ((1, 0), (0, 1)):
        core = ImageChops.darker(
            ImageChops.darker(core, ImageChops.offset(core, dx, dy)),
            ImageChops.offset(core, -dx, -dy),
        )
    return int(core.histogram()[255]) > THICK_SHARE * inked


def median(grey: Any) -> Any:
    """`grey` through a 3 × 3 median filter, the same pixels as Pillow's `MedianFilter(3)`
    (its edges repeated outwards as Pillow's are) at a fifth of its cost: each pixel's column
    of three sorted (its least, middle and greatest), then the median of nine is the middle of
    the greatest of the three least, the middle of the three middles and the least of the
    three greatest, across the column and its two neighbours (twenty darker or lighter of two
    whole pictures, each shifted by a pixel)."""
    from PIL import Image, ImageChops

    dark, light = ImageChops.darker, ImageChops.lighter
    w, h = grey.size
    wide = Image.new("L", (w + 2, h + 2))
    wide.paste(grey, (1, 1))
    for source, where in (
        ((0, 0, w, 1), (1, 0)),
        ((0, h - 1, w, h), (1, h + 1)),
    ):
        wide.paste(grey.crop(source), where)
    for source, where in (((1, 0, 2, h + 2), (0, 0)), ((w, 0, w + 1, h + 2), (w + 1, 0))):
        wide.paste(wide.crop(source), where)
    up, down = ImageChops.offset(wide, 0, 1), ImageChops.offset(wide, 0, -1)
    low, high = dark(up, wide), light(up, wide)
    least, rest = dark(low, down), light(low, down)
    middle, most = dark(high, rest), light(high, rest)

    def sides(image: Any) -> tuple[Any, Any]:
        return ImageChops.offset(image, 1, 0), ImageChops.offset(image, -1, 0)

    left, right = sides(least)
    least = light(light(left, least), right)
    left, right = sides(most)
    most = dark(dark(left, most), right)
    left, right = sides(middle)
    middle = light(dark(left, middle), dark(light(left, middle), right))
    found = light(dark(least, middle), dark(light(least, middle), most))
    return found.crop((1, 1, w + 1, h + 1))
