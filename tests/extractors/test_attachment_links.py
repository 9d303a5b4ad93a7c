"""The documents embedded in a pdf (its attached files) and in an Office package (its
embedded packages) are `link` elements of their container, as an e-mail's attachments and an
archive's members are (issue 35, docs/children.md): `kind: attachment`, the name, media type
and size, at the end of the first page, whose `url` the catalog points at the child's
`dpe://` URI; the first page read alone (a pdf extracted in page chunks) carries them too."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from dpe_server.catalog.catalog import Catalog
from dpe_server.catalog.store import MemoryStore
from dpe_server.isolation.backends import ThreadBackend
from dpe_server.isolation.client import InlineJobs, run_inline
from dpe_server.model.tree import Category, Element
from dpe_server.model.uri import format_uri
from fixtures.builders import embedded

pytestmark = pytest.mark.anyio

DOCX_MIME = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
XLSX_MIME = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
CASES = {
    embedded.PDF: ("attachments/report.docx", "report.docx", DOCX_MIME, len(embedded.PDF_CHILD)),
    embedded.DOCX: (
        embedded.EMBEDDED,
        "Microsoft_Excel_Worksheet.xlsx",
        XLSX_MIME,
        len(embedded.DOCX_CHILD),
    ),
}


def _links(elements: tuple[Element, ...]) -> list[Element]:
    return [el for el in elements if el.content.get("kind") == "attachment"]


@pytest.mark.parametrize("name", list(CASES))
def test_an_embedded_document_is_a_link_of_the_first_page(fixture_dir: Path, name: str) -> None:
    path, leaf, mime, size = CASES[name]
    doc = run_inline(InlineJobs().extract(fixture_dir, name))
    link = doc.pages[0].elements[-1]
    assert link.category is Category.LINK
    assert link.element_id == "p0-lnk1"
    assert dict(link.content) == {
        "text": leaf,
        "url": path,
        "kind": "attachment",
        "name": leaf,
        "mime_type": mime,
        "size": size,
    }
    assert link.metadata == {"child": path}
    alone = run_inline(InlineJobs().extract_pages(fixture_dir, name, [0]))
    assert alone[0].elements == doc.pages[0].elements


@pytest.mark.parametrize("name", list(CASES))
async def test_the_link_points_at_the_childs_uri(
    tmp_path: Path, fixture_dir: Path, name: str
) -> None:
    path = CASES[name][0]
    shutil.copyfile(fixture_dir / name, tmp_path / name)
    catalog = Catalog(tmp_path, "h", ThreadBackend(), store=MemoryStore())
    await catalog.start()
    await catalog.warm()
    refs = {e.rel: e.doc_ref for e in catalog.entries()}
    page = await catalog.page(refs[name], 0)
    (link,) = _links(page.elements)
    assert link.content["url"] == format_uri("h", refs[f"{name}\0{path}"])
