"""Extractors: the formats, the registry that knows them, and what they build with.

`registry` registers one `Format` per format (`base.Format`: suffixes, page unit, paging,
checks, picture reader), one line each. The formats, a subpackage each: `xlsx`, `docx`,
`pptx` (OOXML), `pdf`, `odt`, `odp` (OpenDocument), `sheets` (.xls, .xlsb, .ods through
calamine), `delimited` (.csv, .tsv), `legacy` (.doc, .rtf, .ppt, converted by LibreOffice),
`html` (web pages and web archives), `markdown` (through the web page reader), `text` (plain
text), `epub` (e-books, their chapters through the web page reader), `picture` (.png, .jpg,
.tif, .webp, .bmp, .gif: a picture and its recognised text),
`mail` (.eml, .msg, .mbox) and `archive` (.zip), the two whose files hold documents of their
own (docs/children.md).
Each one's face defines its `Format` (`FORMAT`; `legacy`'s `WORD` and `POWERPOINT`,
`delimited`'s `CSV` and `TSV`), importing nothing heavy, and names its `extract` module, whose
`EXTRACTOR` is imported, with its library, when a file of the format is first read.

Beneath the formats, importing one way (`tests/test_layout.py`, `EXTRACTOR_LAYERS`): what some
formats share, `ooxml` (the OOXML packages' checks, DrawingML, Office Math, decryption) and
`odf` (the OpenDocument package, styles, paragraphs, frames, tables and flow); `ocr` (the
words of pictures); `kit` (what any format builds with: the guarded zip and XML readers,
tables, list items, page plans, media types); then `base` (`Extractor`, `Limits`, `Format`),
`magic` (what a file is by its first bytes), `passwords` (the passwords to try on the file
being read) and `gcpause` (the garbage collector paused while a sheet's rows are built). A
format imports neither the registry nor another format: what one reads through another (a
converted file, a web page, a pdf page layout, xlsx's cell layout for `sheets` and
`delimited`) the registry hands it.

An `Extractor` has three entry points, layered by cost:

1. `probe(f, limits)`: page count, page titles and document properties, without the bodies;
2. `extract_pages(f, indices, limits)`: some pages only, where the format allows it
   (None where it does not: the catalog then extracts the whole file and slices);
3. `extract(f, limits)`: the whole document.

They take an open, seekable binary file (the descriptor the server checked: see
`dpe_server.isolation.confine`), return plain trees (`dpe_server.model.tree`) or raise the
project's `ExtractionError`s, and touch nothing else: no catalog, no cache, no transport.
"""

from __future__ import annotations

from dpe_server.extractors.base import DEFAULT_LIMITS, Extractor, Format, Limits
from dpe_server.extractors.registry import (
    FORMATS,
    extractor_fingerprint,
    file_type,
    for_path,
    for_suffix,
    format_of,
    is_paged,
    is_supported,
    read_as,
    register,
    unlocked,
)

__all__ = [
    "DEFAULT_LIMITS",
    "FORMATS",
    "Extractor",
    "Format",
    "Limits",
    "extractor_fingerprint",
    "file_type",
    "for_path",
    "for_suffix",
    "format_of",
    "is_paged",
    "is_supported",
    "read_as",
    "register",
    "unlocked",
]
