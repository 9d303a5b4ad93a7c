"""Optical character recognition of pages that are pictures.

- `engine`: the engines (`tesseract`: used when its command is found, its library loaded in
  the process where found, else its command run a page at a time: `tess_library`,
  `tess_command`;
  `rapidocr`: the `dpe-server[ocr]` extra's PP-OCR models run by onnxruntime), chosen by
  `--ocr-engine`; `read(image, engine, languages)` gives the picture's words with their boxes
  (pixels) and confidence, and which engine read them. `available()` says whether one is.
- `settings`: the `--ocr` mode, engine and languages, and the part of the cache key they
  make.
- `deskew`: a scanned page's skew (and where its ink lies), measured before Tesseract reads it;
  `prepare`: the page made ready for Tesseract, its ink's area alone filtered and turned level.
- `layout`: words → lines of text, for a picture whose text is one string.
- `rapid`: RapidOCR (the `ocr` extra), one of the engines `engine` runs; `words`: what an
  engine gives back (`Word`: text, box, confidence) and the errors every engine raises.
- `states`: what a page says of its recognition (`metadata.ocr`), and the `pending` and
  `failed` states the server moves a page between.

A format's extractor decides which pictures to recognise and lays the words out itself (the pdf
extractor turns them into text runs, so the page's usual layout analysis applies to them).
"""

from typing import TYPE_CHECKING

from dpe_server.extractors.ocr.settings import ENGINES, LANGUAGES, MODES, cache_variant

if TYPE_CHECKING:
    from dpe_server.extractors.ocr.engine import Reading, Word, available, read, recognise

_ENGINE_NAMES = frozenset({"Reading", "Word", "available", "read", "recognise"})


def __getattr__(name: str) -> object:
    """The engine's names, imported when first asked for: a process that reads no picture
    (`dpe-server read` of a web page, the states of a page the catalog looks at) does not
    load the engines' modules (ctypes, subprocess, tempfile)."""
    if name not in _ENGINE_NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from dpe_server.extractors.ocr import engine

    return getattr(engine, name)


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
