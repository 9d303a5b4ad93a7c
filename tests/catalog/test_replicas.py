"""Several replicas over one folder sharing one PostgreSQL store, work queue and change feed
(issue 22), against a real PostgreSQL started here (`tests.postgres`)."""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import re
import shutil
import signal
import socket
import threading
import time
import zipfile
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import anyio
import pytest

from dpe_server.catalog.catalog import Catalog, Change
from dpe_server.catalog.shared import pages_job
from dpe_server.catalog.store import PageCache, StoreUnavailable
from dpe_server.catalog.stores import StoreOptions, check_store_url
from dpe_server.catalog.textquery import Position, Scope, TextQuery
from dpe_server.model.errors import PageNotFound
from dpe_server.model.tree import Document, Page
from dpe_server.read.search import QueryError, search
from tests import postgres
from tests.catalog.test_catalog import Counting
from tests.e2e.harness import (
    HttpServer,
    children,
    connect,
    http_server,
    settled,
    write_deck,
    write_doc,
)

pytestmark = pytest.mark.anyio

if why := postgres.available():
    pytest.skip(f"no PostgreSQL for the replica tests: {why}", allow_module_level=True)

from dpe_server.catalog.pglink import GRACE  # noqa: E402 (needs psycopg)
from dpe_server.catalog.postgres import PostgresStore  # noqa: E402

DOCUMENTS = 200


@pytest.fixture
def url(pg_url: str) -> str:
    return pg_url


@dataclass
class OwnPostgres:
    """A database on a PostgreSQL of this module's own (not the session's), for a test that
    stops the server and starts it again."""

    server: postgres.Postgres
    url: str

    def stop(self) -> None:
        self.server.stop()

    def start(self) -> None:
        self.server.start()


@pytest.fixture(scope="module")
def _module_pg() -> Iterator[postgres.Postgres]:
    with postgres.running() as pg:
        yield pg


@pytest.fixture
def own_pg(_module_pg: postgres.Postgres, request: pytest.FixtureRequest) -> OwnPostgres:
    """The module's PostgreSQL, running (a test that failed while it was stopped left it so),
    with a fresh database for the test."""
    if not _module_pg.is_running():
        _module_pg.start()
    return OwnPostgres(_module_pg, postgres.fresh_database(_module_pg.url, request.node.name))


def _folder(tmp_path: Path, count: int) -> Path:
    """`count` copies of a Word document of two headings, each with a paragraph."""
    folder = tmp_path / "docs"
    folder.mkdir(parents=True)
    (folder / "d000.docx").write_bytes(_small_doc(["First", "Second"]))
    for i in range(1, count):
        shutil.copyfile(folder / "d000.docx", folder / f"d{i:03}.docx")
    return folder


W_MAIN = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
RELATIONSHIPS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
PACKAGE_PARTS = {
    "[Content_Types].xml": (
        '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
        '<Default Extension="rels" '
        'ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
        '<Default Extension="xml" ContentType="application/xml"/>'
        '<Override PartName="/word/document.xml" ContentType="application/'
        'vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>'
        '<Override PartName="/word/styles.xml" ContentType="application/'
        'vnd.openxmlformats-officedocument.wordprocessingml.styles+xml"/></Types>'
    ),
    "_rels/.rels": (
        '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
        f'<Relationship Id="rId1" Type="{RELATIONSHIPS}/officeDocument" '
        'Target="word/document.xml"/></Relationships>'
    ),
    "word/_rels/document.xml.rels": (
        '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
        f'<Relationship Id="rId1" Type="{RELATIONSHIPS}/styles" Target="styles.xml"/>'
        "</Relationships>"
    ),
    "word/styles.xml": (
        f'<w:styles xmlns:w="{W_MAIN}"><w:style w:type="paragraph" w:styleId="Heading1">'
        '<w:name w:val="heading 1"/><w:pPr><w:outlineLvl w:val="0"/></w:pPr></w:style>'
        "</w:styles>"
    ),
}


def _small_doc(headings: list[str]) -> bytes:
    """What `write_doc` writes (each heading a page, with "Paragraph under <heading> with
    several words."), as a package of the document and its one heading style: the same tree,
    a tenth of the CPU to probe and to extract (python-docx's template carries every style),
    which the 200 documents of the first test pay three replicas over."""
    heading = '<w:pPr><w:pStyle w:val="Heading1"/></w:pPr>'
    body = "".join(
        f"<w:p>{heading}<w:r><w:t>{text}</w:t></w:r></w:p>"
        f"<w:p><w:r><w:t>Paragraph under {text} with several words.</w:t></w:r></w:p>"
        for text in headings
    )
    document = f'<w:document xmlns:w="{W_MAIN}"><w:body>{body}</w:body></w:document>'
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as package:
        for name, text in {**PACKAGE_PARTS, "word/document.xml": document}.items():
            package.writestr(name, text)
    return out.getvalue()


class Stuck(Counting):
    """Probes, then never finishes parsing anything."""

    async def extract(self, root: Path, rel: str) -> Document:
        self.calls["extract"] += 1
        await anyio.sleep_forever()
        raise AssertionError("unreachable")


class Replica:
    """One in-process replica: its own backend, store connection and catalog."""

    def __init__(
        self,
        folder: Path,
        url: str,
        lease: float = 30.0,
        backend: Counting | None = None,
        options: StoreOptions | None = None,
    ) -> None:
        self.backend = backend or Counting()
        self.store = PostgresStore(url, lease=lease, options=options)
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


@pytest.mark.parametrize("graceful", [False, True], ids=["dies", "stopped"])
async def test_a_replica_gone_mid_parse_leaves_its_job_to_another(
    tmp_path: Path, url: str, graceful: bool
) -> None:
    """A replica that dies mid-parse stops renewing its lease: once it expires, another takes
    the job. One stopped gracefully (its store closed, as a server's shutdown does) gives its
    jobs up: another takes them at once, long before the lease (10 minutes) would expire."""
    folder = _folder(tmp_path, 1)
    lease = 600.0 if graceful else 0.6
    gone = Replica(folder, url, lease=lease, backend=Stuck())
    alive = Replica(folder, url, lease=lease)
    try:
        async with anyio.create_task_group() as tg:
            async with anyio.create_task_group() as dying:
                dying.start_soon(_start_and_warm, gone, dying)
                await _until(lambda: gone.backend.calls["extract"] == 1)
                await alive.catalog.start(tg)
                entry = alive.catalog.entries()[0]
                assert alive.store.busy(entry.key)
                dying.cancel_scope.cancel()  # mid-parse: no one renews its lease
            if graceful:
                gone.store.close()  # what the server does once its tasks are cancelled
                assert not alive.store.busy(entry.key)
            with anyio.fail_after(12):
                _, outline = await alive.catalog.outline(entry.doc_ref)
            assert outline is not None
            assert alive.backend.calls["extract"] == 1
            assert alive.store.extractions() == {entry.key: 2}  # claimed twice, done once
            tg.cancel_scope.cancel()
    finally:
        gone.store.close()
        alive.store.close()


async def test_a_page_read_before_its_document_is_extracted_once(tmp_path: Path, url: str) -> None:
    """Two replicas read the same page of a deck neither has extracted: the first claims that
    page's job and extracts it alone; the second waits for it and reads it from the store."""
    folder = tmp_path / "docs"
    write_deck(folder / "deck.pptx", ["Alpha", "Beta", "Gamma"])
    async with replicas(folder, url, count=2) as (running, tg):
        a, b = running
        for r in running:
            await r.catalog.start(tg)  # probed, not extracted
        ref = a.catalog.entries()[0].doc_ref
        a.backend.held = anyio.Event()
        pages: dict[str, Page] = {}

        async def read(name: str, replica: Replica) -> None:
            pages[name] = await replica.catalog.page(ref, 1)

        async with anyio.create_task_group() as reads:
            reads.start_soon(read, "a", a)
            await _until(lambda: a.backend.calls["pages"] == 1)  # A is extracting the page
            reads.start_soon(read, "b", b)
            await _until(lambda: b.store.busy(pages_job(b.catalog.entries()[0].key, (1,))))
            a.backend.held.set()
        assert pages["a"].title == pages["b"].title == "Beta"
        assert (a.backend.calls["pages"], b.backend.calls["pages"]) == (1, 0)
        assert a.store.extractions() == {pages_job(a.catalog.entries()[0].key, (1,)): 1}
        assert a.backend.calls["extract"] == b.backend.calls["extract"] == 0


def test_store_urls_are_checked() -> None:
    assert check_store_url("sqlite://") == "sqlite://"
    assert check_store_url("postgresql://u@db/dpe").startswith("postgresql://")
    with pytest.raises(ValueError, match="not a store URL"):
        check_store_url("mysql://db")


async def test_replicas_recover_when_postgresql_restarts(
    tmp_path: Path, own_pg: OwnPostgres
) -> None:
    """The database goes away mid-run: replica A still notices an edit and serves it from its
    own extraction; once the database is back (no replica restarted), replica C's feed
    reconnects, catches up, and C serves the edit too; the store is used again."""
    folder = _folder(tmp_path, 2)
    async with replicas(folder, own_pg.url, count=2) as (running, tg):
        a, c = running
        async with anyio.create_task_group() as warming:
            for r in running:
                warming.start_soon(_start_and_warm, r, tg)
        target = a.catalog.entries()[0]
        own_pg.stop()
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
        own_pg.start()
        await _until(lambda: c.updated(target.doc_ref), timeout=30)
        _, outline = await c.catalog.outline(target.doc_ref)
        assert outline is not None
        assert outline.pages[0].title == "Edited while down"
        # What A extracted while the database was down reached it: nothing is lost.
        key = a.catalog.entries()[0].key
        await _until(lambda: a.store.lookup(key) is not None and not a.store._pending)
        fresh = PostgresStore(own_pg.url)
        try:
            stored = fresh.lookup(key)
            assert stored is not None
            assert stored.outline is not None
            assert fresh.page(key, 0) is not None
        finally:
            fresh.close()


async def test_a_stored_page_fails_clearly_while_postgresql_is_down_and_reads_after(
    tmp_path: Path, own_pg: OwnPostgres
) -> None:
    """A page only the database holds (a document another replica extracted) cannot be read
    while the database is down: the read fails saying so and that it is tried again, rather
    than extracting the document again here (or forgetting it on a blip); so does a search.
    Once the database is back, the same replica reads it, without restarting."""
    folder = _folder(tmp_path, 2)
    async with replicas(folder, own_pg.url, count=2) as (running, tg):
        a, b = running
        await _start_and_warm(a, tg)
        await _start_and_warm(b, tg)  # everything restored from what A stored
        b.backend.forbid = True  # B extracts nothing, before or after
        ref = b.catalog.entries()[0].doc_ref
        b.catalog.pages_lru = PageCache()
        own_pg.stop()
        unreachable = r"cannot be read just now: the shared store \(PostgreSQL\) is unreachable"
        with pytest.raises(PageNotFound, match=f"^Page 1 of '{ref}' {unreachable}; it is"):
            await b.catalog.page(ref, 1)
        with pytest.raises(QueryError, match=f"^The search index {unreachable}; it is"):
            await search(b.catalog, "second")
        own_pg.start()
        with anyio.fail_after(20):
            while (page := await _page_or_none(b.catalog, ref, 1)) is None:
                await anyio.sleep(0.1)
        assert page.title == "Second"
        assert (await search(b.catalog, "second"))["total"] == 4  # 2 elements a document


QUICK = StoreOptions(timeout=2.0, lock_timeout=1.0)
"""Timeouts of the tests of a database that does not answer, or not in time."""
ANSWERED = QUICK.timeout + GRACE + 1.5
"""A read answers within this many seconds (the statement timeout and the watchdog's grace,
and a margin for a busy machine)."""
NOT_NOW = (
    r"^Page 1 of '[^']+' cannot be read just now: the shared store \(PostgreSQL\) "
    r"(did not answer within 2 s|is unreachable); it is tried again at every read"
)
SAFETY = 20.0
"""Seconds after which a test gives the database back whatever happened (the old code waited
on it that long, and the test then fails on the time its reads took)."""


async def _timed_read(catalog: Catalog, ref: str) -> tuple[float, str]:
    """How long a read of page 1 took, and its error's message ("" when it was served)."""
    start = time.monotonic()
    try:
        await catalog.page(ref, 1)
    except PageNotFound as exc:
        return time.monotonic() - start, exc.message
    return time.monotonic() - start, ""


def _cluster(server: postgres.Postgres) -> list[int]:
    """The processes of a running PostgreSQL: its postmaster and every child."""
    postmaster = int((server.data / "postmaster.pid").read_text().split()[0])
    return [postmaster, *children(postmaster)]


@contextlib.contextmanager
def _frozen(server: postgres.Postgres) -> Iterator[None]:
    """Every process of `server` stopped (SIGSTOP): its port still accepts connections, and
    nothing answers. Continued when the block ends, or after `SAFETY` seconds."""
    pids = _cluster(server)

    def thaw() -> None:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)

    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    safety = threading.Timer(SAFETY, thaw)
    safety.start()
    try:
        yield
    finally:
        safety.cancel()
        thaw()


async def _two_warm(running: list[Replica], tg: anyio.abc.TaskGroup) -> Replica:
    """Replica A extracts everything; B, returned, extracts nothing: it reads from the store."""
    a, b = running
    await _start_and_warm(a, tg)
    await _start_and_warm(b, tg)
    b.backend.forbid = True
    b.catalog.pages_lru = PageCache()
    return b


async def test_reads_answer_in_time_while_postgresql_is_frozen_and_serve_once_it_is_back(
    tmp_path: Path, own_pg: OwnPostgres
) -> None:
    """A PostgreSQL whose processes are stopped (SIGSTOP: the port accepts, nothing answers):
    each read answers within the statement timeout (and a second's grace) that the store
    cannot be read just now, as does a search; once the processes continue, the same replica
    reads again, without restarting. Before, every read waited as long as the database."""
    folder = _folder(tmp_path, 2)
    async with replicas(folder, own_pg.url, count=2, options=QUICK) as (running, tg):
        b = await _two_warm(running, tg)
        ref = b.catalog.entries()[0].doc_ref
        with _frozen(own_pg.server):
            reads = [await _timed_read(b.catalog, ref) for _ in range(3)]
            assert all(took <= ANSWERED for took, _ in reads), reads
            assert all(re.match(NOT_NOW, message) for _, message in reads), reads
            start = time.monotonic()
            with pytest.raises(QueryError, match=r"^The search index cannot be read just now"):
                await search(b.catalog, "second")
            assert time.monotonic() - start <= ANSWERED
        with anyio.fail_after(30):
            while (await _timed_read(b.catalog, ref))[1]:
                await anyio.sleep(0.1)
        assert (await b.catalog.page(ref, 1)).title == "Second"
        assert (await search(b.catalog, "second"))["total"] == 4


async def test_reads_answer_in_time_while_a_table_is_locked_and_leases_are_renewed(
    tmp_path: Path, url: str
) -> None:
    """The pages and the index locked (as `VACUUM FULL` or `ALTER TABLE` lock them): a read
    answers within the statement timeout that the store cannot be read just now, as does a
    search, and a lease renewal meanwhile is not held up behind them (its own connection);
    once the lock is gone the same replica reads again."""
    import psycopg

    folder = _folder(tmp_path, 2)
    async with replicas(folder, url, count=2, options=QUICK) as (running, tg):
        b = await _two_warm(running, tg)
        ref, key = b.catalog.entries()[0].doc_ref, b.catalog.entries()[0].key
        ended: dict[str, float] = {}

        async def held_read() -> None:
            await _timed_read(b.catalog, ref)
            ended["read"] = time.monotonic()

        with psycopg.connect(url) as locker:
            locker.execute("LOCK TABLE pages, elements IN ACCESS EXCLUSIVE MODE")
            safety = threading.Timer(SAFETY, locker.rollback)
            safety.start()
            try:
                took, message = await _timed_read(b.catalog, ref)
                assert took <= ANSWERED, took
                assert re.match(NOT_NOW, message), message
                start = time.monotonic()
                with pytest.raises(QueryError, match=r"^The search index cannot be read just"):
                    await search(b.catalog, "second")
                assert time.monotonic() - start <= ANSWERED
                b.catalog.pages_lru = PageCache()
                async with anyio.create_task_group() as reading:
                    reading.start_soon(held_read)
                    await _until(b.store._lock.locked)  # the read waits on the locked table
                    await anyio.to_thread.run_sync(b.store.renew, key)
                    ended["renewal"] = time.monotonic()
            finally:
                safety.cancel()
                locker.rollback()
        assert ended["renewal"] < ended["read"]  # not behind the read
        assert (await b.catalog.page(ref, 1)).title == "Second"
        assert (await search(b.catalog, "second"))["total"] == 4


def test_the_database_password_is_taken_from_a_file_or_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A database that asks for a password, reached with a URL that holds none: the password
    comes from `--store-password-file` (its first line) or from libpq's own `PGPASSWORD`; a URL
    that holds one works too, with a warning that every local user sees it in `ps`."""
    from dpe_server.cli import command as cli

    secret = "a pass word: with 'quotes' & more"
    monkeypatch.delenv("PGPASSWORD", raising=False)
    monkeypatch.setenv("PGPASSFILE", str(tmp_path / "no-such-pgpass"))

    def connects(url: str, options: StoreOptions | None = None) -> bool:
        store = PostgresStore(url, options=options)
        try:
            store.search(TextQuery.parse("word"), Scope(), 1, Position())
        except StoreUnavailable:
            return False
        finally:
            store.close()
        return True

    with postgres.running(password=secret) as pg:
        parser = cli._parser(with_check=False)
        (tmp_path / "secret").write_text(secret + "\nignored\n")
        args = parser.parse_args(
            [
                "serve",
                str(tmp_path),
                "--store",
                pg.url,
                "--store-password-file",
                f"{tmp_path}/secret",
            ]
        )
        options = cli._store_options(args)
        assert options is not None
        assert secret not in repr(options)
        assert not connects(pg.url)
        assert connects(pg.url, options)
        monkeypatch.setenv("PGPASSWORD", secret)
        assert connects(pg.url)
        monkeypatch.delenv("PGPASSWORD")
        in_url = pg.url.replace("postgres@", f"postgres:{quote(secret, safe='')}@")
        with caplog.at_level(logging.WARNING):
            warned = cli._store_options(
                parser.parse_args(["serve", str(tmp_path), "--store", in_url])
            )
        assert warned == StoreOptions()
        assert "every local user can see in the process list" in caplog.text
        assert secret not in caplog.text
        assert connects(in_url)


async def _page_or_none(catalog: Catalog, ref: str, index: int) -> Page | None:
    try:
        return await catalog.page(ref, index)
    except PageNotFound:
        return None


@pytest.fixture(scope="module")
def served_replicas(
    pg_server: postgres.Postgres, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Path, list[HttpServer]]]:
    """Three `serve --transport http` processes on one folder (three documents) and one
    database; only the first (A) watches the folder. Each test below listens on a replica
    that watches nothing (C, then B) and waits for the notice of its own edit of d001.docx."""
    url = postgres.fresh_database(pg_server.url, "t_served_replicas")
    folder = _folder(tmp_path_factory.mktemp("replicas"), 3)
    with contextlib.ExitStack() as stack:
        yield (
            folder,
            [
                stack.enter_context(http_server(folder, "--store", url, *extra))
                for extra in ((), ("--no-watch",), ("--no-watch",))
            ],
        )


async def test_a_client_of_a_replica_that_watches_nothing_is_notified(
    served_replicas: tuple[Path, list[HttpServer]],
) -> None:
    """A client of C listening (`subscriptions/listen`) hears of an edit that A saw."""
    folder, servers = served_replicas
    target = folder / "d001.docx"
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


async def converged(folder: Path, servers: list[HttpServer], uri: str) -> None:
    """Wait until every replica serves the same first page of `uri`: an edit one of them saw
    (an earlier test's) has reached the others, so none of them still has a notice of it to
    send that a test could take for the notice of its own edit."""
    with anyio.fail_after(20):
        while True:
            texts = set()
            for server in servers:
                async with connect("http", "auto", folder, url=server.url) as client:
                    page = await client.read_resource(uri + "/pages/0?format=markdown")
                    texts.add(str(page.contents[0]).split(" text=", 1)[-1])
            if len(texts) == 1:
                return
            await anyio.sleep(0.05)


class RoundRobin:
    """A load balancer that pins nothing: each HTTP request goes to the next server in turn
    (its connection carries that request alone: `Connection: close`), and the JSON-RPC method
    of each request is noted against the server that got it."""

    def __init__(self, ports: list[int]) -> None:
        self.ports = ports
        self.turn = 0
        self.methods: list[list[str]] = [[] for _ in ports]

    async def handle(self, client: anyio.abc.SocketStream) -> None:
        async with client:
            head = b""
            while b"\r\n\r\n" not in head:
                head += await client.receive()
            top, body = head.split(b"\r\n\r\n", 1)
            lines = [h for h in top.split(b"\r\n") if not h.lower().startswith(b"connection:")]
            length = next(
                (int(h.split(b":")[1]) for h in lines if h.lower().startswith(b"content-length:")),
                0,
            )
            while len(body) < length:
                body += await client.receive()
            server, self.turn = self.turn, (self.turn + 1) % len(self.ports)
            method = json.loads(body).get("method", "") if body else "GET"
            self.methods[server].append(method)
            request = b"\r\n".join([*lines, b"Connection: close"]) + b"\r\n\r\n" + body
            async with await anyio.connect_tcp("127.0.0.1", self.ports[server]) as upstream:
                await upstream.send(request)
                with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                    async for chunk in upstream:  # a response, or a stream, until it ends
                        await client.send(chunk)


async def test_a_load_balancer_that_pins_nothing(
    served_replicas: tuple[Path, list[HttpServer]],
) -> None:
    """Two replicas (A, which watches the folder, and B) behind a round-robin balancer: a
    2026-07-28 client's requests alternate between them, its `subscriptions/listen` stream
    lands on the replica that watches nothing and still hears of an edit the other one saw,
    and every read of the edited page, on either replica, gives the new text."""
    folder, replicas = served_replicas
    target = folder / "d001.docx"
    servers = replicas[:2]
    balancer = RoundRobin([s.port for s in servers])
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    async with listener, anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, balancer.handle)
        port = listener.extra(anyio.abc.SocketAttribute.local_port)
        async with connect("http", "auto", folder, url=f"http://127.0.0.1:{port}/mcp") as c:
            resources = (await c.list_resources()).resources
            uri = next(r.uri for r in resources if (r.meta or {})["file_uri"].endswith("d001.docx"))
            await settled(c, uri.split("/")[2])
            await converged(folder, servers, uri)
            if balancer.turn == 0:
                await c.list_resources()  # the stream goes to the replica that watches nothing
            async with c.listen(resource_subscriptions=[uri]) as stream:
                write_doc(target, ["Edited behind the balancer"])
                with anyio.fail_after(20):
                    event = await stream.__anext__()
                assert getattr(event, "uri", None) == uri
            for _ in range(4):
                page = await c.read_resource(uri + "/pages/0?format=markdown")
                assert "Edited behind the balancer" in str(page.contents[0])
        tg.cancel_scope.cancel()
    assert "subscriptions/listen" in balancer.methods[1]
    for methods in balancer.methods:
        assert methods.count("resources/read") >= 2, balancer.methods  # of the 4, 2 each


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


async def test_a_database_of_schema_1_is_searched_once_migrated(tmp_path: Path, url: str) -> None:
    """Pages stored before the full-text index existed (schema 1: no `elements` table) are
    indexed when a replica of this version first serves them, without extracting anything."""
    folder = _folder(tmp_path, 3)
    async with replicas(folder, url, count=1) as (running, tg):
        await _start_and_warm(running[0], tg)
    import psycopg

    with psycopg.connect(url, autocommit=True) as db:  # the database as schema 1 left it
        db.execute("DROP TABLE elements, unindexed")
        db.execute("DELETE FROM schema_version WHERE version > 1")
    async with replicas(folder, url, count=1) as (running, tg):
        again = running[0]
        again.backend.forbid = True  # everything comes from the store
        await again.catalog.start(tg)
        assert all(e.current for e in again.catalog.entries())
        found = await again.catalog.search(
            TextQuery.parse("paragraph second"), Scope(), 10, Position()
        )
        assert found is not None
        assert found.total == 3
        with psycopg.connect(url) as db:
            assert db.execute("SELECT count(*) FROM unindexed").fetchone() == (0,)
