"""`dpe-server read` of one document (Levels 1 to 3), synchronously, in this process.

The serving path (`reader.Reader` over the `Catalog`) is built for many clients at once: an
event loop, worker processes, background warm-up, retries of files caught mid-write. A
one-shot command that reads one document needs none of it, and starting the event loop alone
(importing asyncio and anyio) costs as much as extracting a 100-slide deck. This reader does
the same steps with the same pieces — doc_refs, store keys and restored outlines (`Index`),
the persistent `Store`, the page-loading sequence (`steps`), the read plan (`plan`), the job
client, `views` and `render` — one after the other, so it answers a URI with the bytes the
server answers (the goldens test both).

The document is parsed in this process: the caller limits the process
(`dpe_server.isolation.guard`), as `dpe-server read` does. Level 0, which parses every file of
the folder, is the catalog's job (in worker processes): a Level 0 URI is refused here.
"""

from __future__ import annotations

from pathlib import Path
from types import TracebackType
from typing import Any, assert_never

from dpe_server.catalog.folder import FileStat, default_host, scan
from dpe_server.catalog.index import Entry, Index
from dpe_server.catalog.sqlite import open_store
from dpe_server.catalog.steps import MakeCurrent, PagesJob, Probe, Recognise, Step, StoreCall
from dpe_server.catalog.store import PageCache
from dpe_server.extractors import DEFAULT_LIMITS, Limits, format_of
from dpe_server.isolation.client import InlineJobs, run_inline
from dpe_server.isolation.passwords import NO_PASSWORDS, Passwords
from dpe_server.model import children
from dpe_server.model.errors import ExtractionError, reading
from dpe_server.model.uri import parse
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
from dpe_server.views.element_cap import DEFAULT_MAX_ELEMENT_BYTES
from dpe_server.views.listing import catalog_json
from dpe_server.views.render import Body, render_capped

KEPT_PAGES = 2048
"""Pages this reader keeps in memory (the server keeps 256): a document it extracts is kept,
up to half of this (`Index._adopt`), so that reading each of its pages after Level 1 reads
none back from the store. They were all in memory at once while the document was parsed."""


class OneShotReader(Index[Entry]):
    """Reads dpe:// URIs of documents in `root`, one after the other, parsing here.

    A document it extracts is stored without its search rows (`INDEX_LATER`): this command
    answers one URI and exits, and no one searches the cache until a server opens it, which
    builds them in the background (`Store.index_stored`): they were 23 % of the
    instructions of a one-shot read of a 1 MB web page (bench/README.md, issue 34)."""

    INDEX_LATER = True

    def __init__(
        self,
        root: Path,
        host: str = "",
        cache_dir: Path | None = None,
        cache: bool = True,
        limits: Limits = DEFAULT_LIMITS,
        *,
        max_element_bytes: int = DEFAULT_MAX_ELEMENT_BYTES,
        passwords: Passwords = NO_PASSWORDS,
    ) -> None:
        root = root.resolve()
        store = open_store(cache_dir, root, cache)
        super().__init__(root, host or default_host(root), store, passwords, limits)
        self.pages_lru = PageCache(KEPT_PAGES)
        self._jobs = InlineJobs(limits, passwords)
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
        with reading(uri):
            return self._read(uri)

    def _read(self, uri: str) -> list[Body]:
        parsed = parse(uri)
        self.check_host(parsed)
        return run_inline(perform(read_plan(parsed, self.host, self._max_element_bytes), self._do))

    def _entry_of(self, doc_ref: str) -> Entry:
        """The document's entry, with what the store knows of it (read for this one only)."""
        if doc_ref not in self._by_ref:
            self._open_containers(doc_ref)
        entry = self.entry(doc_ref)
        if entry.rel not in self._restored:
            entry.key = self._key(entry.rel, entry.stat)
            self._restore(entry)
            self._restored.add(entry.rel)
        return entry

    def _open_containers(self, doc_ref: str) -> None:
        """A doc_ref this reader does not list may be a document inside a file (docs/
        children.md): the files that may hold documents are restored from the store (what
        a server on the folder extracted lists their children), depth by depth, until it is
        listed. None is extracted for it: a mistyped doc_ref costs store lookups only."""
        opened: set[str] = set()
        for _ in range(children.MAX_DEPTH):
            for entry in self.entries():
                fmt = format_of(children.name_of(entry.rel))
                if entry.rel in opened or fmt is None or fmt.member is None:
                    continue
                opened.add(entry.rel)
                self._entry_of(entry.doc_ref)
                if doc_ref in self._by_ref:
                    return

    async def _do(self, step: ReadStep) -> Any:
        """A step of the read plan (`plan`), done at once (this coroutine never suspends)."""
        match step:
            case Listing():
                raise ValueError("Level 0 lists every document: read it through the catalog")
            case Outlined(doc_ref):
                entry = self._entry_of(doc_ref)
                self._ensure_outline(entry)  # the derived title and summary
                return self.info_of(entry), list(entry.outline.pages) if entry.outline else []
            case PageRead(doc_ref, index):
                return await self.run_steps(self._keyed_page(self._entry_of(doc_ref), index))
            case ElementRead(doc_ref, element_id):
                steps = self._keyed_element(self._entry_of(doc_ref), element_id)
                return await self.run_steps(steps)
            case PictureRead(doc_ref, metadata):
                return await self._jobs.image(self.root, self._entry_of(doc_ref).rel, metadata)
            case ListingJson(docs, parsed):
                return "".join(catalog_json(self.host, docs, parsed))
            case Render(level, payload, output, cap, _):
                return render_capped(level, payload, output, cap)
            case _:
                assert_never(step)

    # ---- extraction, right here ----------------------------------------------------------

    async def _perform(self, step: Step) -> Any:
        """A step of the read sequence, done at once (this coroutine never suspends)."""
        match step:
            case StoreCall(fn, args):
                return fn(*args)
            case PagesJob(entry, indices):
                pages = await self._jobs.extract_pages(self.root, entry.rel, indices)
                self.store.put_pages(entry.key, pages)  # the file is read once: it is this version
                return pages
            case MakeCurrent(entry):
                return self._ensure_outline(entry)
            case Probe(entry):
                return await self._probe(entry)
            case Recognise(entry, key, page):
                job = self._jobs.recognise(self.root, entry.rel, page.page_index)
                found = await self._recognition(job, page)
                if found is None:
                    return page
                outline = self._recognised_outline(entry, key, found)
                self._keep_recognised(entry, key, found, outline)
                return found
            case _:
                assert_never(step)

    async def _probe(self, entry: Entry) -> None:
        try:
            entry.props = await self._jobs.probe(self.root, entry.rel)
        except ExtractionError as exc:
            self._record_failure(entry, entry.key, exc)
            return
        self.store.put_probe(entry.key, entry.props)

    def _ensure_outline(self, entry: Entry) -> None:
        if entry.current or entry.failed:
            return
        try:
            doc = run_inline(self._jobs.extract(self.root, entry.rel))
        except ExtractionError as exc:
            self._record_failure(entry, entry.key, exc)
            return
        doc, outline = self._put_extracted(entry, entry.key, doc)  # recognised pages kept
        self._adopt(entry, entry.key, doc, outline)
