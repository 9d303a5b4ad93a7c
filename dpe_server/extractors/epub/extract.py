"""The EPUB extractor: the package opened through the kit's guarded zip reader (member
count, inflated sizes and compression ratios capped while inflating), refused when DRM
encrypts it, its spine read chapter by chapter by the web page reader (a chapter one page,
titled by the table of contents, else `Chapter N`, continued when large), its pictures the
package's members, its Dublin Core metadata the document's; a cover no chapter shows is an
image element at the end of the first page."""

from __future__ import annotations

import posixpath
import zipfile
from typing import BinaryIO

from lxml import etree

from dpe_server.extractors.base import Limits
from dpe_server.extractors.epub import FORMAT, chapter_reader
from dpe_server.extractors.epub.package import Book, read_book
from dpe_server.extractors.gcpause import collector_paused
from dpe_server.extractors.kit.media import image_mime
from dpe_server.extractors.kit.package import Package
from dpe_server.extractors.kit.whole import whole_extractor
from dpe_server.model import summaries
from dpe_server.model.content import ImageContent
from dpe_server.model.errors import CorruptError
from dpe_server.model.tree import (
    JSON,
    Category,
    Document,
    Element,
    Page,
    Properties,
    element_id,
    one_line,
)


def _pictures(book: Book) -> list[str]:
    """The book's pictures (their members), once for all its chapters."""
    return [i.path for i in book.manifest.values() if i.media_type.startswith("image/")]


def _parts(pictures: list[str], chapter: str) -> dict[str, str]:
    """Each picture of the book as a chapter names it (relative to the chapter) → member."""
    base = posixpath.dirname(chapter) or "."
    out: dict[str, str] = {}
    for path in pictures:
        out[posixpath.relpath(path, base)] = path
        out["/" + path] = path
    return out


def _properties(book: Book, titles: list[str]) -> Properties:
    meta = book.metadata
    extra: dict[str, JSON] = {"epub_version": book.version}
    for key in ("creator", "language", "publisher", "date"):
        if key in meta:
            extra[key] = meta[key][0] if len(meta[key]) == 1 else meta[key]
    return Properties(
        page_count=len(titles),
        title=one_line(meta["title"][0]) if "title" in meta else None,
        keywords=tuple(meta.get("subject", ())),
        summary=one_line(meta["description"][0]) if "description" in meta else None,
        page_titles=tuple(titles),
        extra=extra,
    )


def _with_cover(pages: list[Page], pkg: Package, cover: str) -> None:
    """The cover as an image element closing the first page, when no chapter shows it."""
    shown = any(e.metadata.get("part") == cover for p in pages for e in p.elements)
    if shown or not pages:
        return
    first = pages[0]
    n = sum(1 for e in first.elements if e.category is Category.IMAGE) + 1
    mime = image_mime(cover, pkg.head(cover, 64))
    content: ImageContent = {"description": "Cover", "mime_type": mime}
    element = Element(
        element_id(first.page_index, Category.IMAGE, n),
        Category.IMAGE,
        summaries.image("Cover", mime, None, None),
        dict(content),
        {"part": cover, "cover": True},
    )
    pages[0] = Page(first.page_index, first.title, (*first.elements, element), first.metadata)


def _read(f: BinaryIO, limits: Limits) -> Document:
    """The book's tree, the cyclic garbage collector paused meanwhile, as for a web page
    (`html.extract._read`)."""
    read = chapter_reader()
    try:
        with collector_paused(), Package(f, "epub", limits) as pkg:
            book = read_book(pkg)
            pages: list[Page] = []
            cut = False
            pictures = _pictures(book)
            for k, chapter in enumerate(book.spine):
                if len(pages) >= limits.max_pages:
                    cut = True
                    break
                title = book.toc.get(chapter) or f"Chapter {k + 1}"
                doc = read(pkg.read(chapter), limits, title, len(pages), _parts(pictures, chapter))
                pages.extend(doc.pages[: limits.max_pages - len(pages)])
                cut = cut or bool(doc.metadata.get("truncated"))
            if book.cover:
                _with_cover(pages, pkg, book.cover)
    except (etree.LxmlError, KeyError, ValueError, zipfile.BadZipFile) as exc:
        raise CorruptError(
            f"The e-book is malformed and cannot be read ({type(exc).__name__}: {exc})."
        ) from None
    props = _properties(book, [p.title for p in pages])
    return Document(props, tuple(pages), {"truncated": True} if cut else {})


EXTRACTOR = whole_extractor(FORMAT, _read)
