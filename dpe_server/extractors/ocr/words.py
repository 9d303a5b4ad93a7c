"""What an engine gives back (`Word`: text with its box and confidence) and the errors every
engine raises (`Unavailable`, `EngineExhausted`)."""

from __future__ import annotations

import re
from dataclasses import dataclass

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
    """No OCR engine is installed (or the one asked for cannot load here)."""


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
(`Insufficient memory`), C++ (`std::bad_alloc`) and Tesseract say when an allocation is
refused."""


def exhausted(exc: BaseException) -> bool:
    """Whether `exc`, raised by the engine, says it ran out of a resource."""
    return isinstance(exc, MemoryError) or bool(_RESOURCE.search(str(exc)))
