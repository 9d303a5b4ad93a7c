"""`completion/complete` for the templates' three arguments (`Completer`), and its per-session
rate limit.

Ranking is prefix first (shortest, then alphabetical), then fuzzy: the typed characters in
order anywhere in the candidate (or, for doc_refs, in the document title), tighter matches
first. At most 100 values, with `total` and `hasMore`.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from dpe_server.catalog.catalog import Catalog
from dpe_server.model.errors import DocumentNotFound
from dpe_server.model.integers import uint_or_none

MAX_VALUES = 100


def _subsequence_span(needle: str, hay: str) -> int | None:
    """Length of the shortest-from-first-match window holding `needle` in order, or None."""
    if not needle:
        return 0
    pos = hay.find(needle[0])
    best: int | None = None
    while pos != -1:
        i, j = 1, pos + 1
        while i < len(needle) and j < len(hay):
            if hay[j] == needle[i]:
                i += 1
            j += 1
        if i == len(needle):
            span = j - pos
            best = span if best is None else min(best, span)
        else:
            break
        pos = hay.find(needle[0], pos + 1)
    return best


def rank(typed: str, candidates: Iterable[str], aliases: dict[str, str] | None = None) -> list[str]:
    """Candidates matching `typed`: prefix matches first, then fuzzy, best first.

    `aliases` maps a candidate to more text it may be found by (a document's title).
    """
    needle = typed.lower()
    prefix: list[tuple[int, str]] = []
    fuzzy: list[tuple[int, int, str]] = []
    for cand in candidates:
        low = cand.lower()
        if low.startswith(needle):
            prefix.append((len(cand), cand))
            continue
        if not needle:
            continue
        where = low.find(needle)
        if where != -1:
            fuzzy.append((0, where, cand))
            continue
        span = _subsequence_span(needle, low)
        alias = (aliases or {}).get(cand, "").lower()
        if span is None and alias:
            at = alias.find(needle)
            span = len(needle) if at != -1 else _subsequence_span(needle, alias)
        if span is not None:
            fuzzy.append((1, span, cand))
    prefix.sort(key=lambda t: (t[0], t[1]))
    fuzzy.sort()
    return [c for _, c in prefix] + [c for _, _, c in fuzzy]


@dataclass(frozen=True, slots=True)
class Completed:
    values: list[str]
    total: int
    has_more: bool


def cap(values: Sequence[str]) -> Completed:
    return Completed(list(values[:MAX_VALUES]), len(values), len(values) > MAX_VALUES)


class RateLimiter:
    """A token bucket per key: `rate` requests a second on average, bursts of `burst`."""

    def __init__(self, rate: float, burst: int) -> None:
        self.rate = rate
        self.burst = burst
        self._buckets: dict[object, tuple[float, float]] = {}

    def allow(self, key: object) -> bool:
        now = time.monotonic()
        tokens, last = self._buckets.get(key, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + (now - last) * self.rate)
        if tokens < 1.0:
            self._buckets[key] = (tokens, now)
            return False
        self._buckets[key] = (tokens - 1.0, now)
        if len(self._buckets) > 10_000:  # forget the oldest keys of closed sessions
            for old in list(self._buckets)[:5_000]:
                del self._buckets[old]
        return True


MAX_COMPLETION_PAGES = 50
"""element_id completion without a page_index looks at this many pages at most."""


class Completer:
    """Completion values of the two templates' arguments from the catalog."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog

    async def values(
        self, template: str, name: str, typed: str, context: Mapping[str, str]
    ) -> list[str]:
        """Values for argument `name` of `template` (one of this server's), best first; none
        for an unknown argument, a template of another host or missing context."""
        catalog = self.catalog
        if not template.startswith(f"dpe://{catalog.host}/"):
            return []
        await catalog.ready.wait()
        if name == "doc_ref":
            titles = {d.doc_ref: d.title for d in catalog.documents()}
            return rank(typed, titles, titles)
        doc_ref = context.get("doc_ref")
        if not doc_ref:
            return []
        try:
            entry = catalog.entry(doc_ref)
        except DocumentNotFound:
            return []
        if name == "page_index":
            count = catalog.page_count(entry)
            return [str(i) for i in range(count) if str(i).startswith(typed)]
        if name == "element_id":
            page = context.get("page_index")
            if page is not None and page.strip():
                index = uint_or_none(page)  # a page index that names no page narrows to none
                indices = [index] if index is not None and index < catalog.page_count(entry) else []
            else:
                _, outline = await catalog.outline(doc_ref)
                indices = [p.page_index for p in outline.pages] if outline else []
            ids: list[str] = []
            for index in indices[:MAX_COMPLETION_PAGES]:
                loaded = await catalog.page(doc_ref, index)
                ids += [el.element_id for el in loaded.elements]
            return rank(typed, ids)
        return []
