"""The catalog: the serving process's only owner of state. Which files exist, their doc_refs,
their outlines (derived title, keywords, summary, page index) or their errors, kept by its
`index.Index` half (shared with `dpe-server read`'s one-shot reader). Handlers ask it (this
module: outlines, pages, elements, searches); the watcher tells it (`rescan`); it tells whoever
listens (`on_change`) which documents changed, and never knows about sessions. Page bodies live
in the `Store`, not here, so memory grows by headers only.

`Catalog` is its concerns stacked, each in a module of its own, each layer using the ones below:

- `index`: what is known of every document, no event loop (shared with the one-shot reader);
- `announce`: the `Change`s told to `on_change`;
- `recognition`: the pages extraction left to recognise (OCR), and their queue;
- `extraction`: the start-up listing, the background warm-up, extraction on demand (the steps of
  a read performed), retries of files caught mid-write;
- `freshness`: rescans of the folder (from the watcher, or another replica), changed files read
  again, one announcement a rescan;

and beside them `claims`: the jobs claimed, waited for and leased with a store shared by
replicas.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import anyio.to_thread

from dpe_server.catalog.announce import Change, ChangeListener
from dpe_server.catalog.extraction import Entry
from dpe_server.catalog.freshness import Freshness
from dpe_server.catalog.store import MemoryStore, Outline, Store
from dpe_server.catalog.textquery import Found, Position, Scope, TextQuery
from dpe_server.extractors import DEFAULT_LIMITS, Limits
from dpe_server.isolation.backends import Backend
from dpe_server.model.info import PageInfo
from dpe_server.model.tree import Element, Page

__all__ = ["Catalog", "Change", "ChangeListener", "Entry"]


class Catalog(Freshness):
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
            backend,
            store if store is not None else MemoryStore(),
            limits=limits,
            on_change=on_change,
        )
        self._search_sync = anyio.Lock()

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
