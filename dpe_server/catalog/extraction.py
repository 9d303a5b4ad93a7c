"""Extraction: the start-up listing, the background warm-up, and extraction on demand.

Lazy and cached: start-up lists every file from the store (a restart) or a cheap probe (page
count, properties); full extraction runs in the background (`warm`, most recently modified
first) and on demand for whatever a client reads, one page at a time where the format allows
it (the `steps` each read is made of are performed here: `_perform`). A large pdf or pptx is
extracted in chunks across the workers. One extraction of a file at a time (its `Entry`'s
lock); with a store shared by replicas, each is claimed first (`claims`), so one replica
extracts a version and the others read it from the store. A failure on a file that was just
written is retried with backoff (it may be half-written); after the retries its error is
listed.
"""

from __future__ import annotations

import functools
import logging
import random
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar, assert_never, cast

import anyio
import anyio.to_thread
from anyio.abc import TaskGroup

from dpe_server.catalog import children as kids
from dpe_server.catalog.announce import Change, ChangeListener, listing
from dpe_server.catalog.folder import FileStat, scan
from dpe_server.catalog.index import Entry as IndexEntry
from dpe_server.catalog.recognition import WARM_CONCURRENCY, Recognition
from dpe_server.catalog.shared import pages_job
from dpe_server.catalog.steps import MakeCurrent, PagesJob, Probe, Recognise, Step, StoreCall
from dpe_server.catalog.store import Cached, Store
from dpe_server.extractors import DEFAULT_LIMITS, Limits, is_paged
from dpe_server.extractors.gcpause import collector_paused
from dpe_server.extractors.ocr import states as ocr_states
from dpe_server.isolation.backends import Backend
from dpe_server.model import children
from dpe_server.model.errors import ExtractionError
from dpe_server.model.tree import JSON, Document, Page

log = logging.getLogger(__name__)

RETRY_FIRST_S = 1.0
RETRY_LAST_S = 60.0
"""The first and the longest pause before building again the search rows of a stored version
that could not all be written (`Extraction._build_unindexed`)."""
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
PROBES_AT_ONCE = 16
"""Probes under way at once while the catalog starts (each waits for a worker)."""


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


def fresh(st: FileStat) -> bool:
    """Modified within the last `FRESH_SECONDS`."""
    return time.time() - st.mtime_ns / 1e9 < FRESH_SECONDS


class Extraction(Recognition[Entry]):
    """An index whose documents are extracted: at start, in the background, as they are read."""

    def __init__(
        self,
        root: Path,
        host: str,
        backend: Backend,
        store: Store,
        *,
        limits: Limits,
        on_change: ChangeListener | None,
    ) -> None:
        super().__init__(root, host, backend, store, limits=limits, on_change=on_change)
        self._tg: TaskGroup | None = None
        self.scanned = 0
        self.probed = 0
        self.warm_count = 0
        """Documents the warm-up has gone through so far (extracted, failed or skipped)."""
        self.listed = anyio.Event()
        """Set once every file found at start is listed: restored from the store, or listed
        `indexing` until its probe answers (reads wait for this, never for the probes)."""
        self._warming = False
        self.warmed = anyio.Event()
        """Set once the start-up warm-up has extracted (or failed) every file found at start."""
        self._unindexed: deque[Entry] = deque()
        """Entries restored serving a version stored without its search rows, whose rows are
        to be built (`_index_later`); filled maybe in a thread (a restore), taken on the loop."""
        self._indexing = False
        """`_build_unindexed` runs."""

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
        self._index_later()

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

    async def _warm(self, entries: Sequence[Entry], list_changed: bool = False) -> None:
        """Extract `entries`, then say the list changed when what it shows of any did, or
        `list_changed` (files came or went, told once they are read: `rescan`)."""
        refined = list_changed
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
                        if not wait and await self.claims.taken(entry.key):
                            taken.append(entry)  # counted when waited for
                            deferred = True
                            return
                        before = listing(self.info_of(entry))
                        await self._ensure_outline(entry)
                        refined |= listing(self.info_of(entry)) != before
                finally:
                    if not deferred:
                        self.warm_count += 1

        todo = [e for e in entries if not (e.current or e.failed)]
        self.warm_count += len(entries) - len(todo)  # restored: nothing to do (no task each)
        if self.claims.shared is None:  # (a shared store claims each child on its own)
            await _each(kids.batches(todo), self._extract_batch, WARM_CONCURRENCY)
        for batch, wait in ((todo, False), (taken, True)):
            await _each(list(batch), functools.partial(one, wait=wait), WARM_CONCURRENCY)
        if refined:
            # Titles and summaries derived from the content differ from the probe's: the list
            # changed (a Level 1 read never showed the probe's, so no document-level update).
            await self._announce(Change(list_changed=True))

    async def _extract_batch(self, batch: Sequence[Entry]) -> None:
        """Extract children of one container in one job (docs/children.md): stored in one
        transaction, each adopted unless a read extracted it meanwhile. A child the job did
        not reach, whose error may pass or depends on the limits, or the whole batch when its
        job failed (a child that crashed or hung its worker), is left to the warm-up's job of
        its own."""
        async with self._warm_limiter:
            wanted = [e for e in batch if self._waits(e)]
            if len(wanted) < 2:
                return
            keys = {e.rel: e.key for e in wanted}
            container = children.container_of(wanted[0].rel)
            paths = [children.path_in(e.rel) for e in wanted]
            try:
                results = await self.backend.extract_children(self.root, container, paths)
            except ExtractionError as exc:
                log.info(
                    "%d documents inside %s not read together (%s); each is read alone",
                    len(wanted),
                    container,
                    exc.message,
                )
                return
        by_path = dict(zip(paths, wanted, strict=True))
        docs: list[tuple[Entry, str, Document]] = []
        for path, got in results:
            entry = by_path[path]
            key = keys[entry.rel]
            if entry.key != key or not self._waits(entry):
                continue
            if isinstance(got, ExtractionError):
                if not (got.transient or got.bound):
                    self._failed(entry, key, got)
                continue
            await self._recognitions_of(key, ocr_states.pending_pages(got.pages))
            docs.append((entry, key, got))
        stored = await anyio.to_thread.run_sync(self._put_extracted_many, docs)
        for (entry, key, _), (kept, outline) in zip(docs, stored, strict=True):
            if entry.key == key and self._waits(entry):
                self._adopt(entry, key, kept, outline)
        self._wake_ocr()
        self._index_later()

    def _waits(self, entry: Entry) -> bool:
        """Listed, and neither extracted, failed, nor being extracted or retried."""
        return (
            self._entries.get(entry.rel) is entry
            and not (entry.current or entry.failed or entry.busy)
            and entry.error is None
        )

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

    def _children_found(self, entry: IndexEntry, fresh: list[Entry], listed: bool) -> None:
        """Extract the new children in the background (once the warm-up runs), and say the
        list changed when any came or went."""
        self._warm_later(fresh)
        if listed and self._tg is not None:
            self._in_background(functools.partial(self._announce, Change(list_changed=True)))

    def _new_entry(self, rel: str, doc_ref: str, st: FileStat, key: str) -> Entry:
        return Entry(rel, doc_ref, st, key)

    # ---- versions stored without their search rows (`dpe-server read`) -------------------

    def _apply(self, entry: IndexEntry, cached: Cached | None) -> bool:
        known = super()._apply(entry, cached)
        if entry.searched_later:  # (maybe in a thread: started by the caller's `_index_later`)
            self._unindexed.append(cast(Entry, entry))
        return known

    def _index_later(self) -> None:
        """Build, in the background, the search rows of the versions restored without them
        (`Cached.unindexed`: stored by `dpe-server read`), one version at a time; each is
        counted among the documents still being read (`indexing`) until its rows are built."""
        if self._unindexed and not self._indexing and self._tg is not None:
            self._indexing = True
            self._in_background(self._build_unindexed)

    async def _build_unindexed(self) -> None:
        """`_index_later`'s work. A version whose rows could not all be written (the cache
        busy past its wait, read-only, or a failure of ours) stays waited for and is tried
        again once the others are done, after `RETRY_FIRST_S`, twice as long each time up to
        `RETRY_LAST_S`: its words are never given up silently."""
        pause = RETRY_FIRST_S
        try:
            while self._unindexed:
                failed: list[Entry] = []
                while self._unindexed:
                    entry = self._unindexed.popleft()
                    key = entry.unindexed
                    if not (entry.searched_later and self._entries.get(entry.rel) is entry):
                        continue  # (another version since, or gone)
                    if not await self._index_stored(key):
                        failed.append(entry)
                    elif entry.unindexed == key:
                        entry.unindexed = ""  # no longer waited for (`Entry.settle`)
                if failed:
                    await anyio.sleep(pause)
                    pause = min(2 * pause, RETRY_LAST_S)
                    self._unindexed.extend(failed)
        finally:
            self._indexing = False

    async def _index_stored(self, key: str) -> bool:
        """`Store.index_stored` in a thread: False when the rows must be built again later."""
        try:
            return await anyio.to_thread.run_sync(self.store.index_stored, key)
        except Exception:  # a failure of ours costs a try, not the version's words
            log.exception("the search rows of a stored version could not be built; retrying")
            return False

    async def _announce(self, change: Change) -> None:
        self._index_later()  # what changed may have been restored so (a rescan)
        await super()._announce(change)

    # ---- the steps of a read (`steps`) -----------------------------------------------------

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
        meta: dict[str, JSON] = {"truncated": True} if cut else {}
        if entry.props.extra.get("children"):  # what it holds, which the probe listed
            meta["children"] = entry.props.extra["children"]
        return Document(entry.props, tuple(pages), meta)

    async def _extract_pages(self, entry: Entry, indices: tuple[int, ...]) -> list[Page]:
        """Pages of a document not yet extracted, stored unless the file changed meanwhile.
        With a shared store the job is claimed first: one replica extracts those pages, the
        others wait for it and read them from the store."""
        key = entry.key
        job = pages_job(key, indices)

        def extracted_there() -> list[Page] | None:
            stored = [self.store.page(key, i) for i in indices]
            return cast(list[Page], stored) if all(p is not None for p in stored) else None

        stored, leased = await self.claims.job(entry, key, job, extracted_there)
        if stored is not None:
            return stored
        work = self.backend.extract_pages(self.root, entry.rel, indices)
        try:
            pages = await self.claims.leased(job if leased else None, work)
        except ExtractionError:
            if leased is not None:  # anyone may try again
                await anyio.to_thread.run_sync(leased.release, job)
            raise
        if key == entry.key:  # else these pages are of a version no longer served
            await anyio.to_thread.run_sync(self.store.put_pages, key, pages)
        if leased is not None:
            await anyio.to_thread.run_sync(leased.finish, job)
        return pages

    async def _extract_locked(self, entry: Entry, attempt: int = 0) -> bool:
        try:
            return await self._extract_claimed(entry, attempt)
        finally:
            self._wake_ocr()
            self._index_later()  # its children may have been restored so

    async def _extract_claimed(self, entry: Entry, attempt: int) -> bool:
        key = entry.key
        if not await self.claims.extraction(entry, key, self._restore):
            return entry.current  # another replica extracted it: restored from the store
        doc, failure = None, None
        try:
            doc = await self.claims.leased(key, self._extract_document(entry))
        except ExtractionError as exc:
            failure = exc
        if doc is None:
            assert failure is not None
            self._failed(entry, key, failure, attempt)
            if failure.transient or entry.error_key != key:
                # Not recorded (a retry is pending, or it may pass): anyone may try again.
                await self.claims.release(key)
            if entry.failed and entry.outline is not None and entry.outline_key != key:
                entry.outline, entry.outline_key = None, ""
            return False
        # A read recognising one of its pending pages: waited for, so it is kept, not redone.
        await self._recognitions_of(key, ocr_states.pending_pages(doc.pages))
        kept, outline = await anyio.to_thread.run_sync(self._put_extracted, entry, key, doc)
        return self._adopt(entry, key, kept, outline)  # under the entry's lock

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
        retried = exc.transient or fresh(entry.stat)
        if not retried or attempt >= len(RETRY_DELAYS) or self._tg is None:
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
                before = listing(self.info_of(entry))
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
