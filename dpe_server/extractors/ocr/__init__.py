"""Optical character recognition of pages that are pictures.

- `ocr_engine`: the engines (`tesseract`: the `tesseract` command, used when found;
  `rapidocr`: the `dpe-server[ocr]` extra's PP-OCR models run by onnxruntime), chosen by
  `--ocr-engine`; `read(image, engine, languages)` gives the picture's words with their boxes
  (pixels) and confidence, and which engine read them. `available()` says whether one is.
- `ocr_settings`: the `--ocr` mode, engine and languages, and the part of the cache key they
  make.
- `ocr_deskew`: a scanned page's skew, corrected before Tesseract reads it.
- `ocr_layout`: words → lines of text, for a picture whose text is one string.

A format's extractor decides which pictures to recognise and lays the words out itself (the pdf
extractor turns them into text runs, so the page's usual layout analysis applies to them).
"""

from dpe_server.extractors.ocr.engine import Reading, Word, available, read, recognise
from dpe_server.extractors.ocr.settings import ENGINES, LANGUAGES, MODES, cache_variant

__all__ = [
    "ENGINES",
    "LANGUAGES",
    "MODES",
    "Reading",
    "Word",
    "available",
    "cache_variant",
    "read",
    "recognise",
]
