"""The .csv / .tsv extractor.

- Encoding: a byte-order mark (UTF-8, UTF-16 LE/BE, UTF-32) says it; else UTF-8 when the
  bytes decode as UTF-8; else cp1252 (Excel's "CSV" on Western Windows), whose five
  undefined bytes fall back to Latin-1. The page's metadata names the encoding used.
- Delimiter: `csv.Sniffer` on the first 64 KiB among `,` `;` tab `|`; when it cannot tell,
  the suffix's (`,` for .csv, tab for .tsv). The page's metadata names it.
- A NUL byte in the text (a binary file named .csv) is `corrupt`.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from typing import BinaryIO

from dpe_server.extractors import delimited
from dpe_server.extractors.base import Extractor, Format, Limits
from dpe_server.extractors.gcpause import collector_paused
from dpe_server.extractors.kit.charset import bom_encoding
from dpe_server.extractors.kit.values import ValueSheet, values_page
from dpe_server.model.errors import CorruptError
from dpe_server.model.tree import Document, Page, Properties

SNIFF_CHARS = 64 * 1024
DELIMITERS = ",;\t|"


def decode(data: bytes) -> tuple[str, str]:
    """The text of `data` and the name of the encoding it was read in."""
    name = bom_encoding(data)
    if name is not None:
        try:
            return data.decode(name), name.removesuffix("-sig")
        except UnicodeDecodeError:
            raise CorruptError(
                f"The file starts with a {name} byte-order mark but is not {name} text."
            ) from None
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        pass
    try:
        return data.decode("cp1252"), "cp1252"
    except UnicodeDecodeError:
        return data.decode("latin-1"), "latin-1"


def delimiter(text: str, suffix: str) -> str:
    """The delimiter `csv.Sniffer` finds in the text's start, else the suffix's."""
    sample = text[:SNIFF_CHARS]
    if len(text) > SNIFF_CHARS:
        sample = sample[: sample.rfind("\n") + 1] or sample
    default = "\t" if suffix == ".tsv" else ","
    try:
        found = csv.Sniffer().sniff(sample, delimiters=DELIMITERS).delimiter
    except csv.Error:
        return default
    if default in sample.partition("\n")[0] and found not in sample.partition("\n")[0]:
        return default
    return found


def _rows(text: str, sep: str, max_cells: int) -> tuple[list[list[str]], bool]:
    """The rows (at most `max_cells` cells in all), and whether some were left out."""
    csv.field_size_limit(16 * 1024 * 1024)
    rows: list[list[str]] = []
    cells = 0
    try:
        for row in csv.reader(io.StringIO(text, newline=""), delimiter=sep):
            cells += len(row)
            if cells > max_cells:
                return rows, True
            rows.append(row)
    except csv.Error as exc:
        raise CorruptError(f"The file is not readable as delimited text ({exc}).") from None
    return rows, False


def probe(f: BinaryIO, limits: Limits) -> Properties:
    return Properties(page_count=1)


def _document(f: BinaryIO, limits: Limits, suffix: str) -> Document:
    text, encoding = decode(f.read())
    if "\0" in text:
        raise CorruptError("The file holds NUL bytes: it is binary, not delimited text.")
    sep = delimiter(text, suffix)
    rows, cut = _rows(text, sep, limits.max_cells)
    width = max(map(len, rows), default=0)
    rows = [r + [""] * (width - len(r)) for r in rows]
    page, _ = values_page(0, ValueSheet(suffix[1:].upper(), rows), limits, limits.max_cells)
    meta = {**page.metadata, "encoding": encoding, "delimiter": sep}
    if cut:
        meta["truncated"] = True
    page = Page(page.page_index, page.title, page.elements, meta)
    return Document(
        Properties(page_count=1), (page,), {"truncated": True} if "truncated" in meta else {}
    )


def _extractor(fmt: Format) -> Extractor:
    suffix = fmt.suffixes[0]

    def extract(f: BinaryIO, limits: Limits) -> Document:
        with collector_paused():
            return _document(f, limits, suffix)

    def extract_pages(f: BinaryIO, indices: Sequence[int], limits: Limits) -> list[Page]:
        return list(extract(f, limits).pages) if 0 in indices else []

    return Extractor(probe, extract, extract_pages)


CSV = _extractor(delimited.CSV)
TSV = _extractor(delimited.TSV)
