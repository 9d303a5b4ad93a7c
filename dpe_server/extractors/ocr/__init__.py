"""Optical character recognition of pages that are pictures (the `dpe-server[ocr]` extra).

- `engine`: the engine (RapidOCR: PP-OCR detection and recognition models for Chinese and
  English, run on CPU by onnxruntime, shipped inside its wheel), loaded once per process;
  `recognise(image)` gives the picture's words with their boxes (pixels) and confidence.
  Without the extra installed, `available()` is False and nothing here imports it.
- `settings`: the `--ocr` mode and languages, and the part of the cache key they make.
- `layout`: recognised words as lines of text in reading order (for pictures, whose text is
  one string).
- `states`: what a page says of its recognition (`metadata.ocr`), and the `pending` and
  `failed` states the server moves a page between.

A format's extractor decides which pictures to recognise and lays the words out itself (the pdf
extractor turns them into text runs, so the page's usual layout analysis applies to them).
"""

from dpe_server.extractors.ocr.engine import Word, available, recognise
from dpe_server.extractors.ocr.settings import LANGUAGES, MODES, cache_variant

__all__ = ["LANGUAGES", "MODES", "Word", "available", "cache_variant", "recognise"]
