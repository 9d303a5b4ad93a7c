"""The OCR engine, loaded once per process, and `recognise(image)`: words with boxes.

The engine is RapidOCR (`rapidocr_onnxruntime`): PP-OCRv4 text detection, a 0°/180°
direction classifier and PP-OCRv4 recognition for Chinese and English, run by onnxruntime on
CPU with one thread (the server runs one worker process per core). Its models are inside its
wheel: nothing is downloaded at run time.

Each detected text box becomes one `Word` (a run of text on one line, which may hold several
words separated by spaces) with its box in the picture's pixels (y down) and the recogniser's
confidence (0..1). Pictures larger than `MAX_SIDE` pixels on a side are scaled down first.
"""

from __future__ import annotations

import functools
import logging
import re
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)

MAX_SIDE = 4000
"""Pixels on the long side at most (a 200 dpi A3 page is 3300)."""
MIN_CONFIDENCE = 0.5
"""Text the recogniser is less sure of is dropped."""


@dataclass(frozen=True, slots=True)
class Word:
    text: str
    x0: float
    y0: float
    x1: float
    y1: float
    """The box in the picture's pixels, y growing downwards."""
    confidence: float


class Unavailable(Exception):
    """The OCR extra is not installed (or its engine cannot load here)."""


class EngineExhausted(Exception):
    """The engine ran out of memory (or another resource) recognising a picture: not the
    picture's fault (it decoded), but the worker's, whose address space had grown; the job
    that raised it is run again in a fresh worker (`isolation.workers`)."""


_RESOURCE = re.compile(
    r"fail(?:ed)? to allocate|bad_alloc|out of memory|insufficient memory|not enough space"
    r"|cannot allocate|unable to allocate",
    re.IGNORECASE,
)
"""What onnxruntime (`[ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION : ... BFCArena::
AllocateRawInternal Failed to allocate memory for requested buffer of size N`), OpenCV
(`Insufficient memory`) and C++ (`std::bad_alloc`) say when an allocation is refused."""


def exhausted(exc: BaseException) -> bool:
    """Whether `exc`, raised by the engine, says it ran out of a resource."""
    return isinstance(exc, MemoryError) or bool(_RESOURCE.search(str(exc)))


@functools.cache
def _engine() -> Any:
    try:
        from rapidocr_onnxruntime import RapidOCR
    except ImportError as exc:  # the extra is not installed
        raise Unavailable(str(exc)) from exc
    logging.getLogger("RapidOCR").setLevel(logging.WARNING)
    return RapidOCR(intra_op_num_threads=1, inter_op_num_threads=1, text_score=MIN_CONFIDENCE)


def available() -> bool:
    """Whether pictures can be recognised in this process (loads the engine on first call)."""
    try:
        _engine()
    except Unavailable:
        return False
    return True


def recognise(image: Any) -> list[Word]:
    """The words of a PIL image, in the engine's order; `Unavailable` without the extra."""
    engine = _engine()
    import numpy as np

    scale = 1.0
    if max(image.size) > MAX_SIDE:
        scale = MAX_SIDE / max(image.size)
        image = image.resize((round(image.width * scale), round(image.height * scale)))
    pixels = np.asarray(image.convert("RGB"))[:, :, ::-1]  # the engine takes BGR, like OpenCV
    try:
        result, _ = engine(pixels)
    except Exception as exc:  # onnxruntime's errors have no common Python base to name
        if exhausted(exc):
            log.debug("the OCR engine ran out of memory: %s", str(exc)[-200:])
            raise EngineExhausted(type(exc).__name__) from None
        raise
    words: list[Word] = []
    for box, raw, score in result or ():
        text = " ".join(str(raw).split())
        if not text or float(score) < MIN_CONFIDENCE:
            continue
        xs = [float(p[0]) / scale for p in box]
        ys = [float(p[1]) / scale for p in box]
        words.append(Word(text, min(xs), min(ys), max(xs), max(ys), round(float(score), 3)))
    return words
