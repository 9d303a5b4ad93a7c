"""The extractor registry: one module per format, imported only when a file of it is read.

Each format module (`xlsx`, `pdf`, `pptx`, `docx`) is the only importer of its library and
exposes `EXTRACTOR`, an `Extractor` with three entry points layered by cost (DESIGN.md):

1. `probe(f, limits)`: page count, page titles and document properties, without the bodies;
2. `extract_pages(f, indices, limits)`: some pages only, where the format allows it
   (None where it does not: the catalog then extracts the whole file and slices);
3. `extract(f, limits)`: the whole document.

They take an open, seekable binary file (the descriptor the server checked: see
`dpe_server.confine`), return plain trees (`dpe_server.model`) or raise the project's
`ExtractionError`s, and touch nothing else: no catalog, no cache, no transport, no stdout.
"""

from __future__ import annotations

import hashlib
import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import BinaryIO

from dpe_server.model import Document, Page, Properties


@dataclass(frozen=True, slots=True)
class Limits:
    """Caps every extraction honours; where one stops it, the output says `truncated`."""

    max_pages: int = 2_000
    """Pages (sheets, slides, pdf pages, docx sections) extracted at most."""
    max_cells: int = 2_000_000
    """Spreadsheet cells read at most, over the whole workbook."""
    max_elements_per_page: int = 5_000
    """Elements on one page at most."""
    max_chars_per_page: int = 16_000_000
    """Characters of text on one page at most."""
    max_part_bytes: int = 256 * 1024 * 1024
    """Inflated size of one zip member (OOXML part) at most."""
    max_total_inflated: int = 1024 * 1024 * 1024
    """Inflated bytes of all the parts read from one package at most."""
    max_members: int = 10_000
    """Zip members in one OOXML package at most."""
    max_ratio: float = 200.0
    """Compression ratio (inflated / compressed) of one member at most, for members > 1 MiB."""


DEFAULT_LIMITS = Limits()


@dataclass(frozen=True, slots=True)
class Extractor:
    """A format's entry points. `version` is part of the cache key: bump it when output changes."""

    name: str
    suffixes: tuple[str, ...]
    version: str
    probe: Callable[[BinaryIO, Limits], Properties]
    extract: Callable[[BinaryIO, Limits], Document]
    extract_pages: Callable[[BinaryIO, Sequence[int], Limits], list[Page]] | None = None


_MODULES: dict[str, str] = {
    ".xlsx": "xlsx",
    ".xlsm": "xlsx",
    ".pdf": "pdf",
    ".pptx": "pptx",
    ".pptm": "pptx",
    ".docx": "docx",
    ".docm": "docx",
}

SUPPORTED_SUFFIXES: frozenset[str] = frozenset(_MODULES)

PAGED_TYPES: frozenset[str] = frozenset({"pdf", "pptx", "pptm"})
"""File types whose extractor reads one page without the others (`extract_pages`)."""


def extractor_fingerprint() -> str:
    """A hash of the extraction code (this package, the model, summaries, metadata).

    Part of every cache key: any change to how trees are made invalidates cached trees,
    without anyone having to remember to bump a version.
    """
    here = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    files = sorted(here.glob("*.py")) + [
        here.parent / name for name in ("model.py", "summaries.py", "metadata.py")
    ]
    for path in files:
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def file_type(path: PurePath | str) -> str:
    """SPEC §4 `file_type`: the suffix without its dot, lower case."""
    return PurePath(path).suffix.lower().lstrip(".")


def is_supported(path: PurePath | str) -> bool:
    return PurePath(path).suffix.lower() in SUPPORTED_SUFFIXES


def for_suffix(suffix: str) -> Extractor | None:
    """The extractor for a suffix (`.xlsx`), importing its module on first use."""
    module = _MODULES.get(suffix.lower())
    if module is None:
        return None
    mod = importlib.import_module(f"{__name__}.{module}")
    extractor: Extractor = mod.EXTRACTOR
    return extractor


def for_path(path: PurePath | str) -> Extractor | None:
    return for_suffix(PurePath(path).suffix)
