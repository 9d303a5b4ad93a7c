"""EPUB 2 and 3 e-books (.epub): a page per chapter of the spine, in reading order, read by the web
page reader the registry hands this format (`read_chapters_with`); the table of contents (EPUB
3's navigation document, EPUB 2's NCX) titles the pages. The package goes through the kit's
guarded zip reader. `package` (the package document: where it is, its Dublin Core metadata,
manifest, spine, table of contents and encryption), `extract` (the extractor, imported when a
file of the format is first read)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import BinaryIO

from dpe_server.extractors.base import Format, Limits
from dpe_server.extractors.kit.handed import Handed
from dpe_server.extractors.kit.pictures import picture
from dpe_server.extractors.kit.zips import check_zip
from dpe_server.model.tree import JSON, Document

ChapterReader = Callable[[bytes, Limits, str, int, dict[str, str]], Document]
"""`read(xhtml, limits, title, first_page, parts)`: a chapter as one page (and its
continuations), numbered from `first_page` (the web page reader's `read_chapter`)."""

_READER: Handed[ChapterReader] = Handed("web page reader for the EPUB format")


def read_chapters_with(reader: ChapterReader) -> None:
    """Read chapters with `reader` (the registry hands it the web page reader)."""
    _READER.give(reader)


def chapter_reader() -> ChapterReader:
    return _READER.get()


def _picture(f: BinaryIO, fmt: str, metadata: Mapping[str, JSON], max_bytes: int) -> bytes | None:
    """The package member the image element names in `metadata.part`."""
    return picture(f, fmt, metadata, max_bytes)


FORMAT = Format(
    name="epub",
    suffixes=(".epub",),
    kind_name="an EPUB e-book",
    page_unit="chapter",
    paged=False,
    extractor="dpe_server.extractors.epub.extract:EXTRACTOR",
    check=check_zip,
    picture=_picture,
    probe_reads_whole=True,
    recognises_pictures=False,
)
