"""Opening a pdf with pypdf safely: sniffing, the empty password, and error translation.

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
near its end, i.e. may still be being written).
"""

from __future__ import annotations

import logging
import struct
import warnings
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import BinaryIO

from pypdf import PdfReader
from pypdf.errors import (
    DependencyError,
    FileNotDecryptedError,
    LimitReachedError,
    ParseError,
    PyPdfError,
)
from pypdfium2 import PdfiumError

from dpe_server.extractors.passwords import HOW_TO_GIVE, PDF_DEFAULT, candidates
from dpe_server.model.errors import (
    CorruptError,
    EncryptedError,
    ExtractionError,
    TooLargeError,
    UnsupportedError,
)

logging.getLogger("pypdf").setLevel(logging.CRITICAL)

_SNIFF = 1024

PLAIN_ERRORS: tuple[type[BaseException], ...] = (
    PyPdfError,
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
"""What pypdf and pypdfium2 let escape on a damaged file (their own errors and plain Python
ones)."""


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
    except FileNotDecryptedError as exc:
        raise EncryptedError(f"This PDF needs a password to open; {HOW_TO_GIVE}.") from exc
    except DependencyError as exc:
        raise UnsupportedError("This PDF needs a decoder this server does not have.") from exc
    except (LimitReachedError, MemoryError) as exc:
        raise TooLargeError("This PDF is over a size limit for safe reading.") from exc
    except ParseError as exc:
        raise CorruptError("This PDF is damaged and cannot be read.") from exc
    except PLAIN_ERRORS as exc:
        if _looks_truncated(f):
            raise CorruptError(
                "This PDF is incomplete (truncated or still being written); try again later.",
                transient=True,
            ) from exc
        raise CorruptError("This PDF is damaged and cannot be read.") from exc


def open_pdf(f: BinaryIO) -> PdfReader:
    """A PdfReader over `f`, decrypted with the empty password when it is encrypted."""
    f.seek(0)
    head = f.read(_SNIFF)
    if not head:
        raise CorruptError("This PDF is empty (it may still be being written).", transient=True)
    if b"%PDF-" not in head:
        raise CorruptError("This file is not a PDF: it does not start with a PDF header.")
    f.seek(0)
    with translated(f):
        reader = PdfReader(f, strict=False)
        if reader.is_encrypted:
            _decrypt(reader)
        len(reader.pages)
    return reader


def _decrypt(reader: PdfReader) -> None:
    """Open an encrypted PDF with the empty password, else a password given for it."""
    for password in candidates(PDF_DEFAULT):
        try:
            if reader.decrypt(password):
                return
        except (NotImplementedError, DependencyError) as exc:
            raise EncryptedError("This PDF uses an encryption this server cannot open.") from exc
    raise EncryptedError(
        f"This PDF needs a password to open and no password given for it opens it; {HOW_TO_GIVE}."
    )
