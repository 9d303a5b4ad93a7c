"""The full-text index of every element's text, in the cache database (SQLite FTS5).

- What: one row per element of every stored page (`element_rows`: store key, page index,
  element id, category and its text, `model.words.element_text`: the words the Markdown-recall
  rule counts, of the whole element), and the same text, segmented, in the FTS5 table
  `element_text` under the same rowid. Rows are written with the page (`put_pages`) and
  deleted with the key (`forget`).
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
  ranked by BM25. Each term goes to FTS5 as a quoted string, so no user input is FTS5 syntax:
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
CREATE TEMP TABLE IF NOT EXISTS live (
    key TEXT PRIMARY KEY,
    doc_ref TEXT NOT NULL,
    file_type TEXT NOT NULL
);
"""
SNIPPET_CHARS = 64
"""About how many characters of an element's text a snippet shows around the match."""
COUNT_CAP = 1000
"""Matches counted at most past the page asked for: counting every element holding a common
word costs as much as ranking them."""
CANDIDATES, CANDIDATES_MIN = 4, 50
"""A search first ranks this many matches per result wanted (and this many more) without
looking up which versions they belong to, then the served ones among them; only when too few
are served does it rank them all with the lookup."""
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

    if not text or max(text) < _CJK_FIRST:
        return " ".join(text.split())
    return " ".join(_cjk().sub(cut, text).split())


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
        a letter or digit is left out (punctuation is not indexed)."""
        terms: list[Term] = []
        for phrase, word in _TERM.findall(text):
            term = normalise(phrase) if phrase else word.rstrip("*")
            if _WORD.search(term):
                terms.append(Term(term.lower(), bool(word) and word.endswith("*")))
        return cls(tuple(dict.fromkeys(terms)))

    def fts(self) -> str:
        """The query in FTS5 syntax: each term a quoted string, all of them required."""
        out = []
        for term in self.terms:
            quoted = '"' + segment(term.text, open_end=True).replace('"', '""') + '"'
            prefix = term.prefix or _lone_cjk_end().search(term.text)
            out.append(quoted + (" *" if prefix else ""))
        return " AND ".join(out)

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
class Found:
    total: int
    """Matches, counted up to `COUNT_CAP` (or to the end of the page asked for)."""
    capped: bool
    """There are more than `total`."""
    more: bool
    """Matches follow the page."""
    hits: list[Hit]


def connect_memory() -> sqlite3.Connection:
    """An index in this process's memory (a server without a cache)."""
    db = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
    db.executescript(DDL)
    return db


@contextmanager
def transaction(db: sqlite3.Connection) -> Iterator[None]:
    """One transaction on a connection in autocommit mode (`isolation_level=None`)."""
    db.execute("BEGIN")
    try:
        yield
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


def put_pages(db: sqlite3.Connection, key: str, pages: Sequence[Page]) -> None:
    """Index the elements of `pages` of `key` (inside the caller's transaction)."""
    for page in pages:
        where = (key, page.page_index)
        _delete(db, "key=? AND page_index=?", where)
        texts = [element_text(el.category.value, el.content) for el in page.elements]
        db.executemany(
            "INSERT INTO element_rows (key, page_index, element_id, category, text) "
            "VALUES (?, ?, ?, ?, ?)",
            [
                (*where, el.element_id, el.category.value, text)
                for el, text in zip(page.elements, texts, strict=True)
            ],
        )
        ids = db.execute(
            "SELECT id FROM element_rows WHERE key=? AND page_index=? ORDER BY id", where
        ).fetchall()
        db.executemany(
            "INSERT INTO element_text (rowid, text) VALUES (?, ?)",
            [(row_id, segment(text)) for (row_id,), text in zip(ids, texts, strict=True)],
        )


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
    db.executemany("INSERT OR REPLACE INTO live VALUES (?, ?, ?)", list(added))


def search(
    db: sqlite3.Connection, query: TextQuery, scope: Scope, limit: int, offset: int
) -> Found:
    """The served elements matching `query` in `scope`: `limit` of them from `offset`, best
    first, and how many there are (counted up to `COUNT_CAP`, or past the page asked for)."""
    filters = ""
    args: list[object] = [query.fts()]
    for column, value in (("live.file_type", scope.file_type), ("live.doc_ref", scope.doc_ref)):
        if value:
            filters += f" AND {column} = ?"
            args.append(value)
    if scope.categories:
        filters += f" AND r.category IN ({','.join('?' * len(scope.categories))})"
        args += scope.categories
    cap = max(COUNT_CAP, offset + limit)
    (counted,) = db.execute(
        "SELECT count(*) FROM (SELECT 1 FROM element_text JOIN element_rows r "
        "ON r.id = element_text.rowid JOIN live ON live.key = r.key "
        f"WHERE element_text MATCH ?{filters} LIMIT {cap + 1})",
        args,
    ).fetchone()
    rows: list[tuple[Any, ...]] = []
    if not scope.doc_ref:
        # The best few candidates, ranked without looking up their versions; exact when
        # enough of them are served (a served element ranked lower ranks below all of them).
        best = f"ORDER BY score, rowid LIMIT {CANDIDATES * (offset + limit) + CANDIDATES_MIN}"
        rows = _ranked(db, best, filters, (*args, limit, offset))
    if len(rows) < limit and offset + len(rows) < counted:
        rows = _ranked(db, "", filters, (*args, limit, offset))
    marks = query.marks()
    hits = [
        Hit(key, ref, page, eid, cat, snippet(text, marks))
        for key, ref, page, eid, cat, text in rows
    ]
    return Found(min(counted, cap), counted > cap, counted > offset + len(hits), hits)


def _ranked(
    db: sqlite3.Connection, candidates: str, filters: str, args: Sequence[object]
) -> list[tuple[Any, ...]]:
    """The page (`args` end with its limit and offset) of served matches, best first, among
    the matches `candidates` keeps."""
    return db.execute(
        "SELECT r.key, live.doc_ref, r.page_index, r.element_id, r.category, r.text FROM "
        "(SELECT rowid, bm25(element_text) AS score FROM element_text WHERE element_text MATCH ? "
        f"{candidates}) m JOIN element_rows r ON r.id = m.rowid JOIN live ON live.key = r.key "
        f"WHERE 1{filters} ORDER BY m.score, m.rowid LIMIT ? OFFSET ?",
        args,
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
