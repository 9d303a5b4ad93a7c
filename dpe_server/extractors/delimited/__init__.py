"""Delimited text tables (.csv, .tsv): one page per file, its rows the tables (500-row
blocks), headings and text an xlsx sheet's cells become. The encoding (a byte-order mark,
UTF-8, else cp1252) and the delimiter (`csv.Sniffer`, else the suffix's) are detected.
`extract` is the extractor, imported when a file of the format is first read."""

from __future__ import annotations

from typing import BinaryIO

from dpe_server.extractors.base import Format, Limits
from dpe_server.model.errors import UnsupportedError


def _check(f: BinaryIO, fmt: str, kind: str, limits: Limits) -> None:
    """A zip, PDF or OLE2 file under a text suffix is not read as text."""
    names = {"zip": "a zip archive", "pdf": "a PDF", "cfb": "an OLE2 compound file"}
    if kind in names:
        raise UnsupportedError(f"This file is {names[kind]} renamed to .{fmt}, not text.")


def _format(suffix: str, kind_name: str) -> Format:
    return Format(
        name=suffix[1:],
        suffixes=(suffix,),
        kind_name=kind_name,
        page_unit="sheet",
        paged=False,
        extractor=f"dpe_server.extractors.delimited.extract:{suffix[1:].upper()}",
        check=_check,
    )


CSV = _format(".csv", "a comma-separated table")
TSV = _format(".tsv", "a tab-separated table")
