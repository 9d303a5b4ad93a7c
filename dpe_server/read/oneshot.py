"""`dpe-server read` of one document (Levels 1 to 3), synchronously, in this process.

The serving path (`reader.Reader` over the `Catalog`) is built for many clients at once: an
event loop, worker processes, background warm-up, retries of files caught mid-write. A
one-shot command that reads one document needs none of it, and starting the event loop alone
(importing asyncio and anyio) costs as much as extracting a 100-slide deck. This reader does
the same steps with the same pieces — doc_refs, store keys and restored outlines (`Index`),
the persistent `Store`, the extraction job (`jobs.run_job`), `views` and `render` — one after
the other, so it answers a URI with the bytes the server answers (the goldens test both).

The document is parsed in this process: the caller limits the process
(`dpe_server.isolation.guard`), as `dpe-server read` does. Level 0, which parses every file of
the folder, is the catalog's job (in worker processes): a Level 0 URI is refused here.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

from dpe_server.catalog.folder import FileStat, default_host, scan
from dpe_server.catalog.index import Entry, Index, outline_of
from dpe_server.catalog.sqlite import open_store
from dpe_server.extractors import DEFAULT_LIMITS, Limits, is_paged
from dpe_server.isolation.jobs import (
    Job,
    Op,
    decode_document,
    decode_image,
    decode_pages,
    decode_probe,
    pages_arg,
    run_job,
    unwrap,
)
from dpe_server.model.errors import ExtractionError
from dpe_server.model.tree import JSON, Category, Element, Page, page_of_element_id
from dpe_server.model.uri import DpeUri, parse
from dpe_server.views.element_cap import DEFAULT_MAX_ELEMENT_BYTES
from dpe_server.views.payloads import document_view, element_view, page_view
from dpe_server.views.render import Body, bodies


class OneShotReader(Index[Entry]):
    """Reads dpe:// URIs of documents in `root`, one after the other, parsing here."""

    def __init__(
        self,
        root: Path,
        host: str = "",
        cache_dir: Path | None = None,
        cache: bool = True,
        limits: Limits = DEFAULT_LIMITS,
        *,
        max_element_bytes: int = DEFAULT_MAX_ELEMENT_BYTES,
    ) -> None:
        root = root.resolve()
        super().__init__(root, host or default_host(root), open_store(cache_dir, root, cache))
        self._limits = limits
        self._max_element_bytes = max_element_bytes
        self._restored: set[str] = set()
        for rel, st in scan(self.root).items():
            # In scan order, as the catalog does: the same doc_refs. Keyed when first read:
            # the key of a file whose times are coarse reads the file.
            self._add(rel, st, key="")

    def _new_entry(self, rel: str, doc_ref: str, st: FileStat, key: str) -> Entry:
        return Entry(rel, doc_ref, st, key)

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> OneShotReader:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # ---- reads ---------------------------------------------------------------------------

    def read(self, uri: str) -> list[Body]:
        """The bodies of a read of `uri`; raises `RequestError` (`InvalidUri`, not-found...)."""
        parsed = parse(uri)
        self.check_host(parsed)
        if parsed.doc_ref is None:
            raise ValueError("Level 0 lists every document: read it through the catalog")
        entry = self.entry(parsed.doc_ref, uri)
        if entry.rel not in self._restored:  # what the store knows, for this document only
            entry.key = self._key(entry.rel, entry.stat)
            self._restore(entry)
            self._restored.add(entry.rel)
        payload, level, pictures = self._payload(parsed, entry)
        return bodies(parsed, level, payload, pictures, self._max_element_bytes)

    def _payload(self, parsed: DpeUri, entry: Entry) -> tuple[dict[str, Any], int, list[Body]]:
        uri, host = parsed.raw, self.host
        if parsed.page_index is not None:
            page = self._page(entry, parsed.page_index, uri)
            return page_view(host, entry.doc_ref, page, parsed), 2, []
        if parsed.element_id is not None:
            index, element = self._element(entry, parsed.element_id, uri)
            pictures: list[Body] = []
            if parsed.format == "json" and element.category is Category.IMAGE:
                found = self._picture(entry, element.metadata)
                if found is not None:
                    pictures.append(Body(uri, found[1], blob=found[0]))
            return element_view(host, entry.doc_ref, index, element), 3, pictures
        self._ensure_outline(entry)  # both depths show the derived title and summary
        pages = None
        if parsed.depth == "pages":
            pages = list(entry.outline.pages) if entry.outline else []
        return document_view(host, self.info_of(entry), pages, parsed), 1, []

    def _page(self, entry: Entry, index: int, uri: str) -> Page:
        self._ensure_counted(entry)
        self._check_index(entry, index, uri)
        page = self._load_page(entry, index)
        if page is None:
            raise self._unreadable_page(entry, index, uri)
        return page

    def _element(self, entry: Entry, element_id: str, uri: str) -> tuple[int, Element]:
        hint = self._hint(entry, element_id)
        page = self._load_page(entry, hint) if hint is not None else None
        found = page.element(element_id) if page is not None else None
        if hint is None or found is None:
            raise self._no_element(entry, element_id, uri)
        return hint, found

    def _hint(self, entry: Entry, element_id: str) -> int | None:
        hint = page_of_element_id(element_id)
        if hint is not None:
            self._ensure_counted(entry)
        return hint if hint is not None and hint < self.page_count(entry) else None

    # ---- extraction ----------------------------------------------------------------------

    def _job(self, entry: Entry, op: Op, **extra: Any) -> JSON:
        return unwrap(run_job(Job(str(self.root), entry.rel, op, limits=self._limits, **extra)))

    def _ensure_counted(self, entry: Entry) -> None:
        """Know the page count: a pdf or pptx is probed (one page reads without the others),
        other formats are extracted whole."""
        if entry.current or entry.failed:
            return
        if not is_paged(entry.rel):
            self._ensure_outline(entry)
        elif entry.props is None and entry.outline is None:
            try:
                entry.props = decode_probe(self._job(entry, "probe"))
            except ExtractionError as exc:
                self._record_failure(entry, entry.key, exc)
                return
            self.store.put_probe(entry.key, entry.props)

    def _ensure_outline(self, entry: Entry) -> None:
        if entry.current or entry.failed:
            return
        try:
            doc = decode_document(self._job(entry, "extract"))
        except ExtractionError as exc:
            self._record_failure(entry, entry.key, exc)
            return
        outline = outline_of(doc, entry)
        self.store.put_document(entry.key, outline, doc.pages)
        self._adopt(entry, entry.key, doc, outline)

    def _load_page(self, entry: Entry, index: int) -> Page | None:
        key = entry.outline_key if entry.outline is not None else entry.key
        page = self.pages_lru.get(key, index) or self.store.page(key, index)
        if page is None and entry.outline is None and is_paged(entry.rel):
            try:
                pages = decode_pages(self._job(entry, "pages", pages=pages_arg([index])))
            except ExtractionError:
                self._ensure_outline(entry)
                return self._load_page(entry, index) if entry.outline else None
            self.store.put_pages(entry.key, pages)
            page = next((p for p in pages if p.page_index == index), None)
        if page is None and entry.outline is not None:
            self.store.forget(entry.outline_key)  # the store lost it: extract the document again
            entry.outline_key = ""
            self._ensure_outline(entry)
            key = entry.outline_key
            page = self.store.page(key, index)
        if page is not None:
            self.pages_lru.put(key, page)
        return page

    def _picture(self, entry: Entry, metadata: Mapping[str, JSON]) -> tuple[str, str] | None:
        try:
            return decode_image(self._job(entry, "image", metadata=dict(metadata)))
        except ExtractionError:
            return None  # the file changed or broke since: no picture, the JSON stands
