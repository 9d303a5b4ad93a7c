"""The extractors of .doc/.rtf and .ppt: convert (`convert`), then read the .docx / .pptx
with its own extractor. The tree says it was converted (`metadata.converted_by`); image
elements name parts of the converted package, read again through the same conversion.

Each conversion has its own deadline under the worker's, `CONVERT_TIMEOUT` seconds, for a
probe as for an extraction: the probe converts the whole file, and the extraction that
follows in the same worker reuses that conversion (`convert` keeps the last few), so a probe
cut sooner would list `timeout` a file the full read would have read. The worker gives such a
probe the extraction's deadline (`Format.probe_reads_whole`)."""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import BinaryIO

from dpe_server.extractors.base import Extractor, Limits
from dpe_server.extractors.kit.pictures import picture as ooxml_picture
from dpe_server.extractors.legacy import converted_format, target
from dpe_server.extractors.legacy.convert import convert
from dpe_server.model.tree import JSON, Document, Page, Properties

CONVERT_TIMEOUT = 50.0
"""Seconds a conversion may take (the worker's deadline is 60 s by default)."""
_BY = "LibreOffice"


def _converted(f: BinaryIO, fmt: str, timeout: float) -> io.BytesIO:
    f.seek(0)
    return io.BytesIO(convert(f.read(), fmt, timeout))


def _extractor(fmt: str, suffixes: tuple[str, ...]) -> Extractor:

    def inner() -> Extractor:
        found = converted_format(fmt)
        assert found is not None
        return found.load()

    def probe(f: BinaryIO, limits: Limits) -> Properties:
        return inner().probe(_converted(f, fmt, CONVERT_TIMEOUT), limits)

    def extract(f: BinaryIO, limits: Limits) -> Document:
        doc = inner().extract(_converted(f, fmt, CONVERT_TIMEOUT), limits)
        return Document(doc.properties, doc.pages, {**doc.metadata, "converted_by": _BY})

    def extract_pages(f: BinaryIO, indices: Sequence[int], limits: Limits) -> list[Page]:
        """Some pages of the converted document (the `ocr` job of one page recognises that
        page's pictures only)."""
        inner_pages = inner().extract_pages
        assert inner_pages is not None
        return inner_pages(_converted(f, fmt, CONVERT_TIMEOUT), indices, limits)

    return Extractor(probe, extract, extract_pages)


DOC = _extractor("doc", (".doc", ".rtf"))
PPT = _extractor("ppt", (".ppt",))


def picture(f: BinaryIO, fmt: str, metadata: Mapping[str, JSON], max_bytes: int) -> bytes | None:
    """A picture of the converted package (`metadata.part`)."""
    kind = "ppt" if fmt == "ppt" else "doc"
    return ooxml_picture(_converted(f, kind, CONVERT_TIMEOUT), target(kind), metadata, max_bytes)
