"""Macro-enabled OOXML files (.xlsm, .docm, .pptm, .xltm, .dotm, .potm, .ppsm): their macros
are never run, and the document's metadata says the package holds some (`has_macros: true`)
when it carries a VBA project (`vbaProject.bin`) or its content types say macro-enabled."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import BinaryIO

from dpe_server.extractors.base import Extractor, Format, Limits
from dpe_server.extractors.kit.package import Package
from dpe_server.extractors.ocr.states import with_pictures
from dpe_server.model.tree import Document, Page, Properties

CONTENT_TYPES = "[Content_Types].xml"


def holds_macros(pkg: Package) -> bool:
    """True when the package carries a VBA project or declares a macro-enabled main part."""
    if any(name.lower().endswith("vbaproject.bin") for name in pkg.names()):
        return True
    if not pkg.has(CONTENT_TYPES):
        return False
    return b"macroenabled" in pkg.read(CONTENT_TYPES).lower()


def flag_macros(extractor: Extractor, name: str) -> Extractor:
    """`extractor` whose whole-document extraction adds `has_macros: true` where it applies."""
    inner = extractor.extract

    def extract(f: BinaryIO, limits: Limits) -> Document:
        doc = inner(f, limits)
        with Package(f, name, limits) as pkg:
            if not holds_macros(pkg):
                return doc
        return dataclasses.replace(doc, metadata={**doc.metadata, "has_macros": True})

    return dataclasses.replace(extractor, extract=extract)


def package_extractor(
    fmt: Format,
    probe: Callable[[BinaryIO, Limits], Properties],
    extract: Callable[[BinaryIO, Limits], Document],
    extract_pages: Callable[[BinaryIO, Sequence[int], Limits], list[Page]],
) -> Extractor:
    """The `Extractor` of an OOXML format, its documents flagged `has_macros` (`flag_macros`),
    each page saying `ocr: "pending"` while a picture of it waits to be recognised
    (`ocr.states.with_pictures`)."""

    def whole(f: BinaryIO, limits: Limits) -> Document:
        doc = extract(f, limits)
        return dataclasses.replace(doc, pages=tuple(with_pictures(p) for p in doc.pages))

    def some(f: BinaryIO, indices: Sequence[int], limits: Limits) -> list[Page]:
        return [with_pictures(p) for p in extract_pages(f, indices, limits)]

    return flag_macros(Extractor(probe, whole, some), fmt.name)
