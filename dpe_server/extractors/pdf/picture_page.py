"""A picture file's recognised words laid out as a scanned page's (what the registry hands the
picture format): the words become runs (`scanned`), the page layout makes their lines, columns
and reading order, paragraphs, headings, lists and aligned tables, and every element says
`ocr: true` and its confidence, with its `bbox` in the picture's pixels (x0, y0, x1, y1, y
down).

A picture's pixels have no size on a page: it is laid out scaled so that its median box is
`PICTURE_FONT` points tall, the layout's tolerances being in points.
"""

from __future__ import annotations

from collections.abc import Sequence

from dpe_server.extractors.ocr import Word
from dpe_server.extractors.pdf.blocks import lay_out
from dpe_server.extractors.pdf.scanned import PICTURE_FONT, _as_runs, mark
from dpe_server.model.tree import JSON, PageBuilder


def picture_elements(words: Sequence[Word], width: int, height: int, b: PageBuilder) -> None:
    """Add the elements `words` (pixels, y down) make to `b`."""
    from dpe_server.extractors.pdf.extract import add_block

    if not words:
        return
    tall = sorted(w.y1 - w.y0 for w in words)[len(words) // 2]
    scale = PICTURE_FONT / max(1.0, tall)
    recognised = _as_runs(words, width, height, (0.0, 0.0, width * scale, height * scale))
    blocks = lay_out(recognised.runs, {})
    mark(blocks, recognised)
    for block in blocks:
        bbox = block.meta.get("bbox")
        if isinstance(bbox, list) and len(bbox) == 4:
            block.meta["bbox"] = _pixels(bbox, scale, height)
        add_block(b, block)


def _pixels(bbox: list[JSON], scale: float, height: int) -> list[JSON]:
    x0, bottom, x1, top = (float(v) if isinstance(v, (int, float)) else 0.0 for v in bbox)
    return [
        round(x0 / scale),
        round(height - top / scale),
        round(x1 / scale),
        round(height - bottom / scale),
    ]
