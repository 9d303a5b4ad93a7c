"""The small children of one container are extracted together (docs/children.md): one job
opens the container once and reads them all, their trees are stored in one transaction; a
child's error is its own; a batch whose job fails leaves each child to a job of its own."""

from __future__ import annotations

import os
import zipfile
from collections.abc import Sequence
from pathlib import Path

import pytest

from dpe_server.catalog.catalog import Catalog
from dpe_server.catalog.sqlite import SqliteStore
from dpe_server.catalog.store import MemoryStore, Store
from dpe_server.catalog.textquery import Position, Scope, TextQuery
from dpe_server.isolation.backends import ThreadBackend
from dpe_server.isolation.jobs import Job
from dpe_server.model.errors import CorruptError, ExtractionError
from dpe_server.model.tree import JSON, Document
from fixtures.builders.protected import FIXED, plain_docx

pytestmark = pytest.mark.anyio

NAMES = [f"memo-{i}.docx" for i in range(5)]


class Counting(ThreadBackend):
    """Runs jobs in threads, recording each one's operation and path."""

    def __init__(self) -> None:
        super().__init__()
        self.jobs: list[tuple[str, str]] = []

    async def _execute(self, job: Job) -> JSON:
        self.jobs.append((job.op, job.rel))
        return await super()._execute(job)


class BatchFails(Counting):
    """A batch of children whose job fails as one whose worker crashed does."""

    async def extract_children(
        self, root: Path, rel: str, paths: Sequence[str]
    ) -> list[tuple[str, Document | ExtractionError]]:
        self.jobs.append(("children", rel))
        raise CorruptError("The reader crashed on this file (exit status -11).")


def _zip(root: Path, broken: str = "") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    path = root / "docs.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for i, name in enumerate(NAMES):
            data = b"not a docx" if name == broken else plain_docx([f"BATCHWORD{i} memo"])
            z.writestr(zipfile.ZipInfo(name, FIXED), data)
    os.utime(path, (1_000_000_000, 1_000_000_000))  # not fresh: a failure is not retried
    return path


async def _warmed(root: Path, backend: Counting, store: Store | None = None) -> Catalog:
    """Start, extract the zip (its children listed), then warm the children."""
    catalog = Catalog(root, "h", backend, store=store or MemoryStore())
    await catalog.start()
    await catalog.warm()
    await catalog.warm()  # the children found by the first (no task group: not warmed there)
    return catalog


def _children(catalog: Catalog) -> dict[str, str]:
    return {e.rel.partition("\0")[2]: e.doc_ref for e in catalog.entries() if "\0" in e.rel}


async def test_the_children_of_a_container_are_read_in_one_job(tmp_path: Path) -> None:
    _zip(tmp_path / "docs")
    backend = Counting()
    catalog = await _warmed(tmp_path / "docs", backend)
    refs = _children(catalog)
    assert sorted(refs) == NAMES
    assert all(e.current for e in catalog.entries())
    assert backend.jobs == [
        ("probe", "docs.zip"),
        ("extract", "docs.zip"),
        ("children", "docs.zip"),
    ]
    for i, name in enumerate(NAMES):
        page = await catalog.page(refs[name], 0)  # from the store: no job
        assert page.elements[0].content["text"] == f"BATCHWORD{i} memo"
    assert len(backend.jobs) == 3
    found = await catalog.search(TextQuery.parse("BATCHWORD3"), Scope(), 10, Position())
    assert [h.doc_ref for h in found.hits] == [refs["memo-3.docx"]]


async def test_a_childs_error_in_a_batch_is_its_own(tmp_path: Path) -> None:
    _zip(tmp_path / "docs", broken="memo-2.docx")
    backend = Counting()
    catalog = await _warmed(tmp_path / "docs", backend)
    by_path = {e.rel.partition("\0")[2]: e for e in catalog.entries()}
    assert by_path["memo-2.docx"].failed
    assert by_path["memo-2.docx"].error is not None
    assert by_path["memo-2.docx"].error.kind == "corrupt"
    assert all(by_path[n].current for n in NAMES if n != "memo-2.docx")
    assert by_path[""].current  # the container
    assert [op for op, _ in backend.jobs] == ["probe", "extract", "children"]


async def test_a_failed_batch_leaves_each_child_to_a_job_of_its_own(tmp_path: Path) -> None:
    _zip(tmp_path / "docs")
    backend = BatchFails()
    catalog = await _warmed(tmp_path / "docs", backend)
    assert all(e.current for e in catalog.entries())
    assert sorted(rel for op, rel in backend.jobs if op == "extract" and "\0" in rel) == [
        f"docs.zip\0{n}" for n in NAMES
    ]


async def test_a_batch_is_stored_and_restored_at_restart(tmp_path: Path) -> None:
    _zip(tmp_path / "docs")
    db = tmp_path / "cache"
    store = SqliteStore(db)
    first = await _warmed(tmp_path / "docs", Counting(), store)
    refs = _children(first)
    store.close()
    again, reopened = Counting(), SqliteStore(db)
    try:
        catalog = Catalog(tmp_path / "docs", "h", again, store=reopened)
        await catalog.start()  # no warm-up: what is listed is what the store knew
        assert _children(catalog) == refs
        assert all(e.current for e in catalog.entries())
        page = await catalog.page(refs["memo-4.docx"], 0)
        assert page.elements[0].content["text"] == "BATCHWORD4 memo"
        found = await catalog.search(TextQuery.parse("BATCHWORD1"), Scope(), 10, Position())
        assert [h.doc_ref for h in found.hits] == [refs["memo-1.docx"]]
        assert again.jobs == []
    finally:
        reopened.close()
