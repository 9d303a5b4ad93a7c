"""`completion/complete` for the templates' three arguments (`Completer`), and its per-session
rate limit.

Ranking is prefix first (shortest, then alphabetical), then fuzzy: the typed characters in
order anywhere in the candidate (or, for doc_refs, in the document title), tighter matches
first. At most 100 values, with `total` and `hasMore`.

doc_refs are completed from a `DocRefs` index of the catalog, rebuilt when its listing changes:
the doc_refs sorted (a prefix is a range found by bisection) and one text of every doc_ref
and title, a line each, that a compiled pattern searches for the typed characters in order (at
C speed, from each field's start: the first occurrence of the first character, then the first
of each next one). When more than 100 doc_refs start with what is typed, those are the values
and no fuzzy match is looked for (when exactly 100 do, one is looked for, to say whether there
are more); at most `FUZZY_RANKED` fuzzy matches are ranked. `total` then
counts those found, a lower bound (`hasMore` is set). The pattern is tried only on the lines
holding every ASCII letter and digit typed: the index keeps, per such character, a bitmap of
the lines holding it (n/8 bytes each); the lines whose bits are all set are joined, in doc_ref
order and a chunk at a time, into the text searched, so the matches and the order they are
found in are those of the whole text.
"""

from __future__ import annotations

import bisect
import operator
import re
import string
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import reduce
from itertools import compress, repeat

from dpe_server.catalog.catalog import Catalog
from dpe_server.catalog.index import Entry
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


FUZZY_RANKED = 2_000
"""Fuzzy matches of a doc_ref completion ranked at most (the first found, in doc_ref order)."""


def title_of(entry: Entry) -> str:
    """The document's title as Level 0 lists it (`Index.info_of`), without building the rest."""
    if entry.outline is not None:
        return entry.outline.title
    if entry.props is not None and entry.props.title and not entry.failed:
        return entry.props.title
    return entry.stem


def _lower(text: str) -> str:
    """`text.lower()`, `text` itself when that is it."""
    return text if text.islower() else text.lower()


class DocRefs:
    """doc_refs and titles indexed for completion (see the module's docstring)."""

    def __init__(self, pairs: Iterable[tuple[str, str]]) -> None:
        flat = str.maketrans("\t\n\r", "   ")  # one line of text per document
        # A doc_ref is lower case already: kept as it is, not copied (one per document).
        items = sorted((_lower(ref), title.lower().translate(flat)) for ref, title in pairs)
        self.refs = [ref for ref, _ in items]
        self.by_length = sorted(self.refs, key=len)  # stable: alphabetical within a length
        self.lines = [f"\n{ref}\t{title}" for ref, title in items]
        self.text = "".join(self.lines)
        self.holding = {c: _bitmap(map(operator.contains, self.lines, repeat(c))) for c in INDEXED}

    def complete(self, typed: str) -> Completed:
        """The best `MAX_VALUES` doc_refs for `typed`, and how many match: every one, unless
        more than `MAX_VALUES` match by prefix (then those) or more than `FUZZY_RANKED` by
        fuzzy match (then those found so far), with `has_more`."""
        needle = typed.lower()
        if not needle:
            return Completed(
                self.by_length[:MAX_VALUES], len(self.refs), len(self.refs) > MAX_VALUES
            )
        lo = bisect.bisect_left(self.refs, needle)
        hi = bisect.bisect_left(self.refs, needle + "\U0010ffff", lo)
        prefix = sorted(self.refs[lo:hi], key=len)
        if len(prefix) > MAX_VALUES:  # the values are prefix matches: no fuzzy scan
            return Completed(prefix[:MAX_VALUES], len(prefix), True)
        if len(prefix) == MAX_VALUES:  # so are they here: is there any other match?
            more = len(self.fuzzy(needle, 1))
            return Completed(prefix, MAX_VALUES + more, bool(more))
        fuzzy = self.fuzzy(needle)
        values = prefix[:MAX_VALUES]
        values += _ranked(needle, fuzzy)[: MAX_VALUES - len(values)]
        total = len(prefix) + len(fuzzy)
        whole = len(fuzzy) < FUZZY_RANKED
        return Completed(values, total, not whole or total > len(values))

    def fuzzy(self, needle: str, most: int = FUZZY_RANKED) -> list[tuple[str, str]]:
        """The doc_refs not starting with `needle` whose doc_ref or title holds its characters
        in order, with their titles: the first `most` in doc_ref order."""
        found: list[tuple[str, str]] = []
        if "\t" in needle or "\n" in needle:  # in no doc_ref or title (as `rank` finds)
            return found
        pattern = _in_a_field(needle)
        for text in self.texts(needle):
            for match in pattern.finditer(text):  # from a field's start to the line's end
                ref, _, title = text[
                    text.rfind("\n", 0, match.start() + 1) + 1 : match.end()
                ].partition("\t")
                if not ref.startswith(needle):
                    found.append((ref, title))
                    if len(found) >= most:
                        return found
        return found

    def texts(self, needle: str) -> Iterator[str]:
        """`text`, or its lines holding every indexed character of `needle`, in order (joined
        a chunk at a time: a search stopping early joins no more)."""
        bitmaps = [self.holding[c] for c in set(needle) if c in self.holding]
        if not bitmaps:
            yield self.text
            return
        lines = reduce(operator.and_, bitmaps)
        if lines.bit_count() * 2 > len(self.lines):  # joining would cost more than it saves
            yield self.text
            return
        selector = bin(lines)[:1:-1].encode("ascii").translate(_BITS_TO_BYTES)
        for at in range(0, len(selector), _CHUNK):
            yield "".join(compress(self.lines[at : at + _CHUNK], selector[at : at + _CHUNK]))


_CHUNK = 4_096
"""Lines of `DocRefs.text` filtered and joined at a time."""


def _ranked(needle: str, fuzzy: list[tuple[str, str]]) -> list[str]:
    """`rank(needle, refs, titles)` of (doc_ref, title) pairs none of whose doc_refs starts
    with `needle`, the windows found by a compiled pattern rather than character by character."""
    windows = re.compile(f"(?=({_in_order(needle)}))")
    keys: list[tuple[int, int, str]] = []
    for ref, title in fuzzy:
        where = ref.find(needle)
        if where != -1:
            keys.append((0, where, ref))
            continue
        span = _window_span(windows, ref)
        if span is None and title:  # a title holding `needle` whole has a window of its length
            span = _window_span(windows, title)
        if span is not None:
            keys.append((1, span, ref))
    keys.sort()
    return [ref for _, _, ref in keys]


INDEXED = frozenset(string.ascii_lowercase + string.digits)
"""The characters `DocRefs` keeps a bitmap of lines for: those of every doc_ref but '-'."""

_BYTES_TO_BITS = bytes.maketrans(b"\x00\x01", b"01")
_BITS_TO_BYTES = bytes.maketrans(b"01", b"\x00\x01")


def _bitmap(flags: Iterable[bool]) -> int:
    """An int whose bit i is set where the i-th flag is true."""
    digits = bytes(flags).translate(_BYTES_TO_BITS)[::-1]
    return int(digits, 2) if digits else 0


def _in_order(needle: str) -> str:
    """A pattern of the characters of `needle` in order in one field (doc_ref or title): from
    an occurrence of the first, the first occurrence of each next one (no backtracking)."""
    chars = [re.escape(c) for c in needle]
    return chars[0] + "".join(f"[^{c}\t\n]*{c}" for c in chars[1:])


def _in_a_field(needle: str) -> re.Pattern[str]:
    """A pattern matching once in each line of `DocRefs.text` whose doc_ref or title holds the
    characters of `needle` in order: from the field's start, `_in_order` from the first
    occurrence of the first character (a later one cannot match where it does not), then the
    rest of the line."""
    first = re.escape(needle[0])
    return re.compile(f"[\t\n][^{first}\t\n]*{_in_order(needle)}[^\n]*")


def _window_span(windows: re.Pattern[str], hay: str) -> int | None:
    """`_subsequence_span` of a `hay` without tabs or line ends, `windows` being
    `_in_order(needle)` in a lookahead: the window from every occurrence of the first
    character that has one (one that has none has none after it)."""
    return min(map(len, windows.findall(hay)), default=None)


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
        self._doc_refs: tuple[int, DocRefs] | None = None

    def doc_refs(self) -> DocRefs:
        """The catalog's doc_refs and titles, indexed as of its latest listing."""
        version = self.catalog.listing_version
        if self._doc_refs is None or self._doc_refs[0] != version:
            pairs = ((e.doc_ref, title_of(e)) for e in self.catalog.entries())
            self._doc_refs = (version, DocRefs(pairs))
        return self._doc_refs[1]

    async def complete(
        self, template: str, name: str, typed: str, context: Mapping[str, str]
    ) -> Completed:
        """`values`, at most `MAX_VALUES` of them, with how many there are in all."""
        if name == "doc_ref" and template.startswith(f"dpe://{self.catalog.host}/"):
            await self.catalog.listed.wait()
            return self.doc_refs().complete(typed)
        return cap(await self.values(template, name, typed, context))

    async def values(
        self, template: str, name: str, typed: str, context: Mapping[str, str]
    ) -> list[str]:
        """Values for argument `name` of `template` (one of this server's), best first; none
        for an unknown argument, a template of another host or missing context."""
        catalog = self.catalog
        if not template.startswith(f"dpe://{catalog.host}/"):
            return []
        await catalog.listed.wait()
        if name == "doc_ref":
            return self.doc_refs().complete(typed).values
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
