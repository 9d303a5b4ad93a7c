"""Searching the full-text index (`fulltext` writes it): queries, their scope, the ranked and
paged results and their snippets.

- Queries (`TextQuery.parse`): words, "phrases in quotes", `prefix*`; every term must occur;
  ranked by BM25 within windows of `WINDOW` matches in index order (`search`; the BM25 itself:
  `ranking`). Each term goes to FTS5 as a quoted string, so no user input is FTS5 syntax:
  a stray quote or `AND(` is searched for as words (punctuation is not indexed).
- Snippets are cut from the element's text around the first term found, marked `**`.

Apart from `fulltext` so that what only writes the index (`dpe-server read`, which searches
nothing) imports neither this half, its dataclasses, nor `ranking`.
"""

from __future__ import annotations

import functools
import re
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from dpe_server.catalog.fulltext import CJK_CHAR, segment, transaction
from dpe_server.catalog.ranking import Phrase, Ranking, tokens
from dpe_server.model.words import normalise

SNIPPET_CHARS = 64
"""About how many characters of an element's text a snippet shows around the match."""
WINDOW = 1000
"""Matches ranked together at most: a common word's matches are ranked window by window, each
window the next `WINDOW` matches in index order (`search`); also how far matches are counted."""
MARK = "**"
"""What a snippet puts either side of a match."""
_TERM = re.compile(r'"([^"]*)"?|(\S+)')


@functools.cache
def _lone_cjk_end() -> re.Pattern[str]:
    """A term ending in one CJK character: it may begin a bigram, so it is matched as a
    prefix."""
    return re.compile(f"(?<!{CJK_CHAR}){CJK_CHAR}$")


_WORD = re.compile(r"[^\W_]")
"""A letter or a digit: what the tokenizer indexes."""


def index_words(text: str) -> list[str]:
    """`text` as the index's words: `tokens(segment(text))` (ASCII has no CJK to segment)."""
    return tokens(text if text.isascii() else segment(text))


@dataclass(frozen=True, slots=True)
class Term:
    text: str
    """As given (lower-case, whitespace collapsed): what a snippet marks."""
    prefix: bool


@dataclass(frozen=True, slots=True)
class TextQuery:
    """The terms of a query, every one of which must occur."""

    terms: tuple[Term, ...]

    @classmethod
    def parse(cls, text: str) -> TextQuery:
        """Words, "phrases" (an unclosed quote runs to the end) and `prefix*`; a term without
        a letter or digit is left out (punctuation is not indexed). A NUL separates words, as
        the tokenizer takes it (FTS5 would end the query at it, PostgreSQL refuse it)."""
        terms: list[Term] = []
        for phrase, word in _TERM.findall(text.replace("\0", " ")):
            term = normalise(phrase) if phrase else word.rstrip("*")
            if _WORD.search(term):
                terms.append(Term(term.lower(), bool(word) and word.endswith("*")))
        return cls(tuple(dict.fromkeys(terms)))

    def segments(self) -> list[tuple[str, bool]]:
        """Each term as the index holds its words (`segment`), and whether its last word is
        matched as a prefix (`prefix*`, or a term ending in one CJK character)."""
        return [
            (segment(t.text, open_end=True), t.prefix or bool(_lone_cjk_end().search(t.text)))
            for t in self.terms
        ]

    def phrases(self) -> list[Phrase]:
        """Each term as FTS5 gets it: a quoted string (a prefix one where it may run on)."""
        out = []
        for segmented, prefix in self.segments():
            quoted = '"' + segmented.replace('"', '""') + '"'
            out.append(Phrase(quoted + (" *" if prefix else ""), tuple(tokens(segmented)), prefix))
        return out

    def fts(self) -> str:
        """The query in FTS5 syntax: every term required."""
        return " AND ".join(p.fts for p in self.phrases())

    def marks(self) -> re.Pattern[str]:
        """The terms as a snippet marks them (`snippet`)."""
        return re.compile("|".join(_marked(t) for t in self.terms), re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Scope:
    """Which served elements a search looks at (empty: all)."""

    categories: tuple[str, ...] = ()
    file_type: str = ""
    doc_ref: str = ""


@dataclass(frozen=True, slots=True)
class Hit:
    key: str
    doc_ref: str
    page_index: int
    element_id: str
    category: str
    snippet: str


@dataclass(frozen=True, slots=True)
class Position:
    """Where a page of results starts: in the window of matches after rowid `after`, past
    the first `skip` of them (`search`). The start of every search is `Position()`."""

    after: int = 0
    skip: int = 0


@dataclass(frozen=True, slots=True)
class Found:
    total: int
    """Matches in scope, counted up to `WINDOW`."""
    capped: bool
    """There are more than `total`: the order is BM25 within windows (`search`)."""
    hits: list[Hit]
    next: Position | None
    """Where the next page starts; None when no match follows."""


def search(
    db: sqlite3.Connection, query: TextQuery, scope: Scope, limit: int, at: Position
) -> Found:
    """The served elements matching `query` in `scope`: `limit` of them from `at`, and how many
    there are (up to `WINDOW`).

    The order: the matches in scope are cut, in index order (rowid: the order elements were
    indexed in), into windows of `WINDOW` matches; the results are the first window's matches
    ranked by BM25 (`Ranking`; ties by rowid), then the second's, and so on. With at most
    `WINDOW` matches (`capped` false) that is BM25 order over all of them. So a page costs
    one window's ranking, whatever the number of matches, and a position (`at`) names a place
    in the index, not a count of results before it.
    """
    with transaction(db):  # one snapshot for the count, the statistics and every window
        match = query.fts()
        where, args = _scope(db, scope)
        ranking = Ranking.of(db, query.phrases(), index_words)
        after, skip = at.after, at.skip
        window = _window(db, match, where, args, after)
        counted = len(window) if after == 0 else _count(db, match, where, args)
        rows: list[tuple[Any, ...]] = []
        while True:
            full = len(window) > WINDOW
            window = window[:WINDOW]
            ranked = ranking.order(db, match, window)
            page = ranked[skip : skip + limit - len(rows)]
            rows += page
            skip += len(page)
            if len(rows) == limit or not full:
                break
            after, skip = window[-1][0], 0
            window = _window(db, match, where, args, after)
        if skip < len(window):
            following: Position | None = Position(after, skip)
        else:
            following = Position(window[-1][0], 0) if full else None
    return Found(min(counted, WINDOW), counted > WINDOW, hits_of(query, rows), following)


def hits_of(query: TextQuery, rows: Sequence[tuple[Any, ...]]) -> list[Hit]:
    """The hits of result `rows` (any leading columns, then key, doc_ref, page index, element
    id, category, text), each with its snippet."""
    marks = query.marks()
    return [
        Hit(key, ref, page_index, eid, cat, snippet(text, marks))
        for *_, key, ref, page_index, eid, cat, text in rows
    ]


def found(query: TextQuery, rows: Sequence[tuple[Any, ...]], counted: int, offset: int) -> Found:
    """A page of results of a store that ranks every match (PostgreSQL's): the `rows` from
    `offset` in rank order, of `counted` matches (counted past `WINDOW` and past the page).
    `total` and `capped` say what `search` says: the matches up to `WINDOW`, and whether there
    are more. Its next page starts at an offset (`Position.skip`)."""
    hits = hits_of(query, rows)
    given = offset + len(hits)
    following = Position(0, given) if counted > given else None
    return Found(min(counted, WINDOW), counted > WINDOW, hits, following)


_MATCHES = (
    "FROM element_text JOIN element_rows r ON r.id = element_text.rowid "
    "JOIN live ON live.key = r.key WHERE element_text MATCH ? AND element_text.rowid > ?"
)
"""The served matches of a query after a rowid (the scope's conditions follow)."""


def _scope(db: sqlite3.Connection, scope: Scope) -> tuple[str, list[object]]:
    """The conditions of `scope` on the matches, with their arguments. One document's
    elements are looked for only between its first and last rowid."""
    where, args = "", list[object]()
    for column, value in (("live.file_type", scope.file_type), ("live.doc_ref", scope.doc_ref)):
        if value:
            where += f" AND {column} = ?"
            args.append(value)
    if scope.doc_ref:
        low, high = db.execute(
            "SELECT min(r.id), max(r.id) FROM live JOIN element_rows r ON r.key = live.key "
            "WHERE live.doc_ref = ?",
            (scope.doc_ref,),
        ).fetchone()
        where += " AND element_text.rowid BETWEEN ? AND ?"
        args += (low or 0, high or 0)
    if scope.categories:
        where += f" AND r.category IN ({','.join('?' * len(scope.categories))})"
        args += scope.categories
    return where, args


def _count(db: sqlite3.Connection, match: str, where: str, args: Sequence[object]) -> int:
    """The served matches in scope, counted up to `WINDOW` + 1."""
    (counted,) = db.execute(
        f"SELECT count(*) FROM (SELECT 1 {_MATCHES}{where} LIMIT {WINDOW + 1})",
        (match, 0, *args),
    ).fetchone()
    return int(counted)


def _window(
    db: sqlite3.Connection, match: str, where: str, args: Sequence[object], after: int
) -> list[tuple[Any, ...]]:
    """The first `WINDOW` + 1 served matches in scope after `after`, in index order (a walk of
    the terms' lists of rows): rowid, key, doc_ref, page, element id, category, text."""
    return db.execute(
        "SELECT element_text.rowid, r.key, live.doc_ref, r.page_index, r.element_id, "
        f"r.category, r.text {_MATCHES}{where} ORDER BY element_text.rowid LIMIT {WINDOW + 1}",
        (match, after, *args),
    ).fetchall()


def _marked(term: Term) -> str:
    """The pattern of `term` in a snippet: whole words, except where CJK text or a prefix
    runs on."""
    edge = r"(?<![^\W_])" if not re.match(CJK_CHAR, term.text) else ""
    tail = r"(?![^\W_])" if not (term.prefix or re.search(CJK_CHAR + "$", term.text)) else ""
    return edge + re.escape(term.text) + tail


def snippet(text: str, marks: re.Pattern[str]) -> str:
    """About `SNIPPET_CHARS` characters of an element's `text` on one line, around the first
    term found, every term in them marked (`TextQuery.marks`; the start of the text where the
    index folded what the query spelt differently, such as an accent)."""
    text = text.replace("\n", " ")  # its phrases' whitespace is collapsed already
    first = marks.search(text)
    at = first.start() if first else 0
    start = max(at - SNIPPET_CHARS // 3, 0)
    end = min(start + SNIPPET_CHARS, len(text))
    shown = marks.sub(lambda m: MARK + m.group(0) + MARK, text[start:end])
    return ("…" if start else "") + shown + ("…" if end < len(text) else "")
