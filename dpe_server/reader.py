"""What a read of a dpe:// URI returns, free of any transport: `Reader.read(uri)`.

The MCP handler (`server.py`), the `read` tool and `dpe-server read` of the catalog (Level 0)
go through it, so they return the same bodies; it imports nothing of the MCP SDK.
`dpe-server read` of one document uses `oneshot.OneShotReader`, the same steps without an
event loop.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dpe_server.catalog import Catalog
from dpe_server.errors import ExtractionError
from dpe_server.model import Category
from dpe_server.render import Body, bodies
from dpe_server.uri import DpeUri, parse
from dpe_server.views import catalog_view, document_view, element_view, page_view

if TYPE_CHECKING:
    from dpe_server.workers import WorkerSettings


@asynccontextmanager
async def local_reader(
    root: Path,
    host: str = "",
    cache_dir: Path | None = None,
    cache: bool = True,
    *,
    workers: WorkerSettings | None = None,
) -> AsyncIterator[Reader]:
    """A `Reader` over a folder without a server: what `dpe-server read` of Level 0 uses.

    Files are parsed in worker processes under `workers` (a hostile file cannot hang or exhaust
    the caller); the persistent cache is used unless `cache` is False. Nothing is probed up
    front: each document is read when a URI names it.
    """
    from dpe_server.cache import open_store
    from dpe_server.paths import default_host
    from dpe_server.workers import ProcessBackend

    root = root.resolve()
    host = host or default_host(root)
    store = open_store(cache_dir, root, cache)
    backend = ProcessBackend(workers)
    catalog = Catalog(root, host, backend, store=store)
    try:
        await catalog.start(probe=False)
        yield Reader(catalog, host)
    finally:
        await backend.aclose()
        store.close()


class Reader:
    def __init__(self, catalog: Catalog, host: str) -> None:
        self.catalog = catalog
        self.host = host

    async def read(self, uri: str) -> list[Body]:
        """The bodies of a read of `uri`; raises `RequestError` (`InvalidUri`, not-found...)."""
        parsed = parse(uri)
        self.catalog.check_host(parsed)
        payload, level, pictures = await self._payload(parsed)
        return bodies(parsed, level, payload, pictures)

    async def _payload(self, parsed: DpeUri) -> tuple[dict[str, Any], int, list[Body]]:
        uri, host, catalog = parsed.raw, self.host, self.catalog
        await catalog.ready.wait()
        if parsed.doc_ref is None:
            return catalog_view(host, catalog.documents(), parsed), 0, []
        entry = catalog.entry(parsed.doc_ref, uri)
        if parsed.page_index is not None:
            page = await catalog.page(entry.doc_ref, parsed.page_index, uri)
            return page_view(host, entry.doc_ref, page, parsed), 2, []
        if parsed.element_id is not None:
            index, element = await catalog.element(entry.doc_ref, parsed.element_id, uri)
            payload = element_view(host, entry.doc_ref, index, element)
            blobs: list[Body] = []
            if parsed.format == "json" and element.category is Category.IMAGE:
                try:
                    found = await catalog.backend.image(catalog.root, entry.rel, element.metadata)
                except ExtractionError:
                    found = None  # the file changed or broke since: no picture, the JSON stands
                if found is not None:
                    data, mime = found
                    blobs.append(Body(uri, mime, blob=data))
            return payload, 3, blobs
        pages = await catalog.page_infos(entry.doc_ref, uri) if parsed.depth == "pages" else None
        if parsed.depth == "metadata":
            await catalog.outline(entry.doc_ref, uri)  # settle derived title and summary
        info = catalog.info_of(entry)
        return document_view(host, info, pages, parsed), 1, []
