"""Opening a pdf safely: sniffing, PDFium first, pypdf when needed, and error translation.

`open_document` opens the file with PDFium (the empty password). A file PDFium opens that is
not encrypted and ends with `%%EOF` is read with PDFium alone: pypdf (whose import alone
costs about as much as laying out 30 pages) is opened later only for what the document holds
that PDFium does not read (`extract._Doc.reader`). Every other file, encrypted, damaged, or
perhaps still being written, is opened with pypdf first as before: it tells a password that
is needed from damage and a file being written from a broken one.

pypdf runs with `strict=False` and its default `Configuration` limits (stream sizes, page
tree depth, outline size...). It logs what it repaired or skipped in a damaged file
("advanced encoding not implemented", "fontTools is required") at WARNING and ERROR on the
`pypdf` logger; that logger is raised to CRITICAL here so one damaged file does not spam
stderr (the outcome is reported through our errors instead). Its Python warnings are
silenced inside `translated()`.

`translated()` turns every library failure into the project's errors:
FileNotDecryptedError / WrongPasswordError (and a missing crypto dependency or an unknown
security handler while decrypting) → EncryptedError; DependencyError elsewhere →
UnsupportedError;
LimitReachedError / MemoryError → TooLargeError; PdfReadError (PdfStreamError, EmptyFileError,
...), ParseError, RecursionError, ValueError, KeyError and the other plain errors raised by a
parser walking a broken object graph → CorruptError (transient when the file has no `%%EOF`
near its end, i.e. may still be being written). pypdf's errors are told apart only once pypdf
is imported (before that, none can be raised).
"""

from __future__ import annotations

import logging
import struct
import sys
import warnings
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, BinaryIO

import pypdfium2
import pypdfium2.raw as pdfium_c
from pypdfium2 import PdfiumError

from dpe_server.extractors.passwords import HOW_TO_GIVE, PDF_DEFAULT, candidates, untried_note
from dpe_server.extractors.pdf.collect import PDFIUM_LOCK
from dpe_server.model.errors import (
    CorruptError,
    EncryptedError,
    ExtractionError,
    TooLargeError,
    UnsupportedError,
)

if TYPE_CHECKING:
    from pypdf import PdfReader

logging.getLogger("pypdf").setLevel(logging.CRITICAL)

_SNIFF = 1024
IN_MEMORY = 16 << 20
"""Files up to this size are handed to PDFium as bytes."""

PLAIN_ERRORS: tuple[type[BaseException], ...] = (
    PdfiumError,
    RecursionError,
    ValueError,
    KeyError,
    IndexError,
    TypeError,
    AttributeError,
    AssertionError,
    ArithmeticError,
    UnicodeError,
    LookupError,
    struct.error,
    zlib.error,
    EOFError,
    NotImplementedError,
)
"""What pypdfium2 and pypdf let escape on a damaged file (PDFium's errors and plain Python
ones; with pypdf's own, `library_errors()`)."""


def library_errors() -> tuple[type[BaseException], ...]:
    """PLAIN_ERRORS, and pypdf's own errors once pypdf is imported (before, none is raised):
    what code reading a damaged file catches."""
    errors: Any = sys.modules.get("pypdf.errors")
    return PLAIN_ERRORS if errors is None else (*PLAIN_ERRORS, errors.PyPdfError)


def _looks_truncated(f: BinaryIO) -> bool:
    try:
        f.seek(0, 2)
        size = f.tell()
        f.seek(max(0, size - _SNIFF))
        tail = f.read(_SNIFF)
    except OSError:
        return False
    return size == 0 or b"%%EOF" not in tail


@contextmanager
def translated(f: BinaryIO) -> Iterator[None]:
    """Run pypdf code, turning its failures into ExtractionErrors (one plain sentence)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    except ExtractionError:
        raise
    except MemoryError as exc:
        raise TooLargeError("This PDF is over a size limit for safe reading.") from exc
    except Exception as exc:
        errors: Any = sys.modules.get("pypdf.errors")
        if errors is not None:
            _pypdf_error(exc, errors)
        if not isinstance(exc, library_errors()):
            raise
        if _looks_truncated(f):
            raise CorruptError(
                "This PDF is incomplete (its end is missing); it may be truncated or still "
                "being written.",
                transient=True,
            ) from exc
        raise CorruptError("This PDF is damaged and cannot be read.") from exc


def _pypdf_error(exc: Exception, errors: Any) -> None:
    """Raise the project's error for pypdf's own failures that are not damage."""
    if isinstance(exc, errors.FileNotDecryptedError):
        raise EncryptedError(f"This PDF needs a password to open; {HOW_TO_GIVE}.") from exc
    if isinstance(exc, errors.DependencyError):
        raise UnsupportedError("This PDF needs a decoder this server does not have.") from exc
    if isinstance(exc, errors.LimitReachedError):
        raise TooLargeError("This PDF is over a size limit for safe reading.") from exc
    if isinstance(exc, errors.ParseError):
        raise CorruptError("This PDF is damaged and cannot be read.") from exc


def _sniff(f: BinaryIO) -> None:
    f.seek(0)
    head = f.read(_SNIFF)
    if not head:
        raise CorruptError("This PDF is empty (it may still be being written).", transient=True)
    if b"%PDF-" not in head:
        raise CorruptError("This file is not a PDF: it does not start with a PDF header.")
    f.seek(0)


def open_document(f: BinaryIO) -> tuple[Any, PdfReader | None]:
    """The file opened as `open_document` says (module doc): a PDFium document and None when
    PDFium alone reads it, else the PDFium document or None (when PDFium would not open it
    with the empty password) and the pypdf reader."""
    _sniff(f)
    data = _in_memory(f)
    with PDFIUM_LOCK:
        try:
            pdf = pypdfium2.PdfDocument(data, password="")
        except PdfiumError:
            pdf = None
        plain = pdf is not None and pdfium_c.FPDF_GetSecurityHandlerRevision(pdf.raw) == -1
    if plain and not _looks_truncated(f):
        return pdf, None
    try:
        return pdf, open_pdf(f)
    except BaseException:
        if pdf is not None:
            with PDFIUM_LOCK:
                pdf.close()
        raise


def _in_memory(f: BinaryIO) -> bytes | BinaryIO:
    """The file's bytes when it is at most `IN_MEMORY` long (PDFium then reads memory, not
    the file through a Python callback for every block: ~800 calls for 200 pages), else `f`."""
    f.seek(0, 2)
    size = f.tell()
    f.seek(0)
    return f.read() if size <= IN_MEMORY else f


def open_pdf(f: BinaryIO) -> PdfReader:
    """A PdfReader over `f`, decrypted with the empty password when it is encrypted."""
    from pypdf import PdfReader

    _sniff(f)
    with translated(f):
        reader = PdfReader(f, strict=False)
        if reader.is_encrypted:
            _decrypt(reader)
        len(reader.pages)
    return reader


def _decrypt(reader: PdfReader) -> None:
    """Open an encrypted PDF with the empty password, else a password given for it."""
    from pypdf.errors import DependencyError

    tries = candidates(PDF_DEFAULT)
    for password in tries:
        try:
            if reader.decrypt(password):
                return
        except (NotImplementedError, DependencyError) as exc:
            raise EncryptedError("This PDF uses an encryption this server cannot open.") from exc
    raise EncryptedError(
        "This PDF needs a password to open and no password given for it opens it"
        f"{untried_note(tries)}; {HOW_TO_GIVE}."
    )
