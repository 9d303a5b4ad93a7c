"""What a read of a dpe:// URI returns, free of any transport: `Reader.read(uri)`.

The MCP handler (`surface.app`), the `read` tool and `dpe-server read` of the catalog (Level 0)
go through it, so they return the same bodies; it imports nothing of the MCP SDK. It performs
the read plan (`plan`), as `dpe-server read` of one document does in `oneshot.OneShotReader`
without an event loop.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any, assert_never

import anyio
import anyio.lowlevel
import anyio.to_thread

from dpe_server.catalog.catalog import Catalog
from dpe_server.extractors import DEFAULT_LIMITS, Limits
from dpe_server.model.errors import reading
from dpe_server.model.info import DocumentInfo
from dpe_server.model.uri import DpeUri, Output, parse
from dpe_server.read.body_cache import BIG_BYTES, BodyCache, ByteBudget
from dpe_server.read.plan import (
    ElementRead,
    Listing,
    ListingJson,
    Outlined,
    PageRead,
    PictureRead,
    ReadStep,
    Render,
    perform,
    read_plan,
)
from dpe_server.views.element_cap import DEFAULT_MAX_ELEMENT_BYTES, json_size, size_within
from dpe_server.views.listing import BATCH, catalog_json
from dpe_server.views.payloads import catalog_range
from dpe_server.views.render import Body, render_capped

if TYPE_CHECKING:
    from dpe_server.isolation.workers import WorkerSettings


@asynccontextmanager
async def local_reader(
    root: Path,
    host: str = "",
    cache_dir: Path | None = None,
    cache: bool = True,
    *,
    workers: WorkerSettings | None = None,
    limits: Limits = DEFAULT_LIMITS,
) -> AsyncIterator[Reader]:
    """A `Reader` over a folder without a server: what `dpe-server read` of Level 0 uses.

    Files are parsed in worker processes under `workers` (a hostile file cannot hang or exhaust
    the caller); the persistent cache is used unless `cache` is False. Nothing is probed up
    front: each document is read when a URI names it.
    """
    from dpe_server.catalog.folder import default_host
    from dpe_server.catalog.sqlite import open_store
    from dpe_server.isolation.workers import ProcessBackend

    root = root.resolve()
    host = host or default_host(root)
    store = open_store(cache_dir, root, cache)
    backend = ProcessBackend(workers, limits)
    catalog = Catalog(root, host, backend, store=store, limits=limits)
    try:
        await catalog.start(probe=False)
        yield Reader(catalog, host)
    finally:
        await backend.aclose()
        store.close()


BUILD_BYTES = 32 * 1024 * 1024
"""Bytes of big bodies being built at once (`ByteBudget`)."""
LISTED_BYTES = 1024
"""Bytes a document's summary takes in a Level 0 body, at most about (a few hundred characters,
two bytes each once one character of the body is beyond Latin-1): what a listing holds of the
budget."""


class Reader:
    """Reads for many clients at once: each body is rendered off the event loop; bodies of
    pages and elements are shared by concurrent reads and kept when big (`BodyCache`), and big
    ones are built within `BUILD_BYTES` at a time. A Level 3 element whose JSON passes
    `max_element_bytes` is served cut (`element_cap`; 0: never)."""

    def __init__(
        self, catalog: Catalog, host: str, max_element_bytes: int = DEFAULT_MAX_ELEMENT_BYTES
    ) -> None:
        self.catalog = catalog
        self.host = host
        self.max_element_bytes = max_element_bytes
        self.bodies = BodyCache()
        self.budget = ByteBudget(BUILD_BYTES)

    async def read(self, uri: str) -> list[Body]:
        """The bodies of a read of `uri`; raises `RequestError` (`InvalidUri`, not-found...)."""
        with reading(uri):
            parsed = parse(uri)
            self.catalog.check_host(parsed)
            await self.catalog.listed.wait()
            return await perform(read_plan(parsed, self.host, self.max_element_bytes), self._do)

    async def _do(self, step: ReadStep) -> Any:
        """A step of the read plan (`plan`), done for many clients at once."""
        catalog = self.catalog
        match step:
            case Listing():
                return catalog.documents()
            case Outlined(doc_ref):
                entry, outline = await catalog.outline(doc_ref)  # derived title and summary
                return catalog.info_of(entry), list(outline.pages) if outline else []
            case PageRead(doc_ref, index):
                return await catalog.keyed_page(doc_ref, index)
            case ElementRead(doc_ref, element_id):
                return await catalog.keyed_element(doc_ref, element_id)
            case PictureRead(doc_ref, metadata):
                return await catalog.backend.image(
                    catalog.root, catalog.entry(doc_ref).rel, metadata
                )
            case ListingJson(docs, parsed):
                return await self._catalog_json(docs, parsed)
            case Render(level, payload, output, cap, None):
                return await self._render(level, payload, output, cap)
            case Render(level, payload, output, cap, key):
                return await self.bodies.get(
                    key, functools.partial(self._render, level, payload, output, cap)
                )
            case _:
                assert_never(step)

    async def _catalog_json(self, docs: Sequence[DocumentInfo], parsed: DpeUri) -> str:
        """Level 0 in JSON, written a batch of documents at a time (`views.listing`): never
        the folder's summaries at once, the event loop given back between batches, a big
        listing built within the byte budget."""
        shown = len(catalog_range(len(docs), parsed))
        size = shown * LISTED_BYTES
        hold: AbstractAsyncContextManager[None] = (
            self.budget.hold(size) if size >= BIG_BYTES else nullcontext()
        )
        pieces: list[str] = []
        async with hold:
            for piece in catalog_json(self.host, docs, parsed):
                pieces.append(piece)
                if shown > BATCH:
                    await anyio.lowlevel.checkpoint()
        return "".join(pieces)

    async def _render(self, level: int, payload: dict[str, Any], fmt: Output, cap: int) -> str:
        """`render_capped`: a small body here (a worker thread costs more), a big one in a
        worker thread once the budget has room for it."""
        small = size_within(payload, BIG_BYTES)  # bounded work, however big the payload
        if small is not None:
            return render_capped(level, payload, fmt, cap, small)
        size = await anyio.to_thread.run_sync(json_size, payload)
        async with self.budget.hold(min(size, cap) if cap else size):
            return await anyio.to_thread.run_sync(render_capped, level, payload, fmt, cap, size)
