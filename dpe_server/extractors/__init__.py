"""Extractors: one subpackage per format, and the registry that knows them.

Each format subpackage (`xlsx`, `pdf`, `pptx`, `docx`; `ooxml` holds what the OOXML formats
share) defines a `FORMAT` (`base.Format`: suffixes, page unit, paging, checks, picture reader)
that imports nothing heavy, and an `extract` module, the only importer of its library, with its
`EXTRACTOR`: three entry points layered by cost (DESIGN.md):

1. `probe(f, limits)`: page count, page titles and document properties, without the bodies;
2. `extract_pages(f, indices, limits)`: some pages only, where the format allows it
   (None where it does not: the catalog then extracts the whole file and slices);
3. `extract(f, limits)`: the whole document.

They take an open, seekable binary file (the descriptor the server checked: see
`dpe_server.isolation.confine`), return plain trees (`dpe_server.model.tree`) or raise the
project's `ExtractionError`s, and touch nothing else: no catalog, no cache, no transport.
"""

from __future__ import annotations

from dpe_server.extractors.base import DEFAULT_LIMITS, Extractor, Format, Limits
from dpe_server.extractors.registry import (
    FORMATS,
    extractor_fingerprint,
    file_type,
    for_path,
    for_suffix,
    format_of,
    is_paged,
    is_supported,
    read_as,
    register,
    unlocked,
)

__all__ = [
    "DEFAULT_LIMITS",
    "FORMATS",
    "Extractor",
    "Format",
    "Limits",
    "extractor_fingerprint",
    "file_type",
    "for_path",
    "for_suffix",
    "format_of",
    "is_paged",
    "is_supported",
    "read_as",
    "register",
    "unlocked",
]
