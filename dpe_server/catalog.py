"""The catalog: the only owner of state. Which files exist, their doc_refs, their last good
tree or their error. Handlers ask it; the watcher tells it (`rescan`); it tells whoever
listens (`on_change`) which documents changed, and never knows about sessions.

Freshness: a changed file (size, mtime, inode) is probed and re-extracted in the background
while the last good tree keeps being served; when the new tree is ready the change is
announced. A failure on a file that was just written is retried with backoff (it may be
half-written); after the retries its error is listed.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath

import anyio
from anyio.abc import TaskGroup

from dpe_server.backends import Backend
from dpe_server.errors import (
    DocumentNotFound,
    ElementNotFound,
    ExtractionError,
    PageNotFound,
)
from dpe_server.extractors import file_type
from dpe_server.metadata import derive_keywords, derive_summary, derive_title
from dpe_server.model import Document, Element, Page, Properties, page_of_element_id
from dpe_server.paths import FileStat, doc_ref_for, stat_confined, walk
from dpe_server.uri import format_uri
from dpe_server.views import DocumentInfo, PageInfo

log = logging.getLogger(__name__)

RETRY_DELAYS = (0.5, 1.0, 2.0, 4.0, 8.0)
"""Seconds between attempts at a file that failed while it may still be being written."""
FRESH_SECONDS = 5.0
"""A file modified this recently may be half-written: its failures are retried."""


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
    props: Properties | None = None
    doc: Document | None = None
    error: ExtractionError | None = None
    generation: int = 0
    doc_generation: int = -1
    """The generation `doc` was extracted at; `doc` is current when equal to `generation`."""
    lock: anyio.Lock = field(default_factory=anyio.Lock)

    @property
    def file_type(self) -> str:
        return file_type(self.rel)

    @property
    def stem(self) -> str:
        return PurePosixPath(self.rel).stem


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
    ) -> None:
        self.root = root.resolve()
        self.host = host
        self.backend = backend
        self.on_change = on_change
        self._entries: dict[str, Entry] = {}
        self._by_ref: dict[str, Entry] = {}
        self._tg: TaskGroup | None = None
        self.scanned = 0
        self.probed = 0
        self.ready = anyio.Event()
        """Set once every file found at start has been probed: Level 0 is complete then."""

    # ---- life cycle ----------------------------------------------------------------------

    async def start(self, tg: TaskGroup | None = None) -> None:
        """Scan the folder and probe every file (cheap); `tg` runs later background work."""
        self._tg = tg
        found = {rel: st for rel in walk(self.root) if (st := stat_confined(self.root, rel))}
        for rel, st in found.items():
            self._add(rel, st)
        self.scanned = len(found)

        async def probe(entry: Entry) -> None:
            await self._probe(entry)
            self.probed += 1

        async with anyio.create_task_group() as probes:
            for entry in list(self._entries.values()):
                probes.start_soon(probe, entry)
        self.ready.set()

    async def warm(self) -> None:
        """Extract every document fully, most recently modified first (background warm-up)."""
        order = sorted(self._entries.values(), key=lambda e: -e.stat.mtime_ns)
        refined: set[str] = set()
        async with anyio.create_task_group() as tg:
            limiter = anyio.Semaphore(4)
            for entry in order:

                async def one(entry: Entry = entry) -> None:
                    async with limiter:
                        if entry.rel in self._entries and entry.error is None:
                            before = self.info_of(entry)
                            await self._ensure_document(entry)
                            if _listing(self.info_of(entry)) != _listing(before):
                                refined.add(entry.doc_ref)

                tg.start_soon(one)
        if refined:
            # Titles and summaries derived from the content differ from the probe's: say so once.
            await self._announce(Change(list_changed=True, updated=frozenset(refined)))

    def _add(self, rel: str, st: FileStat) -> Entry:
        ref = doc_ref_for(rel)
        chars = 6
        while ref in self._by_ref and self._by_ref[ref].rel != rel:
            chars += 2
            ref = doc_ref_for(rel, chars)
        entry = Entry(rel, ref, st)
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
        path = self.root / entry.rel
        modified = datetime.fromtimestamp(entry.stat.mtime_ns / 1e9, UTC)
        base = dict(
            doc_ref=entry.doc_ref,
            file_uri=path.as_uri(),
            file_type=entry.file_type,
            last_modified=modified.strftime("%Y-%m-%dT%H:%M:%SZ"),
        )
        if entry.error is not None and entry.doc is None:
            return DocumentInfo(
                title=entry.stem,
                page_count=0,
                keywords=(),
                summary="",
                error=entry.error.to_json(),
                **base,  # type: ignore[arg-type]
            )
        doc = entry.doc or (Document(entry.props, ()) if entry.props else None)
        if doc is None:
            return DocumentInfo(title=entry.stem, page_count=0, keywords=(), summary="", **base)  # type: ignore[arg-type]
        page_count = len(doc.pages) if entry.doc else doc.properties.page_count
        return DocumentInfo(
            title=derive_title(doc, entry.stem),
            page_count=page_count,
            keywords=derive_keywords(doc) if entry.doc else doc.properties.keywords,
            summary=derive_summary(doc, entry.file_type)
            if entry.doc
            else (doc.properties.summary or ""),
            extra={} if entry.doc else {"indexing": True},
            **base,  # type: ignore[arg-type]
        )

    def page_count(self, entry: Entry) -> int:
        if entry.doc is not None:
            return len(entry.doc.pages)
        if entry.error is not None:
            return 0
        return entry.props.page_count if entry.props else 0

    async def document(self, doc_ref: str, uri: str) -> tuple[Entry, Document | None]:
        """The document's tree (extracting it if needed); None when it cannot be read."""
        entry = self.entry(doc_ref, uri)
        await self._ensure_document(entry)
        return entry, entry.doc

    async def page_infos(self, doc_ref: str, uri: str) -> list[PageInfo]:
        _, doc = await self.document(doc_ref, uri)
        return [PageInfo.of(p) for p in doc.pages] if doc else []

    async def page(self, doc_ref: str, index: int, uri: str) -> Page:
        _, doc = await self.document(doc_ref, uri)
        pages = doc.pages if doc else ()
        if index >= len(pages):
            count = len(pages)
            last = f"pages 0 to {count - 1}" if count else "no pages"
            raise PageNotFound(
                f"Page {index} is out of range: '{doc_ref}' has {count} "
                f"page{'' if count == 1 else 's'} ({last}).",
                uri,
                count,
            )
        return pages[index]

    async def element(self, doc_ref: str, element_id: str, uri: str) -> tuple[int, Element]:
        _, doc = await self.document(doc_ref, uri)
        pages = doc.pages if doc else ()
        hint = page_of_element_id(element_id)
        candidates = [pages[hint]] if hint is not None and hint < len(pages) else []
        if hint is None:
            candidates = list(pages)
        for page in candidates:
            el = page.element(element_id)
            if el is not None:
                return page.page_index, el
        raise ElementNotFound(
            f"No element '{element_id}' in '{doc_ref}'; read "
            f"{format_uri(self.host, doc_ref, page_index=hint or 0)} "
            "for the element ids of a page.",
            uri,
        )

    # ---- extraction ----------------------------------------------------------------------

    async def _probe(self, entry: Entry) -> None:
        try:
            entry.props = await self.backend.probe(self.root, entry.rel)
            entry.error = None
        except ExtractionError as exc:
            entry.error = exc
            self._maybe_retry(entry, exc)

    async def _ensure_document(self, entry: Entry) -> None:
        if entry.doc_generation == entry.generation:
            return
        if entry.doc is not None and entry.lock.locked():
            return  # a refresh is under way: the last good tree is served meanwhile
        async with entry.lock:
            if entry.doc_generation != entry.generation:
                await self._extract_locked(entry, entry.generation)

    async def _extract_locked(self, entry: Entry, generation: int) -> None:
        try:
            doc = await self.backend.extract(self.root, entry.rel)
        except ExtractionError as exc:
            if generation != entry.generation:
                return
            entry.doc_generation = generation
            if not self._maybe_retry(entry, exc):
                entry.doc = None
            entry.error = exc
            return
        if generation == entry.generation:
            entry.doc, entry.error, entry.doc_generation = doc, None, generation

    def _maybe_retry(self, entry: Entry, exc: ExtractionError, attempt: int = 0) -> bool:
        """Schedule another attempt when the failure may be a file caught mid-write."""
        fresh = time.time() - entry.stat.mtime_ns / 1e9 < FRESH_SECONDS
        if not (exc.transient or fresh) or attempt >= len(RETRY_DELAYS) or self._tg is None:
            return False
        generation = entry.generation

        async def again() -> None:
            await anyio.sleep(RETRY_DELAYS[attempt])
            if entry.generation != generation or self._entries.get(entry.rel) is not entry:
                return
            try:
                entry.props = await self.backend.probe(self.root, entry.rel)
                doc = await self.backend.extract(self.root, entry.rel)
            except ExtractionError as err:
                if entry.generation == generation and not self._maybe_retry(
                    entry, err, attempt + 1
                ):
                    entry.error, entry.doc, entry.doc_generation = err, None, generation
                    await self._announce(Change(updated=frozenset({entry.doc_ref})))
                return
            if entry.generation == generation:
                entry.doc, entry.error, entry.doc_generation = doc, None, generation
                await self._announce(Change(updated=frozenset({entry.doc_ref})))

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
            entry.generation += 1
        new_entries = [self._add(rel, found[rel]) for rel in added]
        async with anyio.create_task_group() as tg:
            for entry in new_entries:
                tg.start_soon(self._probe, entry)
        for rel in changed:
            entry = self._entries[rel]
            entry.stat = found[rel]
            entry.generation += 1
            if self._tg is not None:
                self._tg.start_soon(self._refresh_changed, entry)
            else:
                await self._refresh_changed(entry)
        change = Change(list_changed=bool(added or removed))
        if change.list_changed:
            await self._announce(change)
        return Change(change.list_changed, frozenset(self._entries[r].doc_ref for r in changed))

    async def _refresh_changed(self, entry: Entry) -> None:
        """Re-probe and re-extract a changed file, then announce it (the last good tree is
        served meanwhile)."""
        generation = entry.generation
        async with entry.lock:
            await self._probe(entry)
        if entry.error is None and entry.doc is not None:
            async with entry.lock:
                await self._extract_locked(entry, generation)
        elif entry.error is not None:
            entry.doc_generation = generation
        if entry.generation == generation:
            await self._announce(Change(updated=frozenset({entry.doc_ref})))

    async def _announce(self, change: Change) -> None:
        if self.on_change is not None:
            try:
                await self.on_change(change)
            except Exception:  # a listener's failure must not stop the catalog
                log.exception("change listener failed")

    def refs(self) -> Sequence[str]:
        return [e.doc_ref for e in self.entries()]
