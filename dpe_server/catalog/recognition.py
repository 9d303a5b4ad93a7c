"""Pages extraction left to recognise (OCR), and the queue they wait in.

Extraction leaves the pdf pages to recognise, and the pages whose pictures are to be (docx,
pptx, xlsx), `ocr: "pending"`. A document whose current outline lists such pages is queued
(`_settle`); once the warm-up has extracted every document, `recognise_pending` recognises them
in the background, one job per page (its own deadline), most recently modified document first,
on every worker; a page a client reads is recognised at once, ahead of that queue
(`_recognise`, the `Recognise` step). Each recognised page is stored like any page and announced
as an update of its document; with a store shared by replicas, each page's job is claimed
first (`claims`), so one replica recognises it.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable
from pathlib import Path
from typing import cast

import anyio
import anyio.to_thread

from dpe_server.catalog.announce import Announcing, Change, ChangeListener, listing
from dpe_server.catalog.claims import Claims
from dpe_server.catalog.index import E, pending_pages
from dpe_server.catalog.index import Entry as IndexEntry
from dpe_server.catalog.recent import RecentFirst
from dpe_server.catalog.shared import SharedStore, recognise_job
from dpe_server.catalog.store import Cached, Outline, Store
from dpe_server.extractors import Limits
from dpe_server.extractors.ocr import states as ocr_states
from dpe_server.isolation.backends import Backend
from dpe_server.model.errors import DpeError
from dpe_server.model.tree import Document, Page

log = logging.getLogger(__name__)

WARM_CONCURRENCY = max(1, (os.cpu_count() or 2) - 1)
"""The warm-up's extractions at once: one core is left for what clients ask for. (Pages are
recognised on every worker: `recognise_pending`.)"""


class Recognition(Announcing[E]):
    """An index whose pending pages are recognised, in the background or as they are read."""

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
        self.shared = self.store if isinstance(self.store, SharedStore) else None
        """The work queue and change feed of replicas sharing the store, if it is shared."""
        self.claims = Claims(self.shared)
        self._warm_limiter = anyio.Semaphore(WARM_CONCURRENCY)
        """Held by each of the warm-up's extractions."""
        self._ocr_slots = anyio.Semaphore(max(1, backend.parallelism))
        """Held by each page the background pass recognises: one a worker."""
        self._ocr_todo: RecentFirst[E] = RecentFirst()
        """Documents with pages to recognise (`ocr: "pending"`), for `recognise_pending`."""
        self._ocr_more = anyio.Event()
        self._recognising: dict[tuple[str, int], anyio.Event] = {}
        """Pages being recognised (store key, page index), set when done."""

    # What is kept of a document once its outline is of the file as it is now is the outline:
    # the probe's properties say nothing more (the next version is probed again).

    # A document with pages to recognise keeps its properties until they are: its outline is
    # derived again from the recognised text then (`_settled_outline`).

    def _apply(self, entry: IndexEntry, cached: Cached | None) -> bool:
        known = super()._apply(entry, cached)
        self._settle(cast(E, entry))
        return known

    def _adopt(self, entry: IndexEntry, key: str, doc: Document, outline: Outline) -> bool:
        current = super()._adopt(entry, key, doc, outline)
        self._settle(cast(E, entry))
        return current

    def _settle(self, entry: E) -> None:
        """A current outline: queue its pages to recognise, else drop the properties."""
        if not entry.current:
            return
        if pending_pages(entry.outline):
            # (maybe in a thread: the loop is woken by its caller)
            self._ocr_todo.add(entry, entry.stat.mtime_ns)
        else:
            entry.props = None

    def indexing(self, file_type: str = "", doc_ref: str = "") -> int:
        """Documents not yet extracted, or with pages not yet recognised."""
        waiting = [e for e in self._ocr_todo if e.current and self._entries.get(e.rel) is e]
        return super().indexing(file_type, doc_ref) + sum(
            1 for e in waiting if self._in_scope(e, file_type, doc_ref)
        )

    # ---- the queue ------------------------------------------------------------------------

    async def recognise_pending(self, *, forever: bool = False) -> None:
        """Recognise every page waiting to be (the background OCR pass, after the warm-up):
        most recently modified document first, one job per page, as many at once as the
        backend has workers (`Backend.parallelism`: pages of one document or of several; a
        read recognises the page it reads at once, beside these). `forever`: then wait for
        more (documents extracted or changed later)."""
        async with anyio.create_task_group() as tg:
            while True:
                while (taken := self._ocr_todo.take()) is not None:
                    started = anyio.Event()
                    tg.start_soon(self._recognise_document, *taken, started)
                    await started.wait()  # its pages have each a worker: take the next
                if not forever:
                    return
                self._ocr_more = anyio.Event()
                if not self._ocr_todo.queued():
                    await self._ocr_more.wait()

    def _wake_ocr(self) -> None:
        if self._ocr_todo.queued():
            self._ocr_more.set()

    async def _recognise_document(self, entry: E, mtime: int, started: anyio.Event) -> None:
        """Recognise the pending pages of `entry` (taken from the queue under `mtime`), each
        once a worker is free (`started` is set when every one of them has one), then tell the
        queue it is done."""

        async def one(index: int) -> None:
            try:
                if self._entries.get(entry.rel) is not entry or not entry.current:
                    return  # gone, or changed: its new version is queued when extracted
                try:
                    key, page = await self.run_steps(
                        self._keyed_page(entry, index)
                    )  # a read recognises it
                except DpeError as exc:
                    log.info("page %d of %s not recognised: %s", index, entry.rel, exc.message)
                    return
                except Exception:  # a failure of ours costs this page, not the server
                    log.exception("page %d of %s not recognised", index, entry.rel)
                    return
                if not ocr_states.is_pending(page.metadata):
                    # Recognised meanwhile by another replica sharing the store: listed so.
                    self._recognised_outline(entry, key, page)
            finally:
                self._ocr_slots.release()

        try:
            async with anyio.create_task_group() as tg:
                for index in pending_pages(entry.outline):
                    await self._ocr_slots.acquire()
                    tg.start_soon(one, index)
                started.set()
        finally:
            started.set()
            self._ocr_todo.done(entry, mtime)

    async def _recognise(self, entry: E, key: str, page: Page) -> Page:
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
            before = listing(self.info_of(entry))
            settled = await anyio.to_thread.run_sync(self._settled_outline, entry, key)
            if settled is not None and entry.outline_key == key:
                entry.outline, entry.props = settled, None
                await anyio.to_thread.run_sync(self.store.put_document, key, settled, [])
            await self._announce_entry(entry, before)
        return found

    async def _recognised(
        self, entry: E, key: str, page: Page
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

        stored, leased = await self.claims.job(entry, key, job, recognised_there)
        if stored is not None:  # recognised (or failed) by another replica
            self.pages_lru.put(key, stored)
            return stored, self._recognised_outline(entry, key, stored)
        work = self._recognition(self.backend.recognise(self.root, entry.rel, index), page)
        found = await self.claims.leased(job if leased else None, work)
        if found is None:
            if leased is not None:  # anyone may try again
                await anyio.to_thread.run_sync(leased.release, job)
            return None
        outline = self._recognised_outline(entry, key, found)
        await anyio.to_thread.run_sync(self._keep_recognised, entry, key, found, outline)
        if leased is not None:
            await anyio.to_thread.run_sync(leased.finish, job)
        return found, outline

    async def _recognitions_of(self, key: str, indices: Iterable[int]) -> None:
        """Wait for the recognitions under way of these pages of version `key` (a read
        recognising one of them: what it recognises is kept, not redone)."""
        for index in indices:
            running = self._recognising.get((key, index))
            if running is not None:
                await running.wait()

    async def _announce(self, change: Change) -> None:
        self._wake_ocr()  # what changed may have pages to recognise (restored or extracted)
        await super()._announce(change)
