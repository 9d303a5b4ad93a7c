"""RapidOCR (`rapidocr_onnxruntime`, the `ocr` extra): PP-OCRv4 text detection, a 0°/180°
direction classifier and PP-OCRv4 recognition for Chinese and English, run by onnxruntime on
CPU with one thread (the server runs one worker process per core). Its models are inside its
wheel: nothing is downloaded at run time. Loaded once per process.

Each detected text box becomes one `Word` (a run of text on one line, which may hold several
words separated by spaces).
"""

from __future__ import annotations

import functools
import logging
from typing import Any

from dpe_server.extractors.ocr.words import (
    MIN_CONFIDENCE,
    EngineExhausted,
    Unavailable,
    Word,
    exhausted,
)

log = logging.getLogger(__name__)


@functools.cache
def _engine() -> Any:
    try:
        from rapidocr_onnxruntime import RapidOCR
    except ImportError as exc:  # the extra is not installed
        raise Unavailable(str(exc)) from exc
    logging.getLogger("RapidOCR").setLevel(logging.WARNING)
    return RapidOCR(intra_op_num_threads=1, inter_op_num_threads=1, text_score=MIN_CONFIDENCE)


def load() -> None:
    """Load the engine (`Unavailable` without the extra)."""
    _engine()


def recognise(image: Any) -> list[Word]:
    """The words of a PIL image (no larger than `MAX_SIDE`), in the engine's order."""
    engine = _engine()
    import numpy as np

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
        xs = [float(p[0]) for p in box]
        ys = [float(p[1]) for p in box]
        words.append(Word(text, min(xs), min(ys), max(xs), max(ys), round(float(score), 3)))
    return words
