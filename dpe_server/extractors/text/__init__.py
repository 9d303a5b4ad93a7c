"""Plain text (.txt, .text, .log): a page at each form feed, else every 2,000 lines;
paragraphs from blank lines; the encoding detected (docs/formats.md). `extract` is the
extractor, imported when a file of the format is first read."""

from __future__ import annotations

from dpe_server.extractors.base import Format
from dpe_server.extractors.kit.charset import not_text

FORMAT = Format(
    name="text",
    suffixes=(".txt", ".text", ".log"),
    kind_name="a plain text",
    page_unit="page",
    paged=False,
    extractor="dpe_server.extractors.text.extract:EXTRACTOR",
    check=not_text,
    probe_reads_whole=True,
    recognises_pictures=False,
)
