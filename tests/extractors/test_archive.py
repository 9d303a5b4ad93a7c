"""Zip archives (issue 35): the archive is a document whose one page lists its members as
links; its members of a kind the server reads, and theirs, are documents of their own down
to depth 3 (docs/children.md); a member that may not be read is listed with the reason,
alone: the archive and its other members are served."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from dpe_server.catalog.catalog import Catalog
from dpe_server.catalog.store import MemoryStore
from dpe_server.isolation.backends import ThreadBackend
from dpe_server.isolation.client import InlineJobs, run_inline
from dpe_server.model.tree import Category, Document
from dpe_server.model.uri import format_uri
from fixtures.builders import archive, mail

pytestmark = pytest.mark.anyio


def extract(root: Path, rel: str, jobs: InlineJobs | None = None) -> Document:
    return run_inline((jobs or InlineJobs()).extract(root, rel))


def test_the_page_lists_every_member_as_a_link(fixture_dir: Path) -> None:
    doc = extract(fixture_dir, archive.ZIP)
    (page,) = doc.pages
    links = [e for e in page.elements if e.category is Category.LINK]
    assert [(e.content["name"], e.content["size"]) for e in links] == [
        ("memo.docx", len(archive.MEMO)),
        ("figures/q3.xlsx", len(mail.Q3)),
        ("mail/q3.eml", len(mail.eml())),
        ("bundle.zip", len(archive.zip_of({"deep/deep.docx": archive.DEEP}))),
    ]
    assert {e.content["kind"] for e in links} == {"member"}
    assert links[2].content["mime_type"] == "message/rfc822"
    assert [c["path"] for c in doc.metadata["children"]] == [  # type: ignore[union-attr,index]
        "memo.docx",
        "figures/q3.xlsx",
        "mail/q3.eml",
        "bundle.zip",
    ]


def test_a_member_and_a_member_of_a_member_are_read(fixture_dir: Path) -> None:
    memo = extract(fixture_dir, f"{archive.ZIP}\0memo.docx")
    assert "ZIP-MEMO-SENTINEL" in str(memo.pages[0].elements[0].content)
    deep = extract(fixture_dir, f"{archive.ZIP}\0bundle.zip\0deep/deep.docx")
    assert "ZIP-DEEP-SENTINEL" in str(deep.pages[0].elements[0].content)
    q3 = extract(fixture_dir, f"{archive.ZIP}\0mail/q3.eml\0attachments/q3.xlsx")
    assert "MAIL-XLSX-SENTINEL" in str(q3.pages[0].elements)


async def test_the_catalog_serves_members_and_theirs(tmp_path: Path, fixture_dir: Path) -> None:
    shutil.copyfile(fixture_dir / archive.ZIP, tmp_path / archive.ZIP)
    catalog = Catalog(tmp_path, "h", ThreadBackend(), store=MemoryStore())
    await catalog.start()
    await catalog.warm()
    refs = {e.rel: e.doc_ref for e in catalog.entries()}
    for rel in list(refs):  # what a client does: reading a member lists its own
        await catalog.page(refs[rel], 0)
    refs = {e.rel: e.doc_ref for e in catalog.entries()}
    z = archive.ZIP
    assert list(refs) == [
        z,
        f"{z}\0bundle.zip",
        f"{z}\0bundle.zip\0deep/deep.docx",
        f"{z}\0figures/q3.xlsx",
        f"{z}\0mail/q3.eml",
        f"{z}\0mail/q3.eml\0attachments/q3.xlsx",
        f"{z}\0memo.docx",
    ]
    info = {d.doc_ref: d for d in catalog.documents()}
    deep = info[refs[f"{z}\0bundle.zip\0deep/deep.docx"]]
    assert deep.file_uri.endswith(f"{z}#bundle.zip!/deep/deep.docx")
    assert deep.extra["parent"] == refs[f"{z}\0bundle.zip"]
    page = await catalog.page(refs[z], 0)
    assert page.elements[3].content["url"] == format_uri("h", refs[f"{z}\0bundle.zip"])
