"""What is known of a folder's documents, and nothing that waits: the state both readers share.

`Index` holds one `Entry` per file (its doc_ref, store key, and what is known of it: cheap
properties, the outline of its last good version, or its error), restores entries from the
`Store`, and answers what Level 0 and Level 1 say of a document (`info_of`). It runs no
extraction and imports no event loop:

- `dpe_server.catalog.catalog.Catalog` adds the serving side: change announcements, the OCR
  queue, background warm-up, locks, retries of files caught mid-write, rescans;
- `dpe_server.read.oneshot.OneShotReader` adds a synchronous read of one document in this process
  (`dpe-server read`).

Both go through the same doc_ref assignment, store keys, outlines and error messages, so they
answer the same URI with the same bytes.
"""

from __future__ import annotations

import dataclasses
import os
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Generic, TypeVar, overload
from urllib.parse import quote, quote_from_bytes

from dpe_server.catalog import children as kids
from dpe_server.catalog.folder import FileStat, content_fingerprint, doc_ref_for, stem_of
from dpe_server.catalog.steps import (
    MakeCurrent,
    PagesJob,
    Probe,
    Recognise,
    Step,
    Steps,
    StoreCall,
)
from dpe_server.catalog.store import (
    Cached,
    Outline,
    PageCache,
    Store,
    StoreUnavailable,
    cache_key,
)
from dpe_server.extractors import (
    DEFAULT_LIMITS,
    Limits,
    extractor_fingerprint,
    file_type,
    format_of,
    is_paged,
    ocr,
)
from dpe_server.extractors.gcpause import collector_paused
from dpe_server.extractors.ocr import states as ocr_states
from dpe_server.isolation.passwords import NO_PASSWORDS, Passwords
from dpe_server.model import children
from dpe_server.model.errors import (
    DocumentNotFound,
    ElementNotFound,
    ExtractionError,
    PageNotFound,
    extraction_error,
)
from dpe_server.model.info import DocumentInfo, PageInfo
from dpe_server.model.metadata import (
    derive_keywords,
    derive_summary,
    derive_title,
    placeholder,
)
from dpe_server.model.tree import Document, Element, Page, Properties, page_of_element_id
from dpe_server.model.uri import DpeUri, check_host, format_uri

LISTED_METADATA = (
    "truncated",
    "has_macros",
    "read_as",
    "taken",
    "camera",
    "orientation",
    "location",
)
"""Document metadata shown at Level 0 and 1 as extension fields: the tree was cut, the file
holds macros (never run), a legacy file under a new suffix was read as what it is, a picture's
EXIF facts (its location only with `--keep-location`)."""


class Entry:
    """One file of the folder: its doc_ref, its store key, and what is known of it.

    Slots, and a constructor that writes them directly (an index holds one per document: at
    100,000 documents each attribute write and each byte counts at start-up)."""

    __slots__ = (
        "doc_ref",
        "error",
        "error_key",
        "key",
        "outline",
        "outline_key",
        "props",
        "rel",
        "stat",
        "touched",
        "unindexed",
        "waiting",
    )
    rel: str
    doc_ref: str
    stat: FileStat
    key: str
    """The store key of the file as it is now."""
    props: Properties | None
    error: ExtractionError | None
    error_key: str
    outline: Outline | None
    outline_key: str
    """The key `outline` (and the pages it serves) belong to: the last good version."""
    unindexed: str
    """A version whose pages the store holds without their search rows (`Cached.unindexed`:
    stored by `dpe-server read`), until they are built (`Store.index_stored`); "" none."""
    touched: dict[Entry, list[str] | tuple[()]] | None
    """Where the entry puts itself, with the keys it served before, when the version it serves
    changes (its index's record for the search index, `Index.served_changes`)."""
    waiting: set[Entry] | None
    """Its index's entries still being read (`Index.indexing`): the entry is in it while it is
    neither current nor failed, or while the version it serves is `unindexed`."""

    def __init__(self, rel: str, doc_ref: str, stat: FileStat, key: str) -> None:
        init = object.__setattr__  # not yet in an index: nothing to tell
        init(self, "rel", rel)
        init(self, "doc_ref", doc_ref)
        init(self, "stat", stat)
        init(self, "key", key)
        init(self, "props", None)
        init(self, "error", None)
        init(self, "error_key", "")
        init(self, "outline", None)
        init(self, "outline_key", "")
        init(self, "unindexed", "")
        init(self, "touched", None)
        init(self, "waiting", None)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.rel!r}, {self.doc_ref!r}, key={self.key[:12]!r})"

    def __setattr__(self, name: str, value: object) -> None:
        touched = self.touched
        if touched is None or name not in _STATE:
            object.__setattr__(self, name, value)
            return
        before = self.served_key
        object.__setattr__(self, name, value)
        self.changed_from(before)

    def changed_from(self, before: str) -> None:
        """The entry served `before`: tell its index if that changed, and settle it."""
        touched = self.touched
        if touched is not None and self.served_key != before:
            keys = touched.get(self)
            if keys:
                keys.append(before)
            else:
                touched[self] = [before]
        self.settle()

    def settle(self) -> None:
        """Put the entry in, or take it out of, its index's `waiting` set."""
        waiting = self.waiting
        if waiting is not None:
            if (self.current or self.failed) and not self.searched_later:
                waiting.discard(self)
            else:
                waiting.add(self)

    @property
    def searched_later(self) -> bool:
        """The version served is stored without its search rows (`unindexed`)."""
        return bool(self.unindexed) and self.unindexed == self.served_key

    @property
    def served_key(self) -> str:
        """The key of the version whose pages are served (and searched)."""
        return self.outline_key if self.outline is not None else self.key

    @property
    def file_type(self) -> str:
        return file_type(self.rel)

    @property
    def page_unit(self) -> str:
        """What a page of the file is called (its format says: sheet, slide, page...)."""
        fmt = format_of(self.rel)
        return fmt.page_unit if fmt is not None else "page"

    @property
    def stem(self) -> str:
        return stem_of(self.rel)

    @property
    def current(self) -> bool:
        """True when the outline is of the file as it is now."""
        return self.outline is not None and self.outline_key == self.key

    @property
    def failed(self) -> bool:
        """True when the file as it is now cannot be read (and no retry is pending)."""
        return self.error is not None and self.error_key == self.key


_STATE = frozenset({"key", "outline", "outline_key", "error", "error_key", "unindexed"})
"""The fields of an `Entry` that decide its `served_key`, whether it is `current` or
`failed`, and whether its words are searched yet."""
E = TypeVar("E", bound=Entry)
T = TypeVar("T")


def _iso_utc(mtime_ns: int) -> str:
    """`datetime.fromtimestamp(mtime_ns / 1e9, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")`, whose
    strftime costs more than the rest of a Level 0 line."""
    d = datetime.fromtimestamp(mtime_ns / 1e9, UTC)
    if d.year < 1000:  # strftime does not pad such a year
        return d.strftime("%Y-%m-%dT%H:%M:%SZ")
    return f"{d.year}-{d.month:02}-{d.day:02}T{d.hour:02}:{d.minute:02}:{d.second:02}Z"


def pending_pages(outline: Outline | None) -> list[int]:
    """The pages of a document that extraction left to recognise (`ocr: "pending"`)."""
    return [] if outline is None else list(outline.pending)


class _Listing(Sequence[DocumentInfo]):
    """Entries seen as their DocumentInfo, built one by one as they are taken."""

    def __init__(self, entries: list[Any], info_of: Callable[[Any], DocumentInfo]) -> None:
        self._entries = entries
        self._info_of = info_of

    def __len__(self) -> int:
        return len(self._entries)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]

    @overload
    def __getitem__(self, index: int) -> DocumentInfo: ...
    @overload
    def __getitem__(self, index: slice) -> list[DocumentInfo]: ...
    def __getitem__(self, index: int | slice) -> DocumentInfo | list[DocumentInfo]:
        if isinstance(index, slice):
            return [self._info_of(e) for e in self._entries[index]]
        return self._info_of(self._entries[index])


def outline_of(doc: Document, entry: Entry) -> Outline:
    return Outline(
        title=derive_title(doc, entry.stem),
        keywords=derive_keywords(doc),
        summary=derive_summary(doc, entry.file_type, entry.page_unit),
        pages=tuple(PageInfo.of(p) for p in doc.pages),
        metadata=dict(doc.metadata),
    )


class Index(ABC, Generic[E]):
    INDEX_LATER = False
    """A document extracted whole is stored without its search rows (`Store.put_document`
    with `index=False`), for a server to build: `dpe-server read`, which no one searches."""

    def __init__(
        self,
        root: Path,
        host: str,
        store: Store,
        passwords: Passwords = NO_PASSWORDS,
        limits: Limits = DEFAULT_LIMITS,
        *,
        bounds: str = "",
    ) -> None:
        self.root = root.resolve()
        self.bounds = bounds
        """The limits extraction runs under (`Backend.bounds`): a failure that hit one of them
        is kept with them, and the file read again under others (a larger `--memory-mb`)."""
        self._root_prefix = os.path.join(str(self.root), "")
        """`str(self.root / rel)` is this + rel (a rel has no empty, `.` or `..` name)."""
        self._root_uri = os.path.join(self.root.as_uri(), "")
        """`(self.root / rel).as_uri()` is this + rel quoted as `as_uri` quotes."""
        self.passwords = passwords
        """The passwords file's contents: which of its entries apply to a file is part of the
        file's key, so a tree decrypted with a password no longer given is not served."""
        self.host = host
        self.store = store
        self.pages_lru = PageCache()
        self._entries: dict[str, E] = {}
        self._by_ref: dict[str, E] = {}
        self._code = extractor_fingerprint()
        self._limits = limits
        self._ocr_variant = ""
        """`ocr.cache_variant` of `limits`, asked for when a key first needs it
        (`_fingerprint_of`): it asks which engine is installed (Tesseract's version: two
        processes), which a read of a web page, a text or an e-book never needs."""
        self._touched: dict[Entry, list[str] | tuple[()]] = {}
        """Entries whose served version changed since the search index was last told, with
        the keys they served meanwhile."""
        self._served: dict[Entry, str] = {}
        self._sorted: list[E] | None = None
        """`entries()`, until an entry is added or dropped."""
        self._waiting: set[Entry] = set()
        """The entries neither current nor failed (`Entry.waiting`)."""
        self._children: dict[str, set[str]] = {}
        """The children of each container served as documents, by relative path."""
        """The key each entry served when the search index was last told (`served_changes`)."""

    @abstractmethod
    def _new_entry(self, rel: str, doc_ref: str, st: FileStat, key: str) -> E:
        """A new entry of the reader's own kind (the catalog's carries a lock)."""

    def _key(self, rel: str, st: FileStat) -> str:
        """The store key of the file at `rel` as `st` says it is; where the times are coarse
        (`FileStat.coarse`) this reads the file for its content fingerprint."""
        if children.depth(rel):
            return self._child_key(rel, st)
        content = content_fingerprint(self.root, rel) if st.coarse else ""
        fingerprint = self._fingerprint_of(rel) + self.passwords.digest(rel)
        return cache_key(self._root_prefix + rel, st, fingerprint, content)

    def _fingerprint_of(self, rel: str) -> str:
        """What of the code and settings a key of the file (or child) at `rel` holds: the code
        that makes trees, and the settings that change them (OCR, locations) where its format
        may recognise a picture (`Format.recognises_pictures`; a child by its own format)."""
        fmt = format_of(children.name_of(rel))
        if fmt is not None and not fmt.recognises_pictures:
            return self._code
        if not self._ocr_variant:
            limits = self._limits
            self._ocr_variant = ocr.cache_variant(
                limits.ocr, limits.ocr_languages, limits.ocr_engine, limits.keep_location
            )
        return self._code + self._ocr_variant

    def _keys(self, found: Mapping[str, FileStat]) -> dict[str, str]:
        return {rel: self._key(rel, st) for rel, st in found.items()}

    def _add(self, rel: str, st: FileStat, key: str | None = None) -> E:
        """Add the file at `rel` with its doc_ref and its store key (`key` when given)."""
        ref = doc_ref_for(rel)
        chars = 6
        while ref in self._by_ref and self._by_ref[ref].rel != rel:
            chars += 2
            ref = doc_ref_for(rel, chars)
        entry = self._new_entry(rel, ref, st, self._key(rel, st) if key is None else key)
        self._entries[rel] = entry
        self._by_ref[ref] = entry
        self._sorted = None
        object.__setattr__(entry, "touched", self._touched)  # (not a state field)
        object.__setattr__(entry, "waiting", self._waiting)
        entry.settle()
        self._touched.setdefault(entry, ())
        return entry

    def _drop(self, entry: Entry) -> None:
        """The file of `entry` is gone (and the documents inside it)."""
        self._drop_children(entry)
        self._entries.pop(entry.rel, None)
        self._by_ref.pop(entry.doc_ref, None)
        entry.waiting = None
        self._waiting.discard(entry)
        self._sorted = None
        entry.key = ""
        self._touched.setdefault(entry, ())  # what it served is no longer served

    # ---- documents inside documents (docs/children.md) -----------------------------------

    def _child_key(self, rel: str, st: FileStat) -> str:
        """A child's store key: its path, and the version of its container it was listed by."""
        container = self._entries.get(children.container_of(rel))
        version = "" if container is None else container.outline_key or container.key
        fingerprint = self._fingerprint_of(rel) + self.passwords.digest(children.split(rel)[0])
        return cache_key(self._root_prefix + rel, st, fingerprint, version)

    def _sync_children(self, entry: Entry) -> tuple[list[E], bool]:
        """Serve the children the outline of `entry` lists, as documents of their own (each
        restored from the store when it knows it), and no others: the children whose version
        is new, and whether any came or went."""
        wanted = kids.listed(entry.rel, entry.outline)
        before = self._children.pop(entry.rel, set())
        gone = [self._entries[rel] for rel in before - wanted.keys() if rel in self._entries]
        for child in gone:
            self._drop(child)
        if wanted:
            self._children[entry.rel] = set(wanted)
        fresh: list[E] = []
        for rel, size in wanted.items():
            st = kids.child_stat(entry.stat, size)
            known = self._entries.get(rel)
            if known is not None and known.key == self._child_key(rel, st):
                continue
            child = known if known is not None else self._add(rel, st, "")
            child.stat = st
            child.key = self._child_key(rel, st)
            self._restore(child)
            fresh.append(child)
        return fresh, bool(gone) or bool(wanted.keys() - before)

    def _children_found(self, entry: Entry, fresh: list[E], listed: bool) -> None:
        """The children of `entry` were read from a new extraction of it: `fresh` are new
        versions, `listed` says whether any came or went (the catalog extracts and announces)."""

    def _drop_children(self, entry: Entry) -> None:
        for rel in self._children.pop(entry.rel, ()):
            child = self._entries.get(rel)
            if child is not None:
                self._drop(child)

    def child_keys(self, entry: Entry) -> dict[str, str]:
        """The store key of each child of `entry` served, by relative path."""
        rels = self._children.get(entry.rel, ())
        return {rel: self._entries[rel].key for rel in rels if rel in self._entries}

    def _family(self, entry: Entry) -> dict[str, str]:
        """What Level 0 and 1 say of a child: its container's doc_ref and its path in it."""
        if not children.depth(entry.rel):
            return {}
        container = self._entries.get(children.container_of(entry.rel))
        parent = container.doc_ref if container is not None else ""
        return {"parent": parent, "path": children.path_in(entry.rel)}

    def _linked(self, entry: Entry, page: Page) -> Page:
        """A page of `entry` whose links to its children point at their `dpe://` URIs (their
        `file:` URIs when they are not served as documents)."""
        fmt = format_of(children.name_of(entry.rel))
        if fmt is None or fmt.member is None:
            return page

        def url_of(path: str) -> str:
            rel = children.child_rel(entry.rel, path)
            child = self._entries.get(rel)
            if child is not None:
                return format_uri(self.host, child.doc_ref)
            if kids.servable(entry.rel, path):  # listed once its container's tree is known
                return format_uri(self.host, doc_ref_for(rel))  # (a page read first)
            return self.file_uri(rel)

        return kids.linked(page, url_of)

    def served_changes(self) -> tuple[list[tuple[str, str, str]], list[str]]:
        """What changed for the search index since it was last told: the keys now served
        (key, doc_ref, file type), and the keys no longer served, of versions superseded or
        of files gone (`Store.serve`)."""
        added: list[tuple[str, str, str]] = []
        dropped: list[str] = []
        touched = list(self._touched.items())
        self._touched.clear()
        for entry, before in touched:
            live = self._entries.get(entry.rel) is entry
            now = entry.served_key if live else ""
            was = self._served.pop(entry, "")
            gone = {*before, was, "" if live else entry.served_key}
            if now:
                self._served[entry] = now
                if now != was:
                    added.append((now, entry.doc_ref, entry.file_type))
            dropped += sorted(gone - {now, ""})
        return added, dropped

    def indexing(self, file_type: str = "", doc_ref: str = "") -> int:
        """How many documents (of `file_type`, or `doc_ref`) are not yet extracted: their
        words may not be searchable yet."""
        if doc_ref:
            entry = self._by_ref.get(doc_ref)
            return int(entry in self._waiting and (not file_type or entry.file_type == file_type))
        return sum(1 for e in self._waiting if not file_type or e.file_type == file_type)

    @staticmethod
    def _in_scope(entry: Entry, file_type: str, doc_ref: str) -> bool:
        return (not file_type or entry.file_type == file_type) and (
            not doc_ref or entry.doc_ref == doc_ref
        )

    def _restore(self, entry: Entry) -> bool:
        """Take what the store knows of the entry's key; False when it knows nothing."""
        return self._apply(entry, self.store.lookup(entry.key))

    def _restore_all(self, entries: Sequence[Entry]) -> set[str]:
        """`_restore` for many entries in one store query; returns the rels it knew.

        The cyclic collector is paused meanwhile: what a restore builds is a few objects per
        document (outlines, their keywords and metadata) and none of them is garbage, yet at
        100,000 documents the collector walked them all several times (0.3 CPU s)."""
        with collector_paused():
            found = self.store.lookup_many([e.key for e in entries])
            known: set[str] = set()
            for entry in entries:
                touched, before = entry.touched, entry.served_key
                object.__setattr__(entry, "touched", None)  # told once below, not once a field
                try:
                    if self._apply(entry, found.get(entry.key)):
                        known.add(entry.rel)
                finally:
                    object.__setattr__(entry, "touched", touched)
                entry.changed_from(before)
            return known

    def _apply(self, entry: Entry, cached: Cached | None) -> bool:
        if cached is None:
            return False
        error = cached.error
        if error is not None and error.get("bounds", self.bounds) == self.bounds:
            entry.error = extraction_error(str(error["kind"]), str(error["message"]))
            entry.error_key = entry.key
            return True
        if cached.props is None and cached.outline is None:
            return False
        entry.props = cached.props or entry.props
        if cached.outline is not None:
            entry.outline, entry.outline_key = cached.outline, entry.key
            entry.unindexed = entry.key if cached.unindexed else ""
            self._sync_children(entry)
        return True

    def _record_failure(self, entry: Entry, key: str, exc: ExtractionError) -> None:
        """The file as of `key` cannot be read: list its error (and keep it, unless transient)."""
        entry.error, entry.error_key = exc, key
        if not exc.transient:
            bounds = {"bounds": self.bounds} if exc.bound else {}
            self.store.put_error(key, {**exc.to_json(), **bounds})

    def _adopt(self, entry: Entry, key: str, doc: Document, outline: Outline) -> bool:
        """Serve a document just extracted (and stored) as of `key`; True when it is current.

        Extractions of one file run one at a time, so this tree is the newest good one even
        when the file changed meanwhile: it is served until the next.
        """
        for page in doc.pages[: self.pages_lru.capacity // 2]:
            self.pages_lru.put(key, page)  # what was just extracted is likely read next
        entry.outline, entry.outline_key = outline, key
        entry.unindexed = key if self.INDEX_LATER else ""  # as `_put_extracted` stored it
        if key != entry.key:
            return False
        entry.props = doc.properties
        entry.error, entry.error_key = None, ""
        self._children_found(entry, *self._sync_children(entry))
        return True

    # ---- queries -------------------------------------------------------------------------

    def entries(self) -> list[E]:
        """Every entry, ordered by relative path (sorted once per change of the set)."""
        if self._sorted is None:
            self._sorted = sorted(self._entries.values(), key=lambda e: e.rel)
        return list(self._sorted)

    def documents(self) -> Sequence[DocumentInfo]:
        """Every document, ordered by relative path; each one's DocumentInfo is built when it
        is taken (a Level 0 page builds the page's, not the folder's)."""
        return _Listing(self.entries(), self.info_of)

    def check_host(self, uri: DpeUri) -> None:
        """Refuse a URI naming another server (hosts compare case-insensitively)."""
        check_host(uri, self.host)

    def entry(self, doc_ref: str) -> E:
        entry = self._by_ref.get(doc_ref)
        if entry is None:
            raise DocumentNotFound(
                f"No document '{doc_ref}' on {self.host}; read dpe://{self.host} for the catalog."
            )
        return entry

    def file_uri(self, rel: str) -> str:
        """The `file:` URI of a file, or of a child: its container's with its path as the
        fragment."""
        file_rel, inner = children.split(rel)
        uri = self._root_uri + quote_from_bytes(os.fsencode(file_rel))
        return uri + "#" + quote(children.fragment(rel), safe="/!") if inner else uri

    def info_of(self, entry: Entry) -> DocumentInfo:
        common = {
            "doc_ref": entry.doc_ref,
            "file_uri": self.file_uri(entry.rel),
            "file_type": entry.file_type,
            "last_modified": _iso_utc(entry.stat.mtime_ns),
        }
        family = self._family(entry)
        if entry.outline is not None:
            o = entry.outline
            extra = {k: o.metadata[k] for k in LISTED_METADATA if o.metadata.get(k)}
            extra |= family
            return DocumentInfo(
                title=o.title,
                page_count=o.page_count,
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
                extra=family,
                **common,
            )
        props = entry.props
        return DocumentInfo(
            title=(
                props.title
                if props and props.title and not placeholder(props.title, entry.stem)
                else entry.stem
            ),
            page_count=props.page_count if props else 0,
            keywords=props.keywords if props else (),
            summary=(props.summary or "") if props and not placeholder(props.summary) else "",
            extra={"indexing": True, **family},
            **common,  # type: ignore[arg-type]
        )

    def page_count(self, entry: Entry) -> int:
        """Pages of the last good version (while a failure is being retried, too)."""
        if entry.outline is not None:
            return entry.outline.page_count
        if entry.failed or entry.props is None:
            return 0
        return entry.props.page_count

    def _check_index(self, entry: Entry, index: int) -> None:
        count = self.page_count(entry)
        if index >= count:
            last = f"pages 0 to {count - 1}" if count else "no pages"
            raise PageNotFound(
                f"Page {index} is out of range: '{entry.doc_ref}' has {count} "
                f"page{'' if count == 1 else 's'} ({last}).",
                page_count=count,
            )

    def _unreadable_page(self, entry: Entry, index: int) -> PageNotFound:
        return PageNotFound(
            f"Page {index} of '{entry.doc_ref}' could not be read; the file may have changed.",
            page_count=self.page_count(entry),
        )

    def _no_element(self, entry: Entry, element_id: str) -> ElementNotFound:
        hint = page_of_element_id(element_id)
        return ElementNotFound(
            f"No element '{element_id}' in '{entry.doc_ref}'; read "
            f"{format_uri(self.host, entry.doc_ref, page_index=hint or 0)} "
            "for the element ids of a page."
        )

    # ---- the read sequence, as steps each reader performs (`steps`) -----------------------

    def _counted(self, entry: Entry) -> Steps[None]:
        """Know the page count: from the outline, or (a paged format) a probe, so that one page
        can be read without the others; other formats are extracted whole."""
        if entry.current or entry.failed:
            return
        if not is_paged(entry.rel):
            yield MakeCurrent(entry)
        elif entry.props is None and entry.outline is None:
            yield Probe(entry)

    def _load_page(self, entry: Entry, index: int) -> Steps[tuple[str, Page] | None]:
        """The page with the store key of the version it is of (None: it cannot be read)."""
        key = entry.outline_key if entry.outline is not None else entry.key
        page = self.pages_lru.get(key, index)
        if page is None:
            page = yield from self._stored_page(entry, key, index)
        if page is None and entry.outline is None and is_paged(entry.rel):
            try:
                pages = yield PagesJob(entry, (index,))
            except ExtractionError:
                yield MakeCurrent(entry)
                return (yield from self._load_page(entry, index)) if entry.outline else None
            page = next((p for p in pages if p.page_index == index), None)
        if page is None and entry.outline is not None:
            # The store lost it (evicted or unreadable): extract the document again.
            yield StoreCall(self.store.forget, (entry.outline_key,))
            entry.outline_key = ""
            yield MakeCurrent(entry)
            key = entry.outline_key
            page = yield from self._stored_page(entry, key, index)
        if page is None:
            return None
        if ocr_states.is_pending(page.metadata):
            page = yield Recognise(entry, key, page)  # read: recognised now, ahead of the queue
        page = self._linked(entry, page)
        self.pages_lru.put(key, page)
        return key, page

    def _stored_page(self, entry: Entry, key: str, index: int) -> Steps[Page | None]:
        """The page as the store holds it (None: not there). A store that cannot be reached
        fails the read of a document already extracted, saying so (its pages are there, and
        are read again once it is back: extracting it again here would redo done work); a page
        of a document not yet extracted is extracted here, as if the store did not hold it."""
        try:
            page: Page | None = yield StoreCall(self.store.page, (key, index))
        except StoreUnavailable as exc:
            if entry.outline is None:
                return None
            raise PageNotFound(
                f"Page {index} of '{entry.doc_ref}' cannot be read just now: {exc}; it is "
                "tried again at every read, so read it again shortly.",
                page_count=self.page_count(entry),
            ) from None
        return page

    def _keyed_page(self, entry: Entry, index: int) -> Steps[tuple[str, Page]]:
        """A page, with the store key of the version of the file it is of."""
        yield from self._counted(entry)
        self._check_index(entry, index)
        loaded = yield from self._load_page(entry, index)
        if loaded is None:
            raise self._unreadable_page(entry, index)
        return loaded

    def _keyed_element(self, entry: Entry, element_id: str) -> Steps[tuple[str, int, Element]]:
        """An element and its page index, with the store key of the version it is of."""
        # Every id this server gives out names its page (p{page}-{abbr}{n}): another is unknown.
        hint = page_of_element_id(element_id)
        if hint is not None:
            yield from self._counted(entry)
        if hint is not None and hint < self.page_count(entry):
            loaded = yield from self._load_page(entry, hint)
            found = loaded[1].element(element_id) if loaded is not None else None
            if loaded is not None and found is not None:
                return loaded[0], hint, found
        raise self._no_element(entry, element_id)

    # ---- pages extraction left to recognise (`ocr: "pending"`) ----------------------------

    @staticmethod
    async def _recognition(job: Awaitable[Page | None], page: Page) -> Page | None:
        """What a pending page becomes once the job recognising it ran: the recognised page,
        or the page saying `ocr: "failed"` and why (that page only: the job had its own
        deadline); None when it stays pending (a transient failure: shutting down...)."""
        try:
            found = await job
        except ExtractionError as exc:
            if exc.transient:
                return None
            return ocr_states.failed(page, exc.kind, exc.message)
        return found

    def _recognised_outline(self, entry: Entry, key: str, page: Page) -> Outline | None:
        """The outline of `key` with `page` recognised (its Level 1 line), made the entry's;
        None when `key` is not the version whose outline is served."""
        outline = entry.outline
        if outline is None or entry.outline_key != key or page.page_index >= outline.page_count:
            return None
        entry.outline = outline.with_page(PageInfo.of(page))
        return entry.outline

    def _keep_recognised(self, entry: Entry, key: str, page: Page, outline: Outline | None) -> None:
        """Store a recognised page (and the outline that lists it) like any page (blocking)."""
        self.pages_lru.put(key, page)
        if outline is not None:
            self.store.put_document(key, outline, [page])
        elif key == entry.served_key:
            self.store.put_pages(key, [page])

    def _put_extracted(self, entry: Entry, key: str, doc: Document) -> tuple[Document, Outline]:
        """Store a whole-document extraction of `key`, with its outline (blocking). A page it
        leaves pending that the store holds recognised under `key` (a read recognised it before
        the document was extracted whole) is kept recognised, and listed so."""
        return self._put_extracted_many([(entry, key, doc)])[0]

    def _put_extracted_many(
        self, extracted: Sequence[tuple[Entry, str, Document]]
    ) -> list[tuple[Document, Outline]]:
        """`_put_extracted` for many documents, stored in one transaction (a batch of
        children: docs/children.md)."""
        out: list[tuple[Document, Outline]] = []
        for entry, key, doc in extracted:
            pages = list(doc.pages)
            for i, page in enumerate(pages):
                if ocr_states.is_pending(page.metadata):
                    stored = self.store.page(key, page.page_index)
                    if stored is not None and not ocr_states.is_pending(stored.metadata):
                        pages[i] = stored
            doc = dataclasses.replace(doc, pages=tuple(pages))  # noqa: PLW2901
            out.append((doc, outline_of(doc, entry)))
        if len(out) == 1:
            (kept, outline), key = out[0], extracted[0][1]
            self.store.put_document(key, outline, kept.pages, index=not self.INDEX_LATER)
        elif out:
            items = [(key, o, d.pages) for (_, key, _), (d, o) in zip(extracted, out, strict=True)]
            self.store.put_documents(items)
        return out

    def _settled_outline(self, entry: Entry, key: str) -> Outline | None:
        """Once no page of `key` waits to be recognised: its outline derived again from every
        page (title, keywords and summary from the recognised text), when the document's
        properties are known; else None (blocking: reads the pages from the store)."""
        outline, props = entry.outline, entry.props
        if outline is None or entry.outline_key != key or props is None or pending_pages(outline):
            return None
        pages = [self.store.page(key, info.page_index) for info in outline.pages]
        if any(p is None for p in pages):
            return None
        doc = Document(props, tuple(p for p in pages if p is not None), outline.metadata)
        return outline_of(doc, entry)

    async def run_steps(self, steps: Steps[T]) -> T:
        """Perform every step of `steps` (an extraction error, or a store that cannot be
        reached, goes back into the sequence)."""
        value: Any = None
        error: ExtractionError | StoreUnavailable | None = None
        while True:
            try:
                step = steps.send(value) if error is None else steps.throw(error)
            except StopIteration as done:
                result: T = done.value
                return result
            try:
                value, error = await self._perform(step), None
            except (ExtractionError, StoreUnavailable) as exc:
                value, error = None, exc

    @abstractmethod
    async def _perform(self, step: Step) -> Any:
        """Do what one step asks (see `steps`)."""
