"""Pages that are pictures: which pdf pages are recognised (`--ocr`), and their words as runs.

In `auto` mode a page is a picture when its images of at least `MIN_DPI` cover at least
`PICTURE_SHARE` of it and its text layer is empty or covers under `TEXT_SHARE` of the images'
area (a scan with a stray page number); `force` takes every page, its text layer ignored;
`off` none.

The page is rendered by pdfium at `DPI` (at most `MAX_SIDE` pixels a side; the pypdfium2 the
extra brings) and recognised by `extractors.ocr`; each recognised box becomes a `Run` in page
coordinates (y up, size from the box's height), so the page's usual layout analysis (lines,
columns, paragraphs, headings, aligned tables) lays the words out. Every element made of them
says `ocr: true` and the mean confidence of its runs; the page says `ocr: true`, or
`ocr: "unavailable"` (no extra) or `ocr: "failed"` with `ocr_error` (the page could not be
rendered). With `Limits.ocr_later` (the server's extraction jobs) the page is not recognised
but says `ocr: "pending"` (`later`), its text layer laid out as usual: the server recognises it
with a job of its own.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from dpe_server.extractors.base import Limits
from dpe_server.extractors.ocr import Word, recognise, states
from dpe_server.extractors.ocr.engine import MAX_SIDE, Unavailable
from dpe_server.extractors.ocr.states import PENDING, failure
from dpe_server.extractors.pdf.blocks import Block, lay_out
from dpe_server.extractors.pdf.collect import PDFIUM_LOCK, PageContent, Run
from dpe_server.model.content import TableContent
from dpe_server.model.tree import JSON

log = logging.getLogger(__name__)

DPI = 200
MIN_DPI = 50
"""Images of a coarser resolution (on the page) hold no legible text: not recognised."""
PICTURE_SHARE = 0.3
TEXT_SHARE = 0.02
FONT_SHARE = 0.8
"""A recognised box's height → the run's font size (boxes hold ascenders and descenders)."""
PICTURE_FONT = 12.0
"""A picture's words are laid out as if its median text were this size (points): its pixels
have no size on a page, and the layout's tolerances are in points."""
Box = tuple[float, float, float, float]


@dataclass
class Recognised:
    state: JSON
    """The page's `ocr` metadata: True, "pending", "unavailable" or "failed"."""
    runs: list[Run] = field(default_factory=list)
    confidence: dict[int, float] = field(default_factory=dict)
    """`id(run)` → the recogniser's confidence."""
    meta: dict[str, JSON] = field(default_factory=dict)
    """What the page's metadata says of it (`ocr`, and `ocr_error` when it failed)."""

    def __post_init__(self) -> None:
        self.meta.setdefault("ocr", self.state)

    @property
    def replaces_text_layer(self) -> bool:
        """The page is laid out from the recognised runs (not while pending)."""
        return bool(self.state != PENDING)


def is_picture(content: PageContent, box: Box, images: Sequence[Block]) -> bool:
    """Whether `auto` recognises the page: legible images (at least `MIN_DPI`) over much of
    it, little text."""
    page_area = max(1.0, (box[2] - box[0]) * (box[3] - box[1]))
    image_area = 0.0
    for image in images:
        bbox, pixels = image.meta.get("bbox"), image.content.get("width")
        if not isinstance(bbox, list) or not isinstance(pixels, int):
            continue
        x0, y0, x1, y1 = (float(v) for v in bbox if isinstance(v, (int, float)))
        if pixels / max(1.0, abs(x1 - x0) / 72) >= MIN_DPI:
            image_area += abs((x1 - x0) * (y1 - y0))
    if image_area < PICTURE_SHARE * page_area:
        return False
    text_area = sum((r.x1 - r.x0) * r.size for r in content.runs)
    return text_area < TEXT_SHARE * image_area


def to_recognise(content: PageContent, box: Box, images: Sequence[Block], limits: Limits) -> bool:
    return limits.ocr == "force" or (limits.ocr == "auto" and is_picture(content, box, images))


def later() -> Recognised:
    """A page to recognise by a job of its own: `pending` (`unavailable` without the extra,
    which no later job would change)."""
    return Recognised(states.later())


def recognise_page(f: BinaryIO, index: int, box: Box) -> Recognised:
    """Render page `index` of the pdf in `f` and recognise it."""
    try:
        image = _render(f, index, box)
    except ImportError:
        return Recognised("unavailable")
    except Exception as exc:  # pdfium refused the page: say so, keep the rest of the page
        log.debug("page %d not rendered: %s", index, exc)
        reason = f"The page could not be rendered for OCR ({type(exc).__name__})."
        return Recognised("failed", meta=failure("corrupt", reason))
    try:
        words = recognise(image)
    except Unavailable:
        return Recognised("unavailable")
    return _as_runs(words, image.width, image.height, box)


def _render(f: BinaryIO, index: int, box: Box) -> Any:
    """The page as a grey PIL image at `DPI`, or smaller so that no side passes `MAX_SIDE`."""
    import pypdfium2 as pdfium

    longest = max(1.0, box[2] - box[0], box[3] - box[1])
    scale = min(DPI / 72, MAX_SIDE / longest)
    f.seek(0)
    data = f.read()
    with PDFIUM_LOCK:  # PDFium is not thread-safe: every call holds the lock
        pdf = pdfium.PdfDocument(data)
        try:
            page = pdf[index]
            try:
                return page.render(scale=scale, grayscale=True).to_pil()
            finally:
                page.close()
        finally:
            pdf.close()


def _as_runs(words: Sequence[Word], width: int, height: int, box: Box) -> Recognised:
    sx = (box[2] - box[0]) / max(1, width)
    sy = (box[3] - box[1]) / max(1, height)
    out = Recognised(True)
    for w in words:
        tall = (w.y1 - w.y0) * sy
        bottom = box[3] - w.y1 * sy
        run = Run(
            w.text,
            box[0] + w.x0 * sx,
            box[0] + w.x1 * sx,
            round(bottom + 0.2 * tall, 1),
            round(tall * FONT_SHARE, 1),
            "OCR",
            False,
            False,
        )
        out.runs.append(run)
        out.confidence[id(run)] = w.confidence
    return out


def picture_table(words: Sequence[Word], width: int, height: int) -> TableContent | None:
    """The table in a picture (docx, pptx, xlsx) whose recognised boxes stand in columns over
    several rows: the page layout's aligned table (`aligned`), its words laid out as a
    page's runs (the largest table, when it finds several); None when it finds none.

    A picture's pixels have no size on a page: it is scaled so that its median box is
    `PICTURE_FONT` points tall, every run that size (box heights vary with the letters more
    than with the type, and a table's cells are of one size)."""
    if not words:
        return None
    tall = sorted(w.y1 - w.y0 for w in words)[len(words) // 2]
    scale = PICTURE_FONT / max(1.0, tall)
    runs = _as_runs(words, width, height, (0.0, 0.0, width * scale, height * scale)).runs
    for run in runs:
        run.size = PICTURE_FONT
    tables = [b for b in lay_out(runs, {}) if b.kind == "table"]
    if not tables:
        return None
    c = max(tables, key=lambda b: len(b.content["rows"] or [])).content
    return TableContent(
        headers=c["headers"],
        rows=c["rows"],
        total_rows=c["total_rows"],
        total_columns=c["total_columns"],
    )


def mark(blocks: Sequence[Block], recognised: Recognised) -> None:
    """Say `ocr: true` and the confidence on every block made of recognised runs."""
    for block in blocks:
        if block.kind == "image":
            continue
        text = json.dumps(block.content, ensure_ascii=False)
        scores = [
            recognised.confidence[id(run)]
            for run in recognised.runs
            if run.text in text and run.x0 >= block.x0 - 1 and run.x1 <= block.x1 + 1
        ]
        block.meta["ocr"] = True
        if scores:
            block.meta["confidence"] = round(sum(scores) / len(scores), 3)
