"""A file rewritten in place with its size and mtime restored is a new version: a running
catalog's rescan sees it, a restart over the persistent store does not serve the old tree,
and where the file system's times are coarse (FAT: ctime and mtime are one whole-second
field) the content tells the versions apart."""

from __future__ import annotations

import dataclasses
import os
import time
import zipfile
from pathlib import Path

import pytest

from dpe_server.catalog import folder as paths
from dpe_server.catalog.catalog import Catalog
from dpe_server.catalog.sqlite import SqliteStore
from dpe_server.catalog.store import MemoryStore, Store
from dpe_server.isolation.backends import ThreadBackend
from dpe_server.model.uri import format_uri
from dpe_server.read.oneshot import OneShotReader
from tests.e2e.harness import write_deck

pytestmark = pytest.mark.anyio

OLD, NEW = ["One", "Two"], ["Uno", "Dos"]


@pytest.fixture
def deck(tmp_path: Path) -> Path:
    """docs/deck.pptx, of the titles OLD, with room to spare (a zip comment) for `_rewrite`."""
    path = tmp_path / "docs" / "deck.pptx"
    write_deck(path, OLD)
    _pad(path, 256)
    return path


def _pad(path: Path, room: int) -> None:
    with zipfile.ZipFile(path, "a") as z:
        z.comment = b" " * room


def _rewrite(path: Path, titles: list[str]) -> None:
    """Write a deck of `titles` into `path`'s own inode, padded to its size (a zip comment),
    and set its mtime back, as an in-place rewrite that restores size and mtime does."""
    before = path.stat()
    scratch = path.parent.parent / "scratch.pptx"
    write_deck(scratch, titles)
    _pad(scratch, before.st_size - scratch.stat().st_size)
    data = scratch.read_bytes()
    assert len(data) == before.st_size
    with path.open("r+b") as f:
        f.write(data)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (
        before.st_size,
        before.st_mtime_ns,
        before.st_ino,
    )


def _whole_second(path: Path, seconds: int) -> None:
    os.utime(path, ns=(seconds * 10**9, seconds * 10**9))


@pytest.fixture
def fat_times(monkeypatch: pytest.MonkeyPatch) -> None:
    """The catalog scans as on FAT, whose ctime and mtime share one on-disk field: a rewrite
    that keeps the mtime (within one tick, or set back) leaves every time as it was."""

    def scan(root: Path) -> dict[str, paths.FileStat]:
        found = paths.scan(root)
        return {rel: dataclasses.replace(st, ctime_ns=st.mtime_ns) for rel, st in found.items()}

    monkeypatch.setattr("dpe_server.catalog.extraction.scan", scan)  # at start
    monkeypatch.setattr("dpe_server.catalog.freshness.scan", scan)  # at each rescan


def _catalog(deck: Path, store: Store) -> Catalog:
    return Catalog(deck.parent, "h", ThreadBackend(), store=store)


async def _titles(catalog: Catalog) -> list[str]:
    ref = catalog.documents()[0].doc_ref
    return [(await catalog.page(ref, i)).title or "" for i in range(2)]


async def _restarted_after_a_rewrite(deck: Path, cache: Path) -> list[str]:
    """Serve the deck warmed into `cache`, rewrite it, then what a new catalog serves."""
    store = SqliteStore(cache)
    first = _catalog(deck, store)
    await first.start()
    await first.warm()
    assert await _titles(first) == OLD
    store.close()
    _rewrite(deck, NEW)
    again = SqliteStore(cache)
    try:
        second = _catalog(deck, again)
        await second.start()
        return await _titles(second)
    finally:
        again.close()


async def _rescanned_after_a_rewrite(deck: Path) -> list[str]:
    """Serve the deck, rewrite it, rescan: what the same catalog serves then."""
    catalog = _catalog(deck, MemoryStore())
    await catalog.start()
    await catalog.warm()
    ref = catalog.documents()[0].doc_ref
    assert await _titles(catalog) == OLD
    _rewrite(deck, NEW)
    change = await catalog.rescan()  # with no task group, the refresh runs within the rescan
    assert ref in change.updated
    return await _titles(catalog)


async def test_a_rescan_sees_a_rewrite_that_restores_size_and_mtime(deck: Path) -> None:
    assert await _rescanned_after_a_rewrite(deck) == NEW


async def test_a_restart_serves_a_rewrite_that_restores_size_and_mtime(
    deck: Path, tmp_path: Path
) -> None:
    assert await _restarted_after_a_rewrite(deck, tmp_path / "cache") == NEW


@pytest.mark.usefixtures("fat_times")
async def test_coarse_times_a_rescan_sees_a_rewrite_within_the_tick(deck: Path) -> None:
    _whole_second(deck, int(time.time()))  # written this second: rewritten within its tick
    assert await _rescanned_after_a_rewrite(deck) == NEW


@pytest.mark.usefixtures("fat_times")
async def test_coarse_times_a_restart_serves_a_rewrite_that_keeps_every_time(
    deck: Path, tmp_path: Path
) -> None:
    _whole_second(deck, 1_700_000_000)
    assert await _restarted_after_a_rewrite(deck, tmp_path / "cache") == NEW


def test_dpe_server_read_after_a_rewrite_reads_the_new_content(deck: Path, tmp_path: Path) -> None:
    def first_title() -> str:
        with OneShotReader(deck.parent, "h", cache_dir=tmp_path / "cache") as reader:
            ref = reader.entries()[0].doc_ref
            body = reader.read(format_uri("h", ref, page_index=0))
        return body[0].text or ""

    assert OLD[0] in first_title()
    _rewrite(deck, NEW)
    assert NEW[0] in first_title()  # not the old page, which the cache holds


async def test_fine_times_are_keyed_without_reading_the_file(
    deck: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def unread(root: Path, rel: str) -> str:
        raise AssertionError(f"{rel} was read although its times tell its versions apart")

    monkeypatch.setattr("dpe_server.catalog.index.content_fingerprint", unread)
    os.utime(deck, ns=(1, 1_700_000_000_123_456_789))
    catalog = _catalog(deck, MemoryStore())
    await catalog.start()
    assert catalog.documents()[0].page_count == 2


def test_dpe_server_read_reads_no_other_file_for_its_fingerprint(
    deck: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = deck.with_name("other.pptx")
    write_deck(other, ["Other"])
    for path in (deck, other):
        _whole_second(path, 1_700_000_000)
    read: list[str] = []

    def fingerprint(root: Path, rel: str) -> str:
        read.append(rel)
        return paths.content_fingerprint(root, rel)

    monkeypatch.setattr("dpe_server.catalog.index.content_fingerprint", fingerprint)
    with OneShotReader(deck.parent, "h", cache_dir=tmp_path / "cache") as reader:
        ref = next(e.doc_ref for e in reader.entries() if e.rel == "deck.pptx")
        reader.read(format_uri("h", ref, page_index=0))
    assert read == ["deck.pptx"]
