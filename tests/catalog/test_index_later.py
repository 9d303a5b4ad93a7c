"""`dpe-server read` stores a document without its search rows (issue 34: they were a quarter
of a one-shot read of a web page, and no one searches its cache before a server opens it); a
server that looks such a version up builds them in the background, counting the document as
still being read until then. A version a server stores is indexed at once, as before."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import mcp_types as types
import pytest
from mcp import Client

from dpe_server.catalog import extraction, fulltext, textquery
from dpe_server.catalog.catalog import Catalog
from dpe_server.catalog.sqlite import FILE_NAME, SqliteStore
from dpe_server.catalog.store import Outline, Store
from dpe_server.isolation.backends import ThreadBackend
from dpe_server.model.info import PageInfo
from dpe_server.model.tree import Category, Page, PageBuilder
from dpe_server.model.uri import format_uri
from dpe_server.read.oneshot import OneShotReader
from dpe_server.surface.app import Settings, build_server
from tests.catalog.test_search_index import store_of_kind

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]

HOST = "local.dpe.later"
WAIT = 20.0
"""Seconds a test waits for what should come at once (a failure, never a pace)."""


def _page(text: str, index: int = 0) -> str:
    return f"<html><head><title>Plan {index}</title></head><body><h1>{text}</h1></body></html>"


def _write(path: Path, text: str, second: int) -> None:
    """A web page holding `text`, with a modification time of its own (an old one: a version
    settled, not a file caught mid-write)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(_page(text))
    os.utime(path, ns=(second * 1_000_000_000, second * 1_000_000_000))


def _one_shot_read(folder: Path, cache: Path) -> str:
    """What `dpe-server read` of each document's Level 1 does; the doc_ref of the last."""
    ref = ""
    with OneShotReader(folder, HOST, cache_dir=cache) as reader:
        for entry in reader.entries():
            ref = entry.doc_ref
            reader.read(format_uri(HOST, ref) + "?depth=pages")
    return ref


def _count(cache: Path, table: str) -> int:
    """Rows of `table` in the cache (`element_rows`, `element_text`: the search rows and their
    FTS5 rows; `unindexed`: versions stored without them)."""
    with sqlite3.connect(cache / FILE_NAME) as db:
        counted: int = db.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    return counted


def _rows(cache: Path) -> tuple[int, int, int]:
    return (
        _count(cache, "element_rows"),
        _count(cache, "element_text"),
        _count(cache, "unindexed"),
    )


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    _write(root / "plan.html", "Dredge the harbour basin", 1)
    return root


@pytest.fixture
def held(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """The server's building of deferred search rows waits until the event is set."""
    release = threading.Event()
    real = SqliteStore.index_stored

    def waiting(store: SqliteStore, key: str) -> bool:
        release.wait(WAIT)
        return real(store, key)

    monkeypatch.setattr(SqliteStore, "index_stored", waiting)
    yield release
    release.set()


@asynccontextmanager
async def _server(folder: Path, cache: Path) -> AsyncIterator[tuple[Catalog, Client]]:
    """An in-process server on `folder` with `cache` once warmed up: its catalog, and a client
    connected to it (the folder is not watched: a test rescans where the watcher would)."""
    settings = Settings(
        root=folder, host=HOST, watch=False, cache_dir=cache, backend=ThreadBackend()
    )
    server = build_server(settings)
    async with Client(server, mode="legacy", cache=None) as client:
        catalog: Catalog = server.app.catalog
        with anyio.fail_after(WAIT):
            await catalog.warmed.wait()
        yield catalog, client


async def _search(client: Client, query: str) -> dict[str, Any]:
    result = await client.call_tool("search", {"query": query})
    item = result.content[0]
    assert isinstance(item, types.TextContent)
    assert not result.is_error, item.text
    answer: dict[str, Any] = json.loads(item.text)
    return answer


async def _until(client: Client, query: str, done: Callable[[dict[str, Any]], bool]) -> Any:
    """Search until an answer is `done` (the rows are built in the background)."""
    with anyio.fail_after(WAIT):
        while not done(answer := await _search(client, query)):
            await anyio.sleep(0.02)
    return answer


def test_a_one_shot_read_stores_no_search_rows_and_marks_the_version(
    folder: Path, tmp_path: Path
) -> None:
    """(Before: its element rows and their FTS5 rows were written with the pages.)"""
    cache = tmp_path / "cache"
    _one_shot_read(folder, cache)
    assert (_count(cache, "element_rows"), _count(cache, "element_text")) == (0, 0)
    assert _count(cache, "unindexed") == 1
    with OneShotReader(folder, HOST, cache_dir=cache) as reader:  # a second read: restored
        entry = reader.entries()[0]
        page = reader.read(format_uri(HOST, entry.doc_ref, page_index=0) + "?format=markdown")
        assert "Dredge the harbour basin" in (page[0].text or "")
        assert entry.unindexed == entry.key == entry.outline_key


async def test_a_server_on_that_cache_builds_the_rows_and_says_it_is_still_reading_until_then(
    folder: Path, tmp_path: Path, held: threading.Event
) -> None:
    cache = tmp_path / "cache"
    _one_shot_read(folder, cache)
    async with _server(folder, cache) as (_, client):
        before = await _search(client, "harbour")
        assert before["note"] == (
            "1 of 1 documents are still being read: their words may be missing from these "
            "results; search again shortly."
        )
        assert (before["indexing"], before["total"]) == (True, 0)
        held.set()
        after = await _until(client, "harbour", lambda a: not a["indexing"])
        assert (after["total"], "note" in after) == (1, False)
        assert after["results"][0]["uri"].startswith(f"dpe://{HOST}/")
    assert _rows(cache) == (1, 1, 0)


async def test_a_search_that_ran_before_the_rows_were_built_says_the_document_is_being_read(
    folder: Path, tmp_path: Path, held: threading.Event, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rows are built while the search reads the index: its answer misses the words, so
    it must say the document is still being read (it counted the documents after reading the
    index, and said nothing)."""
    cache = tmp_path / "cache"
    _one_shot_read(folder, cache)
    real = SqliteStore.search
    entries: list[Any] = []

    def built_meanwhile(store: SqliteStore, *args: Any) -> Any:
        found = real(store, *args)  # the index as it was: no row of the document yet
        held.set()
        for _ in range(int(WAIT / 0.01)):  # (a worker thread: the loop builds meanwhile)
            if entries and not entries[0].searched_later:
                break
            threading.Event().wait(0.01)
        return found

    monkeypatch.setattr(SqliteStore, "search", built_meanwhile)
    async with _server(folder, cache) as (catalog, client):
        entries.append(catalog.entries()[0])
        answer = await _search(client, "harbour")
        assert not entries[0].searched_later  # built while the search ran
        assert (answer["total"], answer["indexing"]) == (0, True)
        assert answer["note"].startswith("1 of 1 documents are still being read")


async def test_a_version_a_server_stores_is_indexed_at_once(folder: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    async with _server(folder, cache) as (_, client):
        found = await _search(client, "harbour")
        assert (found["total"], found["indexing"]) == (1, False)
    assert _rows(cache) == (1, 1, 0)


async def test_a_running_server_indexes_the_new_version_a_one_shot_read_stored(
    folder: Path, tmp_path: Path
) -> None:
    """The file changes; `dpe-server read` reads it (storing the new version unindexed) before
    the server's rescan looks the version up: the server serves it from the store and builds
    its rows."""
    cache = tmp_path / "cache"
    async with _server(folder, cache) as (catalog, client):
        assert (await _search(client, "harbour"))["total"] == 1
        _write(folder / "plan.html", "Widen the canal locks", 2)
        _one_shot_read(folder, cache)
        assert _rows(cache)[2] == 1  # the new version, marked
        await catalog.rescan(["plan.html"])  # what the watcher does on the change
        entry = catalog.entries()[0]
        answer = await _until(client, "canal", lambda a: not a["indexing"])
        assert answer["total"] == 1
        assert (await _search(client, "harbour"))["total"] == 0
        assert (entry.current, entry.searched_later) == (True, False)
    assert _rows(cache)[2] == 0


def _text_page(text: str, index: int = 0) -> Page:
    builder = PageBuilder(index)
    builder.add(Category.TEXT, text, {"text": text})
    return builder.build(text)


def _outline(pages: list[Page]) -> Outline:
    return Outline("t", (), "", [PageInfo.of(p) for p in pages], {})


def _search_store(store: Store, query: str) -> int:
    found = store.search(
        textquery.TextQuery.parse(query), textquery.Scope(), 10, textquery.Position()
    )
    assert found is not None
    return found.total


@pytest.mark.parametrize("kind", ["memory", "sqlite", "postgresql"])
def test_each_store_builds_the_rows_it_left_out(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """`put_document(index=False)` leaves the rows out and marks the key; `index_stored` builds
    them and clears the mark. PostgreSQL (never written by `dpe-server read`) indexes at once."""
    store = store_of_kind(request, kind, tmp_path)
    pages = [_text_page("harbour basin", 0), _text_page("canal locks", 1)]
    store.put_document("k", _outline(pages), pages, index=False)
    store.serve([("k", "d", "html")], [])
    later = kind != "postgresql"
    cached = store.lookup("k")
    assert cached is not None
    assert cached.outline is not None
    assert (cached.unindexed, _search_store(store, "canal")) == (later, 0 if later else 1)
    store.index_stored("k")
    again = store.lookup("k")
    assert again is not None
    assert not again.unindexed
    assert (_search_store(store, "canal"), _search_store(store, "harbour")) == (1, 1)
    store.index_stored("k")  # not marked: nothing written twice
    assert _search_store(store, "canal") == 1
    store.close()


def test_a_page_replaced_while_its_rows_are_built_is_indexed_as_it_is_now(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rows are built outside the store's lock: a page recognised meanwhile (stored with
    its rows) is not indexed again from the page as it was read."""
    store = SqliteStore(tmp_path / "cache")
    pages = [_text_page("pending scan", 0)]
    store.put_document("k", _outline(pages), pages, index=False)
    store.serve([("k", "d", "pdf")], [])
    real = fulltext.indexed_rows
    replaced: list[bool] = []

    def recognised_meanwhile(page: Page) -> list[tuple[str, str, str, str]]:
        if not replaced:
            replaced.append(True)
            store.put_pages("k", [_text_page("recognised words", 0)])
        return real(page)

    monkeypatch.setattr(fulltext, "indexed_rows", recognised_meanwhile)
    store.index_stored("k")
    assert replaced
    assert (_search_store(store, "recognised"), _search_store(store, "pending")) == (1, 0)
    store.close()


def test_rows_are_built_while_another_connection_writes_to_the_cache(tmp_path: Path) -> None:
    """Another server (or `dpe-server read`) writes to the cache between the page's read and its
    rows' write: the write waits its turn. Begun as a reader, the transaction failed at its
    first write (a snapshot another write had made stale), and the mark was cleared all the
    same: the page's words were never searchable (a second reader's finding)."""
    store = SqliteStore(tmp_path / "cache")
    pages = [_text_page("harbour basin", 0), _text_page("canal locks", 1)]
    store.put_document("k", _outline(pages), pages, index=False)
    store.serve([("k", "d", "html")], [])
    other = sqlite3.connect(store.path, timeout=0, isolation_level=None)
    said: list[str] = []

    def writing_meanwhile(statement: str) -> None:
        if said and said[-1].startswith("SELECT body FROM pages WHERE key="):
            # (in this thread: a write that cannot go ahead at once gives up)
            with contextlib.suppress(sqlite3.OperationalError):
                other.execute("INSERT INTO unindexed VALUES ('another version')")
        said.append(statement)

    store._db.set_trace_callback(writing_meanwhile)
    built = store.index_stored("k")
    store._db.set_trace_callback(None)
    assert len([s for s in said if s.startswith("SELECT body FROM pages WHERE key=")]) == 2
    assert (_search_store(store, "harbour"), _search_store(store, "canal")) == (1, 1)
    cached = store.lookup("k")
    assert cached is not None
    assert (cached.unindexed, built) == (False, True)
    other.close()
    store.close()


def test_a_page_whose_rows_cannot_be_written_leaves_the_version_marked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = SqliteStore(tmp_path / "cache")
    pages = [_text_page("harbour basin", 0), _text_page("canal locks", 1)]
    store.put_document("k", _outline(pages), pages, index=False)
    store.serve([("k", "d", "html")], [])
    real = fulltext.put_rows

    def busy(db: sqlite3.Connection, key: str, index: int, rows: Any) -> None:
        if index == 1:
            raise sqlite3.OperationalError("database is locked")
        real(db, key, index, rows)

    monkeypatch.setattr(fulltext, "put_rows", busy)
    assert not store.index_stored("k")
    cached = store.lookup("k")
    assert cached is not None
    assert cached.unindexed  # to be built again
    monkeypatch.setattr(fulltext, "put_rows", real)
    assert store.index_stored("k")
    assert (_search_store(store, "harbour"), _search_store(store, "canal")) == (1, 1)
    store.close()


@pytest.mark.parametrize("failure", ["not written", "raised"])
async def test_a_server_builds_again_the_rows_it_could_not_write(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failure: str
) -> None:
    """The first build fails (the cache busy past its wait, or a failure of ours): the document
    is still being read, and the rows are built on the next try (it was counted as searchable
    with no words, or as being read forever)."""
    cache = tmp_path / "cache"
    _one_shot_read(folder, cache)
    monkeypatch.setattr(extraction, "RETRY_FIRST_S", 0.01, raising=False)
    real = SqliteStore.index_stored
    tries: list[str] = []

    def failing_once(store: SqliteStore, key: str) -> bool:
        tries.append(key)
        if len(tries) == 1:
            if failure == "raised":
                raise RuntimeError("a failure of ours")
            return False
        return real(store, key)

    monkeypatch.setattr(SqliteStore, "index_stored", failing_once)
    async with _server(folder, cache) as (_, client):
        answer = await _until(client, "harbour", lambda a: not a["indexing"])
        assert (answer["total"], len(tries)) == (1, 2)
    assert _rows(cache) == (1, 1, 0)
