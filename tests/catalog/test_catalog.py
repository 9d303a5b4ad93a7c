"""The catalog over a real folder: lazy listing, the persistent cache, freshness, errors."""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import anyio
import pytest

from dpe_server.catalog.catalog import Catalog, Change
from dpe_server.catalog.sqlite import FILE_NAME, MARK_AFTER_S, UNUSED_DAYS, SqliteStore, open_store
from dpe_server.catalog.store import SCHEMA, MemoryStore
from dpe_server.extractors import DEFAULT_LIMITS, Limits
from dpe_server.isolation.backends import ThreadBackend
from dpe_server.model.errors import ElementNotFound, PageNotFound
from dpe_server.model.tree import Document, Page, Properties
from tests.e2e.harness import age, write_deck, write_encrypted

pytestmark = pytest.mark.anyio


class Counting(ThreadBackend):
    """A ThreadBackend that counts its calls and can be held (until `held` is set) or
    forbidden."""

    def __init__(self, forbid: bool = False, limits: Limits = DEFAULT_LIMITS) -> None:
        super().__init__(limits=limits)
        self.calls: Counter[str] = Counter()
        self.held: anyio.Event | None = None
        self.forbid = forbid
        self.ways = 1

    @property
    def parallelism(self) -> int:
        return self.ways

    async def _gate(self, op: str) -> None:
        assert not self.forbid, f"{op} was called but everything should come from the cache"
        self.calls[op] += 1
        if self.held is not None:
            await self.held.wait()

    async def probe(self, root: Path, rel: str) -> Properties:
        await self._gate("probe")
        return await super().probe(root, rel)

    async def extract(self, root: Path, rel: str) -> Document:
        await self._gate("extract")
        return await super().extract(root, rel)

    async def extract_pages(self, root: Path, rel: str, pages: Sequence[int]) -> list[Page]:
        await self._gate("pages")
        return await super().extract_pages(root, rel, pages)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    write_deck(root / "deck.pptx", ["One", "Two", "Three"])
    write_deck(root / "sub" / "deck.pptx", ["Other"])
    write_encrypted(root / "locked.docx")
    return age(root)


def _catalog(folder: Path, backend: ThreadBackend, store: object | None = None) -> Catalog:
    return Catalog(folder, "h", backend, store=store)  # type: ignore[arg-type]


async def test_same_stem_in_two_folders_gets_two_doc_refs(folder: Path) -> None:
    catalog = _catalog(folder, Counting())
    await catalog.start()
    refs = [d.doc_ref for d in catalog.documents()]
    assert len(set(refs)) == 3
    assert sum(r.startswith("deck-") for r in refs) == 2


async def test_doc_refs_are_stable_across_restarts(folder: Path) -> None:
    first, second = _catalog(folder, Counting()), _catalog(folder, Counting())
    await first.start()
    await second.start()
    assert [d.doc_ref for d in first.documents()] == [d.doc_ref for d in second.documents()]


async def test_start_probes_only_and_lists_page_counts(folder: Path) -> None:
    backend = Counting()
    catalog = _catalog(folder, backend)
    await catalog.start()
    assert backend.calls["extract"] == 0
    counts = {d.file_type + str(d.page_count) for d in catalog.documents()}
    assert counts == {"pptx3", "pptx1", "docx0"}


async def test_page_read_of_paged_format_extracts_that_page_only(folder: Path) -> None:
    backend = Counting()
    catalog = _catalog(folder, backend)
    await catalog.start()
    ref = next(d.doc_ref for d in catalog.documents() if d.page_count == 3)
    page = await catalog.page(ref, 2)
    assert page.title == "Three"
    assert (backend.calls["pages"], backend.calls["extract"]) == (1, 0)


async def test_encrypted_file_is_listed_with_its_error(folder: Path) -> None:
    catalog = _catalog(folder, Counting())
    await catalog.start()
    locked = next(d for d in catalog.documents() if d.file_type == "docx")
    assert locked.error is not None
    assert locked.error["kind"] == "encrypted"
    with pytest.raises(PageNotFound) as info:
        await catalog.page(locked.doc_ref, 0)
    assert info.value.page_count == 0


async def test_unknown_element_and_foreign_ids(folder: Path) -> None:
    catalog = _catalog(folder, Counting())
    await catalog.start()
    ref = next(d.doc_ref for d in catalog.documents() if d.page_count == 3)
    with pytest.raises(ElementNotFound):
        await catalog.element(ref, "p1-tbl9")
    with pytest.raises(ElementNotFound):
        await catalog.element(ref, "not-an-id")
    with pytest.raises(ElementNotFound):
        await catalog.element(ref, "p99-h1")
    index, element = await catalog.element(ref, "p1-h1")
    assert (index, element.content["text"]) == (1, "Two")


async def test_restart_serves_everything_from_the_cache(folder: Path, tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "cache")
    first = _catalog(folder, Counting(), store)
    await first.start()
    await first.warm()
    store.close()

    again = SqliteStore(tmp_path / "cache")
    second = _catalog(folder, Counting(forbid=True), again)
    await second.start()
    assert [d.title for d in second.documents()] == [d.title for d in first.documents()]
    ref = next(d.doc_ref for d in second.documents() if d.page_count == 3)
    assert (await second.page(ref, 1)).title == "Two"
    assert [p.title for p in await second.page_infos(ref)] == ["One", "Two", "Three"]
    again.close()


async def test_corrupt_cache_is_rebuilt_not_fatal(folder: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / FILE_NAME).write_bytes(b"this is not a database" * 100)
    store = SqliteStore(cache)
    catalog = _catalog(folder, Counting(), store)
    await catalog.start()
    await catalog.warm()
    assert len(catalog.documents()) == 3
    assert any(p.name.startswith(FILE_NAME + ".broken-") for p in cache.iterdir())
    store.close()


async def test_a_cache_with_tables_of_another_build_is_rebuilt(
    folder: Path, tmp_path: Path
) -> None:
    """Same schema number, other tables (a development build wrote it): pages must still be
    stored and read, not fail on a missing column."""
    import sqlite3

    cache = tmp_path / "cache"
    cache.mkdir()
    old = sqlite3.connect(cache / FILE_NAME)
    old.executescript(
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
        "CREATE TABLE element_rows (key TEXT, page_index INTEGER);"
    )
    old.execute("INSERT INTO meta VALUES ('schema', ?)", (SCHEMA,))
    old.commit()
    old.close()
    store = SqliteStore(cache)
    catalog = _catalog(folder, Counting(), store)
    await catalog.start()
    await catalog.warm()
    ref = next(d.doc_ref for d in catalog.documents() if d.page_count == 3)
    assert (await catalog.page(ref, 1)).title == "Two"
    assert any(p.name.startswith(FILE_NAME + ".broken-") for p in cache.iterdir())
    store.close()


def test_caches_no_server_will_open_again_are_removed_once_unused_for_long(
    tmp_path: Path,
) -> None:
    """Opening the cache removes the files of older formats and of caches moved aside, once
    none of a cache's files has been written for `UNUSED_DAYS`; it keeps the current cache,
    a newer format's (a newer server shares the folder), an older one still written to, and
    whatever else the folder holds."""
    cache = tmp_path / "cache"
    cache.mkdir()
    month_ago = time.time() - (UNUSED_DAYS + 1) * 86400
    old, recent = int(SCHEMA) - 1, int(SCHEMA) + 1
    stale = [
        f"cache-v{old}.sqlite3",
        f"cache-v{old}.sqlite3-wal",
        f"cache-v{old}.sqlite3-shm",
        f"{FILE_NAME}.broken-20260101-101010",
        f"{FILE_NAME}-wal.broken-20260101-101010",
    ]
    kept = [
        f"cache-v{recent}.sqlite3",
        f"{FILE_NAME}.broken-20260102-101010",
        f"{FILE_NAME}-wal.broken-20260102-101010",  # written lately: the pair is kept
        "notes.txt",
    ]
    for name in stale + kept:
        (cache / name).write_bytes(b"x")
        os.utime(cache / name, (month_ago, month_ago))
    os.utime(cache / f"{FILE_NAME}-wal.broken-20260102-101010")  # now
    store = SqliteStore(cache)
    store.close()
    assert sorted(store.removed) == sorted(stale)
    names = {p.name for p in cache.iterdir()}
    assert not names & set(stale)
    assert set(kept) | {FILE_NAME} <= names
    # An older format's cache still in use is kept whole.
    for name in stale[:3]:
        (cache / name).write_bytes(b"x")
    os.utime(cache / stale[0], (month_ago, month_ago))
    store = SqliteStore(cache)
    store.close()
    assert store.removed == []
    assert set(stale[:3]) <= {p.name for p in cache.iterdir()}


async def test_two_servers_share_one_cache(folder: Path, tmp_path: Path) -> None:
    a, b = SqliteStore(tmp_path / "c"), SqliteStore(tmp_path / "c")
    first, second = _catalog(folder, Counting(), a), _catalog(folder, Counting(), b)
    await first.start()
    await second.start()
    async with anyio.create_task_group() as tg:
        tg.start_soon(first.warm)
        tg.start_soon(second.warm)
    third = _catalog(folder, Counting(forbid=True), SqliteStore(tmp_path / "c"))
    await third.start()
    ref = next(d.doc_ref for d in third.documents() if d.page_count == 3)
    assert (await third.page(ref, 0)).title == "One"
    a.close()
    b.close()


def test_cache_folder_inside_the_watched_folder_is_refused(folder: Path) -> None:
    store = open_store(folder / ".cache", folder.resolve())
    assert not isinstance(store, SqliteStore) or not store.folder.is_relative_to(folder.resolve())
    assert not (folder / ".cache").exists()


async def test_changed_file_serves_last_good_until_the_new_tree_is_ready(folder: Path) -> None:
    backend = Counting()
    changes: list[Change] = []

    async def listen(change: Change) -> None:
        changes.append(change)

    catalog = Catalog(folder, "h", backend, on_change=listen, store=MemoryStore())
    async with anyio.create_task_group() as tg:
        await catalog.start(tg)
        await catalog.warm()
        ref = next(d.doc_ref for d in catalog.documents() if d.page_count == 3)
        write_deck(folder / "deck.pptx", ["Uno", "Dos", "Tres", "Cuatro"])
        os.utime(folder / "deck.pptx", ns=(1, 1_000_000_000))  # old: not a half-written file
        backend.held = anyio.Event()
        before = sum(backend.calls.values())
        with anyio.fail_after(10):
            change = await catalog.rescan()
            assert ref in change.updated
            while sum(backend.calls.values()) == before:  # the refresh reaches the backend
                await anyio.sleep(0.01)
        # The refresh is under way (held there): the old version is served meanwhile.
        assert (await catalog.page(ref, 0)).title == "One"
        backend.held.set()
        with anyio.fail_after(10):
            while not any(ref in c.updated for c in changes):
                await anyio.sleep(0.05)
        assert (await catalog.page(ref, 0)).title == "Uno"
        assert catalog.page_count(catalog.entry(ref)) == 4
        tg.cancel_scope.cancel()


async def test_a_rescan_of_several_edited_files_is_one_announcement(folder: Path) -> None:
    """N files edited and one deleted are announced once, every changed doc_ref in it (each
    announcement has every session's subscriptions matched against it): before, each edited
    file was announced on its own and the deletion once more, N+1 announcements."""
    changes: list[Change] = []
    edited = ("deck.pptx", "sub/deck.pptx", "third.pptx")
    write_deck(folder / "third.pptx", ["Third"])
    age(folder)
    catalog = Catalog(folder, "h", Counting(), store=MemoryStore())
    refs: set[str] = set()
    all_told = anyio.Event()

    async def listen(change: Change) -> None:
        changes.append(change)
        if refs <= set().union(*(c.updated for c in changes)):
            all_told.set()

    async with anyio.create_task_group() as tg:
        await catalog.start(tg)
        await catalog.warm()
        refs = {e.doc_ref for e in catalog.entries() if e.rel in edited}
        catalog.on_change = listen
        for rel in edited:
            write_deck(folder / rel, ["Uno", "Dos", rel])
            os.utime(folder / rel, ns=(1, 1_000_000_000))  # old: not a half-written file
        (folder / "locked.docx").unlink()
        change = await catalog.rescan()
        assert change.list_changed
        assert change.updated == refs
        with anyio.fail_after(20):
            await all_told.wait()
        assert changes == [Change(list_changed=True, updated=frozenset(refs))]
        assert all(catalog.entry(ref).current for ref in refs)
        tg.cancel_scope.cancel()


async def test_rescan_sees_adds_deletes_and_renames(folder: Path) -> None:
    catalog = _catalog(folder, Counting())
    await catalog.start()
    write_deck(folder / "new.pptx", ["New"])
    assert (await catalog.rescan()).list_changed
    assert len(catalog.documents()) == 4
    (folder / "new.pptx").rename(folder / "renamed.pptx")
    assert (await catalog.rescan()).list_changed
    assert any(d.file_uri.endswith("renamed.pptx") for d in catalog.documents())
    (folder / "renamed.pptx").unlink()
    assert (await catalog.rescan()).list_changed
    assert len(catalog.documents()) == 3
    assert not (await catalog.rescan()).list_changed


async def test_half_written_file_is_retried_until_it_reads(folder: Path) -> None:
    changes: list[Change] = []

    async def listen(change: Change) -> None:
        changes.append(change)

    full = folder / "deck.pptx"
    data = full.read_bytes()
    catalog = Catalog(folder, "h", Counting(), on_change=listen, store=MemoryStore())
    async with anyio.create_task_group() as tg:
        await catalog.start(tg)
        partial = folder / "growing.pptx"
        partial.write_bytes(data[: len(data) // 2])
        await catalog.rescan()
        ref = next(d.doc_ref for d in catalog.documents() if d.file_uri.endswith("growing.pptx"))
        partial.write_bytes(data)
        await catalog.rescan()
        with anyio.fail_after(15):
            while catalog.info_of(catalog.entry(ref)).page_count != 3:
                await anyio.sleep(0.1)
        assert catalog.info_of(catalog.entry(ref)).error is None
        tg.cancel_scope.cancel()


async def test_symlinks_and_lock_files_are_not_listed(folder: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.pptx"
    write_deck(outside, ["Secret"])
    (folder / "link.pptx").symlink_to(outside)
    (folder / "~$deck.pptx").write_bytes(b"lock")
    (folder / ".~lock.deck.pptx#").write_bytes(b"lock")
    (folder / ".hidden.pptx").write_bytes(b"x")
    catalog = _catalog(folder, Counting())
    await catalog.start()
    names = sorted(Path(d.file_uri).name for d in catalog.documents())
    assert names == ["deck.pptx", "deck.pptx", "locked.docx"]


def _long_pdf(path: Path, pages: int) -> None:
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    c = canvas.Canvas(str(path), pagesize=A4, invariant=1)
    for i in range(pages):
        c.setFont("Helvetica", 9)
        c.drawString(72, 810, "Running header of the long report")
        c.setFont("Helvetica-Bold", 20)
        c.drawString(72, 760, f"Chapter {i + 1}")
        c.setFont("Helvetica", 11)
        c.drawString(72, 730, f"Body text of page {i + 1} with enough words to be a paragraph.")
        c.setFont("Helvetica", 9)
        c.drawString(290, 30, str(i + 1))
        c.showPage()
    c.save()


async def test_large_paged_document_in_chunks_equals_one_extraction(tmp_path: Path) -> None:
    folder = tmp_path / "long"
    folder.mkdir()
    _long_pdf(folder / "long.pdf", 30)
    whole = await ThreadBackend().extract(folder, "long.pdf")
    backend = Counting()
    backend.ways = 3  # split three ways
    catalog = _catalog(folder, backend)
    await catalog.start()
    ref = catalog.documents()[0].doc_ref
    infos = await catalog.page_infos(ref)
    assert (backend.calls["pages"], backend.calls["extract"]) == (3, 0)
    assert len(infos) == 30
    for page in whole.pages:
        assert await catalog.page(ref, page.page_index) == page


@pytest.mark.parametrize("cap", [DEFAULT_LIMITS.max_elements_per_page, 2])
async def test_large_paged_document_in_chunks_is_listed_as_when_whole(
    tmp_path: Path, cap: int
) -> None:
    """Title, summary, keywords, page count and `truncated` (a cap stopped a page) alike."""
    folder = tmp_path / "long"
    folder.mkdir()
    _long_pdf(folder / "long.pdf", 30)
    listed = []
    for ways in (1, 3):
        backend = Counting(limits=Limits(max_elements_per_page=cap))
        backend.ways = ways
        catalog = _catalog(folder, backend)
        await catalog.start()
        await catalog.warm()
        assert backend.calls["extract" if ways == 1 else "pages"] == ways
        listed.append(catalog.documents())
    assert listed[0] == listed[1]
    assert bool(listed[0][0].extra.get("truncated")) == (cap == 2)


async def test_ids_not_of_this_servers_scheme_are_unknown_without_extracting(
    folder: Path,
) -> None:
    backend = Counting()
    catalog = _catalog(folder, backend)
    await catalog.start()
    ref = next(d.doc_ref for d in catalog.documents() if d.page_count == 3)
    with pytest.raises(ElementNotFound):
        await catalog.element(ref, "t1")
    assert backend.calls["extract"] + backend.calls["pages"] == 0


def test_cache_lookup_many_answers_in_batches_and_marks_used(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "cache")
    keys = [f"k{i:04d}" for i in range(1203)]  # more than one query's worth of keys
    for i, key in enumerate(keys):
        if i % 2 == 0:
            store.put_error(key, {"kind": "corrupt", "message": f"m{i}"})
    store._db.execute("UPDATE docs SET used=0")
    found = store.lookup_many([*keys, "unknown"])
    assert sorted(found) == keys[::2]
    assert found["k1202"].error == {"kind": "corrupt", "message": "m1202"}
    assert store.lookup("k0001") is None
    unused = store._db.execute("SELECT count(*) FROM docs WHERE used=0").fetchone()[0]
    assert unused == 0  # a lookup marks what it found used (the eviction order)
    # A mark younger than MARK_AFTER_S is left as it is (a restart rewrites no row); an older
    # one is renewed.
    recent, old = time.time() - MARK_AFTER_S / 2, time.time() - 2 * MARK_AFTER_S
    store._db.execute("UPDATE docs SET used=?", (recent,))
    store._db.execute("UPDATE docs SET used=? WHERE key='k0000'", (old,))
    store.lookup_many(keys)
    marks = dict(store._db.execute("SELECT key, used FROM docs").fetchall())
    assert marks["k0002"] == recent
    assert marks["k0000"] > recent
    # So does the daily mark of the versions served (the first search after a start).
    store._db.execute("UPDATE docs SET used=? WHERE key='k0004'", (old,))
    store.serve([("k0002", "a", "docx"), ("k0004", "b", "docx")], [])
    marks = dict(store._db.execute("SELECT key, used FROM docs").fetchall())
    assert marks["k0002"] == recent
    assert marks["k0004"] > recent
    store.close()
