"""The catalog: the serving process's only owner of state. Which files exist, their doc_refs,
their outlines (derived title, keywords, summary, page index) or their errors, kept by its
`index.Index` half (shared with `dpe-server read`'s one-shot reader). Handlers ask it; the watcher
tells it (`rescan`); it tells whoever listens (`on_change`) which documents changed, and never
knows about sessions.

Lazy and cached: start-up lists every file from the store (a restart) or a cheap probe (page
count, properties); full extraction runs in the background (`warm`, most recently modified
first) and on demand for whatever a client reads, one page at a time where the format allows
it. Page bodies live in the `Store`, not here, so memory grows by headers only.

OCR: extraction leaves the pdf pages to recognise, and the pages whose pictures are to be
(docx, pptx, xlsx), `ocr: "pending"`; once the warm-up has extracted every document,
`recognise_pending` recognises them in the background, one job per page (its own deadline),
most recently modified document first, with a core left for reads; a page a client reads is
recognised at once, ahead of that queue. Each recognised page is stored like any page and
announced as an update of its document.

Freshness: a changed file is probed and re-extracted in the background while the last good
outline and pages keep being served; when the new ones are ready the change is announced. A
failure on a file that was just written is retried with backoff (it may be half-written);
after the retries its error is listed.
"""

from __future__ import annotations

import functools
import logging
import os
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar, assert_never, cast

import anyio
import anyio.to_thread
from anyio.abc import TaskGroup

from dpe_server.catalog.folder import FileStat, scan, scan_paths
from dpe_server.catalog.fulltext import Found, Position, Scope, TextQuery
from dpe_server.catalog.index import Entry as IndexEntry
from dpe_server.catalog.index import Index, pending_pages
from dpe_server.catalog.recent import RecentFirst
from dpe_server.catalog.shared import Claim, SharedStore, pages_job, recognise_job
from dpe_server.catalog.steps import MakeCurrent, PagesJob, Probe, Recognise, Step, StoreCall
from dpe_server.catalog.store import Cached, MemoryStore, Outline, Store
from dpe_server.extractors import DEFAULT_LIMITS, Limits, is_paged
from dpe_server.extractors.gcpause import collector_paused
from dpe_server.extractors.ocr import states as ocr_states
from dpe_server.isolation.backends import Backend
from dpe_server.model.errors import DpeError, ExtractionError
from dpe_server.model.info import DocumentInfo, PageInfo
from dpe_server.model.tree import Document, Element, Page

log = logging.getLogger(__name__)
T = TypeVar("T")

RETRY_DELAYS = (0.5, 1.0, 2.0, 4.0, 8.0)
"""Seconds between attempts at a file that failed while it may still be being written."""
FRESH_SECONDS = 5.0
"""A file modified this recently may be half-written: its failures are retried. Where its times
are coarse, it may also have been rewritten within one tick: each rescan reads its content."""
READ_WAIT = 15.0
"""Seconds a read of a file caught mid-write, with no last good version, waits to settle."""
CHUNK_MIN_PAGES = 24
"""A pdf or pptx with this many pages is extracted in chunks, one per worker, in parallel."""
WARM_CONCURRENCY = max(1, (os.cpu_count() or 2) - 1)
"""Background extractions at once: one core is left for what clients ask for."""
PROBES_AT_ONCE = 16
"""Probes under way at once while the catalog starts (each waits for a worker)."""
CLAIM_POLL = 0.1
"""Seconds between looks at a job another replica holds (a shared store)."""


@dataclass(frozen=True, slots=True)
class Change:
    """What changed in one step: the set of documents, and/or these documents' contents."""

    list_changed: bool = False
    updated: frozenset[str] = frozenset()


ChangeListener = Callable[[Change], Awaitable[None]]


class Entry(IndexEntry):
    __slots__ = ("_lock", "retried")
    _lock: anyio.Lock | None
    """Held while the file is extracted; there only while someone holds or awaits it (a
    lock costs more memory than the rest of an entry)."""
    retried: anyio.Event | None
    """Set when the pending retry of a file caught mid-write has run."""

    def __init__(self, rel: str, doc_ref: str, stat: FileStat, key: str) -> None:
        super().__init__(rel, doc_ref, stat, key)
        object.__setattr__(self, "_lock", None)
        object.__setattr__(self, "retried", None)

    @property
    def busy(self) -> bool:
        """An extraction of the file is under way."""
        return self._lock is not None and self._lock.locked()

    @asynccontextmanager
    async def held(self) -> AsyncIterator[None]:
        """Hold the entry's lock: one extraction of a file at a time."""
        if self._lock is None:
            self._lock = anyio.Lock()
        lock = self._lock
        async with lock:
            yield
        if self._lock is lock and not lock.locked() and not lock.statistics().tasks_waiting:
            self._lock = None


async def _each(items: Sequence[T], work: Callable[[T], Awaitable[None]], at_once: int) -> None:
    """`work(item)` for every item in turn, at most `at_once` at a time: that many tasks take
    the next item as they finish, instead of a task per item waiting its turn (with those, a
    server listing 10,000 documents held 140 MB instead of 94: bench/README.md)."""
    items_left = iter(items)

    async def take() -> None:
        for item in items_left:
            await work(item)

    async with anyio.create_task_group() as tg:
        for _ in range(min(at_once, len(items))):
            tg.start_soon(take)


def _fresh(st: FileStat) -> bool:
    """Modified within the last `FRESH_SECONDS`."""
    return time.time() - st.mtime_ns / 1e9 < FRESH_SECONDS


def _may_have_changed(known: FileStat, st: FileStat) -> bool:
    """Whether a file known as `known` may be another version now that it is `st`: its stat
    moved, or its times are coarse and recent, so a rewrite within the same tick as the last
    may have left them all as they were (its content fingerprint then tells)."""
    return st != known or (st.coarse and _fresh(st))


def _listing(info: DocumentInfo) -> tuple[object, ...]:
    """What resources/list shows of a document."""
    return (info.title, info.summary, info.keywords, info.page_count, info.error)


class Catalog(Index[Entry]):
    def __init__(
        self,
        root: Path,
        host: str,
        backend: Backend,
        on_change: ChangeListener | None = None,
        store: Store | None = None,
        *,
        limits: Limits = DEFAULT_LIMITS,
    ) -> None:
        super().__init__(
            root,
            host,
            store if store is not None else MemoryStore(),
            backend.passwords,
            limits,
            bounds=backend.bounds,
        )
        self.backend = backend
        self.on_change = on_change
        self._tg: TaskGroup | None = None
        self.scanned = 0
        self.probed = 0
        self.warm_count = 0
        """Documents the warm-up has gone through so far (extracted, failed or skipped)."""
        self.listed = anyio.Event()
        """Set once every file found at start is listed: restored from the store, or listed
        `indexing` until its probe answers (reads wait for this, never for the probes)."""
        self.listing_version = 0
        """Grows with each `list_changed` announced: what was derived from the listing before
        (completion's index of doc_refs and titles) is out of date."""
        self._warming = False
        self._warm_limiter = anyio.Semaphore(WARM_CONCURRENCY)
        self._search_sync = anyio.Lock()
        self.warmed = anyio.Event()
        """Set once the start-up warm-up has extracted (or failed) every file found at start."""
        self.shared = self.store if isinstance(self.store, SharedStore) else None
        """The work queue and change feed of replicas sharing the store, if it is shared."""
        self._ocr_todo: RecentFirst[Entry] = RecentFirst()
        """Documents with pages to recognise (`ocr: "pending"`), for `recognise_pending`."""
        self._ocr_more = anyio.Event()
        self._recognising: dict[tuple[str, int], anyio.Event] = {}
        """Pages being recognised (store key, page index), set when done."""

    # ---- life cycle ----------------------------------------------------------------------

    async def start(self, tg: TaskGroup | None = None, *, probe: bool = True) -> None:
        """Scan the folder; list each file from the store, else `indexing` until a cheap probe
        answers. `listed` is set as soon as the folder is listed: a probe may take seconds (a
        legacy file is converted), and Level 0 waits for none of them. Returns once every file
        is probed, announcing the list changed when any was.

        `probe=False` leaves probing to the first read of each document (one-shot readers
        such as `dpe-server read`, which need one document, not the folder's listing).
        """
        self._tg = tg
        found = scan(self.root)
        keys = await anyio.to_thread.run_sync(self._keys, found)  # coarse times read files
        with collector_paused():  # one object or two per file, none of them garbage
            entries = [self._add(rel, st, keys[rel]) for rel, st in found.items()]
        self.scanned = len(entries)
        cached = await anyio.to_thread.run_sync(self._restore_all, entries)
        self.listed.set()

        async def probe_one(entry: Entry) -> None:
            # Replicas sharing the store start at different places in the folder: what
            # another has probed meanwhile is read from the store instead.
            if self.shared is None or not await anyio.to_thread.run_sync(self._restore, entry):
                await self._probe(entry)
            self.probed += 1

        todo = [e for e in entries if e.rel not in cached and probe]
        self.probed += len(entries) - len(todo)
        if self.shared is not None and todo:
            start = random.randrange(len(todo))
            todo = todo[start:] + todo[:start]
        await _each(todo, probe_one, PROBES_AT_ONCE)
        if todo:  # titles, page counts and errors listed since the folder was
            await self._announce(Change(list_changed=True))

    async def warm(self) -> None:
        """Extract every document fully, most recently modified first (background warm-up);
        from then on, files that appear or change are extracted in the background too."""
        self._warming = True
        await self._warm(sorted(self._entries.values(), key=lambda e: -e.stat.mtime_ns))
        self.warmed.set()

    async def _warm(self, entries: Sequence[Entry]) -> None:
        refined = False
        limiter = self._warm_limiter
        taken: list[Entry] = []
        """Entries another replica was extracting (a shared store): waited for last."""

        async def one(entry: Entry, wait: bool) -> None:
            nonlocal refined
            async with limiter:
                deferred = False
                try:
                    listed = self._entries.get(entry.rel) is entry
                    if listed and not (entry.current or entry.failed):
                        if not wait and await self._taken(entry):
                            taken.append(entry)  # counted when waited for
                            deferred = True
                            return
                        before = _listing(self.info_of(entry))
                        await self._ensure_outline(entry)
                        refined |= _listing(self.info_of(entry)) != before
                finally:
                    if not deferred:
                        self.warm_count += 1

        todo = [e for e in entries if not (e.current or e.failed)]
        self.warm_count += len(entries) - len(todo)  # restored: nothing to do (no task each)
        for batch, wait in ((todo, False), (taken, True)):
            await _each(list(batch), functools.partial(one, wait=wait), WARM_CONCURRENCY)
        if refined:
            # Titles and summaries derived from the content differ from the probe's: the list
            # changed (a Level 1 read never showed the probe's, so no document-level update).
            await self._announce(Change(list_changed=True))

    async def _taken(self, entry: Entry) -> bool:
        """Whether another replica is extracting the entry's version (a shared store)."""
        shared = self.shared
        return shared is not None and await anyio.to_thread.run_sync(shared.busy, entry.key)

    def _warm_later(self, entries: Sequence[Entry]) -> None:
        """Extract files found after the start-up warm-up, in the background."""
        if self._warming and entries and self._tg is not None:
            self._in_background(functools.partial(self._warm, entries))

    def _in_background(self, work: Callable[[], Awaitable[None]]) -> None:
        """Run `work()` in the catalog's task group. Nothing it raises may reach the group
        (that would stop the server's background work and its transport): a failure of ours
        is logged and costs only the reads it was doing."""

        async def guarded() -> None:
            try:
                await work()
            except Exception:
                log.exception("background work of the catalog failed; serving goes on")

        assert self._tg is not None
        self._tg.start_soon(guarded)

    def _new_entry(self, rel: str, doc_ref: str, st: FileStat, key: str) -> Entry:
        return Entry(rel, doc_ref, st, key)

    # What is kept of a document once its outline is of the file as it is now is the outline:
    # the probe's properties say nothing more (the next version is probed again).

    # A document with pages to recognise keeps its properties until they are: its outline is
    # derived again from the recognised text then (`_settled_outline`).

    def _apply(self, entry: IndexEntry, cached: Cached | None) -> bool:
        known = super()._apply(entry, cached)
        self._settle(cast(Entry, entry))
        return known

    def _adopt(self, entry: IndexEntry, key: str, doc: Document, outline: Outline) -> bool:
        current = super()._adopt(entry, key, doc, outline)
        self._settle(cast(Entry, entry))
        return current

    def _settle(self, entry: Entry) -> None:
        """A current outline: queue its pages to recognise, else drop the properties."""
        if not entry.current:
            return
        if pending_pages(entry.outline):
            # (maybe in a thread: the loop is woken by its caller)
            self._ocr_todo.add(entry, entry.stat.mtime_ns)
        else:
            entry.props = None

    # ---- queries -------------------------------------------------------------------------

    async def outline(self, doc_ref: str) -> tuple[Entry, Outline | None]:
        """The document's outline (extracting it if needed); None when it cannot be read."""
        entry = self.entry(doc_ref)
        await self._ensure_outline(entry)
        return entry, entry.outline

    async def page_infos(self, doc_ref: str) -> list[PageInfo]:
        _, outline = await self.outline(doc_ref)
        return list(outline.pages) if outline else []

    async def page(self, doc_ref: str, index: int) -> Page:
        return (await self.keyed_page(doc_ref, index))[1]

    async def keyed_page(self, doc_ref: str, index: int) -> tuple[str, Page]:
        """The page, with the store key of the version of the file it is of."""
        return await self.run_steps(self._keyed_page(self.entry(doc_ref), index))

    async def element(self, doc_ref: str, element_id: str) -> tuple[int, Element]:
        _, index, element = await self.keyed_element(doc_ref, element_id)
        return index, element

    async def keyed_element(self, doc_ref: str, element_id: str) -> tuple[str, int, Element]:
        """The element and its page index, with the store key of the version it is of."""
        entry = self.entry(doc_ref)
        return await self.run_steps(self._keyed_element(entry, element_id))

    async def search(
        self, query: TextQuery, scope: Scope, limit: int, at: Position
    ) -> Found | None:
        """The served elements matching `query` in `scope` (`Store.search`), the index told
        first which versions are served now."""
        async with self._search_sync:
            added, dropped = self.served_changes()
            if added or dropped:
                await anyio.to_thread.run_sync(self.store.serve, added, dropped)
        return await anyio.to_thread.run_sync(self.store.search, query, scope, limit, at)

    def indexing(self, file_type: str = "", doc_ref: str = "") -> int:
        """Documents not yet extracted, or with pages not yet recognised."""
        waiting = [e for e in self._ocr_todo if e.current and self._entries.get(e.rel) is e]
        return super().indexing(file_type, doc_ref) + sum(
            1 for e in waiting if self._in_scope(e, file_type, doc_ref)
        )

    async def _perform(self, step: Step) -> Any:
        match step:
            case StoreCall(fn, args):
                return await anyio.to_thread.run_sync(fn, *args)
            case PagesJob(entry, indices):
                return await self._extract_pages(cast(Entry, entry), indices)
            case MakeCurrent(entry):
                return await self._ensure_outline(cast(Entry, entry))  # entries are ours
            case Probe(entry):
                return await self._probe(cast(Entry, entry))
            case Recognise(entry, key, page):
                return await self._recognise(cast(Entry, entry), key, page)
            case _:
                assert_never(step)

    # ---- OCR: pages extraction left pending ----------------------------------------------

    async def recognise_pending(self, *, forever: bool = False) -> None:
        """Recognise every page waiting to be (the background OCR pass, after the warm-up):
        most recently modified document first, one job per page, at most `WARM_CONCURRENCY`
        at once (a read recognises the page it reads at once, beside these). `forever`: then
        wait for more (documents extracted or changed later)."""
        while True:
            while (taken := self._ocr_todo.take()) is not None:
                entry, mtime = taken
                try:
                    await self._recognise_document(entry)
                finally:
                    self._ocr_todo.done(entry, mtime)
            if not forever:
                return
            self._ocr_more = anyio.Event()
            if not self._ocr_todo.queued():
                await self._ocr_more.wait()

    def _wake_ocr(self) -> None:
        if self._ocr_todo.queued():
            self._ocr_more.set()

    async def _recognise_document(self, entry: Entry) -> None:
        async def one(index: int) -> None:
            async with self._warm_limiter:
                if self._entries.get(entry.rel) is not entry or not entry.current:
                    return  # gone, or changed: its new version is queued when extracted
                try:
                    key, page = await self.keyed_page(entry.doc_ref, index)  # a read recognises it
                except DpeError as exc:
                    log.info("page %d of %s not recognised: %s", index, entry.rel, exc.message)
                    return
                except Exception:  # a failure of ours costs this page, not the server
                    log.exception("page %d of %s not recognised", index, entry.rel)
                    return
                if not ocr_states.is_pending(page.metadata):
                    # Recognised meanwhile by another replica sharing the store: listed so.
                    self._recognised_outline(entry, key, page)

        async with anyio.create_task_group() as tg:
            for index in pending_pages(entry.outline):
                tg.start_soon(one, index)

    async def _recognise(self, entry: Entry, key: str, page: Page) -> Page:
        """Recognise a pending page (one job, its own deadline), keep it, tell subscribers;
        a page already being recognised is waited for instead."""
        index = page.page_index
        running = self._recognising.get((key, index))
        if running is not None:
            await running.wait()
            kept = self.pages_lru.get(key, index)
            if kept is None:
                kept = await anyio.to_thread.run_sync(self.store.page, key, index)
            return kept or page
        done = self._recognising[(key, index)] = anyio.Event()
        try:
            recognised = await self._recognised(entry, key, page)
            if recognised is None:
                return page  # stays pending (the server is stopping...)
            found, outline = recognised
        finally:
            del self._recognising[(key, index)]
            done.set()
        if outline is not None:
            before = _listing(self.info_of(entry))
            settled = await anyio.to_thread.run_sync(self._settled_outline, entry, key)
            if settled is not None and entry.outline_key == key:
                entry.outline, entry.props = settled, None
                await anyio.to_thread.run_sync(self.store.put_document, key, settled, [])
            await self._announce_entry(entry, before)
        return found

    async def _recognised(
        self, entry: Entry, key: str, page: Page
    ) -> tuple[Page, Outline | None] | None:
        """The pending `page` recognised by a job here and kept (stored, listed in the entry's
        outline, which is returned: `_recognised_outline`); None when it stays pending (a
        transient failure). With a shared store the job is claimed first, as a pages job is:
        one replica recognises the page, the others wait for it and read it from the store."""
        index = page.page_index
        job = recognise_job(key, index)

        def recognised_there() -> Page | None:
            stored = self.store.page(key, index)
            return None if stored is None or ocr_states.is_pending(stored.metadata) else stored

        stored, leased = await self._claimed(entry, key, job, recognised_there)
        if stored is not None:  # recognised (or failed) by another replica
            self.pages_lru.put(key, stored)
            return stored, self._recognised_outline(entry, key, stored)
        work = self._recognition(self.backend.recognise(self.root, entry.rel, index), page)
        found = await self._leased(job if leased else None, work)
        if found is None:
            if leased is not None:  # anyone may try again
                await anyio.to_thread.run_sync(leased.release, job)
            return None
        outline = self._recognised_outline(entry, key, found)
        await anyio.to_thread.run_sync(self._keep_recognised, entry, key, found, outline)
        if leased is not None:
            await anyio.to_thread.run_sync(leased.finish, job)
        return found, outline

    # ---- extraction ----------------------------------------------------------------------

    async def _probe(self, entry: Entry) -> None:
        key = entry.key
        try:
            props = await self.backend.probe(self.root, entry.rel)
        except ExtractionError as exc:
            if not entry.current:  # else a read extracted this version meanwhile: it stands
                self._failed(entry, key, exc)
            return
        if key == entry.key and not (entry.current or entry.failed):
            entry.props, entry.error, entry.error_key = props, None, ""
            await anyio.to_thread.run_sync(self.store.put_probe, key, props)

    def _failed(self, entry: Entry, key: str, exc: ExtractionError, attempt: int = 0) -> None:
        if key != entry.key:
            return
        entry.error = exc
        if not self._maybe_retry(entry, exc, attempt):
            self._record_failure(entry, key, exc)

    async def _ensure_outline(self, entry: Entry) -> None:
        """Make the outline current, or leave the last good one to be served.

        A file caught mid-write with no last good version makes the read wait (at most
        `READ_WAIT` seconds) until a version reads: retries run as the file settles.
        """
        deadline = anyio.current_time() + READ_WAIT
        while not (entry.current or entry.failed):
            if entry.outline is not None and (entry.error is not None or entry.busy):
                return  # a refresh or a retry is under way: the last good version is served
            if entry.error is not None:
                await self._wait_for_retry(entry, deadline)
            else:
                async with entry.held():
                    if not (entry.current or entry.failed or entry.error is not None):
                        await self._extract_locked(entry)
            if entry.outline is not None or anyio.current_time() >= deadline:
                return

    async def _extract_document(self, entry: Entry) -> Document:
        """The whole document; a large pdf or pptx in page chunks across the workers."""
        ways = self.backend.parallelism
        count = entry.props.page_count if entry.props else 0
        if (
            not is_paged(entry.rel)
            or ways < 2
            or not CHUNK_MIN_PAGES <= count <= DEFAULT_LIMITS.max_pages
            or entry.props is None
        ):
            return await self.backend.extract(self.root, entry.rel)
        size = -(-count // ways)
        chunks = [list(range(i, min(i + size, count))) for i in range(0, count, size)]
        parts: list[list[Page]] = [[] for _ in chunks]
        failures: list[ExtractionError] = []

        async def run(i: int) -> None:
            try:
                parts[i] = await self.backend.extract_pages(self.root, entry.rel, chunks[i])
            except ExtractionError as exc:
                # The document's error, raised below as itself (a task group would wrap it in
                # an exception group that no caller expects); the other chunks are wasted.
                failures.append(exc)
                tg.cancel_scope.cancel()

        async with anyio.create_task_group() as tg:
            for i in range(len(chunks)):
                tg.start_soon(run, i)
        if failures:
            raise failures[0]
        pages = sorted((p for part in parts for p in part), key=lambda p: p.page_index)
        if [p.page_index for p in pages] != list(range(count)):
            return await self.backend.extract(self.root, entry.rel)
        # What the extractors say of a whole document read within max_pages: truncated when
        # a cap stopped a page.
        cut = any(p.metadata.get("truncated") for p in pages)
        return Document(entry.props, tuple(pages), {"truncated": True} if cut else {})

    async def _extract_pages(self, entry: Entry, indices: tuple[int, ...]) -> list[Page]:
        """Pages of a document not yet extracted, stored unless the file changed meanwhile.
        With a shared store the job is claimed first: one replica extracts those pages, the
        others wait for it and read them from the store."""
        key = entry.key
        job = pages_job(key, indices)

        def extracted_there() -> list[Page] | None:
            stored = [self.store.page(key, i) for i in indices]
            return cast(list[Page], stored) if all(p is not None for p in stored) else None

        stored, leased = await self._claimed(entry, key, job, extracted_there)
        if stored is not None:
            return stored
        work = self.backend.extract_pages(self.root, entry.rel, indices)
        try:
            pages = await self._leased(job if leased else None, work)
        except ExtractionError:
            if leased is not None:  # anyone may try again
                await anyio.to_thread.run_sync(leased.release, job)
            raise
        if key == entry.key:  # else these pages are of a version no longer served
            await anyio.to_thread.run_sync(self.store.put_pages, key, pages)
        if leased is not None:
            await anyio.to_thread.run_sync(leased.finish, job)
        return pages

    async def _claimed(
        self, entry: Entry, key: str, job: str, done_there: Callable[[], T | None]
    ) -> tuple[T | None, SharedStore | None]:
        """With a shared store, claim `job` (a job on version `key` of the entry's file) before
        doing it: while another replica holds it, wait; once one has done it, what
        `done_there` reads of it from the store (blocking; None: not all there, forgotten
        since). Else None, and the store to lease the job from while doing it here (None: no
        shared store, or the file changed meanwhile)."""
        shared, claim = self.shared, Claim.CLAIMED
        while shared is not None and key == entry.key:
            claim = await anyio.to_thread.run_sync(shared.claim, job)
            if claim is Claim.DONE:
                found = await anyio.to_thread.run_sync(done_there)
                if found is not None:
                    return found, None
            if claim is not Claim.BUSY:
                break  # claimed, or done but forgotten since: done here
            await anyio.sleep(CLAIM_POLL)
        return None, shared if shared is not None and claim is Claim.CLAIMED else None

    async def _leased(self, job: str | None, work: Awaitable[T]) -> T:
        """Await `work`, renewing this replica's lease on `job` meanwhile (None: unclaimed)."""
        if job is None or self.shared is None:
            return await work
        done: list[T] = []
        failure: Exception | None = None
        async with anyio.create_task_group() as lease:
            lease.start_soon(self._keep_lease, self.shared, job)
            try:
                done.append(await work)
            except Exception as exc:  # raised below as itself, not in the group's wrapping
                failure = exc
            lease.cancel_scope.cancel()
        if failure is not None:
            raise failure
        return done[0]

    async def _extract_locked(self, entry: Entry, attempt: int = 0) -> bool:
        try:
            return await self._extract_claimed(entry, attempt)
        finally:
            self._wake_ocr()

    async def _extract_claimed(self, entry: Entry, attempt: int) -> bool:
        key = entry.key
        if not await self._claim(entry, key):
            return entry.current  # another replica extracted it: restored from the store
        doc, failure = None, None
        try:
            doc = await self._leased(key, self._extract_document(entry))
        except ExtractionError as exc:
            failure = exc
        if doc is None:
            assert failure is not None
            self._failed(entry, key, failure, attempt)
            if self.shared is not None and (failure.transient or entry.error_key != key):
                # Not recorded (a retry is pending, or it may pass): anyone may try again.
                await anyio.to_thread.run_sync(self.shared.release, key)
            if entry.failed and entry.outline is not None and entry.outline_key != key:
                entry.outline, entry.outline_key = None, ""
            return False
        # A read recognising one of its pending pages: waited for, so it is kept, not redone.
        for index in ocr_states.pending_pages(doc.pages):
            running = self._recognising.get((key, index))
            if running is not None:
                await running.wait()
        kept, outline = await anyio.to_thread.run_sync(self._put_extracted, entry, key, doc)
        return self._adopt(entry, key, kept, outline)  # under the entry's lock

    async def _claim(self, entry: Entry, key: str) -> bool:
        """Whether this replica is to extract `key` (always, unless the store is shared);
        False once another replica has, its result restored into the entry. A job another
        replica holds is waited for, and taken over when its lease expires."""
        shared = self.shared
        if shared is None:
            return True
        while True:
            claim = await anyio.to_thread.run_sync(shared.claim, key)
            if claim is Claim.CLAIMED:
                return True
            if claim is Claim.DONE:
                await anyio.to_thread.run_sync(self._restore, entry)
                # Gone from the store meanwhile (forgotten): extracted again here.
                return not (entry.current or entry.failed)
            if key != entry.key:
                return False  # the file changed again: this version is no longer wanted
            await anyio.sleep(CLAIM_POLL)

    @staticmethod
    async def _keep_lease(shared: SharedStore, key: str) -> None:
        """Renew this replica's lease on `key` while it extracts it."""
        while True:
            await anyio.sleep(shared.lease / 3)
            await anyio.to_thread.run_sync(shared.renew, key)

    async def _wait_for_retry(self, entry: Entry, deadline: float) -> None:
        """Wait for the pending retry of `entry` to run (or the deadline)."""
        event, remaining = entry.retried, deadline - anyio.current_time()
        if event is None or event.is_set():
            await anyio.sleep(min(0.1, max(remaining, 0)))  # a rescan is about to retry
            return
        with anyio.move_on_after(max(remaining, 0)):
            await event.wait()

    def _maybe_retry(self, entry: Entry, exc: ExtractionError, attempt: int) -> bool:
        """Schedule another attempt when the failure may be a file caught mid-write."""
        fresh = _fresh(entry.stat)
        if not (exc.transient or fresh) or attempt >= len(RETRY_DELAYS) or self._tg is None:
            return False
        log.info(
            "%s could not be read (%s); trying again in %g s (attempt %d of %d)",
            entry.rel,
            exc.message,
            RETRY_DELAYS[attempt],
            attempt + 1,
            len(RETRY_DELAYS),
        )
        key = entry.key
        done = entry.retried = anyio.Event()

        async def again() -> None:
            try:
                await anyio.sleep(RETRY_DELAYS[attempt])
                if entry.key != key or self._entries.get(entry.rel) is not entry:
                    return
                before = _listing(self.info_of(entry))
                async with entry.held():
                    if entry.key != key or entry.current:
                        return
                    if not (await self._extract_locked(entry, attempt + 1) or entry.failed):
                        return
                await self._announce_entry(entry, before)
            finally:
                done.set()

        self._in_background(again)
        return True

    # ---- changes -------------------------------------------------------------------------

    async def rescan(self, paths: Collection[str] | None = None, *, publish: bool = True) -> Change:
        """Compare the folder with the catalog; update it; announce and return what changed;
        `publish` it to the other replicas too (a shared store) unless they told us.

        `paths` (relative, POSIX): compare only these paths and what is below them (what a
        watcher or another replica says changed); None compares the whole folder.
        """
        if paths is None:
            found = scan(self.root)
            known: Collection[str] = self._entries
        else:
            found, subtrees = await anyio.to_thread.run_sync(scan_paths, self.root, paths)
            known = {rel for rel in paths if rel in self._entries}
            below = tuple(f"{rel}/" for rel in subtrees if rel not in self._entries)
            if below:
                known |= {rel for rel in self._entries if rel.startswith(below)}
        added = [rel for rel in found if rel not in self._entries]
        removed = [rel for rel in known if rel not in found]
        keys = {
            rel: self._key(rel, st)
            for rel, st in found.items()
            if rel in self._entries and _may_have_changed(self._entries[rel].stat, st)
        }
        changed = [rel for rel, key in keys.items() if key != self._entries[rel].key]
        for rel in removed:
            self._drop(self._entries[rel])
        new_entries = [self._add(rel, found[rel]) for rel in added]
        async with anyio.create_task_group() as tg:
            for entry in new_entries:
                if not self._restore(entry):
                    tg.start_soon(self._probe, entry)
        self._warm_later(new_entries)
        refreshed = [self._entries[rel] for rel in changed]
        for entry in refreshed:
            entry.stat, entry.key = found[entry.rel], keys[entry.rel]
        listed = bool(added or removed)
        if refreshed and self._tg is not None:
            self._in_background(functools.partial(self._refresh_all, refreshed, listed))
        elif refreshed:
            await self._refresh_all(refreshed, listed)
        elif listed:
            await self._announce(Change(list_changed=True))
        if publish and self.shared is not None and (added or removed or changed):
            await anyio.to_thread.run_sync(self.shared.publish, [*added, *removed, *changed])
        return Change(listed, frozenset(e.doc_ref for e in refreshed))

    async def follow(self) -> None:
        """Rescan whenever another replica sharing the store saw a change, until cancelled
        (a replica that does not watch the folder still tells its sessions)."""
        if self.shared is None:
            return

        async def changed(rels: list[str] | None) -> None:
            try:
                await self.rescan(rels, publish=False)
            except Exception:
                log.exception("rescan of %s failed; will retry on the next change", self.root)

        await self.shared.follow(changed)

    async def _refresh_all(self, entries: Sequence[Entry], list_changed: bool) -> None:
        """Re-read the files a rescan found changed, all at once, then announce them in one
        change, with the list's when it changed (the last good versions are served meanwhile).
        One announcement, not one a file: each has every subscription matched against it."""
        updated: set[str] = set()

        async def one(entry: Entry) -> None:
            nonlocal list_changed
            try:
                listed = await self._refresh_changed(entry)
            except Exception:  # a failure of ours costs this file, not the others' news
                log.exception(
                    "re-reading %s failed; it is read again when it next changes", entry.rel
                )
                return
            if listed is not None:
                updated.add(entry.doc_ref)
                list_changed |= listed

        async with anyio.create_task_group() as tg:
            for entry in entries:
                tg.start_soon(one, entry)
        if updated or list_changed:
            await self._announce(Change(list_changed, frozenset(updated)))

    async def _refresh_changed(self, entry: Entry) -> bool | None:
        """Re-read a changed file: whether what the list shows of it changed; None when it
        changed again meanwhile (the rescan that saw that announces it)."""
        key = entry.key
        before = _listing(self.info_of(entry))
        async with entry.held():
            if key != entry.key:
                return None
            if not self._restore(entry):
                await self._probe(entry)
                if entry.error is None and entry.outline is not None:
                    await self._extract_locked(entry)
                elif entry.failed:
                    entry.outline, entry.outline_key = None, ""
            elif self.shared and entry.error is None and entry.outline and not entry.current:
                # Only another replica's probe of this version: it is extracting it. Wait for
                # its result (or take the job over), so that the new version is announced.
                await self._extract_locked(entry)
        if key != entry.key:
            return None
        if not (entry.current or entry.failed or entry.error is not None):
            self._warm_later([entry])  # repaired, or only probed so far: extract it
        return _listing(self.info_of(entry)) != before

    async def _announce_entry(self, entry: Entry, before: tuple[object, ...]) -> None:
        """A document's content changed; the list did too when what it shows of it did."""
        listed = _listing(self.info_of(entry)) != before
        await self._announce(Change(list_changed=listed, updated=frozenset({entry.doc_ref})))

    async def _announce(self, change: Change) -> None:
        self._wake_ocr()  # what changed may have pages to recognise (restored or extracted)
        if change.list_changed:
            self.listing_version += 1
        if self.on_change is not None:
            try:
                await self.on_change(change)
            except Exception:  # a listener's failure must not stop the catalog
                log.exception("change listener failed")
