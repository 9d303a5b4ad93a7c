"""Search: the elements whose text holds every word of a query, best first, with their URIs.

The query is bounded (`SEARCH_MAX_CHARS`, `SEARCH_MAX_TERMS`); pages are loaded on the event
loop and matched in a worker thread, a chunk at a time, so other requests are answered
meanwhile; after `SEARCH_BUDGET_SECONDS` no further document is looked at and the answer says
it is partial. (A later issue replaces the scan with an index.) The `search` tool is a thin
handler over `search`.
"""

from __future__ import annotations

import heapq
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.to_thread

from dpe_server.catalog.catalog import Catalog
from dpe_server.model.errors import RequestError
from dpe_server.model.integers import TooLarge, parse_uint
from dpe_server.model.tree import Element, Page
from dpe_server.model.uri import format_uri

SEARCH_DEFAULT = 20
SEARCH_MAX = 100
SEARCH_MAX_CHARS = 1000
"""A longer query is refused: matching costs grow with its length (issue 14)."""
SEARCH_MAX_TERMS = 32
"""Distinct words in a query at most."""
SEARCH_BUDGET_SECONDS = 10.0
"""A search looks at no further document after this long, and says its results are partial."""
SEARCH_CHUNK_ELEMENTS = 2000
"""Elements matched in one go in a worker thread; pages are loaded between chunks."""


def _text_of(element: Element) -> str:
    return (element.summary + " " + json.dumps(element.content, ensure_ascii=False)).lower()


class QueryError(ValueError):
    """A search query out of bounds; the message says what to send instead."""


def search_words(query: object) -> tuple[str, ...]:
    """The distinct lower-case words of `query`, within the bounds; raises `QueryError`."""
    text = str(query or "")
    if len(text) > SEARCH_MAX_CHARS:
        raise QueryError(
            f"The query is {len(text):,} characters long; give at most {SEARCH_MAX_CHARS:,} "
            f"characters and {SEARCH_MAX_TERMS} distinct words."
        )
    words = tuple(dict.fromkeys(text.lower().split()))
    if not words:
        raise QueryError("The query is empty; give one or more words to look for.")
    if len(words) > SEARCH_MAX_TERMS:
        raise QueryError(
            f"The query has {len(words)} distinct words; give at most {SEARCH_MAX_TERMS}."
        )
    return words


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


@dataclass(frozen=True, slots=True)
class _Hit:
    rank: tuple[int, int]
    """(-score, order found): best first, then in document order."""
    body: dict[str, Any]


@dataclass
class _Found:
    """The best `limit` hits so far, and how many there were in all."""

    limit: int
    best: list[_Hit] = field(default_factory=list)
    total: int = 0

    def add(self, hits: list[_Hit]) -> None:
        self.total += len(hits)
        self.best = heapq.nsmallest(self.limit, self.best + hits, key=lambda hit: hit.rank)


def _match(
    host: str, pages: Sequence[tuple[str, str, Page]], words: tuple[str, ...], found: _Found
) -> list[_Hit]:
    """The elements of `pages` (doc_ref, title, page) holding every word, numbered on from
    the hits `found` so far. Runs in a worker thread: it is the costly part of a search."""
    hits: list[_Hit] = []
    for doc_ref, title, page in pages:
        for el in page.elements:
            text = _text_of(el)
            if all(w in text for w in words):
                hits.append(
                    _Hit(
                        (-sum(text.count(w) for w in words), found.total + len(hits)),
                        {
                            "uri": format_uri(host, doc_ref, element_id=el.element_id),
                            "document": title,
                            "page_index": page.page_index,
                            "category": el.category.value,
                            "summary": el.summary,
                        },
                    )
                )
    return hits


async def search(
    catalog: Catalog, query: object, file_type: object = None, limit: object = None
) -> dict[str, Any]:
    """What the `search` tool answers (query, total, results, partial); raises `QueryError`."""
    words = search_words(query)
    wanted = search_limit(limit)
    wanted_type = str(file_type or "").lower().lstrip(".")
    await catalog.ready.wait()
    deadline = anyio.current_time() + SEARCH_BUDGET_SECONDS
    entries = [e for e in catalog.entries() if e.file_type == wanted_type or not wanted_type]
    found = _Found(wanted)
    chunk: list[tuple[str, str, Page]] = []
    queued = searched = 0
    for entry in entries:
        _, outline = await catalog.outline(entry.doc_ref)
        title, infos = (outline.title, outline.pages) if outline else ("", ())
        for info in infos:
            try:
                page = await catalog.page(entry.doc_ref, info.page_index)
            except RequestError:
                continue  # the file changed under the search
            chunk.append((entry.doc_ref, title, page))
            queued += len(page.elements)
            if queued >= SEARCH_CHUNK_ELEMENTS:
                found.add(await anyio.to_thread.run_sync(_match, catalog.host, chunk, words, found))
                chunk, queued = [], 0
        searched += 1
        if anyio.current_time() > deadline:
            break
    if chunk:
        found.add(await anyio.to_thread.run_sync(_match, catalog.host, chunk, words, found))
    body: dict[str, Any] = {
        "query": query,
        "total": found.total,
        "results": [hit.body for hit in found.best],
        "partial": searched < len(entries),
    }
    if body["partial"]:
        body["note"] = (
            f"The search stopped after {SEARCH_BUDGET_SECONDS:g} s, having looked through "
            f"{searched} of {len(entries)} documents; narrow it with file_type or more words."
        )
    return body
