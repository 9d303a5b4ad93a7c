"""What the catalog tells whoever listens, and how: the first layer of the serving side.

A `Change` says which documents changed in one step (their contents, `updated`) and whether
the list of documents did (`list_changed`: a document added or removed, or what the list shows
of one: `listing`). `Announcing` hands each to its listener (`on_change`, the server's
notification hub), never knowing about sessions; the layers above it (`recognition`,
`extraction`, `freshness`) announce through it.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from dpe_server.catalog.index import E, Entry, Index
from dpe_server.catalog.store import Store
from dpe_server.extractors import Limits
from dpe_server.isolation.backends import Backend
from dpe_server.model.info import DocumentInfo

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Change:
    """What changed in one step: the set of documents, and/or these documents' contents."""

    list_changed: bool = False
    updated: frozenset[str] = frozenset()


ChangeListener = Callable[[Change], Awaitable[None]]


def listing(info: DocumentInfo) -> tuple[object, ...]:
    """What resources/list shows of a document."""
    return (info.title, info.summary, info.keywords, info.page_count, info.error)


class Announcing(Index[E]):
    """An index whose changes are announced to `on_change`, run by `backend`'s workers."""

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
        super().__init__(root, host, store, backend.passwords, limits, bounds=backend.bounds)
        self.backend = backend
        self.on_change = on_change
        self.listing_version = 0
        """Grows with each `list_changed` announced: what was derived from the listing before
        (completion's index of doc_refs and titles) is out of date."""

    async def _announce_entry(self, entry: Entry, before: tuple[object, ...]) -> None:
        """A document's content changed; the list did too when what it shows of it did
        (`before`: its `listing` before the change)."""
        listed = listing(self.info_of(entry)) != before
        await self._announce(Change(list_changed=listed, updated=frozenset({entry.doc_ref})))

    async def _announce(self, change: Change) -> None:
        if change.list_changed:
            self.listing_version += 1
        if self.on_change is not None:
            try:
                await self.on_change(change)
            except Exception:  # a listener's failure must not stop the catalog
                log.exception("change listener failed")
