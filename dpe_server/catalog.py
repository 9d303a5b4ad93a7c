"""The catalog: the only owner of state. Which files exist, their doc_refs, their outlines
(derived title, keywords, summary, page index) or their errors. Handlers ask it; the watcher
tells it (`rescan`); it tells whoever listens (`on_change`) which documents changed, and never
knows about sessions.

Lazy and cached: start-up lists every file from the store (a restart) or a cheap probe (page
count, properties); full extraction runs in the background (`warm`, most recently modified
first) and on demand for whatever a client reads, one page at a time where the format allows
it. Page bodies live in the `Store`, not here, so memory grows by headers only.

Freshness: a changed file is probed and re-extracted in the background while the last good
outline and pages keep being served; when the new ones are ready the change is announced. A
failure on a file that was just written is retried with backoff (it may be half-written);
after the retries its error is listed.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath

import anyio
import anyio.to_thread
from anyio.abc import TaskGroup

from dpe_server.backends import Backend
from dpe_server.errors import (
    DocumentNotFound,
    ElementNotFound,
    ExtractionError,
    PageNotFound,
    extraction_error,
)
from dpe_server.extractors import (
    DEFAULT_LIMITS,
    PAGED_TYPES,
    extractor_fingerprint,
    file_type,
)
from dpe_server.metadata import derive_keywords, derive_summary, derive_title
from dpe_server.model import Document, Element, Page, Properties, page_of_element_id
from dpe_server.paths import FileStat, doc_ref_for, stat_confined, walk
from dpe_server.store import MemoryStore, Outline, PageCache, Store, cache_key
from dpe_server.uri import format_uri
from dpe_server.views import DocumentInfo, PageInfo

log = logging.getLogger(__name__)

RETRY_DELAYS = (0.5, 1.0, 2.0, 4.0, 8.0)
"""Seconds between attempts at a file that failed while it may still be being written."""
FRESH_SECONDS = 5.0
"""A file modified this recently may be half-written: its failures are retried."""
READ_WAIT = 15.0
"""Seconds a read of a file caught mid-write, with no last good version, waits to settle."""
CHUNK_MIN_PAGES = 24
"""A pdf or pptx with this many pages is extracted in chunks, one per worker, in parallel."""
WARM_CONCURRENCY = max(1, (os.cpu_count() or 2) - 1)
"""Background extractions at once: one core is left for what clients ask for."""


@dataclass(frozen=True, slots=True)
class Change:
    """What changed in one step: the set of documents, and/or these documents' contents."""

    list_changed: bool = False
    updated: frozenset[str] = frozenset()


ChangeListener = Callable[[Change], Awaitable[None]]


@dataclass(eq=False)
class Entry:
    rel: str
    doc_ref: str
    stat: FileStat
    key: str
    """The store key of the file as it is now."""
    props: Properties | None = None
    error: ExtractionError | None = None
    error_key: str = ""
    outline: Outline | None = None
    outline_key: str = ""
    """The key `outline` (and the pages it serves) belong to: the last good version."""
    lock: anyio.Lock = field(default_factory=anyio.Lock)
    retried: anyio.Event | None = None
    """Set when the pending retry of a file caught mid-write has run."""

    @property
    def file_type(self) -> str:
        return file_type(self.rel)

    @property
    def stem(self) -> str:
        return PurePosixPath(self.rel).stem

    @property
    def current(self) -> bool:
        """True when the outline is of the file as it is now."""
        return self.outline is not None and self.outline_key == self.key

    @property
    def failed(self) -> bool:
        """True when the file as it is now cannot be read (and no retry is pending)."""
        return self.error is not None and self.error_key == self.key


def outline_of(doc: Document, entry: Entry) -> Outline:
    return Outline(
        title=derive_title(doc, entry.stem),
        keywords=derive_keywords(doc),
        summary=derive_summary(doc, entry.file_type),
        pages=tuple(PageInfo.of(p) for p in doc.pages),
        metadata=dict(doc.metadata),
    )


def _listing(info: DocumentInfo) -> tuple[object, ...]:
    """What resources/list shows of a document."""
    return (info.title, info.summary, info.keywords, info.page_count, info.error)


class Catalog:
    def __init__(
        self,
        root: Path,
        host: str,
        backend: Backend,
        on_change: ChangeListener | None = None,
        store: Store | None = None,
    ) -> None:
        self.root = root.resolve()
        self.host = host
        self.backend = backend
        self.on_change = on_change
        self.store: Store = store if store is not None else MemoryStore()
        self.pages_lru = PageCache()
        self._entries: dict[str, Entry] = {}
        self._by_ref: dict[str, Entry] = {}
        self._tg: TaskGroup | None = None
        self._fingerprint = extractor_fingerprint()
        self.scanned = 0
        self.probed = 0
        self.ready = anyio.Event()
        """Set once every file found at start is listed (from the store or a probe)."""

    # ---- life cycle ----------------------------------------------------------------------

    async def start(self, tg: TaskGroup | None = None, *, probe: bool = True) -> None:
        """Scan the folder; list each file from the store or a cheap probe.

        `probe=False` leaves probing to the first read of each document (one-shot readers
        such as `dpe-server read`, which need one document, not the folder's listing).
        """
        self._tg = tg
        found = {rel: st for rel in walk(self.root) if (st := stat_confined(self.root, rel))}
        entries = [self._add(rel, st) for rel, st in found.items()]
        self.scanned = len(entries)
        cached = await anyio.to_thread.run_sync(self._lookup_all, entries)
        limiter = anyio.Semaphore(16)

        async def probe_one(entry: Entry) -> None:
            async with limiter:
                await self._probe(entry)
            self.probed += 1

        async with anyio.create_task_group() as probes:
            for entry in entries:
                if entry.rel in cached or not probe:
                    self.probed += 1
                else:
                    probes.start_soon(probe_one, entry)
        self.ready.set()

    def _lookup_all(self, entries: list[Entry]) -> set[str]:
        """Restore what the store knows; returns the rels it knew."""
        known: set[str] = set()
        for entry in entries:
            if self._restore(entry):
                known.add(entry.rel)
        return known

    def _restore(self, entry: Entry) -> bool:
        cached = self.store.lookup(entry.key)
        if cached is None:
            return False
        if cached.error is not None:
            entry.error = extraction_error(str(cached.error["kind"]), str(cached.error["message"]))
            entry.error_key = entry.key
            return True
        if cached.props is None and cached.outline is None:
            return False
        entry.props = cached.props or entry.props
        if cached.outline is not None:
            entry.outline, entry.outline_key = cached.outline, entry.key
        return True

    async def warm(self) -> None:
        """Extract every document fully, most recently modified first (background warm-up)."""
        order = sorted(self._entries.values(), key=lambda e: -e.stat.mtime_ns)
        refined: set[str] = set()
        limiter = anyio.Semaphore(WARM_CONCURRENCY)

        async def one(entry: Entry) -> None:
            async with limiter:
                if self._entries.get(entry.rel) is not entry or entry.current or entry.failed:
                    return
                before = self.info_of(entry)
                await self._ensure_outline(entry)
                if _listing(self.info_of(entry)) != _listing(before):
                    refined.add(entry.doc_ref)

        async with anyio.create_task_group() as tg:
            for entry in order:
                tg.start_soon(one, entry)
        if refined:
            # Titles and summaries derived from the content differ from the probe's: the list
            # changed (a Level 1 read never showed the probe's, so no document-level update).
            await self._announce(Change(list_changed=True))

    def _key(self, rel: str, st: FileStat) -> str:
        return cache_key(str(self.root / rel), st.size, st.mtime_ns, st.inode, self._fingerprint)

    def _add(self, rel: str, st: FileStat) -> Entry:
        ref = doc_ref_for(rel)
        chars = 6
        while ref in self._by_ref and self._by_ref[ref].rel != rel:
            chars += 2
            ref = doc_ref_for(rel, chars)
        entry = Entry(rel, ref, st, self._key(rel, st))
        self._entries[rel] = entry
        self._by_ref[ref] = entry
        return entry

    # ---- queries -------------------------------------------------------------------------

    def entries(self) -> list[Entry]:
        return sorted(self._entries.values(), key=lambda e: e.rel)

    def documents(self) -> list[DocumentInfo]:
        """Every document, ordered by relative path."""
        return [self.info_of(e) for e in self.entries()]

    def entry(self, doc_ref: str, uri: str) -> Entry:
        entry = self._by_ref.get(doc_ref)
        if entry is None:
            raise DocumentNotFound(
                f"No document '{doc_ref}' on {self.host}; read dpe://{self.host} for the catalog.",
                uri,
            )
        return entry

    def info_of(self, entry: Entry) -> DocumentInfo:
        modified = datetime.fromtimestamp(entry.stat.mtime_ns / 1e9, UTC)
        common = {
            "doc_ref": entry.doc_ref,
            "file_uri": (self.root / entry.rel).as_uri(),
            "file_type": entry.file_type,
            "last_modified": modified.strftime("%Y-%m-%dT%H:%M:%SZ"),
        }
        if entry.outline is not None:
            o = entry.outline
            extra = {"truncated": True} if o.metadata.get("truncated") else {}
            return DocumentInfo(
                title=o.title,
                page_count=len(o.pages),
                keywords=o.keywords,
                summary=o.summary,
                extra=extra,
                **common,  # type: ignore[arg-type]
            )
        if entry.error is not None and (entry.failed or entry.props is None):
            return DocumentInfo(
                title=entry.stem,
                page_count=0,
                keywords=(),
                summary="",
                error=entry.error.to_json(),
                **common,  # type: ignore[arg-type]
            )
        props = entry.props
        return DocumentInfo(
            title=(props.title if props and props.title else entry.stem),
            page_count=props.page_count if props else 0,
            keywords=props.keywords if props else (),
            summary=(props.summary or "") if props else "",
            extra={"indexing": True},
            **common,  # type: ignore[arg-type]
        )

    def page_count(self, entry: Entry) -> int:
        """Pages of the last good version (while a failure is being retried, too)."""
        if entry.outline is not None:
            return len(entry.outline.pages)
        if entry.failed or entry.props is None:
            return 0
        return entry.props.page_count

    async def outline(self, doc_ref: str, uri: str) -> tuple[Entry, Outline | None]:
        """The document's outline (extracting it if needed); None when it cannot be read."""
        entry = self.entry(doc_ref, uri)
        await self._ensure_outline(entry)
        return entry, entry.outline

    async def page_infos(self, doc_ref: str, uri: str) -> list[PageInfo]:
        _, outline = await self.outline(doc_ref, uri)
        return list(outline.pages) if outline else []

    async def page(self, doc_ref: str, index: int, uri: str) -> Page:
        entry = self.entry(doc_ref, uri)
        await self._ensure_counted(entry)
        count = self.page_count(entry)
        if index >= count:
            last = f"pages 0 to {count - 1}" if count else "no pages"
            raise PageNotFound(
                f"Page {index} is out of range: '{doc_ref}' has {count} "
                f"page{'' if count == 1 else 's'} ({last}).",
                uri,
                count,
            )
        page = await self._load_page(entry, index)
        if page is None:
            raise PageNotFound(
                f"Page {index} of '{doc_ref}' could not be read; the file may have changed.",
                uri,
                self.page_count(entry),
            )
        return page

    async def _ensure_counted(self, entry: Entry) -> None:
        """Know the page count: from the outline, or (pdf, pptx) a probe, so that one page
        can be read without the others; other formats are extracted whole."""
        if entry.current or entry.failed:
            return
        if entry.file_type not in PAGED_TYPES:
            await self._ensure_outline(entry)
        elif entry.props is None and entry.outline is None:
            await self._probe(entry)

    async def _load_page(self, entry: Entry, index: int) -> Page | None:
        key = entry.outline_key if entry.outline is not None else entry.key
        page = self.pages_lru.get(key, index)
        if page is None:
            page = await anyio.to_thread.run_sync(self.store.page, key, index)
        if page is None and entry.outline is None and entry.file_type in PAGED_TYPES:
            try:
                pages = await self.backend.extract_pages(self.root, entry.rel, [index])
            except ExtractionError:
                await self._ensure_outline(entry)
                return await self._load_page(entry, index) if entry.outline else None
            await anyio.to_thread.run_sync(self.store.put_pages, entry.key, pages)
            page = next((p for p in pages if p.page_index == index), None)
        if page is None and entry.outline is not None:
            # The store lost it (evicted or unreadable): extract the document again.
            self.store.forget(entry.outline_key)
            entry.outline_key = ""
            await self._ensure_outline(entry)
            key = entry.outline_key
            page = await anyio.to_thread.run_sync(self.store.page, key, index)
        if page is not None:
            self.pages_lru.put(key, page)
        return page

    async def element(self, doc_ref: str, element_id: str, uri: str) -> tuple[int, Element]:
        entry = self.entry(doc_ref, uri)
        # Every id this server gives out names its page (p{page}-{abbr}{n}): another is unknown.
        hint = page_of_element_id(element_id)
        if hint is not None:
            await self._ensure_counted(entry)
        indices = [hint] if hint is not None and hint < self.page_count(entry) else []
        for index in indices:
            page = await self._load_page(entry, index)
            el = page.element(element_id) if page else None
            if el is not None:
                return index, el
        raise ElementNotFound(
            f"No element '{element_id}' in '{doc_ref}'; read "
            f"{format_uri(self.host, doc_ref, page_index=hint or 0)} "
            "for the element ids of a page.",
            uri,
        )

    # ---- extraction ----------------------------------------------------------------------

    async def _probe(self, entry: Entry) -> None:
        key = entry.key
        try:
            props = await self.backend.probe(self.root, entry.rel)
        except ExtractionError as exc:
            self._failed(entry, key, exc)
            return
        if key == entry.key:
            entry.props, entry.error, entry.error_key = props, None, ""
            await anyio.to_thread.run_sync(self.store.put_probe, key, props)

    def _failed(self, entry: Entry, key: str, exc: ExtractionError, attempt: int = 0) -> None:
        if key != entry.key:
            return
        entry.error = exc
        if self._maybe_retry(entry, exc, attempt):
            return
        entry.error_key = key
        if not exc.transient:
            self.store.put_error(key, exc.to_json())

    async def _ensure_outline(self, entry: Entry) -> None:
        """Make the outline current, or leave the last good one to be served.

        A file caught mid-write with no last good version makes the read wait (at most
        `READ_WAIT` seconds) until a version reads: retries run as the file settles.
        """
        deadline = anyio.current_time() + READ_WAIT
        while not (entry.current or entry.failed):
            if entry.outline is not None and (entry.error is not None or entry.lock.locked()):
                return  # a refresh or a retry is under way: the last good version is served
            if entry.error is not None:
                await self._wait_for_retry(entry, deadline)
            else:
                async with entry.lock:
                    if not (entry.current or entry.failed or entry.error is not None):
                        await self._extract_locked(entry)
            if entry.outline is not None or anyio.current_time() >= deadline:
                return

    async def _extract_document(self, entry: Entry) -> Document:
        """The whole document; a large pdf or pptx in page chunks across the workers."""
        ways = self.backend.parallelism
        count = entry.props.page_count if entry.props else 0
        if (
            entry.file_type not in PAGED_TYPES
            or ways < 2
            or not CHUNK_MIN_PAGES <= count <= DEFAULT_LIMITS.max_pages
            or entry.props is None
        ):
            return await self.backend.extract(self.root, entry.rel)
        size = -(-count // ways)
        chunks = [list(range(i, min(i + size, count))) for i in range(0, count, size)]
        parts: list[list[Page]] = [[] for _ in chunks]

        async def run(i: int) -> None:
            parts[i] = await self.backend.extract_pages(self.root, entry.rel, chunks[i])

        async with anyio.create_task_group() as tg:
            for i in range(len(chunks)):
                tg.start_soon(run, i)
        pages = sorted((p for part in parts for p in part), key=lambda p: p.page_index)
        if [p.page_index for p in pages] != list(range(count)):
            return await self.backend.extract(self.root, entry.rel)
        return Document(entry.props, tuple(pages))

    async def _extract_locked(self, entry: Entry, attempt: int = 0) -> bool:
        key = entry.key
        try:
            doc = await self._extract_document(entry)
        except ExtractionError as exc:
            self._failed(entry, key, exc, attempt)
            if entry.failed and entry.outline is not None and entry.outline_key != key:
                entry.outline, entry.outline_key = None, ""
            return False
        outline = outline_of(doc, entry)
        await anyio.to_thread.run_sync(self.store.put_document, key, outline, doc.pages)
        for page in doc.pages[: self.pages_lru.capacity // 2]:
            self.pages_lru.put(key, page)  # what was just extracted is likely read next
        # Extractions of one file run one at a time (under its lock), so this tree is the
        # newest good one even when the file changed meanwhile: serve it until the next.
        entry.outline, entry.outline_key = outline, key
        if key != entry.key:
            return False
        entry.props = doc.properties
        entry.error, entry.error_key = None, ""
        return True

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
        fresh = time.time() - entry.stat.mtime_ns / 1e9 < FRESH_SECONDS
        if not (exc.transient or fresh) or attempt >= len(RETRY_DELAYS) or self._tg is None:
            return False
        key = entry.key
        done = entry.retried = anyio.Event()

        async def again() -> None:
            try:
                await anyio.sleep(RETRY_DELAYS[attempt])
                if entry.key != key or self._entries.get(entry.rel) is not entry:
                    return
                async with entry.lock:
                    if entry.key != key or entry.current:
                        return
                    if await self._extract_locked(entry, attempt + 1) or entry.failed:
                        await self._announce(Change(updated=frozenset({entry.doc_ref})))
            finally:
                done.set()

        self._tg.start_soon(again)
        return True

    # ---- changes -------------------------------------------------------------------------

    async def rescan(self) -> Change:
        """Compare the folder with the catalog; update it; announce and return what changed."""
        found = {rel: st for rel in walk(self.root) if (st := stat_confined(self.root, rel))}
        added = [rel for rel in found if rel not in self._entries]
        removed = [rel for rel in self._entries if rel not in found]
        changed = [
            rel
            for rel, st in found.items()
            if rel in self._entries and self._entries[rel].stat != st
        ]
        for rel in removed:
            entry = self._entries.pop(rel)
            self._by_ref.pop(entry.doc_ref, None)
            entry.key = ""
        new_entries = [self._add(rel, found[rel]) for rel in added]
        async with anyio.create_task_group() as tg:
            for entry in new_entries:
                if not self._restore(entry):
                    tg.start_soon(self._probe, entry)
        for rel in changed:
            entry = self._entries[rel]
            entry.stat = found[rel]
            entry.key = self._key(rel, entry.stat)
            if self._tg is not None:
                self._tg.start_soon(self._refresh_changed, entry)
            else:
                await self._refresh_changed(entry)
        change = Change(list_changed=bool(added or removed))
        if change.list_changed:
            await self._announce(change)
        return Change(change.list_changed, frozenset(self._entries[r].doc_ref for r in changed))

    async def _refresh_changed(self, entry: Entry) -> None:
        """Re-read a changed file, then announce it (the last good version is served meanwhile)."""
        key = entry.key
        async with entry.lock:
            if key != entry.key:
                return
            if not self._restore(entry):
                await self._probe(entry)
                if entry.error is None and entry.outline is not None:
                    await self._extract_locked(entry)
                elif entry.failed:
                    entry.outline, entry.outline_key = None, ""
        if key == entry.key:
            await self._announce(Change(updated=frozenset({entry.doc_ref})))

    async def _announce(self, change: Change) -> None:
        if self.on_change is not None:
            try:
                await self.on_change(change)
            except Exception:  # a listener's failure must not stop the catalog
                log.exception("change listener failed")
