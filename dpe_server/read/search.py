"""Search: the elements whose text holds every term of a query, best first, with their URIs.

The terms are looked up in the full-text index of the cache database (`catalog.fulltext`:
words, "phrases", `prefix*`, Chinese of any length; every term must occur; ranked by BM25), in
a worker thread, so other requests are answered meanwhile. The query is bounded
(`SEARCH_MAX_CHARS`, `SEARCH_MAX_TERMS`). A search can be narrowed to a file type, element
categories and one document (which is extracted first, if it is not yet); a page of results
ends with a `next_cursor` when there are more. While documents of the search's scope are not
yet extracted, their words may be missing: the answer says `"indexing": true` and, first, a
`note` saying how many of how many are still being read.
The `search` tool is a thin handler over `search`; it first takes one of the server's search
slots (`SearchSlots`: `SEARCHES` at once, `SEARCHES_PER_SESSION` of one session), and a search
past them is answered "busy" at once rather than queued behind the others.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections import Counter
from collections.abc import Hashable, Iterator
from contextlib import contextmanager
from typing import Any

from dpe_server.catalog.catalog import Catalog
from dpe_server.catalog.sqlite import SEARCHES
from dpe_server.catalog.store import StoreUnavailable
from dpe_server.catalog.textquery import Position, Scope, TextQuery
from dpe_server.model.errors import RequestError
from dpe_server.model.integers import TooLarge, parse_uint
from dpe_server.model.tree import Category
from dpe_server.model.uri import format_uri

SEARCH_DEFAULT = 20
SEARCH_MAX = 100
SEARCH_MAX_CHARS = 1000
"""A longer query is refused: matching costs grow with its length (issue 14)."""
SEARCH_MAX_TERMS = 32
"""Distinct terms (words and phrases) in a query at most."""
SEARCHES_PER_SESSION = 2
"""Searches of one session running at once at most (of the server's `SEARCHES`)."""
POSITION_MAX = 2**63 - 1
"""A cursor's numbers are SQLite integers (rowids): a larger one is no cursor this server gave."""
CATEGORIES = tuple(c.value for c in Category)


class QueryError(ValueError):
    """A search query out of bounds; the message says what to send instead."""


class SearchBusy(Exception):
    """Too many searches running (the server's, or one session's); the message says to retry."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class SearchSlots:
    """How many searches run at once: `server` in all, `session` of any one session. A search
    past either is refused at once (`SearchBusy`): queued, the searches of a client that sends
    many would hold up everyone else's behind them. Used from the event loop only."""

    def __init__(self, server: int = SEARCHES, session: int = SEARCHES_PER_SESSION) -> None:
        self.server = server
        self.session = session
        self._running: Counter[Hashable] = Counter()

    @contextmanager
    def slot(self, session: Hashable) -> Iterator[None]:
        """Hold a slot of `session`'s while the block runs; raises `SearchBusy`."""
        if self._running[session] >= self.session:
            raise SearchBusy(
                f"This session has {self._running[session]} searches running already (at most "
                f"{self.session} at once); wait for one to answer, then search again."
            )
        if self._running.total() >= self.server:
            raise SearchBusy(
                f"The server is running {self.server} searches already (its most at once); "
                "search again in a moment."
            )
        self._running[session] += 1
        try:
            yield
        finally:
            self._running[session] -= 1
            if not self._running[session]:
                del self._running[session]


def search_query(query: object) -> TextQuery:
    """The terms of `query`, within the bounds; raises `QueryError`."""
    text = str(query or "")
    if len(text) > SEARCH_MAX_CHARS:
        raise QueryError(
            f"The query is {len(text):,} characters long; give at most {SEARCH_MAX_CHARS:,} "
            f"characters and {SEARCH_MAX_TERMS} distinct words."
        )
    parsed = TextQuery.parse(text)
    if not parsed.terms:
        raise QueryError("The query is empty; give one or more words to look for.")
    if len(parsed.terms) > SEARCH_MAX_TERMS:
        raise QueryError(
            f"The query has {len(parsed.terms)} distinct words; give at most {SEARCH_MAX_TERMS}."
        )
    return parsed


def search_limit(value: object) -> int:
    """The `limit` argument, clamped to 1..SEARCH_MAX; raises `QueryError` for a non-number."""
    if value is None or value == "":
        return SEARCH_DEFAULT
    try:
        limit = int(value) if isinstance(value, int | float) else parse_uint(str(value).strip())
    except TooLarge:
        limit = SEARCH_MAX
    except (TypeError, ValueError, OverflowError):
        raise QueryError(f"limit must be an integer from 1 to {SEARCH_MAX}.") from None
    return max(1, min(limit, SEARCH_MAX))


def search_categories(value: object) -> tuple[str, ...]:
    """The `category` argument: one category, a comma-separated list or a list of them."""
    items = value if isinstance(value, list) else str(value or "").split(",")
    wanted = tuple(dict.fromkeys(str(c).strip().lower() for c in items if str(c).strip()))
    unknown = [c for c in wanted if c not in CATEGORIES]
    if unknown:
        raise QueryError(
            f"Unknown category '{unknown[0][:40]}'; the categories are {', '.join(CATEGORIES)}."
        )
    return wanted


def _cursor(at: Position, of: str) -> str:
    raw = json.dumps({"after": at.after, "skip": at.skip, "of": of}, separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def _position(cursor: object, of: str) -> Position:
    """Where the page a `cursor` names starts; raises `QueryError` for a foreign one."""
    if cursor is None or cursor == "":
        return Position()
    try:
        text = str(cursor)
        data = json.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
        at = Position(data["after"], data["skip"])
        numbers = (at.after, at.skip)
        if data["of"] == of and all(type(n) is int and 0 <= n <= POSITION_MAX for n in numbers):
            return at
    except (ValueError, TypeError, KeyError, binascii.Error):
        pass
    raise QueryError(
        "The cursor is not one this search gave; send the same query and filters with the "
        "next_cursor of its last answer, or no cursor for the first page."
    )


async def search(
    catalog: Catalog,
    query: object,
    file_type: object = None,
    limit: object = None,
    *,
    category: object = None,
    doc_ref: object = None,
    cursor: object = None,
) -> dict[str, Any]:
    """What the `search` tool answers (query, total, total_capped, results, indexing,
    next_cursor); raises `QueryError`."""
    parsed = search_query(query)
    wanted = search_limit(limit)
    scope = Scope(
        categories=search_categories(category),
        file_type=str(file_type or "").strip().lower().lstrip("."),
        doc_ref=str(doc_ref or "").strip(),
    )
    await catalog.listed.wait()
    if scope.doc_ref:  # one document is extracted first, as a read of it would be
        try:
            await catalog.outline(scope.doc_ref)
        except RequestError as exc:
            raise QueryError(exc.message) from None
    of = hashlib.sha256(repr((parsed, scope)).encode()).hexdigest()[:16]
    # Counted before the index is read: a document counted as read has its rows in the index
    # already. Counted after, one whose rows were built while the search ran was missing from
    # its results and no longer said to be still being read.
    waiting = catalog.indexing(scope.file_type, scope.doc_ref)
    try:
        found = await catalog.search(parsed, scope, wanted, _position(cursor, of))
    except StoreUnavailable as exc:
        raise QueryError(
            f"The search index cannot be read just now: {exc}; it is tried again at every "
            "search, so search again shortly."
        ) from None
    if found is None:
        raise QueryError("The search index could not be read just now; try again.")
    results = []
    for hit in found.hits:
        try:
            title = catalog.info_of(catalog.entry(hit.doc_ref)).title
        except RequestError:
            continue  # the file went away since the index was told
        results.append(
            {
                "uri": format_uri(catalog.host, hit.doc_ref, element_id=hit.element_id),
                "title": title,
                "page_index": hit.page_index,
                "category": hit.category,
                "snippet": hit.snippet,
            }
        )
    body: dict[str, Any] = {"query": query}
    if waiting:  # first, where a reader (a model) meets it before the results
        body["note"] = _still_reading(catalog, waiting, scope)
    body["total"] = found.total
    if found.capped:
        body["total_capped"] = True
    body |= {"results": results, "indexing": bool(waiting)}
    if found.next is not None:
        body["next_cursor"] = _cursor(found.next, of)
    return body


def _still_reading(catalog: Catalog, waiting: int, scope: Scope) -> str:
    """What a search answered while `waiting` documents of its scope are still being read
    says of them: how many of how many, and that their words may be missing."""
    if scope.doc_ref:
        return "This document is still being read: its words may be missing; search again shortly."
    kind = scope.file_type
    of = sum(1 for e in catalog.entries() if not kind or e.file_type == kind)
    return (
        f"{waiting} of {of} documents{f' ({kind})' if kind else ''} are still being read: "
        "their words may be missing from these results; search again shortly."
    )
