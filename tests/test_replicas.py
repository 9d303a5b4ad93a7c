"""Several replicas over one folder sharing one PostgreSQL store, work queue and change feed
(issue 22), against a real PostgreSQL started here (`tests.postgres`)."""

from __future__ import annotations

import contextlib
import shutil
import socket
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from dpe_server.catalog.catalog import Catalog, Change
from dpe_server.catalog.fulltext import Position, Scope, TextQuery
from dpe_server.catalog.stores import check_store_url
from dpe_server.model.tree import Document
from tests import postgres
from tests.e2e.harness import connect, http_server, settled, write_doc
from tests.test_catalog import Counting

pytestmark = pytest.mark.anyio

if why := postgres.available():
    pytest.skip(f"no PostgreSQL for the replica tests: {why}", allow_module_level=True)

from dpe_server.catalog.postgres import PostgresStore  # noqa: E402 (needs psycopg)

DOCUMENTS = 200


@pytest.fixture(scope="module")
def server() -> Iterator[postgres.Postgres]:
    bins = postgres.bin_dir()
    assert bins is not None
    pg = postgres.Postgres(bins)
    try:
        pg.start()
        yield pg
    finally:
        pg.destroy()


@pytest.fixture
def url(server: postgres.Postgres, request: pytest.FixtureRequest) -> str:
    """A fresh database on the module's server, for one test."""
    import psycopg

    name: str = "t_" + request.node.name.lower().replace("[", "_").replace("]", "")[:50]
    with psycopg.connect(server.url, autocommit=True) as db:
        db.execute(f"DROP DATABASE IF EXISTS {name}")
        db.execute(f"CREATE DATABASE {name}")
    return server.url.rsplit("/", 1)[0] + "/" + name


def _folder(tmp_path: Path, count: int) -> Path:
    folder = tmp_path / "docs"
    write_doc(folder / "d000.docx", ["First", "Second"])
    for i in range(1, count):
        shutil.copyfile(folder / "d000.docx", folder / f"d{i:03}.docx")
    return folder


class Stuck(Counting):
    """Probes, then never finishes parsing anything."""

    async def extract(self, root: Path, rel: str) -> Document:
        self.calls["extract"] += 1
        await anyio.sleep_forever()
        raise AssertionError("unreachable")


class Replica:
    """One in-process replica: its own backend, store connection and catalog."""

    def __init__(
        self, folder: Path, url: str, lease: float = 30.0, backend: Counting | None = None
    ) -> None:
        self.backend = backend or Counting()
        self.store = PostgresStore(url, lease=lease)
        self.changes: list[Change] = []
        self.changed = anyio.Event()
        self.catalog = Catalog(folder, "h", self.backend, self._on_change, self.store)

    async def _on_change(self, change: Change) -> None:
        self.changes.append(change)
        self.changed.set()

    def updated(self, doc_ref: str) -> bool:
        return any(doc_ref in c.updated for c in self.changes)


@asynccontextmanager
async def replicas(
    folder: Path, url: str, count: int = 3, **kwargs: Any
) -> AsyncIterator[tuple[list[Replica], anyio.abc.TaskGroup]]:
    running = [Replica(folder, url, **kwargs) for _ in range(count)]
    try:
        async with anyio.create_task_group() as tg:
            yield running, tg
            tg.cancel_scope.cancel()
    finally:
        for r in running:
            r.store.close()


async def _until(condition: Callable[[], object], timeout: float = 20.0) -> None:
    with anyio.fail_after(timeout):
        while not condition():
            await anyio.sleep(0.02)


async def _start_and_warm(replica: Replica, tg: anyio.abc.TaskGroup) -> None:
    await replica.catalog.start(tg)
    tg.start_soon(replica.catalog.follow)
    await replica.catalog.warm()


async def test_three_replicas_extract_each_document_version_once(tmp_path: Path, url: str) -> None:
    folder = _folder(tmp_path, DOCUMENTS)
    async with replicas(folder, url) as (running, tg):
        async with anyio.create_task_group() as warming:
            for r in running:
                warming.start_soon(_start_and_warm, r, tg)
        extracted = [r.backend.calls["extract"] for r in running]
        assert sum(extracted) == DOCUMENTS, extracted
        assert all(n > 0 for n in extracted), f"one replica did all the work: {extracted}"
        claims = running[0].store.extractions()
        assert len(claims) == DOCUMENTS
        assert set(claims.values()) == {1}
        # Every replica serves every document, and every page, from the shared store.
        for r in running:
            r.backend.forbid = True
            assert all(e.current for e in r.catalog.entries())
        last = running[2].catalog
        # Each replica's search finds every document, whichever replica extracted it.
        found = await last.search(
            TextQuery.parse('"Paragraph under Second"'), Scope(), 10, Position()
        )
        assert found is not None
        assert found.total == DOCUMENTS  # one paragraph in each
        for entry in last.entries()[:20]:
            last.pages_lru = type(last.pages_lru)()
            page = await last.page(entry.doc_ref, 0)
            assert page.elements


async def test_an_edit_seen_by_one_replica_reaches_every_replicas_sessions(
    tmp_path: Path, url: str
) -> None:
    folder = _folder(tmp_path, 3)
    async with replicas(folder, url) as (running, tg):
        a, _, c = running
        async with anyio.create_task_group() as warming:
            for r in running:
                warming.start_soon(_start_and_warm, r, tg)
        before = sum(r.backend.calls["extract"] for r in running)
        target = c.catalog.entries()[1]
        write_doc(folder / target.rel, ["Edited", "Again"])
        await a.catalog.rescan()  # replica A's watcher saw it; B and C watch nothing
        await _until(lambda: c.updated(target.doc_ref), timeout=10)
        assert c.catalog.entries()[1].current
        _, outline = await c.catalog.outline(target.doc_ref)
        assert outline is not None
        assert outline.pages[0].title == "Edited"
        await _until(lambda: running[1].updated(target.doc_ref), timeout=10)
        assert sum(r.backend.calls["extract"] for r in running) == before + 1


async def test_a_replica_dead_mid_parse_leaves_its_job_to_another(tmp_path: Path, url: str) -> None:
    folder = _folder(tmp_path, 1)
    lease = 0.6
    dead = Replica(folder, url, lease=lease, backend=Stuck())
    alive = Replica(folder, url, lease=lease)
    try:
        async with anyio.create_task_group() as tg:
            async with anyio.create_task_group() as dying:
                dying.start_soon(_start_and_warm, dead, dying)
                await _until(lambda: dead.backend.calls["extract"] == 1)
                await alive.catalog.start(tg)
                ref = alive.catalog.entries()[0].doc_ref
                assert alive.store.busy(alive.catalog.entries()[0].key)
                dying.cancel_scope.cancel()  # the replica dies mid-parse: no one renews its lease
            with anyio.fail_after(lease * 20):
                _, outline = await alive.catalog.outline(ref)
            assert outline is not None
            assert alive.backend.calls["extract"] == 1
            assert set(alive.store.extractions().values()) == {2}  # claimed twice, done once
            tg.cancel_scope.cancel()
    finally:
        dead.store.close()
        alive.store.close()


def test_store_urls_are_checked() -> None:
    assert check_store_url("sqlite://") == "sqlite://"
    assert check_store_url("postgresql://u@db/dpe").startswith("postgresql://")
    with pytest.raises(ValueError, match="not a store URL"):
        check_store_url("mysql://db")


async def test_replicas_recover_when_postgresql_restarts(tmp_path: Path) -> None:
    """The database goes away mid-run: replica A still notices an edit and serves it from its
    own extraction; once the database is back (no replica restarted), replica C's feed
    reconnects, catches up, and C serves the edit too; the store is used again."""
    bins = postgres.bin_dir()
    assert bins is not None
    pg = postgres.Postgres(bins)
    folder = _folder(tmp_path, 2)
    try:
        pg.start()
        async with replicas(folder, pg.url, count=2) as (running, tg):
            a, c = running
            async with anyio.create_task_group() as warming:
                for r in running:
                    warming.start_soon(_start_and_warm, r, tg)
            target = a.catalog.entries()[0]
            pg.stop()
            write_doc(folder / target.rel, ["Edited while down"])
            await a.catalog.rescan()
            await _until(lambda: a.updated(target.doc_ref))
            _, outline = await a.catalog.outline(target.doc_ref)
            assert outline is not None
            assert outline.pages[0].title == "Edited while down"
            a.catalog.pages_lru = type(a.catalog.pages_lru)()
            page = await a.catalog.page(target.doc_ref, 0)  # from A's local fallback
            assert page.title == "Edited while down"
            assert not c.updated(target.doc_ref)
            pg.start()
            await _until(lambda: c.updated(target.doc_ref), timeout=30)
            _, outline = await c.catalog.outline(target.doc_ref)
            assert outline is not None
            assert outline.pages[0].title == "Edited while down"
            # What A extracted while the database was down reached it: nothing is lost.
            key = a.catalog.entries()[0].key
            await _until(lambda: a.store.lookup(key) is not None and not a.store._pending)
            fresh = PostgresStore(pg.url)
            try:
                stored = fresh.lookup(key)
                assert stored is not None
                assert stored.outline is not None
                assert fresh.page(key, 0) is not None
            finally:
                fresh.close()
    finally:
        pg.destroy()


async def test_a_client_of_a_replica_that_watches_nothing_is_notified(
    tmp_path: Path, url: str
) -> None:
    """Three `serve --transport http` processes on one folder and one database; only A
    watches the folder. A client of C listening (`subscriptions/listen`) hears of an edit that
    A saw."""
    folder = _folder(tmp_path, 3)
    target = folder / "d001.docx"
    with contextlib.ExitStack() as stack:
        servers = [
            stack.enter_context(http_server(folder, "--store", url, *extra))
            for extra in ((), ("--no-watch",), ("--no-watch",))
        ]
        async with connect("http", "auto", folder, url=servers[2].url) as client:
            resources = (await client.list_resources()).resources
            uri = next(r.uri for r in resources if (r.meta or {})["file_uri"].endswith(target.name))
            await settled(client, uri.split("/")[2])
            async with client.listen(resource_subscriptions=[uri]) as stream:
                write_doc(target, ["Edited on the shared drive"])
                with anyio.fail_after(20):
                    event = await stream.__anext__()
                assert getattr(event, "uri", None) == uri
            page = await client.read_resource(uri + "/pages/0?format=markdown")
            assert "Edited on the shared drive" in str(page.contents[0])


async def test_a_replica_starts_and_serves_while_postgresql_is_unreachable(
    tmp_path: Path,
) -> None:
    """No database at the URL: the replica starts anyway (nothing raised), extracts for itself,
    and serves every page it extracted from its own memory."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    folder = _folder(tmp_path, 2)
    alone = Replica(folder, f"postgresql://postgres@127.0.0.1:{port}/none")
    try:
        async with anyio.create_task_group() as tg:
            await _start_and_warm(alone, tg)
            assert all(e.current for e in alone.catalog.entries())
            alone.catalog.pages_lru = type(alone.catalog.pages_lru)()
            for entry in alone.catalog.entries():
                assert (await alone.catalog.page(entry.doc_ref, 1)).title == "Second"
            assert alone.backend.calls["extract"] == 2
            tg.cancel_scope.cancel()
    finally:
        alone.store.close()


async def test_a_change_too_large_for_one_notification_asks_for_a_whole_rescan(url: str) -> None:
    """A burst naming more paths than one NOTIFY holds (8,000 bytes) is published as "the
    folder changed", never lost to PostgreSQL's payload limit."""
    sender, listener = PostgresStore(url), PostgresStore(url)
    heard: list[list[str] | None] = []

    async def on_change(rels: list[str] | None) -> None:
        heard.append(rels)

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(listener.follow, on_change)
            while not heard:  # until the listener listens: the first messages may go unheard
                sender.publish(["a.xlsx"])
                await anyio.sleep(0.05)
            sender.publish([f"folder/report-{i:05}.docx" for i in range(1_000)])
            await _until(lambda: heard[-1] is None, timeout=10)
            tg.cancel_scope.cancel()
    finally:
        sender.close()
        listener.close()
    assert all(rels == ["a.xlsx"] for rels in heard[:-1])
