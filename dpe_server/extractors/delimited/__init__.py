"""Delimited text tables (.csv, .tsv): one page per file, its rows the tables (500-row
blocks), headings and text an xlsx sheet's cells become. The encoding (a byte-order mark,
UTF-8, else cp1252) and the delimiter (`csv.Sniffer`, else the suffix's) are detected.
`extract` is the extractor, imported when a file of the format is first read."""

from __future__ import annotations

from dpe_server.extractors.base import Format
from dpe_server.extractors.kit.charset import not_text


def _format(suffix: str, kind_name: str) -> Format:
    return Format(
        name=suffix[1:],
        suffixes=(suffix,),
        kind_name=kind_name,
        page_unit="sheet",
        paged=False,
        extractor=f"dpe_server.extractors.delimited.extract:{suffix[1:].upper()}",
        check=not_text,
        recognises_pictures=False,
    )


CSV = _format(".csv", "a comma-separated table")
TSV = _format(".tsv", "a tab-separated table")
