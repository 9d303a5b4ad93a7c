"""Web pages (.html, .htm, .xhtml, .mhtml, .mht): a page is a top-level section of the page
(docs/formats.md). Read with lxml's HTML parser: no network, no scripts, no entities; a remote
picture is named, never fetched.

`source` (the file read into a tree: its bytes, bounded, a web archive's HTML part and its other
parts, the charset), `visible` (what is never shown, and the kinds of elements), `walk` (the
body walked into blocks in reading order), `media` (inline elements as items: links, pictures),
`tables` (a `<table>` as a grid, spans placed), `word` (what Word writes when it saves a web
page), `extract` (the extractor, imported when a file of the format is first read)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import BinaryIO

from dpe_server.extractors.base import DEFAULT_LIMITS, Format, Limits
from dpe_server.extractors.kit.charset import not_text
from dpe_server.extractors.kit.whole import read_bounded
from dpe_server.model.tree import JSON, Document


def _picture(f: BinaryIO, fmt: str, metadata: Mapping[str, JSON], max_bytes: int) -> bytes | None:
    """A `data:` picture (the page's `image_index`-th `<img>`) or a web archive's part."""
    from dpe_server.extractors.html import source

    data = read_bounded(f, DEFAULT_LIMITS)
    part = metadata.get("part")
    if isinstance(part, str) and source.is_archive(data):
        found = source.archive_part(data, part)
        return found if found is not None and len(found) <= max_bytes else None
    index = metadata.get("image_index")
    if not isinstance(index, int) or index < 0:
        return None
    f.seek(0)
    root = source.load(f, DEFAULT_LIMITS).root
    img = next((el for n, el in enumerate(root.iter("img")) if n == index), None)
    decoded = source.data_uri((img.get("src") or "").strip()) if img is not None else None
    return decoded[1] if decoded is not None and len(decoded[1]) <= max_bytes else None


def read_text(html: str, encoding: str, limits: Limits) -> Document:
    """The document of a page of HTML already decoded (what Markdown is read through)."""
    from dpe_server.extractors.html.extract import read
    from dpe_server.extractors.html.source import Source, parse

    return read(Source(parse(html), encoding), limits)


def read_chapter(
    data: bytes, limits: Limits, title: str, first: int, parts: dict[str, str]
) -> Document:
    """An e-book's chapter (XHTML bytes) as one page titled `title` (and continuations),
    its pages numbered from `first`; `parts` names the package member each `src` is."""
    from dpe_server.extractors.html.extract import read
    from dpe_server.extractors.html.source import Source, declared, parse
    from dpe_server.extractors.kit.charset import decode

    text, encoding = decode(data, declared(data))
    return read(Source(parse(text), encoding, parts), limits, title, first)


FORMAT = Format(
    name="html",
    suffixes=(".html", ".htm", ".xhtml", ".xht", ".mhtml", ".mht"),
    kind_name="a web page",
    page_unit="section",
    paged=False,
    extractor="dpe_server.extractors.html.extract:EXTRACTOR",
    check=not_text,
    picture=_picture,
    pictures_beside=True,
    probe_reads_whole=True,
    recognises_pictures=False,
)
