"""The catalog's background work under file churn: a failure stays the document's, and files
that appear or change after start-up are extracted without anyone reading them."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import anyio
import pytest

from dpe_server.catalog import extraction
from dpe_server.catalog.catalog import Catalog, Change
from dpe_server.catalog.store import MemoryStore
from dpe_server.model.errors import CorruptError
from dpe_server.model.tree import Page
from tests.catalog.test_catalog import Counting
from tests.e2e.harness import write_deck

pytestmark = pytest.mark.anyio

SLIDES = [f"Slide {i}" for i in range(extraction.CHUNK_MIN_PAGES + 6)]


class Broken(Counting):
    """Extracts page chunks like a pool of three, and fails every chunk while `broken`."""

    def __init__(self) -> None:
        super().__init__()
        self.ways = 3
        self.broken = False

    async def extract_pages(self, root: Path, rel: str, pages: Sequence[int]) -> list[Page]:
        if self.broken:
            self.calls["failed pages"] += 1
            raise CorruptError("chunk failed")  # as a worker reports a half-written file
        return await super().extract_pages(root, rel, pages)


async def _until(condition: object, timeout: float = 20.0) -> None:
    with anyio.fail_after(timeout):
        while not condition():  # type: ignore[operator]
            await anyio.sleep(0.02)


@pytest.fixture(autouse=True)
def quick_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(extraction, "RETRY_DELAYS", (0.01, 0.01, 0.01))


async def test_chunked_extraction_failure_is_the_documents_error(tmp_path: Path) -> None:
    """A large deck rewritten in place: the retry's chunked extraction fails. That failure is
    the document's error state; the catalog's task group (the server's core) carries on."""
    folder = tmp_path / "docs"
    write_deck(folder / "big.pptx", SLIDES)
    backend = Broken()
    catalog = Catalog(folder, "h", backend, store=MemoryStore())
    async with anyio.create_task_group() as tg:
        await catalog.start(tg)
        entry = catalog.entries()[0]
        assert catalog.page_count(entry) == len(SLIDES)
        backend.broken = True
        data = (folder / "big.pptx").read_bytes()
        (folder / "big.pptx").write_bytes(data[: len(data) // 2])  # the first half, for now
        await catalog.rescan()
        await _until(lambda: entry.failed)
        assert backend.calls["failed pages"] >= 1
        assert catalog.info_of(entry).error == {"kind": "corrupt", "message": "chunk failed"}
        # The rest of the file arrives: the document reads again.
        backend.broken = False
        (folder / "big.pptx").write_bytes(data)
        await catalog.rescan()
        await _until(lambda: catalog.info_of(entry).error is None and entry.props is not None)
        assert catalog.page_count(entry) == len(SLIDES)
        tg.cancel_scope.cancel()


async def test_unexpected_failure_in_background_work_does_not_stop_the_catalog(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A bug of ours in a refresh (here: the store failing) is logged; serving goes on."""
    folder = tmp_path / "docs"
    write_deck(folder / "a.pptx", ["One"])
    store = MemoryStore()
    catalog = Catalog(folder, "h", Counting(), store=store)
    async with anyio.create_task_group() as tg:
        await catalog.start(tg)
        await catalog.warm()

        def fail(*_: object) -> None:
            raise RuntimeError("disk on fire")

        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(store, "put_probe", fail)
            patch.setattr(store, "put_document", fail)
            write_deck(folder / "a.pptx", ["Two", "Three"])
            await catalog.rescan()
            await _until(lambda: "background work of the catalog failed" in caplog.text)
        write_deck(folder / "b.pptx", ["Bee"])
        assert (await catalog.rescan()).list_changed
        tg.cancel_scope.cancel()


def _indexing(catalog: Catalog) -> list[str]:
    return [d.file_uri for d in catalog.documents() if d.extra.get("indexing")]


async def test_files_added_renamed_or_repaired_after_start_are_extracted(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    write_deck(folder / "first.pptx", ["First"])
    changes: list[Change] = []

    async def listen(change: Change) -> None:
        changes.append(change)

    backend = Counting()
    catalog = Catalog(folder, "h", backend, on_change=listen, store=MemoryStore())
    async with anyio.create_task_group() as tg:
        await catalog.start(tg)
        await catalog.warm()
        assert _indexing(catalog) == []
        # Added: probed at once, then extracted in the background (no read asks for it).
        write_deck(folder / "added.pptx", ["Added title", "Second"])
        await catalog.rescan()
        await _until(lambda: _indexing(catalog) == [])
        added = next(e for e in catalog.entries() if e.rel == "added.pptx")
        assert added.current
        # Renamed: a new path, extracted again (or restored) without a read.
        (folder / "added.pptx").rename(folder / "renamed.pptx")
        await catalog.rescan()
        await _until(lambda: _indexing(catalog) == [])
        assert [e.rel for e in catalog.entries() if e.current] == ["first.pptx", "renamed.pptx"]
        # Repaired: a broken file fixed in place is extracted, and the list says so.
        (folder / "broken.pptx").write_bytes(b"PK\x03\x04 not a zip")
        await catalog.rescan()
        broken = next(e for e in catalog.entries() if e.rel == "broken.pptx")
        await _until(lambda: broken.failed)
        changes.clear()
        write_deck(folder / "broken.pptx", ["Mended"])
        await catalog.rescan()
        await _until(lambda: broken.current)
        assert _indexing(catalog) == []
        assert catalog.info_of(broken).title == "Mended"
        await _until(lambda: any(c.list_changed for c in changes))
        tg.cancel_scope.cancel()


async def test_nothing_is_extracted_in_the_background_before_warm_up(tmp_path: Path) -> None:
    """Readers that never warm up (`dpe-server read`) do not extract what they do not read."""
    folder = tmp_path / "docs"
    write_deck(folder / "first.pptx", ["First"])
    backend = Counting()
    catalog = Catalog(folder, "h", backend, store=MemoryStore())
    async with anyio.create_task_group() as tg:
        await catalog.start(tg)
        write_deck(folder / "added.pptx", ["Added"])
        await catalog.rescan()
        assert backend.calls["extract"] == 0
        tg.cancel_scope.cancel()
