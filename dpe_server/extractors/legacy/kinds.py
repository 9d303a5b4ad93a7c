"""What a file under a legacy name (.doc, .rtf, .ppt) really is, by its bytes.

LibreOffice converts what its own detection finds, whatever the file is named: HTML, flat
OpenDocument or Word 2003 XML named `.doc` would be opened as such, and those formats load
the pictures, style sheets and sections they link, from any host. So only true legacy bytes
are handed to it (`conversion_kind`):

- an OLE2 compound file whose directory (read with olefile) holds the format's stream:
  `WordDocument` for a .doc, `PowerPoint Document` for a .ppt;
- Rich Text beginning `{\\rtf`, under .rtf or .doc (Word saves Rich Text under .doc too).

Anything else is refused, naming what it is: another format's bytes are `unsupported` (give
the file its own suffix), an OLE2 file without the stream, or not a compound file at all,
`corrupt`.
"""

from __future__ import annotations

import io
from typing import BinaryIO

from dpe_server.extractors.magic import CFB_MAGIC
from dpe_server.model.errors import CorruptError, UnsupportedError

RTF_MAGIC = b"{\\rtf"
STREAMS = {"doc": "WordDocument", "ppt": "PowerPoint Document"}
"""The stream an OLE2 file of each legacy format holds."""
_HOLDS = {
    "WordDocument": "a legacy Word .doc file",
    "PowerPoint Document": "a legacy PowerPoint .ppt file",
    "Workbook": "a legacy Excel .xls file",
    "Book": "a legacy Excel .xls file",
}
_WHAT = {"doc": "Word 97-2003 .doc", "rtf": "Rich Text", "ppt": "PowerPoint 97-2003 .ppt"}
_EXPECTED = {
    "doc": "it is neither an OLE2 compound file nor Rich Text",
    "rtf": "it does not begin with {\\rtf",
    "ppt": "it is not an OLE2 compound file",
}
_SNIFF = 4096


def conversion_kind(f: BinaryIO, fmt: str) -> str:
    """The format LibreOffice is to convert `f` (named .`fmt`) as: `doc`, `rtf` or `ppt`.
    Raises `UnsupportedError` or `CorruptError` when its bytes are not that. Rewinds `f`."""
    f.seek(0)
    head = f.read(_SNIFF)
    f.seek(0)
    if head.startswith(RTF_MAGIC) and fmt in ("doc", "rtf"):
        return "rtf"
    if head.startswith(CFB_MAGIC) and fmt in STREAMS:
        _check_streams(f, fmt)
        return fmt
    if fmt == "rtf" and head.startswith(CFB_MAGIC):
        names = _streams(f)
        found = next((_HOLDS[s] for s in _HOLDS if names and s in names), None)
        if found is not None:
            raise UnsupportedError(f"This file is {found} renamed to .rtf; give it its own suffix.")
    what = _text_kind(head)
    if what is not None:
        raise UnsupportedError(
            f"This file is {what} named .{fmt}, not a {_WHAT[fmt]} file; it is not read "
            f"under this name (LibreOffice is given only real {_WHAT[fmt]} files). "
            f"{_ADVICE.get(what, 'Give it its own suffix to read it.')}"
        )
    raise CorruptError(f"The file is not a {_WHAT[fmt]} file ({_EXPECTED[fmt]}).")


def conversion_kind_of(data: bytes, fmt: str) -> str:
    return conversion_kind(io.BytesIO(data), fmt)


def _check_streams(f: BinaryIO, fmt: str) -> None:
    names = _streams(f)
    if names is None:
        raise CorruptError(
            f"The file begins like an OLE2 compound file but its structure is damaged; it is "
            f"not a readable {_WHAT[fmt]} file."
        )
    if STREAMS[fmt] in names:
        return
    for stream, what in _HOLDS.items():
        if stream in names:
            raise UnsupportedError(
                f"This file is {what} renamed to .{fmt}; give it its own suffix."
            )
    raise CorruptError(
        f"The file is an OLE2 compound file without a {STREAMS[fmt]!r} stream: it is damaged, "
        f"or not a {_WHAT[fmt]} file."
    )


def _streams(f: BinaryIO) -> set[str] | None:
    """The names of the streams at the root of an OLE2 compound file, or None when it is not
    a well-formed one."""
    import olefile

    f.seek(0)
    try:
        with olefile.OleFileIO(f) as ole:
            return {"/".join(entry) for entry in ole.listdir(streams=True, storages=False)}
    except Exception:
        return None
    finally:
        f.seek(0)


_HTML_TAGS = (b"<!doctype html", b"<html", b"<head", b"<body", b"<meta", b"<title")
_ADVICE = {
    "a web page (HTML)": "Save it as .docx to read it.",
    "a Word 2003 XML document": "Save it as .docx to read it.",
    "a flat OpenDocument text": "Rename it to .fodt to read it.",
    "a flat OpenDocument presentation": "Rename it to .fodp to read it.",
}


def _text_kind(head: bytes) -> str | None:
    """What a file that begins with text markup is, in words, or None."""
    text = head.lstrip(b"\xef\xbb\xbf\xff\xfe\x00 \t\r\n").replace(b"\x00", b"").lower()
    if not text.startswith(b"<"):
        return None
    if b"office:document" in text or b"urn:oasis:names:tc:opendocument" in text:
        if b"opendocument.presentation" in text:
            return "a flat OpenDocument presentation"
        if b"opendocument.text" in text:
            return "a flat OpenDocument text"
        return "a flat OpenDocument file"
    if b"worddocument" in text or b'progid="word.document"' in text:
        return "a Word 2003 XML document"
    if any(tag in text for tag in _HTML_TAGS):
        return "a web page (HTML)"
    return "an XML or HTML file"
