"""Document properties (Info dictionary, then XMP) and the outline → page map.

What they are read from (`Source`): PDFium's Info strings, and pypdf for XMP and the outline
when the document has them (pypdf is imported only then: see `open`); or pypdf for all of it
when pypdf opened the file.

- title: Info /Title, else XMP dc:title (x-default or the first language); a placeholder
  (`model.metadata.placeholder`: "untitled", a tool's file name…) is no title;
- keywords: Info /Keywords split on commas and semicolons, else XMP pdf:Keywords, else
  dc:subject (a bag of keywords in XMP);
- summary: Info /Subject, else XMP dc:description (placeholders such as "(unspecified)" dropped);
- extra: author, creator, producer, created / modified dates when present.

A broken outline or XMP packet is ignored (it is optional data), never fatal.
"""

from __future__ import annotations

import ctypes
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

import pypdfium2.raw as pdfium_c

from dpe_server.extractors.base import Limits
from dpe_server.extractors.pdf.collect import plain
from dpe_server.extractors.pdf.open import library_errors
from dpe_server.model.metadata import placeholder, split_keywords
from dpe_server.model.tree import JSON, Properties

if TYPE_CHECKING:
    from pypdf import PdfReader
    from pypdf.generic import Destination

MAX_OUTLINE = 10_000
INFO_KEYS = (
    "Title",
    "Author",
    "Subject",
    "Keywords",
    "Creator",
    "Producer",
    "CreationDate",
    "ModDate",
)


class Source(Protocol):
    """Where a document's properties are read from."""

    @property
    def count(self) -> int: ...
    @property
    def encrypted(self) -> bool: ...
    @property
    def outline(self) -> dict[int, list[tuple[str, int]]]: ...
    def info(self) -> Mapping[str, Any]:
        """The Info dictionary's entries (`/Title`...)."""
        ...

    def xmp(self) -> dict[str, Any]:
        """What `xmp_fields` gives, or {} when there is no XMP packet."""
        ...


def _clean(value: Any) -> str | None:
    if value is None:
        return None
    try:
        text = " ".join(plain(str(value)).split())
    except (TypeError, ValueError):
        return None
    return text or None


def _meaningful(value: Any) -> str | None:
    """The cleaned value, None when it is a placeholder (`untitled`, `(anonymous)`, a file
    name such as `Microsoft Word - x.docx`): the title then comes from the first heading."""
    text = _clean(value)
    return None if placeholder(text) else text


def pdfium_info(pdf: Any) -> dict[str, str]:
    """The Info dictionary's text entries read by PDFium (`pdf`: a pypdfium2 document)."""
    out: dict[str, str] = {}
    size = 1024
    buf = ctypes.create_string_buffer(size)
    for key in INFO_KEYS:
        got = pdfium_c.FPDF_GetMetaText(pdf.raw, key.encode("ascii"), buf, size)
        if got > size:
            size = got
            buf = ctypes.create_string_buffer(size)
            got = pdfium_c.FPDF_GetMetaText(pdf.raw, key.encode("ascii"), buf, size)
        if got > 2:
            out[f"/{key}"] = buf.raw[: got - 2].decode("utf-16-le", "replace")
    return out


def has_outline(pdf: Any) -> bool:
    """Whether the document has an outline entry at all (PDFium; `pdf` a pypdfium2 document)."""
    return bool(pdfium_c.FPDFBookmark_GetFirstChild(pdf.raw, None))


def reader_info(reader: PdfReader) -> Mapping[str, Any]:
    try:
        info: Any = reader.metadata or {}
    except library_errors():
        info = {}
    return info  # type: ignore[no-any-return]


def xmp_fields(reader: PdfReader) -> dict[str, Any]:
    try:
        xmp = reader.xmp_metadata
        if xmp is None:
            return {}
        title = xmp.dc_title or {}
        description = xmp.dc_description or {}
        return {
            "title": title.get("x-default") or next(iter(title.values()), None),
            "description": description.get("x-default") or next(iter(description.values()), None),
            "keywords": xmp.pdf_keywords,
            "subject": list(xmp.dc_subject or []),
        }
    except library_errors():
        return {}


def outline_map(reader: PdfReader) -> dict[int, list[tuple[str, int]]]:
    """Page index → its outline entries (title, heading level from 1), in outline order."""
    from pypdf.generic import Destination

    out: dict[int, list[tuple[str, int]]] = {}
    try:
        stack: list[tuple[Any, int]] = [(reader.outline, 1)]
    except library_errors():
        return out
    seen = 0
    while stack and seen < MAX_OUTLINE:
        items, level = stack.pop()
        pending: list[tuple[Any, int]] = []
        for item in items:
            seen += 1
            if isinstance(item, list):
                pending.append((item, level + 1))
            elif isinstance(item, Destination):
                _add_entry(reader, item, level, out)
        stack.extend(reversed(pending))
    return out


def _add_entry(
    reader: PdfReader, item: Destination, level: int, out: dict[int, list[tuple[str, int]]]
) -> None:
    try:
        page = reader.get_destination_page_number(item)
        title = _clean(item.title)
    except library_errors():
        return
    if page is not None and page >= 0 and title:
        out.setdefault(page, []).append((title, level))


def properties(source: Source, limits: Limits) -> Properties:
    """The cheap probe: page count, properties and outline-based page titles."""
    count = source.count
    info = source.info()
    title = _meaningful(info.get("/Title")) or _meaningful(source.xmp().get("title"))
    keywords = split_keywords(_clean(info.get("/Keywords")) or _clean(source.xmp().get("keywords")))
    subject = source.xmp().get("subject") if not keywords else None
    if subject:
        keywords = split_keywords(", ".join(str(s) for s in subject))
    summary = _meaningful(info.get("/Subject")) or _meaningful(source.xmp().get("description"))
    extra: dict[str, JSON] = {}
    for key, name in (
        ("/Author", "author"),
        ("/Creator", "creator"),
        ("/Producer", "producer"),
        ("/CreationDate", "created"),
        ("/ModDate", "modified"),
    ):
        value = _clean(info.get(key))
        if value:
            extra[name] = value
    if source.encrypted:
        extra["encrypted"] = True
    if count > limits.max_pages:
        extra["pages_in_file"] = count
    outline = source.outline
    titles: tuple[str, ...] | None = None
    shown = min(count, limits.max_pages)
    if outline:
        titles = tuple(outline[i][0][0] if i in outline else f"Page {i + 1}" for i in range(shown))
    return Properties(
        page_count=shown,
        title=title,
        keywords=keywords,
        summary=summary,
        page_titles=titles,
        extra=extra,
    )
