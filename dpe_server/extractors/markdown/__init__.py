"""Markdown (.md, .markdown): rendered to HTML by markdown-it-py (CommonMark, GFM tables,
strikethrough and task lists, raw HTML kept) and read by the web page reader, which the registry
hands this format (`read_html_with`): the same pages, elements and limits as a web page. `front`
(the front matter: YAML between `---` lines or TOML between `+++` lines, the document's
metadata), `extract` (the extractor, imported when a file of the format is first read)."""

from __future__ import annotations

from collections.abc import Callable

from dpe_server.extractors.base import Format, Limits
from dpe_server.extractors.kit.charset import not_text
from dpe_server.extractors.kit.handed import Handed
from dpe_server.model.tree import Document

HtmlReader = Callable[[str, str, Limits], Document]
"""`read(html, encoding, limits)`: the document of a page of HTML (the web page reader)."""

_READER: Handed[HtmlReader] = Handed("web page reader for the Markdown format")


def read_html_with(reader: HtmlReader) -> None:
    """Read rendered Markdown with `reader` (the registry hands it the web page reader)."""
    _READER.give(reader)


def html_reader() -> HtmlReader:
    return _READER.get()


FORMAT = Format(
    name="markdown",
    suffixes=(".md", ".markdown"),
    kind_name="a Markdown text",
    page_unit="section",
    paged=False,
    extractor="dpe_server.extractors.markdown.extract:EXTRACTOR",
    check=not_text,
    pictures_beside=True,
    probe_reads_whole=True,
    recognises_pictures=False,
)
