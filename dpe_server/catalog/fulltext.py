"""The full-text index of every element's text, in the cache database (SQLite FTS5).

- What: one row per element of every stored page (`element_rows`: store key, page index,
  element id, category and its text, `model.words.element_text`: the words the Markdown-recall
  rule counts, of the whole element), and the same text, segmented, in the FTS5 table
  `element_text` under the same rowid. Rows are written with the page (`put_pages`) and
  deleted with the key (`forget`); `dpe-server read` stores a document without them, which
  a server builds later (`Store.index_stored`: docs/search.md).
- Tokenizer: `unicode61` (case and diacritics folded) over text whose Chinese, Japanese and
  Korean runs are cut into overlapping bigrams, each run followed by its last character
  (`segment`: 年度预算 is indexed as 年度 度预 预算 算). Every word of two characters or more
  is then one token, so a 2-character Chinese word (the commonest length) is an index lookup,
  a longer one a phrase of bigrams, one character a prefix (预*). The `trigram` tokenizer was
  measured against it (`bench/fts_tokenizers.py`): twice the size, and a query shorter than three
  characters cannot use it (a `LIKE` scan of every row, 2,000 times slower at 100,000
  elements); it also matches inside words (`bet` in alphabet), which word search does not.
- Which versions: rows are content-addressed (by store key), so an old version's rows may
  linger; a search joins the per-connection table `live` (the keys this server serves now,
  with their doc_ref and file type, `serve`), so it never returns an element of a deleted file
  or of a version no longer served, and it filters by file type and document there.
- Queries (`TextQuery.parse`): words, "phrases in quotes", `prefix*`; every term must occur;
  ranked by BM25 within windows of `WINDOW` matches in index order (`search`; the BM25 itself:
  `ranking`). Each term goes to FTS5 as a quoted string, so no user input is FTS5 syntax:
  a stray quote or `AND(` is searched for as words (punctuation is not indexed).
- Snippets are cut from the element's text around the first term found, marked `**`.
"""

from __future__ import annotations

import functools
import re
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from dpe_server.catalog.ranking import Phrase, Ranking, tokens
from dpe_server.model.tree import Page
from dpe_server.model.words import element_text, normalise

DDL = """
CREATE TABLE IF NOT EXISTS element_rows (
    id INTEGER PRIMARY KEY,
    key TEXT NOT NULL,
    page_index INTEGER NOT NULL,
    element_id TEXT NOT NULL,
    category TEXT NOT NULL,
    text TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS element_rows_page ON element_rows (key, page_index);
CREATE VIRTUAL TABLE IF NOT EXISTS element_text
    USING fts5(text, tokenize='unicode61 remove_diacritics 2');
"""
LIVE_DDL = """
CREATE TEMP TABLE IF NOT EXISTS live (
    key TEXT PRIMARY KEY,
    doc_ref TEXT NOT NULL,
    file_type TEXT NOT NULL
) WITHOUT ROWID;
"""
"""The keys served, per connection (not part of the file: a cache's format is `DDL`). Without
a rowid, a row is one entry of one B-tree (the key's), and `serve` writes them in key order:
telling the index of 100,000 versions served took half the CPU it did."""
SNIPPET_CHARS = 64
"""About how many characters of an element's text a snippet shows around the match."""
WINDOW = 1000
"""Matches ranked together at most: a common word's matches are ranked window by window, each
window the next `WINDOW` matches in index order (`search`); also how far matches are counted."""
MARK = "**"
"""What a snippet puts either side of a match."""
_TERM = re.compile(r'"([^"]*)"?|(\S+)')
_CJK_CHAR = r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]"
"""Kana, CJK ideographs and Hangul: scripts written without spaces between words."""
_CJK_FIRST = "\u3040"
"""The lowest character of `_CJK_CHAR`: text below it holds no CJK run."""


@functools.cache
def _cjk() -> re.Pattern[str]:
    """A CJK run (compiled when first needed: the wide class takes ~10 ms to compile)."""
    return re.compile(_CJK_CHAR + "+")


@functools.cache
def _lone_cjk_end() -> re.Pattern[str]:
    """A term ending in one CJK character: it may begin a bigram, so it is matched as a
    prefix."""
    return re.compile(f"(?<!{_CJK_CHAR}){_CJK_CHAR}$")


_WORD = re.compile(r"[^\W_]")
"""A letter or a digit: what the tokenizer indexes."""


def segment(text: str, open_end: bool = False) -> str:
    """`text` with each CJK run cut into its overlapping bigrams and its last character.

    `open_end` (a query term): a run that ends the text may go on in the indexed text, so its
    last character is left out (a run of one character stays, to be matched as a prefix).
    """

    def cut(m: re.Match[str]) -> str:
        run = m.group(0)
        tokens = [run[i : i + 2] for i in range(len(run) - 1)]
        if not (open_end and m.end() == len(text) and tokens):
            tokens.append(run[-1])
        return " " + " ".join(tokens) + " "

    if not text or text.isascii() or max(text) < _CJK_FIRST:  # isascii: a flag, not a pass
        return " ".join(text.split())
    return " ".join(_cjk().sub(cut, text).split())


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


def connect_memory() -> sqlite3.Connection:
    """An index in this process's memory (a server without a cache)."""
    db = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
    db.executescript(DDL + LIVE_DDL)
    return db


@contextmanager
def transaction(db: sqlite3.Connection, *, write: bool = False) -> Iterator[None]:
    """One transaction on a connection in autocommit mode (`isolation_level=None`). `write`:
    one that reads before it writes takes the write lock first (`BEGIN IMMEDIATE`), waiting
    for another connection's writes as every write does (the busy timeout); begun as a reader,
    it would fail at its first write the moment another connection had written meanwhile."""
    db.execute("BEGIN IMMEDIATE" if write else "BEGIN")
    try:
        yield
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


def put_pages(db: sqlite3.Connection, key: str, pages: Sequence[Page]) -> None:
    """Index the elements of `pages` of `key` (inside the caller's transaction)."""
    for page in pages:
        put_rows(db, key, page.page_index, indexed_rows(page))


def indexed_rows(page: Page) -> list[tuple[str, str, str, str]]:
    """What `put_rows` writes of `page`: each element's id, category, text and its text as
    the FTS5 table holds it (`segment`). The costly half of indexing, which needs no
    database: built outside the store's lock where the store can (`Store.index_stored`)."""
    return [(*row, segment(row[2])) for row in element_rows(page)]


def put_rows(
    db: sqlite3.Connection, key: str, page_index: int, rows: Sequence[tuple[str, str, str, str]]
) -> None:
    """Index one page of `key` as `indexed_rows` built it, in place of its rows (inside the
    caller's transaction)."""
    where = (key, page_index)
    _delete(db, "key=? AND page_index=?", where)
    db.executemany(
        "INSERT INTO element_rows (key, page_index, element_id, category, text) "
        "VALUES (?, ?, ?, ?, ?)",
        [(*where, eid, category, text) for eid, category, text, _ in rows],
    )
    ids = db.execute(
        "SELECT id FROM element_rows WHERE key=? AND page_index=? ORDER BY id", where
    ).fetchall()
    db.executemany(
        "INSERT INTO element_text (rowid, text) VALUES (?, ?)",
        [(row_id, row[3]) for (row_id,), row in zip(ids, rows, strict=True)],
    )


def element_rows(page: Page) -> list[tuple[str, str, str]]:
    """What the index holds of each element of `page`: its id, category and text."""
    return [
        (el.element_id, el.category.value, element_text(el.category.value, el.content))
        for el in page.elements
    ]


def forget(db: sqlite3.Connection, key: str) -> None:
    _delete(db, "key=?", (key,))


def _delete(db: sqlite3.Connection, where: str, args: tuple[object, ...]) -> None:
    rows = f"SELECT id FROM element_rows WHERE {where}"
    db.execute(f"DELETE FROM element_text WHERE rowid IN ({rows})", args)
    db.execute(f"DELETE FROM element_rows WHERE {where}", args)


def serve(
    db: sqlite3.Connection, added: Iterable[tuple[str, str, str]], dropped: Iterable[str]
) -> None:
    """Searches return elements of the keys `added` (key, doc_ref, file type), no longer of
    the keys `dropped`."""
    db.executemany("DELETE FROM live WHERE key=?", [(k,) for k in dropped])
    db.executemany("INSERT OR REPLACE INTO live VALUES (?, ?, ?)", sorted(added))


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
    edge = r"(?<![^\W_])" if not re.match(_CJK_CHAR, term.text) else ""
    tail = r"(?![^\W_])" if not (term.prefix or re.search(_CJK_CHAR + "$", term.text)) else ""
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
