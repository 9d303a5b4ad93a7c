"""The file an OLE object embedded in an Office package carries (`*/embeddings/*.bin`,
`ooxml/oleobject.py`) is a child (issue 35, docs/children.md) at `<part>/<name>`: a file
packaged whole (`\\x01Ole10Native`), an Office package (`package`), a PDF (`CONTENTS`), an
OLE2 document (a Word, Excel or PowerPoint 97 stream); an object carrying none stays listed
as itself. Fixtures written here by code (`fixtures/builders/cfb.py`); the corpus's documents
with OLE objects serve what they carry."""

from __future__ import annotations

import io
import struct
import zipfile
from pathlib import Path

import pytest

from dpe_server.isolation.client import InlineJobs, run_inline
from dpe_server.model.tree import Document
from fixtures.builders import cfb
from fixtures.builders.protected import FIXED, plain_docx, plain_xlsx

MEMO = plain_docx(["OLE-NATIVE-SENTINEL"])
BOOK = plain_xlsx([["OLE-PACKAGE-SENTINEL", "1"]])


def native(name: str, data: bytes) -> bytes:
    """An `Ole10Native` stream as Word writes one for a packaged file."""
    temp = f"C:\\Temp\\{name}\0".encode()
    body = b"\2\0" + f"{name}\0C:\\Docs\\{name}\0".encode() + b"\0\0\3\0"
    body += struct.pack("<I", len(temp)) + temp + struct.pack("<I", len(data)) + data
    return struct.pack("<I", len(body)) + body


def _docx(objects: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with (
        zipfile.ZipFile(io.BytesIO(plain_docx(["OLE-HOST-SENTINEL"]))) as src,
        zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst,
    ):
        for info in src.infolist():
            dst.writestr(zipfile.ZipInfo(info.filename, FIXED), src.read(info))
        for name, data in objects.items():
            dst.writestr(zipfile.ZipInfo(f"word/embeddings/{name}", FIXED), data)
    return out.getvalue()


def _extract(root: Path, rel: str) -> Document:
    return run_inline(InlineJobs().extract(root, rel))


def test_the_files_ole_objects_carry_are_children(tmp_path: Path) -> None:
    (tmp_path / "host.docx").write_bytes(
        _docx(
            {
                "oleObject1.bin": cfb.write({"\x01Ole10Native": native("memo.docx", MEMO)}),
                "oleObject2.bin": cfb.write({"package": BOOK}),
                "oleObject3.bin": cfb.write({"CONTENTS": b"not a known kind"}),
                "oleObject4.bin": cfb.write({"\x01Ole10Native": b"\xff\xff\xff\x7f\2\0no"}),
                "oleObject5.bin": b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 100,  # broken
            }
        )
    )
    doc = _extract(tmp_path, "host.docx")
    listed = {c["path"]: c["size"] for c in doc.metadata["children"]}  # type: ignore[index,union-attr]
    assert listed == {
        "word/embeddings/oleObject1.bin/memo.docx": len(MEMO),
        "word/embeddings/oleObject2.bin/oleObject2.xlsx": len(BOOK),
        "word/embeddings/oleObject3.bin": listed["word/embeddings/oleObject3.bin"],
        "word/embeddings/oleObject4.bin": listed["word/embeddings/oleObject4.bin"],
        "word/embeddings/oleObject5.bin": listed["word/embeddings/oleObject5.bin"],
    }  # an object carrying nothing to name, or malformed, is listed as itself
    assert doc.pages[0].elements[0].content["text"] == "OLE-HOST-SENTINEL"
    memo = _extract(tmp_path, "host.docx\0word/embeddings/oleObject1.bin/memo.docx")
    assert memo.pages[0].elements[0].content["text"] == "OLE-NATIVE-SENTINEL"
    book = _extract(tmp_path, "host.docx\0word/embeddings/oleObject2.bin/oleObject2.xlsx")
    assert "OLE-PACKAGE-SENTINEL" in str(book.pages[0].elements)


CORPUS_CARRIED = {
    "docx/tika__testWPSAttachment.docx": {
        "word/embeddings/oleObject1.bin/TXT.txt": "txt_content",
        "word/embeddings/oleObject2.bin/PDF.pdf": "pdf_content",
        "word/embeddings/oleObject5.bin/oleObject5.docx": "docx_content",
        "word/embeddings/oleObject6.bin/oleObject6.xls": "xls_content",
        "word/embeddings/oleObject7.bin/oleObject7.xlsx": "xlsx_content",
    },
    "pptx/tika__testWPSAttachment.pptx": {
        "ppt/embeddings/oleObject2.bin/PDF.pdf": "pdf_content",
    },
}


@pytest.mark.corpus
@pytest.mark.parametrize("name", list(CORPUS_CARRIED))
def test_the_corpus_ole_objects_serve_what_they_carry(corpus: Path, name: str) -> None:
    folder, _, file = name.partition("/")
    for path, word in CORPUS_CARRIED[name].items():
        child = _extract(corpus / folder, f"{file}\0{path}")
        assert word in str(child.pages[0].elements), path
