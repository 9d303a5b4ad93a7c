"""A file a pdf page's file attachment annotation holds (`/Annots`, `/Subtype /FileAttachment`)
is a child of the pdf (issue 35, docs/children.md), at `pages/<page>/<name>`, served as a
document of its own and linked from the pdf's first page, beside the files of its
`/EmbeddedFiles`."""

from __future__ import annotations

from pathlib import Path

from dpe_server.isolation.client import InlineJobs, run_inline
from fixtures.builders.protected import plain_docx
from fixtures.builders.rawpdf import pdf_bytes

NOTE = plain_docx(["ANNOT-CHILD-SENTINEL", "A memo attached to page 2."])


def _pdf() -> bytes:
    text = b"BT /F1 12 Tf 20 100 Td (ANNOT-HOST-SENTINEL) Tj ET"
    return pdf_bytes(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R 8 0 R] /Count 2 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 400 200] /Contents 4 0 R "
            b"/Resources << /Font << /F1 5 0 R >> >> >>",
            b"<< /Length %d >>\nstream\n" % len(text) + text + b"\nendstream",
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
            b"<< /Type /Filespec /F (memo.docx) /UF (memo.docx) /EF << /F 7 0 R >> >>",
            b"<< /Type /EmbeddedFile /Length %d >>\nstream\n" % len(NOTE) + NOTE + b"\nendstream",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 400 200] /Contents 4 0 R "
            b"/Resources << /Font << /F1 5 0 R >> >> /Annots [9 0 R] >>",
            b"<< /Type /Annot /Subtype /FileAttachment /Rect [10 10 30 30] /FS 6 0 R "
            b"/Contents (memo) >>",
        ]
    )


def test_a_file_attachment_annotation_is_a_child(tmp_path: Path) -> None:
    (tmp_path / "annotated.pdf").write_bytes(_pdf())
    doc = run_inline(InlineJobs().extract(tmp_path, "annotated.pdf"))
    assert doc.metadata["children"] == [
        {
            "path": "pages/2/memo.docx",
            "name": "memo.docx",
            "mime_type": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
            "size": len(NOTE),
        }
    ]
    link = doc.pages[0].elements[-1]
    assert (link.content["kind"], link.content["url"]) == ("attachment", "pages/2/memo.docx")
    child = run_inline(InlineJobs().extract(tmp_path, "annotated.pdf\0pages/2/memo.docx"))
    assert child.pages[0].elements[0].content["text"] == "ANNOT-CHILD-SENTINEL"
