"""What a file is by its first bytes, for every format (no parser imported).

`sniff` tells a zip (an OOXML package, an OpenDocument file), an OLE2/CFB container (a
password-protected OOXML file or a legacy Office file; `kit.package.cfb_kind` tells which),
a pdf, an empty file and anything else apart.
"""

from __future__ import annotations

from typing import BinaryIO

CFB_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
ZIP_MAGIC = b"PK\x03\x04"
EMPTY_ZIP_MAGIC = b"PK\x05\x06"
PDF_MAGIC = b"%PDF-"


def sniff(f: BinaryIO) -> str:
    """What the file is by its magic bytes: zip, cfb, pdf, empty or other. Rewinds `f`."""
    f.seek(0)
    head = f.read(8)
    f.seek(0)
    if not head:
        return "empty"
    if head.startswith((ZIP_MAGIC, EMPTY_ZIP_MAGIC)):
        return "zip"
    if head == CFB_MAGIC:
        return "cfb"
    if head.startswith(PDF_MAGIC):
        return "pdf"
    return "other"
