"""What an OLE object embedded in an Office package (`word/embeddings/oleObject1.bin`) carries,
as a document the registry may read (docs/children.md): a file packaged whole (its
`\\x01Ole10Native` stream: the file's name and bytes), an Office package (a `package` stream:
.docx, .xlsx or .pptx by its folders), a PDF (a `CONTENTS` stream that is one), or an OLE2
document itself (a Word 97 `WordDocument`, an Excel 97 `Workbook`, a PowerPoint 97 stream:
the compound file is the .doc, .xls or .ppt). Read in memory with `olefile`."""

from __future__ import annotations

import io
import struct

from dpe_server.extractors.kit.package import directory

BIN = ".bin"
_OLE2_DOCUMENTS = (
    ("WordDocument", ".doc"),
    ("Workbook", ".xls"),
    ("Book", ".xls"),
    ("PowerPoint Document", ".ppt"),
)
_PACKAGE_FOLDERS = (("word/", ".docx"), ("xl/", ".xlsx"), ("ppt/", ".pptx"))


def carried(data: bytes, stem: str) -> tuple[str, bytes] | None:
    """The file the OLE object `data` (a part named `stem`.bin) carries: its name and bytes;
    None when it carries none the server could name (or is no compound file)."""
    import olefile

    try:
        if not olefile.isOleFile(io.BytesIO(data)):
            return None
        with olefile.OleFileIO(io.BytesIO(data)) as ole:
            if ole.exists("\x01Ole10Native"):
                return _native(ole.openstream("\x01Ole10Native").read())
            for name in ("package", "Package"):
                if ole.exists(name):
                    return _package(ole.openstream(name).read(), stem)
            if ole.exists("CONTENTS"):
                contents = ole.openstream("CONTENTS").read()
                return (f"{stem}.pdf", contents) if contents.startswith(b"%PDF") else None
            for stream, suffix in _OLE2_DOCUMENTS:
                if ole.exists(stream):
                    return f"{stem}{suffix}", data
    except Exception:  # a malformed object carries nothing to name; its package is read still
        return None
    return None


def _cstring(data: bytes, at: int) -> tuple[str, int]:
    end = data.index(b"\0", at)
    return data[at:end].decode("cp1252", "replace"), end + 1


def _native(data: bytes) -> tuple[str, bytes] | None:
    """An `Ole10Native` stream: size, flags, label, source path, 4 bytes, the temporary
    path's length and path, then the file's size and bytes."""
    at = 6
    label, at = _cstring(data, at)
    source, at = _cstring(data, at)
    at += 4
    (length,) = struct.unpack_from("<I", data, at)
    at += 4 + length
    (size,) = struct.unpack_from("<I", data, at)
    at += 4
    if size > len(data) - at:
        return None
    name = (label or source).replace("\\", "/").rpartition("/")[2].replace("\0", "").strip()
    return (name or "attachment"), data[at : at + size]


def _package(data: bytes, stem: str) -> tuple[str, bytes] | None:
    names = [i.filename for i in directory(io.BytesIO(data), "zip")]  # nothing inflated
    for folder, suffix in _PACKAGE_FOLDERS:
        if any(n.startswith(folder) for n in names):
            return f"{stem}{suffix}", data
    return None
