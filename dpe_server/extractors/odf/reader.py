"""The entry points of an OpenDocument extractor (probe, extract, extract_pages) around an
`Opened` file: the package opened under the caps, the page titles known, any page built on
demand. Library errors become `corrupt`, naming what the file is."""

from __future__ import annotations

import zipfile
from collections.abc import Callable, Sequence
from typing import BinaryIO, Protocol

from lxml import etree

from dpe_server.extractors.base import Extractor, Limits
from dpe_server.extractors.kit.package import Package
from dpe_server.extractors.odf.flat import open_package
from dpe_server.extractors.odf.package import properties
from dpe_server.model.errors import CorruptError
from dpe_server.model.tree import Document, Page, Properties

_LIBRARY_ERRORS = (etree.LxmlError, KeyError, ValueError, IndexError, zipfile.BadZipFile)


class Opened(Protocol):
    titles: list[str]
    truncated: bool

    def page(self, index: int) -> Page: ...


def extractor(
    name: str, suffixes: tuple[str, ...], what: str, opener: Callable[[Package, Limits], Opened]
) -> Extractor:
    """The `Extractor` of the format `name`, whose files are `what` (`an OpenDocument text`)."""

    def read(f: BinaryIO, limits: Limits, indices: Sequence[int] | None) -> Document:
        try:
            with open_package(f, name, limits) as pkg:
                opened = opener(pkg, limits)
                count = len(opened.titles)
                wanted = range(count) if indices is None else indices
                pages = tuple(opened.page(i) for i in wanted if 0 <= i < count)
                props = properties(pkg, opened.titles)
        except RecursionError:
            raise CorruptError(f"The file, {what}, is nested too deeply to read.") from None
        except _LIBRARY_ERRORS as exc:
            raise CorruptError(
                f"The file, {what}, is malformed and cannot be read ({type(exc).__name__})."
            ) from None
        cut = opened.truncated or any(p.metadata.get("truncated") for p in pages)
        return Document(props, pages, {"truncated": True} if cut else {})

    def probe(f: BinaryIO, limits: Limits) -> Properties:
        return read(f, limits, ()).properties

    def extract(f: BinaryIO, limits: Limits) -> Document:
        return read(f, limits, None)

    def extract_pages(f: BinaryIO, indices: Sequence[int], limits: Limits) -> list[Page]:
        return list(read(f, limits, sorted(set(indices))).pages)

    return Extractor(probe, extract, extract_pages)
