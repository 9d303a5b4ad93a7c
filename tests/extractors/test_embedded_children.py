"""Documents embedded in documents the server already reads (issue 35): a pdf's attached
files (`/EmbeddedFiles`) and the packages embedded in docx, xlsx and pptx
(`*/embeddings/*`) are listed as the tree's children by the job (`Format.embedded`) and served
as documents of their own (docs/children.md), also when a long pdf is extracted in chunks."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from dpe_server.catalog.catalog import Catalog
from dpe_server.catalog.store import MemoryStore
from dpe_server.extractors import Limits
from dpe_server.extractors.ooxml.embedded import embedding
from dpe_server.isolation.backends import ThreadBackend
from dpe_server.isolation.client import InlineJobs, run_inline
from dpe_server.model.tree import Document
from fixtures.builders import embedded

pytestmark = pytest.mark.anyio

ATTACHED = "attachments/report.docx"


def extract(root: Path, rel: str) -> Document:
    return run_inline(InlineJobs().extract(root, rel))


def _paths(doc: Document) -> list[str]:
    return [str(c["path"]) for c in doc.metadata.get("children") or ()]  # type: ignore[union-attr,index]


def test_a_pdfs_attached_file_is_a_child(fixture_dir: Path) -> None:
    doc = extract(fixture_dir, embedded.PDF)
    assert doc.metadata["children"] == [
        {
            "path": ATTACHED,
            "name": "report.docx",
            "mime_type": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
            "size": len(embedded.PDF_CHILD),
        }
    ]
    child = extract(fixture_dir, f"{embedded.PDF}\0{ATTACHED}")
    assert "PDF-CHILD-SENTINEL" in str(child.pages[0].elements[0].content)


def test_a_package_embedded_in_a_docx_is_a_child(fixture_dir: Path) -> None:
    doc = extract(fixture_dir, embedded.DOCX)
    assert _paths(doc) == [embedded.EMBEDDED]
    child = extract(fixture_dir, f"{embedded.DOCX}\0{embedded.EMBEDDED}")
    assert "DOCX-CHILD-SENTINEL" in str(child.pages[0].elements)


def test_only_embeddings_are_served_from_a_package(fixture_dir: Path) -> None:
    with (fixture_dir / embedded.DOCX).open("rb") as f:
        assert embedding(f, embedded.EMBEDDED, Limits()) == embedded.DOCX_CHILD
        with pytest.raises(KeyError):
            embedding(f, "word/document.xml", Limits())


async def test_the_catalog_serves_them_with_their_parent(tmp_path: Path, fixture_dir: Path) -> None:
    for name in (embedded.PDF, embedded.DOCX):
        shutil.copyfile(fixture_dir / name, tmp_path / name)
    catalog = Catalog(tmp_path, "h", ThreadBackend(), store=MemoryStore())
    await catalog.start()
    await catalog.warm()
    refs = {e.rel: e.doc_ref for e in catalog.entries()}
    assert list(refs) == [
        embedded.DOCX,
        f"{embedded.DOCX}\0{embedded.EMBEDDED}",
        embedded.PDF,
        f"{embedded.PDF}\0{ATTACHED}",
    ]
    info = {d.doc_ref: d for d in catalog.documents()}[refs[f"{embedded.PDF}\0{ATTACHED}"]]
    assert info.extra["parent"] == refs[embedded.PDF]
    assert info.file_uri.endswith("pdf-attached.pdf#attachments/report.docx")


async def test_a_long_pdf_extracted_in_chunks_lists_its_attachments(
    tmp_path: Path, corpus: Path
) -> None:
    source = corpus / "pdf" / "tika__testPDF_childAttachments.pdf"
    if not source.is_file():
        pytest.skip("no pdf corpus")
    shutil.copyfile(source, tmp_path / "attached.pdf")
    catalog = Catalog(tmp_path, "h", _Split(concurrency=2), store=MemoryStore())
    await catalog.start()
    await catalog.warm()  # 67 pages: extracted in two chunks, the probe lists the attachments
    rels = [e.rel for e in catalog.entries()]
    assert rels == ["attached.pdf", "attached.pdf\0attachments/Unit10.doc"]


class _Split(ThreadBackend):
    """Threads, as if each were a worker process: a long pdf is extracted in chunks."""

    @property
    def parallelism(self) -> int:
        return 2
