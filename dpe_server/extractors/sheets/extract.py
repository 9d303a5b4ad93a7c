"""The .xls / .xlsb / .ods extractor: python-calamine reads the cell values of every sheet
(and merged ranges where it gives them), `kit.values` turns each sheet into a page (laid out
as xlsx does).

A .xlsb or .ods is a zip: every member is first inflated once by the guarded package reader
(`kit.package.Package.check`: member count, inflated sizes and ratio capped, DOCTYPEs refused), so
calamine never meets a zip bomb. A flat .fods is parsed by the same guarded parser, then given
to calamine as the content.xml of a package made in memory. A panic inside calamine (a
malformed file) is reported as `corrupt`, its message kept off stderr (`kit.panics`).
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any, BinaryIO

from python_calamine import CalamineError, CalamineWorkbook, PasswordError

from dpe_server.extractors.base import Extractor, Limits
from dpe_server.extractors.gcpause import collector_paused
from dpe_server.extractors.kit import panics
from dpe_server.extractors.kit.package import Package
from dpe_server.extractors.kit.values import ValueSheet, values_page
from dpe_server.extractors.magic import sniff
from dpe_server.model.errors import CorruptError, EncryptedError
from dpe_server.model.tree import Document, Page, Properties

_ERRORS = (CalamineError, ValueError, OverflowError, TypeError, IndexError, KeyError, OSError)
_KINDS = {"ChartSheet": "chartsheet", "DialogSheet": "dialogsheet", "MacroSheet": "macrosheet"}
"""calamine's sheet types as the pages' `sheet_type` (any other: worksheet)."""


def _open(f: BinaryIO, limits: Limits) -> Any:
    """The workbook calamine opens, or the project's error."""
    kind = sniff(f)
    if kind == "zip":
        with Package(f, "spreadsheet", limits) as pkg:
            pkg.check()  # every member inflated once under the caps, DOCTYPEs refused
    f.seek(0)
    source = _flat_package(f, limits) if kind == "other" else io.BytesIO(f.read())
    try:
        with panics.quiet():
            return CalamineWorkbook.from_filelike(source)
    except PasswordError:
        raise EncryptedError(
            "This workbook is protected with legacy Excel encryption, which is not read; "
            "save an unprotected copy to read it."
        ) from None
    except _ERRORS as exc:
        raise CorruptError(f"The spreadsheet could not be read ({_reason(exc)}).") from None
    except BaseException as exc:
        raise _panic(exc) from None


_MANIFEST = (
    '<?xml version="1.0" encoding="UTF-8"?><manifest:manifest xmlns:manifest='
    '"urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.2">'
    '<manifest:file-entry manifest:full-path="/" manifest:media-type="{mime}"/>'
    '<manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/>'
    "</manifest:manifest>"
)


def _flat_package(f: BinaryIO, limits: Limits) -> io.BytesIO:
    """A flat XML spreadsheet (.fods) as the package calamine reads: parsed first by the
    guarded parser (size cap, no DOCTYPE, an `office:document` of a spreadsheet), then stored,
    without its indentation (`FlatDocument.unindented`), as the content.xml of a zip in
    memory."""
    import zipfile

    from dpe_server.extractors.odf.flat import FlatDocument
    from dpe_server.extractors.sheets.checks import SPREADSHEET

    flat = FlatDocument(f, "fods", limits)
    if flat.mimetype != SPREADSHEET:
        raise CorruptError("The file is not a flat OpenDocument spreadsheet.")
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
        z.writestr("mimetype", SPREADSHEET)
        z.writestr("META-INF/manifest.xml", _MANIFEST.format(mime=SPREADSHEET))
        z.writestr("content.xml", flat.unindented())
    out.seek(0)
    return out


def _reason(exc: BaseException) -> str:
    text = " ".join(str(exc).split())[:160]
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _panic(exc: BaseException) -> BaseException:
    """A Rust panic (pyo3's PanicException, a BaseException) as `corrupt`; anything else as is."""
    if not panics.is_panic(exc):
        return exc
    return CorruptError(f"The spreadsheet is malformed: its reader failed ({_reason(exc)}).")


def _hidden(book: Any) -> list[bool]:
    return [str(m.visible).rsplit(".", 1)[-1] != "Visible" for m in book.sheets_metadata]


def _kinds(book: Any) -> list[str]:
    return [_KINDS.get(str(m.typ).rsplit(".", 1)[-1], "worksheet") for m in book.sheets_metadata]


def _properties(book: Any, limits: Limits) -> Properties:
    names = list(book.sheet_names)[: limits.max_pages]
    hidden = _hidden(book)
    return Properties(
        page_count=len(names),
        page_titles=tuple(names),
        extra={"hidden_sheets": [n for n, h in zip(names, hidden, strict=False) if h]},
    )


def probe(f: BinaryIO, limits: Limits) -> Properties:
    return _properties(_open(f, limits), limits)


def _sheet(book: Any, index: int, hidden: bool, kind: str) -> ValueSheet:
    if kind == "chartsheet":  # calamine reads no chart (an .xlsb chart sheet fails to read)
        return ValueSheet(book.sheet_names[index], [], hidden=hidden, kind=kind)
    try:
        with panics.quiet():
            sheet = book.get_sheet_by_index(index)
            rows = sheet.to_python()
        origin = sheet.start or (0, 0)
        merged = tuple((a[0], a[1], b[0], b[1]) for a, b in sheet.merged_cell_ranges or ())
    except _ERRORS as exc:
        raise CorruptError(f"The sheet {index + 1} could not be read ({_reason(exc)}).") from None
    except BaseException as exc:
        raise _panic(exc) from None
    return ValueSheet(sheet.name, rows, tuple(origin), merged, hidden, kind)


def _run(f: BinaryIO, limits: Limits, indices: Sequence[int] | None) -> Document:
    book = _open(f, limits)
    props = _properties(book, limits)
    hidden, kinds = _hidden(book), _kinds(book)
    wanted = range(props.page_count) if indices is None else indices
    budget = limits.max_cells
    pages: list[Page] = []
    for i in wanted:
        if 0 <= i < props.page_count:
            sheet = _sheet(book, i, hidden[i], kinds[i])
            page, used = values_page(i, sheet, limits, max(budget, 1))
            budget -= used
            pages.append(page)
    cut = len(book.sheet_names) > limits.max_pages or any(
        p.metadata.get("truncated") for p in pages
    )
    return Document(props, tuple(pages), {"truncated": True} if cut else {})


def extract(f: BinaryIO, limits: Limits) -> Document:
    with collector_paused():
        return _run(f, limits, None)


def extract_pages(f: BinaryIO, indices: Sequence[int], limits: Limits) -> list[Page]:
    with collector_paused():
        return list(_run(f, limits, indices).pages)


EXTRACTOR = Extractor(probe, extract, extract_pages)
