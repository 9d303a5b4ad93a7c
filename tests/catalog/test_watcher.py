"""The watcher: a burst of changes is one catalog update; a change stats what it names only."""

from __future__ import annotations

import os
from collections.abc import Collection
from pathlib import Path
from typing import Any

import anyio
import pytest

from dpe_server.catalog import freshness
from dpe_server.catalog.catalog import Catalog, Change
from dpe_server.catalog.folder import FileStat, scan_paths
from dpe_server.catalog.store import MemoryStore
from dpe_server.catalog.watcher import Gathered, watch
from dpe_server.isolation.backends import ThreadBackend
from dpe_server.model.tree import Properties
from tests.e2e.harness import write_deck

pytestmark = pytest.mark.anyio


class CheapProbe(ThreadBackend):
    """Probes answer at once (what is measured here is the catalog's own work)."""

    async def probe(self, root: Path, rel: str) -> Properties:
        return Properties(page_count=1)


class Recorder:
    def __init__(self) -> None:
        self.changes: list[Change] = []
        self.arrived = anyio.Event()

    async def __call__(self, change: Change) -> None:
        self.changes.append(change)
        self.arrived.set()

    async def next(self, timeout: float = 60) -> Change:
        with anyio.fail_after(timeout):
            while not self.changes:
                await self.arrived.wait()
                self.arrived = anyio.Event()
        return self.changes.pop(0)

    async def watching(self, folder: Path) -> None:
        """Return once the watcher sees changes: a file written until its addition is
        announced (the watches are set up in a thread that says nothing when it is done).
        What was announced before (the start's probes listed) is dropped."""
        self.changes.clear()
        for attempt in range(10):
            (folder / f"ready{attempt}.pptx").write_bytes(b"")
            try:
                await self.next(timeout=5)
                return
            except TimeoutError:
                continue
        raise AssertionError("the watcher never saw a change")


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    write_deck(root / "deck.pptx", ["One"])
    write_deck(root / "sub" / "other.pptx", ["Other"])
    return root


def _forbid_full_scan(monkeypatch: pytest.MonkeyPatch) -> list[set[str]]:
    """After this, a full scan of the folder fails the test; returns the paths each partial
    scan was asked for."""

    def no_full_scan(root: Path) -> dict[str, FileStat]:
        raise AssertionError("the whole folder was scanned again")

    asked: list[set[str]] = []

    def recording(root: Path, rels: Collection[str]) -> Any:
        asked.append(set(rels))
        return scan_paths(root, rels)

    monkeypatch.setattr(freshness, "scan", no_full_scan)
    monkeypatch.setattr(freshness, "scan_paths", recording)
    return asked


async def test_a_burst_of_1000_files_is_one_update(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorder = Recorder()
    catalog = Catalog(folder, "h", CheapProbe(), on_change=recorder, store=MemoryStore())
    data = (folder / "deck.pptx").read_bytes()
    async with anyio.create_task_group() as tg:
        await catalog.start(tg)
        asked = _forbid_full_scan(monkeypatch)
        tg.start_soon(watch, catalog, 500, 60.0, 1000)
        await recorder.watching(folder)
        asked.clear()
        for i in range(1000):
            (folder / "burst" / f"{i // 100}").mkdir(parents=True, exist_ok=True)
            (folder / "burst" / f"{i // 100}" / f"copy{i}.pptx").write_bytes(data)
        change = await recorder.next()
        assert change.list_changed
        burst = [e for e in catalog.entries() if e.rel.startswith("burst/")]
        assert len(burst) == 1000  # all of them in the first announcement
        assert len(asked) == 1
        tg.cancel_scope.cancel()


async def test_one_changed_file_stats_that_file_only(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorder = Recorder()
    catalog = Catalog(folder, "h", CheapProbe(), on_change=recorder, store=MemoryStore())
    async with anyio.create_task_group() as tg:
        await catalog.start(tg)
        ref = next(e.doc_ref for e in catalog.entries() if e.rel == "deck.pptx")
        asked = _forbid_full_scan(monkeypatch)
        tg.start_soon(watch, catalog, 500, 60.0, 1000)
        await recorder.watching(folder)
        asked.clear()
        write_deck(folder / "deck.pptx", ["Uno", "Dos"])
        change = await recorder.next()
        assert change.updated == {ref}
        assert asked
        assert all(paths == {"deck.pptx"} for paths in asked)
        tg.cancel_scope.cancel()


async def test_rescan_of_paths_sees_folders_moved_and_deleted(folder: Path) -> None:
    catalog = Catalog(folder, "h", CheapProbe(), store=MemoryStore())
    await catalog.start()
    (folder / "sub").rename(folder / "moved")
    assert (await catalog.rescan({"sub", "moved"})).list_changed
    assert sorted(e.rel for e in catalog.entries()) == ["deck.pptx", "moved/other.pptx"]
    for path in (folder / "moved").iterdir():
        path.unlink()
    (folder / "moved").rmdir()
    assert (await catalog.rescan({"moved"})).list_changed
    assert [e.rel for e in catalog.entries()] == ["deck.pptx"]
    assert not (await catalog.rescan({"moved", "nothing/here.pptx"})).list_changed


def test_scan_paths_never_enters_a_symlink_nor_a_dot_folder(folder: Path) -> None:
    (folder / ".hidden").mkdir()
    write_deck(folder / ".hidden" / "x.pptx", ["X"])
    os.symlink(folder / "sub", folder / "link")
    found, _ = scan_paths(folder, {".hidden/x.pptx", ".hidden", "link", "link/other.pptx"})
    assert found == {}
    found, _ = scan_paths(folder, {"sub", "sub/other.pptx", "deck.pptx"})
    assert sorted(found) == ["deck.pptx", "sub/other.pptx"]


def test_an_event_on_the_folder_itself_or_outside_rescans_everything(folder: Path) -> None:
    from watchfiles import Change as FsChange

    gathered = Gathered(folder)
    gathered.add({(FsChange.modified, str(folder / "deck.pptx"))})
    assert gathered.take() == {"deck.pptx"}
    gathered.add({(FsChange.deleted, str(folder))})
    assert gathered.take() is None
    gathered.add({(FsChange.added, str(folder.parent / "elsewhere.pptx"))})
    assert gathered.take() is None
    gathered.add({(FsChange.added, str(folder / "~$lock.pptx"))})
    assert not gathered.arrived.is_set()
