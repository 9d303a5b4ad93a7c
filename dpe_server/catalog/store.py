"""Where extracted trees live once extracted: a `Store`, keyed by file identity.

The catalog keeps only small headers in memory (an `Outline` per document: derived title,
keywords, summary and the page index); pages are fetched from the store when read, so the
serving process's memory does not grow with the size of what it serves.

- `MemoryStore`: everything in this process's memory (`--no-cache`, tests).
- `sqlite.SqliteStore`: an embedded SQLite cache in the user's cache folder, per page,
  shared safely by several servers and kept across restarts.

A key names one version of one file as one extractor version reads it (`cache_key`), so a
changed file (even one rewritten in place with its size and mtime restored), or a new
extractor, never meets a stale tree.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, cast

from dpe_server.catalog import fulltext
from dpe_server.catalog.folder import FileStat
from dpe_server.extractors.ocr import states as ocr_states
from dpe_server.model.info import PageInfo
from dpe_server.model.tree import JSON, Page, Properties

if TYPE_CHECKING:
    from dpe_server.catalog.textquery import Found, Position, Scope, TextQuery

SCHEMA = "3"


def cache_key(path: str, st: FileStat, extractor_version: str, content: str = "") -> str:
    """The key of one version of one file, as one extractor version reads it.

    The version is the file's stat (size, mtime, ctime, inode) and, where the file system's
    times are coarse, `content`: `paths.content_fingerprint`.
    """
    ident = (SCHEMA, path, st.size, st.mtime_ns, st.ctime_ns, st.inode, extractor_version, content)
    return hashlib.sha256("\0".join(map(str, ident)).encode()).hexdigest()


class StoreUnavailable(Exception):
    """The store cannot be reached just now (a shared database down or unreachable): what it
    holds is not lost, and it is tried again (the message names the store)."""


_FIELDS = ("title", "keywords", "summary", "metadata", "page_count", "pending", "_pages")
"""`Outline`'s slots, in the order `_init` sets them."""


class Outline:
    """What the catalog keeps of a fully extracted document: the headers, not the bodies.

    Immutable. What Level 0 lists is held parsed: title, keywords, summary, metadata, the page
    count and the pages left to recognise (`pending`). The page list (Level 1) of an outline
    read from a store (`loads`) stays the text it was stored as until `pages` is first asked
    for (a Level 1 read, a page completion): a restart parses what Level 0 needs of each
    document, not every document's page list (at 100,000 documents that was 1.3 of the
    restart's 3 CPU seconds).
    """

    __slots__ = _FIELDS
    title: str
    keywords: tuple[str, ...]
    summary: str
    metadata: Mapping[str, JSON]
    page_count: int
    pending: tuple[int, ...]
    _pages: tuple[PageInfo, ...] | str

    def __init__(
        self,
        title: str,
        keywords: tuple[str, ...],
        summary: str,
        pages: Sequence[PageInfo],
        metadata: Mapping[str, JSON],
    ) -> None:
        pages = tuple(pages)
        pending = tuple(ocr_states.pending_pages(pages))
        _init(self, title, keywords, summary, metadata, len(pages), pending, pages)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"an Outline is immutable: cannot set {name}")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Outline):
            return NotImplemented
        return self._fields() == other._fields()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Outline(title={self.title!r}, page_count={self.page_count})"

    def _fields(self) -> tuple[object, ...]:
        return (self.title, self.keywords, self.summary, self.metadata, self.pages)

    @property
    def pages(self) -> tuple[PageInfo, ...]:
        """The page list (Level 1), parsed when first asked for."""
        pages = self._pages
        if isinstance(pages, str):
            pages = tuple(
                PageInfo(i, _shared(t), n, _shared_mapping(m)) for i, t, n, m in json.loads(pages)
            )
            object.__setattr__(self, "_pages", pages)  # the same for every thread that parses it
        return pages

    def with_page(self, info: PageInfo) -> Outline:
        """This outline with the line of one of its pages replaced (a page recognised)."""
        pages = list(self.pages)
        pages[info.page_index] = info
        return Outline(self.title, self.keywords, self.summary, pages, self.metadata)

    def dumps(self) -> str:
        """The stored form: the head (what Level 0 lists) as one line of JSON, then the page
        list as another, so that `loads` parses the head alone."""
        head = {
            "title": self.title,
            "keywords": list(self.keywords),
            "summary": self.summary,
            "metadata": dict(self.metadata),
            "page_count": self.page_count,
            "pending": list(self.pending),
        }
        pages = self._pages
        if not isinstance(pages, str):
            pages = compact_json(
                [[p.page_index, p.title, p.element_count, dict(p.metadata)] for p in pages]
            )
        return f"{compact_json(head)}\n{pages}"

    @classmethod
    def loads(cls, text: str) -> Outline:
        """The outline stored as `text` (`dumps`), its short strings and metadata shared with
        equal ones read before (`_shared`): the catalog keeps one outline per document. JSON
        written without indentation holds no line break, so the first one ends the head."""
        head_text, _, pages = text.partition("\n")
        head = json.loads(head_text)
        outline = cls.__new__(cls)
        _init(
            outline,
            _shared(head["title"]),
            tuple(map(_shared, head["keywords"])),
            _shared(head["summary"]),
            _shared_mapping(head["metadata"]),
            head["page_count"],
            tuple(head["pending"]),
            pages,
        )
        return outline


def _init(outline: Outline, *values: object) -> None:
    for name, value in zip(_FIELDS, values, strict=True):
        object.__setattr__(outline, name, value)


def compact_json(value: JSON) -> str:
    """`value` as the stores keep JSON: compact, not ASCII-escaped. Trees hold no cycle (they
    are built from parsed files and JSON), so the encoder does not track every object it is
    inside of (`check_circular`: a tenth of the time of a page's JSON)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), check_circular=False)


_SHARED: dict[object, object] = {}
"""One copy of each short string and page metadata met in stored outlines (`Outline.loads`,
`Outline.pages`), while there are fewer than `SHARED_KEPT`: a folder's outlines repeat them
(Sheet1, a page size, a slide layout, a generated summary, a title that is also a keyword),
and each parsed outline would otherwise hold its own copy. Bounded: what it keeps
alive is at most `SHARED_KEPT` strings of `SHARED_CHARS` and as many metadata."""
SHARED_KEPT = 1 << 14
SHARED_CHARS = 64


def _shared(text: str) -> str:
    if len(text) > SHARED_CHARS or type(text) is not str:
        return text
    kept = _SHARED.get(text)
    if kept is not None:
        return cast(str, kept)
    if len(_SHARED) < SHARED_KEPT:
        _SHARED[text] = text
    return text


def _shared_mapping(mapping: Mapping[str, JSON]) -> Mapping[str, JSON]:
    """`mapping`, or an equal one (same keys in the same order) met before. Outlines' metadata
    is never written to (a `Mapping`)."""
    # Equal is not enough: 1, 1.0 and True are equal keys, and so are 0.0 and -0.0.
    try:
        items = tuple(
            (k, v.__class__, float.__repr__(v) if v.__class__ is float else v)
            for k, v in mapping.items()
        )
        kept = _SHARED.get(items)
    except TypeError:  # a list or a dict among its values: not shared
        return mapping
    if kept is not None:
        return cast(Mapping[str, JSON], kept)
    if len(_SHARED) < SHARED_KEPT:
        _SHARED[items] = mapping
    return mapping


@dataclass(frozen=True, slots=True)
class Cached:
    """What a store knows of one key."""

    props: Properties | None
    error: Mapping[str, JSON] | None
    outline: Outline | None
    unindexed: bool = False
    """Its pages are stored without their full-text rows (`put_document` with `index=False`,
    `dpe-server read`): searches miss its words until `index_stored` builds them."""


class Store(Protocol):
    def lookup(self, key: str) -> Cached | None: ...

    def lookup_many(self, keys: Sequence[str]) -> dict[str, Cached]:
        """What the store knows of each of `keys` it knows (one query: a restart)."""
        ...

    def put_probe(self, key: str, props: Properties) -> None: ...

    def put_error(self, key: str, error: Mapping[str, JSON]) -> None: ...

    def put_document(
        self, key: str, outline: Outline, pages: Sequence[Page], *, index: bool = True
    ) -> None:
        """Store `pages` of `key` and its outline; `index=False` (a one-shot read, which no
        one searches) leaves out their full-text rows and marks the key so (`Cached.unindexed`)
        in the same transaction, for a server to build them (`index_stored`). A store may index
        all the same (PostgreSQL: `dpe-server read` never writes there)."""
        ...

    def index_stored(self, key: str) -> bool:
        """Build the full-text rows of the stored pages of `key` if it is marked
        `Cached.unindexed`, and clear the mark (blocking; nothing when not marked). False when
        a row could not be written (the store busy or read-only): the key stays marked, for
        the caller to try again; True once nothing of it is left to build."""
        ...

    def put_documents(self, items: Sequence[tuple[str, Outline, Sequence[Page]]]) -> None:
        """`put_document` of each of `items` (key, outline, pages), in one transaction where
        the store has them (a batch of children: docs/children.md)."""
        ...

    def put_pages(self, key: str, pages: Sequence[Page]) -> None: ...

    def page(self, key: str, index: int) -> Page | None:
        """The stored page (None: not stored); raises `StoreUnavailable` when the store
        cannot be reached."""
        ...

    def forget(self, key: str) -> None: ...

    def serve(self, added: Sequence[tuple[str, str, str]], dropped: Sequence[str]) -> None:
        """Searches look at the keys `added` (key, doc_ref, file type) and no longer at the
        keys `dropped`, which are forgotten: versions of files that changed or went away."""
        ...

    def search(self, query: TextQuery, scope: Scope, limit: int, at: Position) -> Found | None:
        """`limit` served elements matching from `at`, best first, and how many there are
        (`textquery.search`); None when the index cannot be read; raises `StoreUnavailable`
        when the store that holds it cannot be reached."""
        ...

    def close(self) -> None: ...


class MemoryStore:
    """Everything in memory: nothing survives a restart."""

    def __init__(self) -> None:
        self._docs: dict[str, Cached] = {}
        self._pages: dict[tuple[str, int], Page] = {}
        self._text = fulltext.connect_memory()
        self._text_lock = threading.Lock()
        self._unindexed: set[str] = set()

    def lookup(self, key: str) -> Cached | None:
        cached = self._docs.get(key)
        if cached is not None and key in self._unindexed:
            return dataclasses.replace(cached, unindexed=True)
        return cached

    def lookup_many(self, keys: Sequence[str]) -> dict[str, Cached]:
        return {k: c for k in keys if (c := self.lookup(k)) is not None}

    def put_probe(self, key: str, props: Properties) -> None:
        old = self._docs.get(key)
        self._docs[key] = Cached(props, None, old.outline if old else None)

    def put_error(self, key: str, error: Mapping[str, JSON]) -> None:
        old = self._docs.get(key)
        self._docs[key] = Cached(old.props if old else None, dict(error), None)

    def put_document(
        self, key: str, outline: Outline, pages: Sequence[Page], *, index: bool = True
    ) -> None:
        old = self._docs.get(key)
        self._docs[key] = Cached(old.props if old else None, None, outline)
        if index:
            self.put_pages(key, pages)
            return
        for page in pages:
            self._pages[(key, page.page_index)] = page
        self._unindexed.add(key)

    def index_stored(self, key: str) -> bool:
        if key not in self._unindexed:
            return True
        pages = [page for (k, _), page in list(self._pages.items()) if k == key]
        with self._text_lock, fulltext.transaction(self._text):
            fulltext.put_pages(self._text, key, pages)
        self._unindexed.discard(key)
        return True

    def put_documents(self, items: Sequence[tuple[str, Outline, Sequence[Page]]]) -> None:
        with self._text_lock, fulltext.transaction(self._text):
            for key, outline, pages in items:
                old = self._docs.get(key)
                self._docs[key] = Cached(old.props if old else None, None, outline)
                for page in pages:
                    self._pages[(key, page.page_index)] = page
                fulltext.put_pages(self._text, key, pages)

    def put_pages(self, key: str, pages: Sequence[Page]) -> None:
        for page in pages:
            self._pages[(key, page.page_index)] = page
        with self._text_lock, fulltext.transaction(self._text):
            fulltext.put_pages(self._text, key, pages)

    def page(self, key: str, index: int) -> Page | None:
        return self._pages.get((key, index))

    def forget(self, key: str) -> None:
        self._docs.pop(key, None)
        self._unindexed.discard(key)
        for k in [k for k in self._pages if k[0] == key]:
            del self._pages[k]
        with self._text_lock:
            fulltext.forget(self._text, key)

    def serve(self, added: Sequence[tuple[str, str, str]], dropped: Sequence[str]) -> None:
        with self._text_lock, fulltext.transaction(self._text):
            fulltext.serve(self._text, added, dropped)
        for key in set(dropped) - {row[0] for row in added}:
            self.forget(key)

    def search(self, query: TextQuery, scope: Scope, limit: int, at: Position) -> Found | None:
        from dpe_server.catalog import textquery  # at the first search: a read never does

        with self._text_lock:
            return textquery.search(self._text, query, scope, limit, at)

    def close(self) -> None:
        self._docs.clear()
        self._pages.clear()
        with self._text_lock:
            self._text.close()


class PageCache:
    """A small LRU of recently read pages in front of a store."""

    def __init__(self, capacity: int = 256) -> None:
        self.capacity = capacity
        self._pages: OrderedDict[tuple[str, int], Page] = OrderedDict()

    def get(self, key: str, index: int) -> Page | None:
        page = self._pages.get((key, index))
        if page is not None:
            self._pages.move_to_end((key, index))
        return page

    def put(self, key: str, page: Page) -> None:
        self._pages[(key, page.page_index)] = page
        self._pages.move_to_end((key, page.page_index))
        while len(self._pages) > self.capacity:
            self._pages.popitem(last=False)
