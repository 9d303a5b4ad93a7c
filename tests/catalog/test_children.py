"""Documents inside documents served as documents (issue 35, docs/children.md): a
container's extraction lists its children; each is an entry of the catalog of its own, with a
doc_ref derived from its container's path and its own, a `file_uri` with its path as the
fragment, `parent` and `path`, listed after its container, read, searched, and announced
when its container changes; the container's link points at it."""

from __future__ import annotations

import shutil
from email.message import EmailMessage
from pathlib import Path

import pytest

from dpe_server.catalog.announce import Change
from dpe_server.catalog.catalog import Catalog
from dpe_server.catalog.folder import doc_ref_for
from dpe_server.catalog.sqlite import SqliteStore
from dpe_server.catalog.store import MemoryStore, Store
from dpe_server.catalog.textquery import Position, Scope, TextQuery
from dpe_server.isolation.backends import ThreadBackend
from dpe_server.model.errors import DocumentNotFound
from dpe_server.model.tree import Category
from dpe_server.model.uri import format_uri
from dpe_server.read.oneshot import OneShotReader
from fixtures.builders import mail
from fixtures.builders.protected import plain_docx

pytestmark = pytest.mark.anyio

CHILD = "attachments/report.docx"


def _catalog(
    root: Path, store: Store | None = None, changes: list[Change] | None = None
) -> Catalog:
    async def told(change: Change) -> None:
        if changes is not None:
            changes.append(change)

    return Catalog(root, "h", ThreadBackend(), told, store or MemoryStore())


@pytest.fixture
def folder(tmp_path: Path, fixture_dir: Path) -> Path:
    root = tmp_path / "docs"
    (root / "in").mkdir(parents=True)
    shutil.copyfile(fixture_dir / mail.MSG, root / "in" / mail.MSG)
    shutil.copyfile(fixture_dir / "doc-plain.docx", root / "zz.docx")
    return root


async def _served(catalog: Catalog) -> dict[str, str]:
    await catalog.start()
    await catalog.warm()
    return {e.rel: e.doc_ref for e in catalog.entries()}


async def test_an_attachment_is_a_document_listed_after_its_container(folder: Path) -> None:
    catalog = _catalog(folder)
    refs = await _served(catalog)
    container, child = f"in/{mail.MSG}", f"in/{mail.MSG}\0{CHILD}"
    assert list(refs) == [container, child, "zz.docx"]
    assert refs[child] == doc_ref_for(child)  # the container's path and its own: stable
    info = {d.doc_ref: d for d in catalog.documents()}[refs[child]]
    assert info.file_uri == (folder / "in" / mail.MSG).as_uri() + "#attachments/report.docx"
    assert info.extra == {"parent": refs[container], "path": CHILD, "indexing": True}
    page = await catalog.page(refs[child], 0)
    assert page.elements[0].content["text"] == "MSG-DOCX-SENTINEL"
    info = {d.doc_ref: d for d in catalog.documents()}[refs[child]]
    assert (info.title, info.summary, info.file_type, info.extra) == (
        "report",
        "MSG-DOCX-SENTINEL",
        "docx",
        {"parent": refs[container], "path": CHILD},
    )


async def test_the_containers_link_points_at_the_child(folder: Path) -> None:
    catalog = _catalog(folder)
    refs = await _served(catalog)
    page = await catalog.page(refs[f"in/{mail.MSG}"], 0)
    (link,) = [e for e in page.elements if e.category is Category.LINK]
    assert link.content["url"] == format_uri("h", refs[f"in/{mail.MSG}\0{CHILD}"])


async def test_a_child_is_searchable(folder: Path) -> None:
    catalog = _catalog(folder)
    refs = await _served(catalog)
    await catalog.page(refs[f"in/{mail.MSG}\0{CHILD}"], 0)
    found = await catalog.search(TextQuery.parse("MSG-DOCX-SENTINEL"), Scope(), 10, Position())
    assert found is not None
    assert {h.doc_ref for h in found.hits} == {refs[f"in/{mail.MSG}\0{CHILD}"]}


async def test_a_restart_restores_children_from_the_store(folder: Path, tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "cache")
    first = _catalog(folder, store)
    refs = await _served(first)
    await first.page(refs[f"in/{mail.MSG}\0{CHILD}"], 0)
    store.close()
    again = SqliteStore(tmp_path / "cache")
    try:
        second = _catalog(folder, again)
        await second.start()  # no warm-up: what is listed is what the store knew
        assert {e.rel: e.doc_ref for e in second.entries()} == refs
        assert all(e.current for e in second.entries())
    finally:
        again.close()


def _eml(path: Path, attachments: dict[str, bytes]) -> None:
    msg = EmailMessage()
    msg["Subject"] = "churn"
    msg.set_content("body")
    for name, data in attachments.items():
        msg.add_attachment(data, "application", "octet-stream", filename=name)
    path.write_bytes(bytes(msg))


async def test_churn_an_attachment_replaced_is_announced(tmp_path: Path) -> None:
    root = tmp_path / "mail"
    root.mkdir()
    eml = root / "m.eml"
    one = plain_docx(["CHURN-ONE"])
    _eml(eml, {"a.docx": one, "b.docx": plain_docx(["CHURN-B"])})
    changes: list[Change] = []
    catalog = _catalog(root, changes=changes)
    refs = await _served(catalog)
    a, b = refs["m.eml\0attachments/a.docx"], refs["m.eml\0attachments/b.docx"]
    assert (await catalog.page(a, 0)).elements[0].content["text"] == "CHURN-ONE"

    # The same names, a's content changed: the container and a are updated, the list is not.
    changes.clear()
    _eml(eml, {"a.docx": plain_docx(["CHURN-TWO"]), "b.docx": plain_docx(["CHURN-B"])})
    await catalog.rescan()
    assert changes[-1].updated >= {refs["m.eml"], a}
    assert not any(c.list_changed for c in changes)
    assert (await catalog.page(a, 0)).elements[0].content["text"] == "CHURN-TWO"

    # b goes, c comes: the list changed; b is no longer served, c is.
    changes.clear()
    _eml(eml, {"a.docx": one, "c.docx": plain_docx(["CHURN-C"])})
    await catalog.rescan()
    assert refs["m.eml"] in changes[-1].updated
    assert changes[-1].list_changed
    now = {e.rel: e.doc_ref for e in catalog.entries()}
    assert b not in now.values()
    assert "m.eml\0attachments/c.docx" in now
    assert (await catalog.page(now["m.eml\0attachments/c.docx"], 0)).elements[0].content[
        "text"
    ] == "CHURN-C"

    # The container goes: its children go with it.
    eml.unlink()
    change = await catalog.rescan()
    assert change.list_changed
    assert catalog.entries() == []


async def test_dpe_server_read_reads_a_child_the_cache_lists(folder: Path, tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "cache")
    server = _catalog(folder, store)
    refs = await _served(server)  # a server extracted the folder into the cache
    store.close()
    child = refs[f"in/{mail.MSG}\0{CHILD}"]
    with OneShotReader(folder, "h", cache_dir=tmp_path / "cache") as reader:
        (body,) = reader.read(format_uri("h", child, page_index=0))
    assert "MSG-DOCX-SENTINEL" in (body.text or "")
    with (
        OneShotReader(folder, "h", cache_dir=tmp_path / "empty") as reader,
        pytest.raises(DocumentNotFound),  # nothing is extracted for an unknown doc_ref
    ):
        reader.read(format_uri("h", child, page_index=0))
